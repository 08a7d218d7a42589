// GGUF's quantized block layouts (byte-exact to ggml's), with scalar dequantization and
// reference quantization of whole rows. Kernels in ops/ read these blocks directly; these
// functions are the references they are tested against, and what the quantizer writes.
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace brisk {

inline constexpr int kQK = 32;    // elements per block of the legacy types
inline constexpr int kQKK = 256;  // elements per super-block of the k-quants

#pragma pack(push, 1)
struct BlockQ4_0 {  // x = d * (q - 8), q in 0..15; low nibbles hold elements 0..15, high 16..31
  uint16_t d;
  uint8_t qs[kQK / 2];
};
struct BlockQ4_1 {  // x = d * q + m
  uint16_t d, m;
  uint8_t qs[kQK / 2];
};
struct BlockQ5_0 {  // x = d * (q - 16), q in 0..31; bit i of qh is element i's fifth bit
  uint16_t d;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
struct BlockQ5_1 {  // x = d * q + m
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
struct BlockQ8_0 {  // x = d * q
  uint16_t d;
  int8_t qs[kQK];
};
// 16 sub-blocks of 16: 4-bit scale and min per sub-block, 2-bit values.
struct BlockQ2_K {
  uint8_t scales[kQKK / 16];  // low nibble scale, high nibble min
  uint8_t qs[kQKK / 4];
  uint16_t d, dmin;
};
// 16 sub-blocks of 16: 6-bit signed scales (packed in 12 bytes), 3-bit values (2 low bits in qs,
// the high bit in hmask, set meaning "no -4").
struct BlockQ3_K {
  uint8_t hmask[kQKK / 8];
  uint8_t qs[kQKK / 4];
  uint8_t scales[12];
  uint16_t d;
};
// 8 sub-blocks of 32: 6-bit scale and min each (packed in 12 bytes), 4-bit values.
struct BlockQ4_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qs[kQKK / 2];
};
// As Q4_K with a fifth bit per value in qh.
struct BlockQ5_K {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t qh[kQKK / 8];
  uint8_t qs[kQKK / 2];
};
// 16 sub-blocks of 16: 8-bit signed scales, 6-bit values (4 low bits in ql, 2 high in qh) - 32.
struct BlockQ6_K {
  uint8_t ql[kQKK / 2];
  uint8_t qh[kQKK / 4];
  int8_t scales[kQKK / 16];
  uint16_t d;
};
#pragma pack(pop)

static_assert(sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20 && sizeof(BlockQ5_0) == 22 &&
              sizeof(BlockQ5_1) == 24 && sizeof(BlockQ8_0) == 34);
static_assert(sizeof(BlockQ2_K) == 84 && sizeof(BlockQ3_K) == 110 && sizeof(BlockQ4_K) == 144 &&
              sizeof(BlockQ5_K) == 176 && sizeof(BlockQ6_K) == 210);

// Element e (0..255) of a Q6_K super-block as its unsigned 6-bit value (0..63), and all 256 set.
int q6k_value(const BlockQ6_K* b, int e);
void q6k_values(const BlockQ6_K* b, uint8_t* v);
void q6k_set_values(BlockQ6_K* b, const uint8_t* v);

// The 6-bit scale and min of sub-block j (0..7) of a Q4_K/Q5_K super-block.
inline void k4_scale_min(int j, const uint8_t* q, uint8_t& sc, uint8_t& m) {
  if (j < 4) {
    sc = q[j] & 63;
    m = q[j + 4] & 63;
  } else {
    sc = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// Scale j (0..15) of a Q3_K super-block from its 12 packed bytes: 6 bits, minus 32.
inline int q3k_scale(const uint8_t* p, int j) {
  const int low = j < 8 ? (p[j] & 0xF) : (p[j - 8] >> 4);
  const int high = (p[8 + j % 4] >> (2 * (j / 4))) & 3;
  return (low | high << 4) - 32;
}
// All 16 of them.
void q3k_scales(const uint8_t* packed, int8_t out[16]);

// True for the quantized types rows can be converted from and to.
bool dtype_is_quantized(DType t);
// Types the compute kernels accept as weights: the plain floats and the quantized ones.
bool dtype_is_weight_supported(DType t);

// Dequantizes n elements (a whole number of blocks) of any supported type, plain ones included.
void dequantize_row(DType t, const void* src, float* dst, int64_t n);

// Quantizes n elements (a whole number of blocks) into type t. `importance` (optional, n values)
// weights each element's squared error in the choice of scales.
void quantize_row(DType t, const float* src, void* dst, int64_t n,
                  const float* importance = nullptr);

}  // namespace brisk
