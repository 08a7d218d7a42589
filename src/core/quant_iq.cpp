#include "core/quant_iq.h"

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

uint32_t load32(const void* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// ggml's scale of the IQ2 types: (d * (0.5 + s)) / 4, in that order of float operations.
float iq2_scale(float d, int s) {
  return d * (0.5f + static_cast<float>(s)) * 0.25f;
}

}  // namespace

void iq_scales16(const BlockIQ2_XXS& b, float* scale) {
  const float d = f16_to_f32(b.d);
  for (int ib = 0; ib < 8; ++ib)
    scale[2 * ib] = scale[2 * ib + 1] =
        iq2_scale(d, static_cast<int>(load32(b.qs + 4 * ib + 2) >> 28));
}

void iq_decode32(const BlockIQ2_XXS& b, int ib, int8_t* q, float* scale) {
  const uint32_t idx = load32(b.qs + 4 * ib), aux = load32(b.qs + 4 * ib + 2);
  scale[0] = scale[1] = iq2_scale(f16_to_f32(b.d), static_cast<int>(aux >> 28));
  for (int l = 0; l < 4; ++l)
    signed_point(kIQ2XXSGrid[(idx >> (8 * l)) & 0xFF], kIQEvenSigns[(aux >> (7 * l)) & 127],
                 q + 8 * l);
}

// IQ2_XS and IQ2_S: a 4-bit scale per 16 values.
namespace {

template <class B>
void iq2_nibble_scales(const B& b, float* scale) {
  const float d = f16_to_f32(b.d);
  for (int ib = 0; ib < 8; ++ib) {
    scale[2 * ib] = iq2_scale(d, b.scales[ib] & 0xF);
    scale[2 * ib + 1] = iq2_scale(d, b.scales[ib] >> 4);
  }
}

}  // namespace

void iq_scales16(const BlockIQ2_XS& b, float* scale) {
  iq2_nibble_scales(b, scale);
}
void iq_scales16(const BlockIQ2_S& b, float* scale) {
  iq2_nibble_scales(b, scale);
}

void iq_decode32(const BlockIQ2_XS& b, int ib, int8_t* q, float* scale) {
  const float d = f16_to_f32(b.d);
  scale[0] = iq2_scale(d, b.scales[ib] & 0xF);
  scale[1] = iq2_scale(d, b.scales[ib] >> 4);
  for (int l = 0; l < 4; ++l) {
    const uint16_t v = b.qs[4 * ib + l];
    signed_point(kIQ2XSGrid[v & 511], kIQEvenSigns[v >> 9], q + 8 * l);
  }
}

void iq_decode32(const BlockIQ2_S& b, int ib, int8_t* q, float* scale) {
  const float d = f16_to_f32(b.d);
  scale[0] = iq2_scale(d, b.scales[ib] & 0xF);
  scale[1] = iq2_scale(d, b.scales[ib] >> 4);
  for (int l = 0; l < 4; ++l) {
    const int idx = b.qs[4 * ib + l] | ((b.qh[ib] << (8 - 2 * l)) & 0x300);
    signed_point(kIQ2SGrid[idx], b.qs[32 + 4 * ib + l], q + 8 * l);
  }
}

namespace {

float iq3xxs_scale(const BlockIQ3_XXS& b, int ib) {
  return f16_to_f32(b.d) * (0.5f + static_cast<float>(load32(b.qs + 64 + 4 * ib) >> 28)) * 0.5f;
}

}  // namespace

void iq_scales16(const BlockIQ3_XXS& b, float* scale) {
  for (int ib = 0; ib < 8; ++ib) scale[2 * ib] = scale[2 * ib + 1] = iq3xxs_scale(b, ib);
}

void iq_decode32(const BlockIQ3_XXS& b, int ib, int8_t* q, float* scale) {
  const uint32_t aux = load32(b.qs + 64 + 4 * ib);
  scale[0] = scale[1] = iq3xxs_scale(b, ib);
  for (int l = 0; l < 4; ++l) {
    const uint8_t signs = kIQEvenSigns[(aux >> (7 * l)) & 127];
    signed_point(kIQ3XXSGrid[b.qs[8 * ib + 2 * l]], signs, q + 8 * l, 4);
    signed_point(kIQ3XXSGrid[b.qs[8 * ib + 2 * l + 1]], static_cast<uint8_t>(signs >> 4),
                 q + 8 * l + 4, 4);
  }
}

namespace {

float iq3s_scale(const BlockIQ3_S& b, int ib) {
  const int s = (b.scales[ib / 2] >> (4 * (ib % 2))) & 0xF;
  return f16_to_f32(b.d) * static_cast<float>(1 + 2 * s);
}

}  // namespace

void iq_scales16(const BlockIQ3_S& b, float* scale) {
  for (int ib = 0; ib < 8; ++ib) scale[2 * ib] = scale[2 * ib + 1] = iq3s_scale(b, ib);
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

namespace {

float iq1s_scale(const BlockIQ1_S& b, int ib) {
  return f16_to_f32(b.d) * static_cast<float>(2 * ((b.qh[ib] >> 12) & 7) + 1) * 0.125f;
}

}  // namespace

void iq_scales16(const BlockIQ1_S& b, float* scale) {
  for (int ib = 0; ib < 8; ++ib) scale[2 * ib] = scale[2 * ib + 1] = iq1s_scale(b, ib);
}

void iq_decode32(const BlockIQ1_S& b, int ib, int8_t* q, float* scale) {
  const int qh = b.qh[ib];
  scale[0] = scale[1] = iq1s_scale(b, ib);
  for (int l = 0; l < 4; ++l)
    iq1_point(b.qs[4 * ib + l] | ((qh >> (3 * l)) & 7) << 8, (qh & 0x8000) != 0, q + 8 * l);
}

float iq1m_scale(const BlockIQ1_M& b) {
  uint16_t sc[4];
  std::memcpy(sc, b.scales, 8);
  const auto h = static_cast<uint16_t>((sc[0] >> 12) | ((sc[1] >> 8) & 0x00F0) |
                                       ((sc[2] >> 4) & 0x0F00) | (sc[3] & 0xF000));
  return f16_to_f32(h);
}

namespace {

void iq1m_scales32(const BlockIQ1_M& b, float d, int ib, float* scale) {
  uint16_t sc;
  std::memcpy(&sc, b.scales + 2 * (ib / 2), 2);
  for (int h = 0; h < 2; ++h) {
    const int s = (sc >> (6 * (ib % 2) + 3 * h)) & 7;
    scale[h] = d * static_cast<float>(2 * s + 1) * 0.125f;
  }
}

}  // namespace

void iq_scales16(const BlockIQ1_M& b, float* scale) {
  const float d = iq1m_scale(b);
  for (int ib = 0; ib < 8; ++ib) iq1m_scales32(b, d, ib, scale + 2 * ib);
}

void iq_decode32(const BlockIQ1_M& b, int ib, int8_t* q, float* scale) {
  iq1m_scales32(b, iq1m_scale(b), ib, scale);
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
  scale[0] = scale[1] = f16_to_f32(b.d);
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
  scale[0] = scale[1] = f16_to_f32(b.d);
  const uint8_t* qs = b.qs + 32 * (ib / 4);
  for (int j = 0; j < 32; ++j) q[j] = static_cast<int8_t>(((qs[j] >> (2 * (ib % 4))) & 3) - 1);
}

}  // namespace brisk
