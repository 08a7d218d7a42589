// OCP's MXFP4, GGML type 39 (the type gpt-oss ships its experts in): blocks of 32 values, each a
// 4-bit E2M1 float (sign, 2 exponent bits, 1 mantissa bit: 0, ±0.5, ±1, ±1.5, ±2, ±3, ±4, ±6), with
// one shared power-of-two scale stored as an E8M0 byte. Byte-exact to ggml's layout: the scale,
// then 16 bytes whose low nibbles hold values 0..15 and high nibbles 16..31.
#pragma once

#include <cstdint>
#include <cstring>

namespace brisk {

// The E2M1 values doubled (so they are integers), as ggml keeps them; the scale is halved to match.
inline constexpr int8_t kMXFP4Values[16] = {0, 1,  2,  3,  4,  6,  8,  12,
                                            0, -1, -2, -3, -4, -6, -8, -12};
// The same plus 128, as the int8 kernels' unsigned operand reads them.
alignas(16) inline constexpr uint8_t kMXFP4ValuesPlus128[16] = {
    128, 129, 130, 131, 132, 134, 136, 140, 128, 127, 126, 125, 124, 122, 120, 116};

#pragma pack(push, 1)
// x = mxfp4_half_scale(e) * kMXFP4Values[q].
struct BlockMXFP4 {
  uint8_t e;
  uint8_t qs[16];
};
#pragma pack(pop)
static_assert(sizeof(BlockMXFP4) == 17);

// Half of the E8M0 scale 2^(e - 127), that is 2^(e - 128): exact for every byte (subnormal for
// e = 0 and 1). The NaN code 255 reads as 2^127, as in ggml.
inline float mxfp4_half_scale(uint8_t e) {
  const uint32_t bits = e < 2 ? 0x00200000u << e : static_cast<uint32_t>(e - 1) << 23;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

void dequantize_mxfp4(const BlockMXFP4* b, float* y);
// The scale from the block's largest magnitude (as ggml's reference quantizer: its exponent
// less 2, so that 6 × scale covers it), each value the nearest of the 16. `w` is not used: with a
// power-of-two scale fixed by the maximum there is nothing for an importance to choose.
void quantize_mxfp4(const float* x, BlockMXFP4* b, const float* w);

}  // namespace brisk
