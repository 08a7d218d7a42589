// GGUF's types below four bits: the i-quants IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS and
// IQ3_S, and the ternary TQ1_0 and TQ2_0. Byte-exact to ggml's layouts.
//
// The i-quants round groups of 8 (or 4) values together to a point of a fixed grid (quant_iq_grids
// .cpp), so one index stands for several values; the IQ2/IQ3 grids hold magnitudes and 8 sign bits
// ride beside (7 stored, the eighth making the count of minus signs even where the type says so).
// The ternary types hold -1, 0 or +1 per value.
//
// Every one of them decodes, 32 values at a time, to the same shape: small signed integers q and a
// scale per 16 values, value = scale * q. The dequantizer and the matmul kernels both read that,
// so they cannot disagree about the layout. (For IQ1's grid point g plus a shift of +-1/8, q is
// 8g +- 1 and the scale an eighth of the group's.)
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/dtype.h"

namespace brisk {

extern const uint64_t kIQ2XXSGrid[256];
extern const uint64_t kIQ2XSGrid[512];
extern const uint64_t kIQ2SGrid[1024];
extern const uint32_t kIQ3XXSGrid[256];
extern const uint32_t kIQ3SGrid[512];
extern const uint64_t kIQ1SGrid[2048];
// kIQ1SGrid's bytes plus 1 (0, 1 or 2): the unsigned bytes the x86 kernels multiply by.
extern const std::array<uint64_t, 2048> kIQ1SGridPlus1;

// 7 stored sign bits to 8: the eighth set when the seven hold an odd count, so the count is even.
inline constexpr std::array<uint8_t, 128> kIQEvenSigns = [] {
  std::array<uint8_t, 128> t{};
  for (int i = 0; i < 128; ++i) {
    int ones = 0;
    for (int b = 0; b < 7; ++b) ones += (i >> b) & 1;
    t[static_cast<size_t>(i)] = static_cast<uint8_t>(i | (ones & 1) << 7);
  }
  return t;
}();

#pragma pack(push, 1)
// Per 32 values: 4 bytes of grid indices (8 values each), then 4 x 7 sign bits and a 4-bit scale.
struct BlockIQ2_XXS {
  uint16_t d;
  uint16_t qs[32];
};
// Per 8 values a 16-bit word: a 9-bit grid index and 7 sign bits; a 4-bit scale per 16 values.
struct BlockIQ2_XS {
  uint16_t d;
  uint16_t qs[32];
  uint8_t scales[8];
};
// 10-bit grid indices (low 8 bits in qs[0..31], high 2 in qh), 8 full sign bits per 8 values in
// qs[32..63], a 4-bit scale per 16 values.
struct BlockIQ2_S {
  uint16_t d;
  uint8_t qs[64];
  uint8_t qh[8];
  uint8_t scales[8];
};
// Per 32 values: 8 indices into the 4-value grid (qs[0..63]), then at qs[64..95] 4 x 7 sign bits
// and a 4-bit scale.
struct BlockIQ3_XXS {
  uint16_t d;
  uint8_t qs[96];
};
// 9-bit indices into the 4-value grid (high bits in qh), 8 sign bits per 8 values, a 4-bit scale
// per 32 values.
struct BlockIQ3_S {
  uint16_t d;
  uint8_t qs[64];
  uint8_t qh[8];
  uint8_t signs[32];
  uint8_t scales[4];
};
// Per 32 values: 4 low index bytes, and in qh the 3 high bits of each index, a 3-bit scale and
// the shift's sign.
struct BlockIQ1_S {
  uint16_t d;
  uint8_t qs[32];
  uint16_t qh[8];
};
// No stored f16 field: the super-block scale is spread over the top nibbles of the four 16-bit
// scale words. 3-bit scales per 16 values, a shift sign per 8.
struct BlockIQ1_M {
  uint8_t qs[32];
  uint8_t qh[16];
  uint8_t scales[8];
};
// Base-3 digits: five per byte of qs (the byte holding the value x 256 / 243, rounded up), four
// per byte of qh. Digit - 1 is the value.
struct BlockTQ1_0 {
  uint8_t qs[48];
  uint8_t qh[4];
  uint16_t d;
};
// Two bits per value, minus 1.
struct BlockTQ2_0 {
  uint8_t qs[64];
  uint16_t d;
};
#pragma pack(pop)
static_assert(sizeof(BlockIQ2_XXS) == 66 && sizeof(BlockIQ2_XS) == 74 && sizeof(BlockIQ2_S) == 82 &&
              sizeof(BlockIQ3_XXS) == 98 && sizeof(BlockIQ3_S) == 110 && sizeof(BlockIQ1_S) == 50 &&
              sizeof(BlockIQ1_M) == 56 && sizeof(BlockTQ1_0) == 54 && sizeof(BlockTQ2_0) == 66);

// Values 32 * ib .. + 31 of a super-block: q[32] and the scales of their two halves.
void iq_decode32(const BlockIQ2_XXS& b, int ib, int8_t* q, float* scale);
void iq_decode32(const BlockIQ2_XS& b, int ib, int8_t* q, float* scale);
void iq_decode32(const BlockIQ2_S& b, int ib, int8_t* q, float* scale);
void iq_decode32(const BlockIQ3_XXS& b, int ib, int8_t* q, float* scale);
void iq_decode32(const BlockIQ3_S& b, int ib, int8_t* q, float* scale);
void iq_decode32(const BlockIQ1_S& b, int ib, int8_t* q, float* scale);
void iq_decode32(const BlockIQ1_M& b, int ib, int8_t* q, float* scale);
void iq_decode32(const BlockTQ1_0& b, int ib, int8_t* q, float* scale);
void iq_decode32(const BlockTQ2_0& b, int ib, int8_t* q, float* scale);

// The scales, inline: the kernels read a super-block's 16 at once.

// ggml's scale of the IQ2 types: (d * (0.5 + s)) / 4, in that order of float operations.
inline float iq2_scale(float d, int s) {
  return d * (0.5f + static_cast<float>(s)) * 0.25f;
}
inline uint32_t iq_word(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline float iq3xxs_scale(const BlockIQ3_XXS& b, int ib) {
  return f16_to_f32_fast(b.d) * (0.5f + static_cast<float>(iq_word(b.qs + 64 + 4 * ib) >> 28)) *
         0.5f;
}
inline float iq3s_scale(const BlockIQ3_S& b, int ib) {
  const int s = (b.scales[ib / 2] >> (4 * (ib % 2))) & 0xF;
  return f16_to_f32_fast(b.d) * static_cast<float>(1 + 2 * s);
}
inline float iq1s_scale(const BlockIQ1_S& b, int ib) {
  return f16_to_f32_fast(b.d) * static_cast<float>(2 * ((b.qh[ib] >> 12) & 7) + 1) * 0.125f;
}
// IQ1_M group ib's two scales (an eighth of d * (2s + 1): q holds 8 times the value).
inline void iq1m_scales32(const BlockIQ1_M& b, float d, int ib, float* scale) {
  uint16_t sc;
  std::memcpy(&sc, b.scales + 2 * (ib / 2), 2);
  for (int h = 0; h < 2; ++h) {
    const int s = (sc >> (6 * (ib % 2) + 3 * h)) & 7;
    scale[h] = d * static_cast<float>(2 * s + 1) * 0.125f;
  }
}

// A super-block's scales as integers for the matmul kernels: the scale of 16-value group g is
// D * S[g], S[g] odd (2s + 1), and D the f16 value iq_d_bits times kGridFactor (iq_decode32's
// float scales are these products). So a kernel sums S[g] * q * x over the whole super-block in
// integers, exact in any order, and takes D once. Always inlined: a kernel that called its scale
// reader saved every vector register around the call.
// (IQ2's and IQ1's scales count eighths of d, IQ3_XXS's quarters.)
template <class B>
constexpr float grid_factor() {
  if constexpr (std::is_same_v<B, BlockIQ3_XXS>)
    return 0.25f;
  else if constexpr (std::is_same_v<B, BlockIQ3_S> || std::is_same_v<B, BlockTQ1_0> ||
                     std::is_same_v<B, BlockTQ2_0>)
    return 1.0f;
  else
    return 0.125f;
}
template <class B>
inline constexpr float kGridFactor = grid_factor<B>();

template <class B>
uint16_t iq_d_bits(const B& b) {
  return b.d;
}
// IQ1_M has no stored f16 field: its scale is spread over the top nibbles of its scale words.
inline uint16_t iq_d_bits(const BlockIQ1_M& b) {
  uint16_t sc[4];
  std::memcpy(sc, b.scales, 8);
  return static_cast<uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) | ((sc[2] >> 4) & 0x0F00) |
                               (sc[3] & 0xF000));
}
template <class B>
float iq_grid_d(const B& b) {
  return f16_to_f32_fast(iq_d_bits(b)) * kGridFactor<B>;
}

[[gnu::always_inline]] inline void iq_int_scales(const BlockIQ2_XXS& b, uint8_t* S) {
  for (int ib = 0; ib < 8; ++ib)
    S[2 * ib] = S[2 * ib + 1] = static_cast<uint8_t>(2 * (iq_word(b.qs + 4 * ib + 2) >> 28) + 1);
}
template <class B>
requires std::is_same_v<B, BlockIQ2_XS> || std::is_same_v<B, BlockIQ2_S>
[[gnu::always_inline]] inline void iq_int_scales(const B& b, uint8_t* S) {
  for (int ib = 0; ib < 8; ++ib) {
    S[2 * ib] = static_cast<uint8_t>(2 * (b.scales[ib] & 0xF) + 1);
    S[2 * ib + 1] = static_cast<uint8_t>(2 * (b.scales[ib] >> 4) + 1);
  }
}
[[gnu::always_inline]] inline void iq_int_scales(const BlockIQ3_XXS& b, uint8_t* S) {
  for (int ib = 0; ib < 8; ++ib)
    S[2 * ib] = S[2 * ib + 1] = static_cast<uint8_t>(2 * (iq_word(b.qs + 64 + 4 * ib) >> 28) + 1);
}
[[gnu::always_inline]] inline void iq_int_scales(const BlockIQ3_S& b, uint8_t* S) {
  for (int ib = 0; ib < 8; ++ib)
    S[2 * ib] = S[2 * ib + 1] =
        static_cast<uint8_t>(2 * ((b.scales[ib / 2] >> (4 * (ib % 2))) & 0xF) + 1);
}
[[gnu::always_inline]] inline void iq_int_scales(const BlockIQ1_S& b, uint8_t* S) {
  for (int ib = 0; ib < 8; ++ib)
    S[2 * ib] = S[2 * ib + 1] = static_cast<uint8_t>(2 * ((b.qh[ib] >> 12) & 7) + 1);
}
[[gnu::always_inline]] inline void iq_int_scales(const BlockIQ1_M& b, uint8_t* S) {
  for (int ib = 0; ib < 8; ++ib) {
    uint16_t sc;
    std::memcpy(&sc, b.scales + 2 * (ib / 2), 2);
    for (int h = 0; h < 2; ++h)
      S[2 * ib + h] = static_cast<uint8_t>(2 * ((sc >> (6 * (ib % 2) + 3 * h)) & 7) + 1);
  }
}
template <class B>
requires std::is_same_v<B, BlockTQ1_0> || std::is_same_v<B, BlockTQ2_0>
[[gnu::always_inline]] inline void iq_int_scales(const B&, uint8_t* S) {
  for (int g = 0; g < 16; ++g) S[g] = 1;
}

// Quantizers of one super-block of 256 values. `importance` (optional, 256 values, from an
// importance matrix) weights each value's squared error.
void quantize_iq2_xxs(const float* x, BlockIQ2_XXS* b, const float* importance);
void quantize_iq2_xs(const float* x, BlockIQ2_XS* b, const float* importance);
void quantize_iq2_s(const float* x, BlockIQ2_S* b, const float* importance);
void quantize_iq3_xxs(const float* x, BlockIQ3_XXS* b, const float* importance);
void quantize_iq3_s(const float* x, BlockIQ3_S* b, const float* importance);
void quantize_iq1_s(const float* x, BlockIQ1_S* b, const float* importance);
void quantize_iq1_m(const float* x, BlockIQ1_M* b, const float* importance);
void quantize_tq1_0(const float* x, BlockTQ1_0* b, const float* importance);
void quantize_tq2_0(const float* x, BlockTQ2_0* b, const float* importance);

// The whole super-block (256 values).
template <class B>
void dequantize_iq(const B* b, float* y) {
  int8_t q[32];
  float s[2];
  for (int ib = 0; ib < 8; ++ib) {
    iq_decode32(*b, ib, q, s);
    for (int j = 0; j < 32; ++j) y[32 * ib + j] = s[j / 16] * static_cast<float>(q[j]);
  }
}

}  // namespace brisk
