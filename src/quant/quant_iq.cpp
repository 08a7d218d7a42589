#include "quant/quant_iq.h"

namespace brisk {

namespace {

// 8 values from a grid point of magnitudes (one byte each, value j in byte j) and their signs.
template <class G>
void signed_point(G point, uint8_t signs, int8_t* q, int n = 8) {
  for (int j = 0; j < n; ++j) {
    const int m = static_cast<int>((point >> (8 * j)) & 0xFF);
    q[j] = static_cast<int8_t>((signs >> j) & 1 ? -m : m);
  }
}

}  // namespace

void iq_decode32(const BlockIQ2_XXS& b, int ib, int8_t* q, float* scale) {
  const uint32_t idx = iq_word(b.qs + 4 * ib), aux = iq_word(b.qs + 4 * ib + 2);
  scale[0] = scale[1] = iq2_scale(f16_to_f32_fast(b.d), static_cast<int>(aux >> 28));
  for (int l = 0; l < 4; ++l)
    signed_point(kIQ2XXSGrid[(idx >> (8 * l)) & 0xFF], kIQEvenSigns[(aux >> (7 * l)) & 127],
                 q + 8 * l);
}

void iq_decode32(const BlockIQ2_XS& b, int ib, int8_t* q, float* scale) {
  const float d = f16_to_f32_fast(b.d);
  scale[0] = iq2_scale(d, b.scales[ib] & 0xF);
  scale[1] = iq2_scale(d, b.scales[ib] >> 4);
  for (int l = 0; l < 4; ++l) {
    const uint16_t v = b.qs[4 * ib + l];
    signed_point(kIQ2XSGrid[v & 511], kIQEvenSigns[v >> 9], q + 8 * l);
  }
}

void iq_decode32(const BlockIQ2_S& b, int ib, int8_t* q, float* scale) {
  const float d = f16_to_f32_fast(b.d);
  scale[0] = iq2_scale(d, b.scales[ib] & 0xF);
  scale[1] = iq2_scale(d, b.scales[ib] >> 4);
  for (int l = 0; l < 4; ++l) {
    const int idx = b.qs[4 * ib + l] | ((b.qh[ib] << (8 - 2 * l)) & 0x300);
    signed_point(kIQ2SGrid[idx], b.qs[32 + 4 * ib + l], q + 8 * l);
  }
}

void iq_decode32(const BlockIQ3_XXS& b, int ib, int8_t* q, float* scale) {
  const uint32_t aux = iq_word(b.qs + 64 + 4 * ib);
  scale[0] = scale[1] = iq3xxs_scale(b, ib);
  for (int l = 0; l < 4; ++l) {
    const uint8_t signs = kIQEvenSigns[(aux >> (7 * l)) & 127];
    signed_point(kIQ3XXSGrid[b.qs[8 * ib + 2 * l]], signs, q + 8 * l, 4);
    signed_point(kIQ3XXSGrid[b.qs[8 * ib + 2 * l + 1]], static_cast<uint8_t>(signs >> 4),
                 q + 8 * l + 4, 4);
  }
}

void iq_decode32(const BlockIQ3_S& b, int ib, int8_t* q, float* scale) {
  scale[0] = scale[1] = iq3s_scale(b, ib);
  const uint8_t* qs = b.qs + 8 * ib;
  const int qh = b.qh[ib];
  for (int l = 0; l < 4; ++l) {
    const uint8_t signs = b.signs[4 * ib + l];
    signed_point(kIQ3SGrid[qs[2 * l] | ((qh << (8 - 2 * l)) & 256)], signs, q + 8 * l, 4);
    signed_point(kIQ3SGrid[qs[2 * l + 1] | ((qh << (7 - 2 * l)) & 256)],
                 static_cast<uint8_t>(signs >> 4), q + 8 * l + 4, 4);
  }
}

namespace {

// 8 values of an IQ1 grid point (bytes -1, 0, 1) shifted by +-1/8, times 8.
void iq1_point(int idx, bool minus, int8_t* q) {
  const uint64_t point = kIQ1SGrid[idx];
  for (int j = 0; j < 8; ++j)
    q[j] = static_cast<int8_t>(8 * static_cast<int8_t>(point >> (8 * j)) + (minus ? -1 : 1));
}

}  // namespace

void iq_decode32(const BlockIQ1_S& b, int ib, int8_t* q, float* scale) {
  const int qh = b.qh[ib];
  scale[0] = scale[1] = iq1s_scale(b, ib);
  for (int l = 0; l < 4; ++l)
    iq1_point(b.qs[4 * ib + l] | ((qh >> (3 * l)) & 7) << 8, (qh & 0x8000) != 0, q + 8 * l);
}

void iq_decode32(const BlockIQ1_M& b, int ib, int8_t* q, float* scale) {
  iq1m_scales32(b, f16_to_f32_fast(iq_d_bits(b)), ib, scale);
  for (int l = 0; l < 4; ++l) {
    const int qh = b.qh[2 * ib + l / 2] >> (4 * (l % 2));  // this group's nibble
    iq1_point(b.qs[4 * ib + l] | (qh & 7) << 8, (qh & 8) != 0, q + 8 * l);
  }
}

namespace {

// Digit n (0 = most significant) of a TQ1_0 byte.
int tq1_digit(uint8_t byte, int n) {
  static constexpr uint8_t kPow3[5] = {1, 3, 9, 27, 81};
  const auto v = static_cast<uint8_t>(byte * kPow3[n]);  // mod 256 on purpose
  return (v * 3) >> 8;
}

}  // namespace

void iq_decode32(const BlockTQ1_0& b, int ib, int8_t* q, float* scale) {
  scale[0] = scale[1] = f16_to_f32_fast(b.d);
  for (int j = 0; j < 32; ++j) {
    // Values 0..159: digit e / 32 of qs[e % 32]; 160..239: digit of qs[32 + e % 16]; 240..255:
    // digit (e - 240) / 4 of qh[e % 4].
    const int e = 32 * ib + j;
    int digit;
    if (e < 160)
      digit = tq1_digit(b.qs[e % 32], e / 32);
    else if (e < 240)
      digit = tq1_digit(b.qs[32 + (e - 160) % 16], (e - 160) / 16);
    else
      digit = tq1_digit(b.qh[(e - 240) % 4], (e - 240) / 4);
    q[j] = static_cast<int8_t>(digit - 1);
  }
}

void iq_decode32(const BlockTQ2_0& b, int ib, int8_t* q, float* scale) {
  scale[0] = scale[1] = f16_to_f32_fast(b.d);
  const uint8_t* qs = b.qs + 32 * (ib / 4);
  for (int j = 0; j < 32; ++j) q[j] = static_cast<int8_t>(((qs[j] >> (2 * (ib % 4))) & 3) - 1);
}

}  // namespace brisk
