// GGUF quantized blocks: hand-built blocks whose values are worked out by hand from the layout,
// and quantize → dequantize round trips of every type with error bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/error.h"
#include "quant/quant.h"
#include "quant/quant_iq.h"
#include "quant/quant_iq4.h"
#include "quant/quant_mxfp4.h"
#include "support/test_util.h"

namespace brisk {
namespace {

std::vector<float> deq(DType t, const void* blk, int n) {
  std::vector<float> y(static_cast<size_t>(n));
  dequantize_row(t, blk, y.data(), n);
  return y;
}

TEST(Quant, HandBuiltLegacyBlocks) {
  {  // Q4_0: x = d * (q - 8); byte j holds element j (low nibble) and j + 16 (high).
    BlockQ4_0 b{};
    b.d = f32_to_f16(0.5f);
    b.qs[0] = 0x3F;  // element 0: 15 → 3.5, element 16: 3 → -2.5
    b.qs[5] = 0x80;  // element 5: 0 → -4, element 21: 8 → 0
    const auto y = deq(DType::Q4_0, &b, 32);
    EXPECT_EQ(y[0], 3.5f);
    EXPECT_EQ(y[16], -2.5f);
    EXPECT_EQ(y[5], -4.0f);
    EXPECT_EQ(y[21], 0.0f);
    EXPECT_EQ(y[1], -4.0f);  // q = 0
  }
  {  // Q4_1: x = d * q + m.
    BlockQ4_1 b{};
    b.d = f32_to_f16(0.25f), b.m = f32_to_f16(-1.0f);
    b.qs[2] = 0xA4;  // element 2: 4 → 0, element 18: 10 → 1.5
    const auto y = deq(DType::Q4_1, &b, 32);
    EXPECT_EQ(y[2], 0.0f);
    EXPECT_EQ(y[18], 1.5f);
    EXPECT_EQ(y[0], -1.0f);
  }
  {  // Q5_0: x = d * (q - 16); bit i of qh (little-endian) is element i's fifth bit.
    BlockQ5_0 b{};
    b.d = f32_to_f16(2.0f);
    b.qs[3] = 0x21;    // element 3: low 1, element 19: low 2
    b.qh[0] = 1 << 3;  // element 3's fifth bit → q = 17 → 2
    b.qh[2] = 1 << 3;  // bit 19: element 19 → q = 18 → 4
    const auto y = deq(DType::Q5_0, &b, 32);
    EXPECT_EQ(y[3], 2.0f);
    EXPECT_EQ(y[19], 4.0f);
    EXPECT_EQ(y[0], -32.0f);
  }
  {  // Q5_1: x = d * q + m.
    BlockQ5_1 b{};
    b.d = f32_to_f16(1.0f), b.m = f32_to_f16(0.5f);
    b.qs[15] = 0xF0;  // element 31: low 15
    b.qh[3] = 0x80;   // bit 31: element 31 → q = 31 → 31.5
    const auto y = deq(DType::Q5_1, &b, 32);
    EXPECT_EQ(y[31], 31.5f);
    EXPECT_EQ(y[15], 0.5f);
  }
  {  // Q8_0: x = d * q.
    BlockQ8_0 b{};
    b.d = f32_to_f16(0.125f);
    b.qs[7] = -100;
    EXPECT_EQ(deq(DType::Q8_0, &b, 32)[7], -12.5f);
  }
}

TEST(Quant, HandBuiltKQuantBlocks) {
  {  // Q2_K: 16 groups of 16, scale (low nibble) and min (high nibble) per group;
     // x = d * scale * q - dmin * min; byte b of qs holds elements 32k + b (bits 2k, 2k+1) of
     // the first 128, bytes 32.. the same for the second 128.
    BlockQ2_K b{};
    b.d = f32_to_f16(1.0f), b.dmin = f32_to_f16(0.5f);
    b.qs[0] = 0b11100100;   // elements 0: 0, 32: 1, 64: 2, 96: 3
    b.qs[33] = 0b00000011;  // element 128 + 1 = 129: 3
    b.scales[0] = 0x21;     // group 0 (elements 0..15): scale 1, min 2
    b.scales[2] = 0x03;     // group 2 (32..47): scale 3, min 0
    b.scales[4] = 0x12;     // group 4 (64..79): scale 2, min 1
    b.scales[6] = 0xF5;     // group 6 (96..111): scale 5, min 15
    b.scales[8] = 0x04;     // group 8 (128..143): scale 4
    const auto y = deq(DType::Q2_K, &b, 256);
    EXPECT_EQ(y[0], -1.0f);    // 1*1*0 - 0.5*2
    EXPECT_EQ(y[32], 3.0f);    // 3*1
    EXPECT_EQ(y[64], 3.5f);    // 2*2 - 0.5
    EXPECT_EQ(y[96], 7.5f);    // 5*3 - 7.5
    EXPECT_EQ(y[129], 12.0f);  // 4*3
  }
  {  // Q3_K: values (2 bits in qs as Q2_K, third bit in hmask: byte e%32, bit 4*(e/128) +
     // (e%128)/32; a clear bit subtracts 4), 16 signed 6-bit scales minus 32 (low nibbles in
     // bytes 0..7 — groups 8..15 in the high nibbles — and the top 2 bits in bytes 8..11).
    BlockQ3_K b{};
    b.d = f32_to_f16(0.5f);
    // Group 0 scale: 6-bit 40 → 8: low nibble 8 in byte 0, top bits 2 in byte 8 bits 0-1.
    b.scales[0] = 0x08, b.scales[8] = 0x02;
    // Group 9 scale: 6-bit 29 → -3: low nibble 13 in the high nibble of byte 1, top bits 1 in
    // byte 8 + 9%4 = 9, at bits 2*(9/4) = 4.
    b.scales[1] = 0xD0, b.scales[9] = 0x01 << 4;
    b.qs[3] = 0x02;        // element 3: 2 low bits = 2
    b.hmask[3] = 0x01;     // its high bit set: q = 2
    b.qs[32 + 17] = 0x01;  // element 128 + 17 = 145 (group 9): low bits 1, high bit clear: -3
    const auto y = deq(DType::Q3_K, &b, 256);
    EXPECT_EQ(y[3], 8.0f);    // 0.5 * 8 * 2
    EXPECT_EQ(y[145], 4.5f);  // 0.5 * -3 * -3
    EXPECT_EQ(y[0], -16.0f);  // q = 0 - 4 with scale 8
  }
  {  // Q4_K: 8 groups of 32 with 6-bit scale/min: groups 0..3 in the low 6 bits of bytes 0..3
     // (scales) and 4..7 (mins); groups 4..7 in bytes 8..11 (low nibble scale, high nibble min)
     // plus the top 2 bits of bytes 0..3 (scale) and 4..7 (min). Byte c*32 + l of qs: element
     // 64c + l (low nibble) and 64c + 32 + l (high).
    BlockQ4_K b{};
    b.d = f32_to_f16(0.25f), b.dmin = f32_to_f16(1.0f);
    b.scales[1] = 4, b.scales[5] = 3;  // group 1: scale 4, min 3
    // Group 6: scale 0b100101 = 37, min 0b010010 = 18.
    b.scales[10] = (37 & 0xF) | (18 & 0xF) << 4;
    b.scales[2] |= (37 >> 4) << 6;
    b.scales[6] |= (18 >> 4) << 6;
    b.qs[0 * 32 + 5] = 0x90;  // element 32 + 5 = 37 (group 1): 9
    b.qs[3 * 32 + 1] = 0x06;  // element 193 (group 6): 6
    const auto y = deq(DType::Q4_K, &b, 256);
    EXPECT_EQ(y[37], 6.0f);    // 0.25*4*9 - 3
    EXPECT_EQ(y[193], 37.5f);  // 0.25*37*6 - 18
  }
  {  // Q5_K: as Q4_K, fifth bit of element 64c + l in qh[l] bit 2c, of 64c + 32 + l in bit 2c+1.
    BlockQ5_K b{};
    b.d = f32_to_f16(1.0f), b.dmin = f32_to_f16(0.0f);
    b.scales[0] = 1, b.scales[3] = 2;  // groups 0 and 3
    b.qs[2] = 0x03;                    // element 2: low 3
    b.qh[2] = 1 << 0;                  // fifth bit: 19
    b.qs[32 + 7] = 0x10;               // element 64 + 32 + 7 = 103 (group 3): low 1
    b.qh[7] = 1 << 3;                  // fifth bit: 17
    const auto y = deq(DType::Q5_K, &b, 256);
    EXPECT_EQ(y[2], 19.0f);
    EXPECT_EQ(y[103], 34.0f);
  }
  {  // Q6_K: per half of 128: ql bytes 0..63, qh bytes 0..31; element 32q + l of the half takes
     // the low or high nibble (q >= 2) of ql[l + 32*(q%2)] and bits 2q..2q+1 of qh[l]; minus 32;
     // signed 8-bit scale per group of 16.
    BlockQ6_K b{};
    b.d = f32_to_f16(0.5f);
    b.scales[0] = -2, b.scales[6] = 3, b.scales[12] = 1;
    b.ql[4] = 0x0A;       // element 4 (group 0): low 10
    b.qh[4] = 0x02;       // bits 0-1 = 2: q = 42 → 10
    b.ql[32 + 9] = 0x50;  // element 96 + 9 = 105 (group 6): high nibble 5
    b.qh[9] = 0x03 << 6;  // bits 6-7 = 3: q = 53 → 21
    b.ql[64 + 0] = 0x00;  // element 128 + 64 = 192 (group 12): 0 - 32 = -32
    const auto y = deq(DType::Q6_K, &b, 256);
    EXPECT_EQ(y[4], -10.0f);    // 0.5 * -2 * 10
    EXPECT_EQ(y[105], 31.5f);   // 0.5 * 3 * 21
    EXPECT_EQ(y[192], -16.0f);  // 0.5 * 1 * -32
  }
}

// MXFP4: x = 2^(e - 128) * doubled E2M1 value, low nibbles elements 0..15, high 16..31.
TEST(Quant, HandBuiltMXFP4Block) {
  BlockMXFP4 b{};
  b.e = 127 + 3;   // scale 2^3, halved: 4
  b.qs[0] = 0xF7;  // element 0: index 7 = 12 (6.0); element 16: index 15 = -12 (-6.0)
  b.qs[5] = 0x91;  // element 5: index 1 = 1 (0.5); element 21: index 9 = -1 (-0.5)
  const auto y = deq(DType::MXFP4, &b, 32);
  EXPECT_EQ(y[0], 48.0f);
  EXPECT_EQ(y[16], -48.0f);
  EXPECT_EQ(y[5], 4.0f);
  EXPECT_EQ(y[21], -4.0f);
  EXPECT_EQ(y[1], 0.0f);
  // Every scale byte is exact, the subnormal ones too.
  EXPECT_EQ(mxfp4_half_scale(0), std::ldexp(1.0f, -128));
  EXPECT_EQ(mxfp4_half_scale(1), std::ldexp(1.0f, -127));
  EXPECT_EQ(mxfp4_half_scale(200), std::ldexp(1.0f, 72));
  // The quantizer: the scale covers the block's largest value with 6; values go to the nearest.
  float x[32] = {};
  x[3] = 24.0f, x[4] = -5.0f, x[30] = 2.9f;
  BlockMXFP4 q{};
  quantize_row(DType::MXFP4, x, &q, 32);
  EXPECT_EQ(q.e, 127 + 2);  // floor(log2 24) - 2 = 2: 6 * 2^2 = 24
  const auto z = deq(DType::MXFP4, &q, 32);
  EXPECT_EQ(z[3], 24.0f);
  EXPECT_EQ(z[4], -4.0f);  // -5 between -4 and -6: the nearest first, -4
  EXPECT_EQ(z[30], 2.0f);
}

TEST(Quant, HandBuiltIQ4Blocks) {
  {  // IQ4_NL: x = d * table[q], low nibbles elements 0..15, high 16..31.
    BlockIQ4_NL b{};
    b.d = f32_to_f16(0.5f);
    b.qs[0] = 0xF0;  // element 0: table[0] = -127; element 16: table[15] = 113
    b.qs[7] = 0x98;  // element 7: table[8] = 1; element 23: table[9] = 13
    const auto y = deq(DType::IQ4_NL, &b, 32);
    EXPECT_EQ(y[0], -63.5f);
    EXPECT_EQ(y[16], 56.5f);
    EXPECT_EQ(y[7], 0.5f);
    EXPECT_EQ(y[23], 6.5f);
    EXPECT_EQ(y[1], -63.5f);  // index 0 everywhere else
  }
  {  // IQ4_XS: group g scaled by d * (6-bit scale - 32), scale bits split over scales_l/scales_h.
    BlockIQ4_XS b{};
    b.d = f32_to_f16(0.25f);
    // Group 0: scale 34 (low 4 bits 2, high 2 bits 2) → 2; group 5: scale 31 → -1; group 7: 0 →
    // -32; every other group: 32 → 0 (low 0, high 2).
    const int scale[8] = {34, 32, 32, 32, 32, 31, 32, 0};
    for (int g = 0; g < 8; ++g) {
      b.scales_l[g / 2] |= static_cast<uint8_t>((scale[g] & 0xF) << (4 * (g % 2)));
      b.scales_h |= static_cast<uint16_t>((scale[g] >> 4) << (2 * g));
    }
    b.qs[0] = 0x0F;            // group 0, element 0: table[15] = 113; element 16: table[0]
    b.qs[5 * 16 + 3] = 0x7A;   // group 5, element 3: table[10] = 25; element 19: table[7] = -10
    b.qs[7 * 16 + 15] = 0x08;  // group 7, element 15: table[8] = 1; element 31: table[0] = -127
    const auto y = deq(DType::IQ4_XS, &b, 256);
    EXPECT_EQ(y[0], 56.5f);           // 0.25 * 2 * 113
    EXPECT_EQ(y[16], -63.5f);         // 0.25 * 2 * -127
    EXPECT_EQ(y[160 + 3], -6.25f);    // 0.25 * -1 * 25
    EXPECT_EQ(y[160 + 19], 2.5f);     // 0.25 * -1 * -10
    EXPECT_EQ(y[224 + 15], -8.0f);    // 0.25 * -32 * 1
    EXPECT_EQ(y[224 + 31], 1016.0f);  // 0.25 * -32 * -127
    EXPECT_EQ(y[40], 0.0f);           // group 1: scale 0
  }
}

// The grid points used below (the format's tables): IQ2 grids' point 0 is all 8s and point 1 is
// (43, 8, ..., 8); the last IQ2_XS/IQ2_S point is all 43s. IQ3_XXS point 1 is (20, 4, 4, 4), IQ3_S
// point 1 (3, 1, 1, 1) and point 511 (1, 1, 15, 15). IQ1 point 0 is all -1, point 1 (1, -1, ...),
// point 2047 all +1.
TEST(Quant, HandBuiltIQ2Blocks) {
  {  // IQ2_XXS: per 32 values 4 index bytes, then 4 x 7 sign bits and a 4-bit scale at the top.
    BlockIQ2_XXS b{};
    b.d = f32_to_f16(1.0f);
    const uint32_t idx = 1, aux = 1u | 3u << 28;  // value 0 negative (so 7 too); scale 3.5 / 4
    std::memcpy(b.qs + 4, &idx, 4);               // group 1 (values 32..63)
    std::memcpy(b.qs + 6, &aux, 4);
    const auto y = deq(DType::IQ2_XXS, &b, 256);
    EXPECT_EQ(y[32], -37.625f);  // 0.875 * -43
    EXPECT_EQ(y[33], 7.0f);
    EXPECT_EQ(y[39], -7.0f);  // the parity sign
    EXPECT_EQ(y[40], 7.0f);
  }
  {  // IQ2_XS: 9-bit index + 7 sign bits per 8 values, 4-bit scales per 16.
    BlockIQ2_XS b{};
    b.d = f32_to_f16(0.5f);
    b.qs[0] = 511 | 3 << 9;  // all 43s, values 0 and 1 negative
    b.qs[2] = 1;
    b.scales[0] = 0x51;  // first 16: 0.5 * 1.5 / 4; second: 0.5 * 5.5 / 4
    const auto y = deq(DType::IQ2_XS, &b, 256);
    EXPECT_EQ(y[0], -8.0625f);
    EXPECT_EQ(y[1], -8.0625f);
    EXPECT_EQ(y[2], 8.0625f);
    EXPECT_EQ(y[16], 29.5625f);  // 0.6875 * 43
    EXPECT_EQ(y[17], 5.5f);
  }
  {  // IQ2_S: 10-bit indices (2 high bits in qh), 8 full sign bits in qs[32..].
    BlockIQ2_S b{};
    b.d = f32_to_f16(1.0f);
    b.qs[8 + 3] = 0xFF, b.qh[2] = 3 << 6;  // group 2, point 3: index 1023
    b.qs[32 + 8 + 3] = 0x80;               // its value 7 negative
    b.qs[8] = 1;                           // group 2, point 0: index 1
    b.scales[2] = 0x20;                    // 0.5 / 4 and 2.5 / 4
    const auto y = deq(DType::IQ2_S, &b, 256);
    EXPECT_EQ(y[64], 5.375f);  // 0.125 * 43
    EXPECT_EQ(y[65], 1.0f);
    EXPECT_EQ(y[64 + 24], 26.875f);  // 0.625 * 43
    EXPECT_EQ(y[64 + 31], -26.875f);
  }
}

TEST(Quant, HandBuiltIQ3AndIQ1Blocks) {
  {  // IQ3_XXS: 8 index bytes per 32 values (4-value points), signs and scale after all indices.
    BlockIQ3_XXS b{};
    b.d = f32_to_f16(1.0f);
    b.qs[0] = 1;
    const uint32_t aux = 1u << 4 | 1u << 28;  // value 4 negative (so 7 too); scale 1.5 / 2
    std::memcpy(b.qs + 64, &aux, 4);
    const auto y = deq(DType::IQ3_XXS, &b, 256);
    EXPECT_EQ(y[0], 15.0f);
    EXPECT_EQ(y[1], 3.0f);
    EXPECT_EQ(y[4], -3.0f);
    EXPECT_EQ(y[5], 3.0f);
    EXPECT_EQ(y[7], -3.0f);
  }
  {  // IQ3_S: 9-bit indices (bit k of qh[ib] for point k), sign bytes, scale d * (1 + 2s).
    BlockIQ3_S b{};
    b.d = f32_to_f16(0.5f);
    b.qs[8] = 255, b.qh[1] = 1;  // group 1, point 0: index 511
    b.qs[9] = 1;                 // point 1: index 1
    b.signs[4] = 0x05;           // values 0 and 2 of group 1 negative
    b.scales[0] = 2 << 4;        // group 1: 0.5 * 5
    const auto y = deq(DType::IQ3_S, &b, 256);
    EXPECT_EQ(y[32], -2.5f);
    EXPECT_EQ(y[33], 2.5f);
    EXPECT_EQ(y[34], -37.5f);
    EXPECT_EQ(y[35], 37.5f);
    EXPECT_EQ(y[36], 7.5f);
    EXPECT_EQ(y[37], 2.5f);
  }
  {  // IQ1_S: qh per 32 values: 3 high index bits per point, a 3-bit scale, the shift's sign.
    BlockIQ1_S b{};
    b.d = f32_to_f16(0.5f);
    b.qs[0] = 255;
    b.qh[0] = 7 | 2 << 12 | 0x8000;  // point 0: index 2047; scale 0.5 * 5; shift -1/8
    const auto y = deq(DType::IQ1_S, &b, 256);
    EXPECT_EQ(y[0], 2.1875f);   // 2.5 * (1 - 1/8)
    EXPECT_EQ(y[8], -2.8125f);  // point 1: index 0, 2.5 * (-1 - 1/8)
  }
  {  // IQ1_M: the f16 scale in the top nibbles of the 4 scale words; scales per 16, shifts per 8.
    BlockIQ1_M b{};
    const uint16_t h = f32_to_f16(1.0f);
    uint16_t sc[4] = {};
    for (int k = 0; k < 4; ++k) sc[k] = static_cast<uint16_t>(((h >> (4 * k)) & 0xF) << 12);
    sc[0] |= 1 | 2 << 3;  // group 0: values 0..15 scaled by 3, 16..31 by 5
    std::memcpy(b.scales, sc, 8);
    b.qs[0] = 255, b.qh[0] = 0x7 | 0x8;  // point 0: index 2047, shift -1/8
    b.qs[1] = 1;                         // point 1: index 1, shift +1/8
    const auto y = deq(DType::IQ1_M, &b, 256);
    EXPECT_EQ(y[0], 2.625f);    // 3 * (1 - 1/8)
    EXPECT_EQ(y[8], 3.375f);    // 3 * (1 + 1/8)
    EXPECT_EQ(y[9], -2.625f);   // 3 * (-1 + 1/8)
    EXPECT_EQ(y[16], -4.375f);  // point 2: index 0, 5 * (-1 + 1/8)
  }
}

TEST(Quant, HandBuiltTernaryBlocks) {
  {  // TQ2_0: 2 bits per value minus 1; byte j of each 32 holds values j, j+32, j+64, j+96.
    BlockTQ2_0 b{};
    b.d = f32_to_f16(0.5f);
    b.qs[0] = 0b11100100;
    b.qs[32 + 5] = 0b10;
    const auto y = deq(DType::TQ2_0, &b, 256);
    EXPECT_EQ(y[0], -0.5f);
    EXPECT_EQ(y[32], 0.0f);
    EXPECT_EQ(y[64], 0.5f);
    EXPECT_EQ(y[96], 1.0f);
    EXPECT_EQ(y[128 + 5], 0.5f);
  }
  {  // TQ1_0: five base-3 digits per byte, the byte = ceil(digits * 256 / 243).
    BlockTQ1_0 b{};
    b.d = f32_to_f16(2.0f);
    b.qs[3] = 188;  // digits 2 0 1 2 1: values 3, 35, 67, 99, 131
    b.qh[1] = 80;   // digits 0 2 2 1: values 241, 245, 249, 253
    const auto y = deq(DType::TQ1_0, &b, 256);
    const float want[] = {2, -2, 0, 2, 0};
    for (int k = 0; k < 5; ++k) EXPECT_EQ(y[3 + 32 * k], want[k]) << k;
    const float want_h[] = {-2, 2, 2, 0};
    for (int k = 0; k < 4; ++k) EXPECT_EQ(y[241 + 4 * k], want_h[k]) << k;
    EXPECT_EQ(y[162], -2.0f);  // digit 0 of a zero byte
  }
}

// The integer form of the grid types' scales (iq_int_scales, iq_grid_d), which the matmul kernels
// sum with, gives the same scale per 16 values as the decoder, on blocks of random bytes.
template <class B>
void expect_int_scales_match_decoder(uint64_t seed) {
  uint64_t x = seed;
  for (int rep = 0; rep < 200; ++rep) {
    B b;
    auto* bytes = reinterpret_cast<uint8_t*>(&b);
    for (size_t i = 0; i < sizeof(B); ++i) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      bytes[i] = static_cast<uint8_t>(x >> 24);
    }
    // A finite f16 scale (random bytes may spell an infinity or NaN).
    const uint16_t h = f32_to_f16(0.001f * static_cast<float>(rep % 13 + 1));
    if constexpr (std::is_same_v<B, BlockIQ1_M>) {
      for (int k = 0; k < 4; ++k) {
        uint16_t sc;
        std::memcpy(&sc, b.scales + 2 * k, 2);
        sc = static_cast<uint16_t>((sc & 0x0FFF) | ((h >> (4 * k)) & 0xF) << 12);
        std::memcpy(b.scales + 2 * k, &sc, 2);
      }
    } else {
      b.d = h;
    }
    uint8_t S[16];
    iq_int_scales(b, S);
    const float d = iq_grid_d(b);
    for (int ib = 0; ib < 8; ++ib) {
      int8_t q[32];
      float scale[2];
      iq_decode32(b, ib, q, scale);
      for (int hh = 0; hh < 2; ++hh) {
        ASSERT_EQ(S[2 * ib + hh] % 2, 1);
        ASSERT_EQ(d * static_cast<float>(S[2 * ib + hh]), scale[hh]) << "group " << 2 * ib + hh;
      }
    }
  }
}

TEST(Quant, GridIntegerScalesAreTheDecodersScales) {
  expect_int_scales_match_decoder<BlockIQ2_XXS>(1);
  expect_int_scales_match_decoder<BlockIQ2_XS>(2);
  expect_int_scales_match_decoder<BlockIQ2_S>(3);
  expect_int_scales_match_decoder<BlockIQ3_XXS>(4);
  expect_int_scales_match_decoder<BlockIQ3_S>(5);
  expect_int_scales_match_decoder<BlockIQ1_S>(6);
  expect_int_scales_match_decoder<BlockIQ1_M>(7);
  expect_int_scales_match_decoder<BlockTQ1_0>(8);
  expect_int_scales_match_decoder<BlockTQ2_0>(9);
}

// Values that are already ternary come back exactly.
TEST(Quant, TernaryRoundTripsExactly) {
  const int n = 512;
  const auto r = test::random_floats(n, 5);
  std::vector<float> x(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    x[static_cast<size_t>(i)] = r[static_cast<size_t>(i)] > 0.3f    ? 0.75f
                                : r[static_cast<size_t>(i)] < -0.3f ? -0.75f
                                                                    : 0.0f;
  for (DType t : {DType::TQ1_0, DType::TQ2_0}) {
    std::vector<uint8_t> q(*dtype_row_bytes(t, n));
    quantize_row(t, x.data(), q.data(), n);
    EXPECT_EQ(deq(t, q.data(), n), x) << dtype_name(t);
  }
}

TEST(Quant, RoundTripsWithinEachTypesError) {
  const int n = 256 * 8;
  auto x = test::random_floats(n, 3);
  // Outliers, as real weights have: they cost the 32-element types with one scale the most.
  for (int i = 0; i < n; i += 97) x[static_cast<size_t>(i)] *= 6;
  double rms = 0;
  for (float v : x) rms += v * v;
  rms = std::sqrt(rms / n);
  const std::pair<DType, double> cases[] = {
      {DType::Q8_0, 0.01},   {DType::Q6_K, 0.025},  {DType::Q5_0, 0.07},   {DType::Q5_1, 0.05},
      {DType::Q5_K, 0.05},   {DType::Q4_0, 0.14},   {DType::Q4_1, 0.10},   {DType::Q4_K, 0.10},
      {DType::Q3_K, 0.20},   {DType::Q2_K, 0.40},   {DType::F16, 1e-3},    {DType::BF16, 5e-3},
      {DType::IQ4_NL, 0.12}, {DType::IQ4_XS, 0.12}, {DType::IQ3_S, 0.25},  {DType::IQ3_XXS, 0.30},
      {DType::IQ2_S, 0.45},  {DType::IQ2_XS, 0.45}, {DType::IQ2_XXS, 0.5}, {DType::IQ1_M, 0.65},
      {DType::IQ1_S, 0.7},   {DType::MXFP4, 0.2}};
  for (auto [t, bound] : cases) {
    std::vector<uint8_t> q(*dtype_row_bytes(t, n));
    quantize_row(t, x.data(), q.data(), n);
    std::vector<float> y(static_cast<size_t>(n));
    dequantize_row(t, q.data(), y.data(), n);
    double err = 0;
    for (int i = 0; i < n; ++i)
      err += (x[static_cast<size_t>(i)] - y[static_cast<size_t>(i)]) *
             (x[static_cast<size_t>(i)] - y[static_cast<size_t>(i)]);
    err = std::sqrt(err / n);
    EXPECT_LT(err / rms, bound) << dtype_name(t);
    // A zero row stays zero.
    std::vector<float> z(static_cast<size_t>(n), 0.0f);
    quantize_row(t, z.data(), q.data(), n);
    dequantize_row(t, q.data(), y.data(), n);
    for (float v : y) ASSERT_EQ(v, 0.0f) << dtype_name(t);
  }
}

TEST(Quant, ImportanceLowersTheErrorWhereItIsHigh) {
  const int n = 256 * 4;
  const auto x = test::random_floats(n, 8);
  std::vector<float> w(static_cast<size_t>(n), 1.0f);
  for (int i = 0; i < n; i += 8) w[static_cast<size_t>(i)] = 100.0f;
  for (DType t : {DType::Q4_0, DType::Q4_K, DType::Q3_K, DType::Q6_K, DType::IQ4_NL, DType::IQ4_XS,
                  DType::IQ3_S, DType::IQ3_XXS, DType::IQ2_S, DType::IQ2_XS, DType::IQ2_XXS,
                  DType::IQ1_M, DType::IQ1_S}) {
    std::vector<uint8_t> q(*dtype_row_bytes(t, n));
    std::vector<float> y(static_cast<size_t>(n));
    auto werr = [&](const float* imp) {
      quantize_row(t, x.data(), q.data(), n, imp);
      dequantize_row(t, q.data(), y.data(), n);
      double e = 0;
      for (int i = 0; i < n; ++i) {
        const double d = x[static_cast<size_t>(i)] - y[static_cast<size_t>(i)];
        e += w[static_cast<size_t>(i)] * d * d;
      }
      return e;
    };
    EXPECT_LT(werr(w.data()), werr(nullptr)) << dtype_name(t);
  }
}

TEST(Quant, RejectsPartialBlocks) {
  std::vector<float> x(100, 1.0f);
  std::vector<uint8_t> q(1024);
  EXPECT_THROW(quantize_row(DType::Q4_K, x.data(), q.data(), 100), Error);
  EXPECT_THROW(quantize_row(DType::Q8_1, x.data(), q.data(), 256), Error);
}

}  // namespace
}  // namespace brisk
