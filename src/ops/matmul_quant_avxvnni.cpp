// The AVX-VNNI tier of the integer kernels for GGUF's quantized types (matmul_quant.cpp describes
// them): the AVX2 tier's kernel with VEX VPDPBUSD for its byte dot products, the same integers,
// so the same bits.
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

#define BRISK_AVX2_TARGET BRISK_ISA_AVXVNNI
#define BRISK_AVX2_DOT 1
#include "ops/matmul_quant_avx2-inl.h"

}  // namespace

Kernel kernel_quant_avxvnni(DType t) {
  return kernel_for_type<Pick256>(t);
}

}  // namespace brisk::matmul_detail

#endif
