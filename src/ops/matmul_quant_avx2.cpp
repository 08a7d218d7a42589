// The 256-bit tiers of the integer kernels for GGUF's quantized types (matmul_quant.cpp describes
// them), in a file of their own so that their kernels compile beside the other tiers'.
#if defined(__x86_64__)

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/quant.h"
#include "core/quant_iq.h"
#include "core/quant_iq4.h"
#include "ops/cpu.h"
#include "ops/isa_target.h"
#include "ops/matmul.h"
#include "ops/matmul_q8.h"
#include "ops/matmul_tile.h"

namespace brisk::matmul_detail {
namespace {

#include "ops/matmul_quant_types-inl.h"

// The 256-bit kernel twice over, for the Avx2 and Avx2Vnni tiers, differing only in the
// instruction of its byte dot products (see matmul_quant_avx2-inl.h): both give the same integers,
// so the same bits.
namespace avx2 {
#define BRISK_AVX2_TARGET BRISK_ISA_AVX2
#define BRISK_AVX2_DOT 0
#include "ops/matmul_quant_avx2-inl.h"
}  // namespace avx2
namespace avxvnni {
#define BRISK_AVX2_TARGET BRISK_ISA_AVXVNNI
#define BRISK_AVX2_DOT 1
#include "ops/matmul_quant_avx2-inl.h"
}  // namespace avxvnni

template <class P>
struct Avx2Kernels {
  template <int R, int T>
  static void plain(const Args& a, int64_t r, int64_t t) {
    avx2::micro_avx2<P, R, T>(a, r, t);
  }
  template <int R, int T>
  static void vnni(const Args& a, int64_t r, int64_t t) {
    avxvnni::micro_avx2<P, R, T>(a, r, t);
  }
  static constexpr MicroFn kAvx2[4][4] = BRISK_MICRO_TABLE4(plain);
  static constexpr MicroFn kAvxVnni[4][4] = BRISK_MICRO_TABLE4(vnni);
};

template <bool kVnni>
struct Avx2Pick {
  template <class P>
  static Kernel of() {
    if constexpr (kVnni)
      return {tile_loop<4, Avx2Kernels<P>::kAvxVnni>, XFormat::Q8, lane_offset<P>()};
    else
      return {tile_loop<4, Avx2Kernels<P>::kAvx2>, XFormat::Q8, lane_offset<P>()};
  }
};

}  // namespace

Kernel kernel_quant_avx2(DType t, bool vnni) {
  return vnni ? kernel_for_type<Avx2Pick<true>>(t) : kernel_for_type<Avx2Pick<false>>(t);
}

}  // namespace brisk::matmul_detail

#endif
