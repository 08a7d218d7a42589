// The AVX2 tier of the integer kernels for GGUF's quantized types (matmul_quant.cpp describes
// them): byte dot products with VPMADDUBSW and VPMADDWD, 256 bits at a time. In a file of its own
// (as is the AVX-VNNI variant) so that each tier's kernels compile beside the others'.
#if defined(__x86_64__)

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/cpu.h"
#include "ops/isa_target.h"
#include "ops/matmul.h"
#include "ops/matmul_q8.h"
#include "ops/matmul_tile.h"
#include "quant/quant.h"
#include "quant/quant_iq.h"
#include "quant/quant_iq4.h"
#include "quant/quant_mxfp4.h"

namespace brisk::matmul_detail {
namespace {

#include "ops/matmul_quant_types-inl.h"

#define BRISK_AVX2_TARGET BRISK_ISA_AVX2
#define BRISK_AVX2_DOT 0
#include "ops/matmul_quant_avx2-inl.h"

}  // namespace

Kernel kernel_quant_avx2(DType t) {
  return kernel_for_type<Pick256>(t);
}

}  // namespace brisk::matmul_detail

#endif
