// GGUF's IQ4_NL and IQ4_XS: 4-bit indices into one fixed table of 16 non-uniformly spaced values
// (denser near zero, where trained weights crowd), scaled per block. IQ4_NL has a scale per 32
// values; IQ4_XS groups 8 such blocks in a super-block of 256 with 6-bit scales of one f16 scale,
// for 4.25 bits per weight. Byte-exact to ggml's layouts.
#pragma once

#include <cstdint>

namespace brisk {

// The table, ascending.
inline constexpr int8_t kIQ4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                          1,    13,   25,  38,  53,  69,  89,  113};
// The same plus 128 (1..241): unsigned bytes, for the int8 kernels' unsigned operand.
alignas(16) inline constexpr uint8_t kIQ4ValuesPlus128[16] = {
    1, 24, 45, 63, 79, 93, 106, 118, 129, 141, 153, 166, 181, 197, 217, 241};

#pragma pack(push, 1)
// x = d * kIQ4Values[q]; the low nibbles of qs hold elements 0..15, the high ones 16..31.
struct BlockIQ4_NL {
  uint16_t d;
  uint8_t qs[16];
};
// Eight groups of 32 laid out as IQ4_NL's, group g scaled by d * (scale_g - 32), scale_g 6 bits:
// the low 4 in nibble g % 2 of scales_l[g / 2], the high 2 at bits 2g..2g+1 of scales_h.
struct BlockIQ4_XS {
  uint16_t d;
  uint16_t scales_h;
  uint8_t scales_l[4];
  uint8_t qs[128];
};
#pragma pack(pop)
static_assert(sizeof(BlockIQ4_NL) == 18 && sizeof(BlockIQ4_XS) == 136);

// Group g's signed scale (-32..31) of an IQ4_XS super-block.
inline int iq4xs_scale(const BlockIQ4_XS& b, int g) {
  const int lo = (b.scales_l[g / 2] >> (4 * (g % 2))) & 0xF;
  const int hi = (b.scales_h >> (2 * g)) & 3;
  return (lo | hi << 4) - 32;
}

void dequantize_iq4_nl(const BlockIQ4_NL* b, float* y);
void dequantize_iq4_xs(const BlockIQ4_XS* b, float* y);
// `w` (optional, one weight per element) weights each element's squared error.
void quantize_iq4_nl(const float* x, BlockIQ4_NL* b, const float* w);
void quantize_iq4_xs(const float* x, BlockIQ4_XS* b, const float* w);

}  // namespace brisk
