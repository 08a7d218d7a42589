#include "quant/quant.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "quant/quant_iq.h"
#include "quant/quant_iq4.h"
#include "quant/quant_mxfp4.h"

namespace brisk {
namespace {

float h2f(uint16_t h) {
  return f16_to_f32(h);
}

// Where element e (0..255) of a k-quant super-block lives, for the layouts whose 2-bit fields
// are spread over 32-byte groups (Q2_K, Q3_K): byte index in qs and bit shift.
inline void k2_place(int e, int& byte, int& shift) {
  const int half = e / 128, j = (e % 128) / 32, within = e % 32;
  byte = half * 32 + within;
  shift = 2 * j;
}

// ---------------------------------------------------------------------------------------------
// Dequantization

void deq_q4_0(const BlockQ4_0* b, float* y) {
  const float d = h2f(b->d);
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>((b->qs[j] & 0xF) - 8);
    y[j + 16] = d * static_cast<float>((b->qs[j] >> 4) - 8);
  }
}

void deq_q4_1(const BlockQ4_1* b, float* y) {
  const float d = h2f(b->d), m = h2f(b->m);
  for (int j = 0; j < 16; ++j) {
    y[j] = d * static_cast<float>(b->qs[j] & 0xF) + m;
    y[j + 16] = d * static_cast<float>(b->qs[j] >> 4) + m;
  }
}

uint32_t load_qh(const uint8_t* qh) {
  return static_cast<uint32_t>(qh[0]) | static_cast<uint32_t>(qh[1]) << 8 |
         static_cast<uint32_t>(qh[2]) << 16 | static_cast<uint32_t>(qh[3]) << 24;
}

void deq_q5_0(const BlockQ5_0* b, float* y) {
  const float d = h2f(b->d);
  const uint32_t qh = load_qh(b->qh);
  for (int j = 0; j < 16; ++j) {
    const int lo = (b->qs[j] & 0xF) | static_cast<int>(((qh >> j) & 1) << 4);
    const int hi = (b->qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1) << 4);
    y[j] = d * static_cast<float>(lo - 16);
    y[j + 16] = d * static_cast<float>(hi - 16);
  }
}

void deq_q5_1(const BlockQ5_1* b, float* y) {
  const float d = h2f(b->d), m = h2f(b->m);
  const uint32_t qh = load_qh(b->qh);
  for (int j = 0; j < 16; ++j) {
    const int lo = (b->qs[j] & 0xF) | static_cast<int>(((qh >> j) & 1) << 4);
    const int hi = (b->qs[j] >> 4) | static_cast<int>(((qh >> (j + 16)) & 1) << 4);
    y[j] = d * static_cast<float>(lo) + m;
    y[j + 16] = d * static_cast<float>(hi) + m;
  }
}

void deq_q8_0(const BlockQ8_0* b, float* y) {
  const float d = h2f(b->d);
  for (int j = 0; j < 32; ++j) y[j] = d * static_cast<float>(b->qs[j]);
}

void deq_q2_k(const BlockQ2_K* b, float* y) {
  const float d = h2f(b->d), dmin = h2f(b->dmin);
  for (int e = 0; e < kQKK; ++e) {
    int byte, shift;
    k2_place(e, byte, shift);
    const uint8_t sc = b->scales[e / 16];
    const int q = (b->qs[byte] >> shift) & 3;
    y[e] = d * static_cast<float>(sc & 0xF) * static_cast<float>(q) -
           dmin * static_cast<float>(sc >> 4);
  }
}

void deq_q3_k(const BlockQ3_K* b, float* y) {
  const float d = h2f(b->d);
  int8_t sc[16];
  q3k_scales(b->scales, sc);
  for (int e = 0; e < kQKK; ++e) {
    int byte, shift;
    k2_place(e, byte, shift);
    const int bit = (e / 128) * 4 + (e % 128) / 32;
    const int q = ((b->qs[byte] >> shift) & 3) - ((b->hmask[e % 32] >> bit) & 1 ? 0 : 4);
    y[e] = d * static_cast<float>(sc[e / 16]) * static_cast<float>(q);
  }
}

void deq_q4_k(const BlockQ4_K* b, float* y) {
  const float d = h2f(b->d), dmin = h2f(b->dmin);
  for (int c = 0; c < 4; ++c) {
    uint8_t s0, m0, s1, m1;
    k4_scale_min(2 * c, b->scales, s0, m0);
    k4_scale_min(2 * c + 1, b->scales, s1, m1);
    for (int l = 0; l < 32; ++l) {
      const uint8_t q = b->qs[c * 32 + l];
      y[c * 64 + l] = d * s0 * static_cast<float>(q & 0xF) - dmin * m0;
      y[c * 64 + 32 + l] = d * s1 * static_cast<float>(q >> 4) - dmin * m1;
    }
  }
}

void deq_q5_k(const BlockQ5_K* b, float* y) {
  const float d = h2f(b->d), dmin = h2f(b->dmin);
  for (int c = 0; c < 4; ++c) {
    uint8_t s0, m0, s1, m1;
    k4_scale_min(2 * c, b->scales, s0, m0);
    k4_scale_min(2 * c + 1, b->scales, s1, m1);
    for (int l = 0; l < 32; ++l) {
      const uint8_t q = b->qs[c * 32 + l];
      const int lo = (q & 0xF) | (((b->qh[l] >> (2 * c)) & 1) << 4);
      const int hi = (q >> 4) | (((b->qh[l] >> (2 * c + 1)) & 1) << 4);
      y[c * 64 + l] = d * s0 * static_cast<float>(lo) - dmin * m0;
      y[c * 64 + 32 + l] = d * s1 * static_cast<float>(hi) - dmin * m1;
    }
  }
}

void deq_q6_k(const BlockQ6_K* b, float* y) {
  const float d = h2f(b->d);
  for (int e = 0; e < kQKK; ++e)
    y[e] = d * static_cast<float>(b->scales[e / 16]) * static_cast<float>(q6k_value(b, e) - 32);
}

template <class Block, void (*F)(const Block*, float*)>
void deq_all(const void* src, float* dst, int64_t n, int per) {
  const Block* b = static_cast<const Block*>(src);
  for (int64_t i = 0; i < n / per; ++i) F(b + i, dst + i * per);
}

// ---------------------------------------------------------------------------------------------
// Quantization: least-squares fits of a scale (and offset) to a group of values under given
// integer ranges, searched over a small grid of starting points, then the group scales quantized
// in turn and the values re-quantized under the scales actually stored.

float weight_at(const float* w, int i) {
  return w ? w[i] : 1.0f;
}

int nearest(float v, int lo, int hi) {
  return std::clamp(static_cast<int>(std::lrintf(v)), lo, hi);
}

// x ≈ s * q with q in [qmin, qmax]; returns s (0 for an all-zero group).
float fit_symmetric(const float* x, const float* w, int n, int qmin, int qmax) {
  float amax = 0, vmax = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > amax) amax = std::fabs(x[i]), vmax = x[i];
  if (amax == 0) return 0;
  // The extreme value maps to the end of the range with the larger magnitude (-8 for Q4_0), so
  // the scale takes the sign that puts it there.
  const float base = vmax / static_cast<float>(qmin);
  float best_s = base, best_err = INFINITY;
  for (int k = -9; k <= 9; ++k) {
    const float s0 = base * (1.0f + 0.02f * static_cast<float>(k));
    double sxq = 0, sqq = 0;
    for (int i = 0; i < n; ++i) {
      const int q = nearest(x[i] / s0, qmin, qmax);
      sxq += weight_at(w, i) * x[i] * q;
      sqq += weight_at(w, i) * q * q;
    }
    for (float s : {s0, sqq > 0 ? static_cast<float>(sxq / sqq) : s0}) {
      if (s == 0) continue;
      double err = 0;
      for (int i = 0; i < n; ++i) {
        const float e = x[i] - s * static_cast<float>(nearest(x[i] / s, qmin, qmax));
        err += weight_at(w, i) * e * e;
      }
      if (err < best_err) best_err = static_cast<float>(err), best_s = s;
    }
  }
  return best_s;
}

// x ≈ s * q - m with q in [0, qmax], s >= 0, m >= 0 (the offset never exceeds zero, as the
// k-quant layouts store it).
void fit_offset(const float* x, const float* w, int n, int qmax, float& s_out, float& m_out) {
  float lo = x[0], hi = x[0];
  for (int i = 1; i < n; ++i) lo = std::min(lo, x[i]), hi = std::max(hi, x[i]);
  lo = std::min(lo, 0.0f);
  if (hi <= lo) {
    s_out = 0, m_out = -lo;
    return;
  }
  float best_s = (hi - lo) / static_cast<float>(qmax), best_m = -lo;
  double best_err = INFINITY;
  for (int k = -10; k <= 10; ++k) {
    const float iscale = (static_cast<float>(qmax) + 0.05f * static_cast<float>(k)) / (hi - lo);
    double sw = 0, sx = 0, sl = 0, sll = 0, sxl = 0;
    for (int i = 0; i < n; ++i) {
      const int q = nearest(iscale * (x[i] - lo), 0, qmax);
      const double wi = weight_at(w, i);
      sw += wi, sx += wi * x[i], sl += wi * q, sll += wi * q * q, sxl += wi * x[i] * q;
    }
    const double det = sw * sll - sl * sl;
    if (det <= 0) continue;
    double s = (sw * sxl - sx * sl) / det, off = (sll * sx - sl * sxl) / det;
    if (off > 0) off = 0, s = sll > 0 ? sxl / sll : 0;
    if (s <= 0) continue;
    double err = 0;
    for (int i = 0; i < n; ++i) {
      const int q = nearest(static_cast<float>((x[i] - off) / s), 0, qmax);
      const double e = x[i] - (s * q + off);
      err += weight_at(w, i) * e * e;
    }
    if (err < best_err)
      best_err = err, best_s = static_cast<float>(s), best_m = static_cast<float>(-off);
  }
  s_out = best_s, m_out = best_m;
}

void q_q8_0(const float* x, BlockQ8_0* b, const float*) {
  float amax = 0;
  for (int i = 0; i < kQK; ++i) amax = std::max(amax, std::fabs(x[i]));
  const float d = amax / 127.0f;
  b->d = f32_to_f16(d);
  const float id = d > 0 ? 1.0f / d : 0.0f;
  for (int i = 0; i < kQK; ++i) b->qs[i] = static_cast<int8_t>(nearest(x[i] * id, -127, 127));
}

void q_q4_0(const float* x, BlockQ4_0* b, const float* w) {
  const float d = h2f(f32_to_f16(fit_symmetric(x, w, kQK, -8, 7)));
  b->d = f32_to_f16(d);
  const float id = d != 0 ? 1.0f / d : 0.0f;
  for (int j = 0; j < 16; ++j)
    b->qs[j] = static_cast<uint8_t>((nearest(x[j] * id, -8, 7) + 8) |
                                    (nearest(x[j + 16] * id, -8, 7) + 8) << 4);
}

void q_q5_0(const float* x, BlockQ5_0* b, const float* w) {
  const float d = h2f(f32_to_f16(fit_symmetric(x, w, kQK, -16, 15)));
  b->d = f32_to_f16(d);
  const float id = d != 0 ? 1.0f / d : 0.0f;
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    const int lo = nearest(x[j] * id, -16, 15) + 16, hi = nearest(x[j + 16] * id, -16, 15) + 16;
    b->qs[j] = static_cast<uint8_t>((lo & 0xF) | (hi & 0xF) << 4);
    qh |= static_cast<uint32_t>(lo >> 4) << j | static_cast<uint32_t>(hi >> 4) << (j + 16);
  }
  for (int i = 0; i < 4; ++i) b->qh[i] = static_cast<uint8_t>(qh >> (8 * i));
}

// Q4_1/Q5_1: x ≈ d * q + m with any sign of m.
template <int QMAX>
void fit_min_max(const float* x, float& d, float& m) {
  float lo = x[0], hi = x[0];
  for (int i = 1; i < kQK; ++i) lo = std::min(lo, x[i]), hi = std::max(hi, x[i]);
  d = h2f(f32_to_f16((hi - lo) / QMAX));
  m = h2f(f32_to_f16(lo));
}

void q_q4_1(const float* x, BlockQ4_1* b, const float*) {
  float d, m;
  fit_min_max<15>(x, d, m);
  b->d = f32_to_f16(d), b->m = f32_to_f16(m);
  const float id = d > 0 ? 1.0f / d : 0.0f;
  for (int j = 0; j < 16; ++j)
    b->qs[j] = static_cast<uint8_t>(nearest((x[j] - m) * id, 0, 15) |
                                    nearest((x[j + 16] - m) * id, 0, 15) << 4);
}

void q_q5_1(const float* x, BlockQ5_1* b, const float*) {
  float d, m;
  fit_min_max<31>(x, d, m);
  b->d = f32_to_f16(d), b->m = f32_to_f16(m);
  const float id = d > 0 ? 1.0f / d : 0.0f;
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    const int lo = nearest((x[j] - m) * id, 0, 31), hi = nearest((x[j + 16] - m) * id, 0, 31);
    b->qs[j] = static_cast<uint8_t>((lo & 0xF) | (hi & 0xF) << 4);
    qh |= static_cast<uint32_t>(lo >> 4) << j | static_cast<uint32_t>(hi >> 4) << (j + 16);
  }
  for (int i = 0; i < 4; ++i) b->qh[i] = static_cast<uint8_t>(qh >> (8 * i));
}

// Per-group (scale, min) fits of a super-block, with the group scales then quantized to
// `levels` steps of a shared d (and mins of a shared dmin). Fills q with each element's value.
void kquant_offset(const float* x, const float* w, int group, int qmax, int levels, float& d,
                   float& dmin, uint8_t* sc, uint8_t* mn, int* q) {
  const int ng = kQKK / group;
  float s[16], m[16], smax = 0, mmax = 0;
  for (int g = 0; g < ng; ++g) {
    fit_offset(x + g * group, w ? w + g * group : nullptr, group, qmax, s[g], m[g]);
    smax = std::max(smax, s[g]), mmax = std::max(mmax, m[g]);
  }
  d = h2f(f32_to_f16(smax / static_cast<float>(levels)));
  dmin = h2f(f32_to_f16(mmax / static_cast<float>(levels)));
  for (int g = 0; g < ng; ++g) {
    sc[g] = static_cast<uint8_t>(d > 0 ? nearest(s[g] / d, 0, levels) : 0);
    mn[g] = static_cast<uint8_t>(dmin > 0 ? nearest(m[g] / dmin, 0, levels) : 0);
    const float es = d * sc[g], em = dmin * mn[g];
    for (int i = 0; i < group; ++i) {
      const int e = g * group + i;
      q[e] = es > 0 ? nearest((x[e] + em) / es, 0, qmax) : 0;
    }
  }
}

// Symmetric per-group scales quantized to signed steps of a shared d.
void kquant_symmetric(const float* x, const float* w, int group, int qmin, int qmax, int smin,
                      int smax_level, float& d, int* sc, int* q) {
  const int ng = kQKK / group;
  float s[16], amax = 0, vmax = 0;
  for (int g = 0; g < ng; ++g) {
    s[g] = fit_symmetric(x + g * group, w ? w + g * group : nullptr, group, qmin, qmax);
    if (std::fabs(s[g]) > amax) amax = std::fabs(s[g]), vmax = s[g];
  }
  // The largest group scale maps to the end of the scale range with the larger magnitude.
  d = h2f(f32_to_f16(amax > 0 ? vmax / static_cast<float>(smin) : 0.0f));
  for (int g = 0; g < ng; ++g) {
    sc[g] = d != 0 ? nearest(s[g] / d, smin, smax_level) : 0;
    const float es = d * static_cast<float>(sc[g]);
    for (int i = 0; i < group; ++i) {
      const int e = g * group + i;
      q[e] = es != 0 ? nearest(x[e] / es, qmin, qmax) : 0;
    }
  }
}

void pack_k4_scales(const uint8_t* sc, const uint8_t* mn, uint8_t* out) {
  std::fill(out, out + 12, 0);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      out[j] = static_cast<uint8_t>(sc[j] & 63);
      out[j + 4] = static_cast<uint8_t>(mn[j] & 63);
    } else {
      out[j + 4] = static_cast<uint8_t>((sc[j] & 0xF) | (mn[j] & 0xF) << 4);
      out[j - 4] |= static_cast<uint8_t>((sc[j] >> 4) << 6);
      out[j] |= static_cast<uint8_t>((mn[j] >> 4) << 6);
    }
  }
}

void q_q2_k(const float* x, BlockQ2_K* b, const float* w) {
  float d, dmin;
  uint8_t sc[16], mn[16];
  int q[kQKK];
  kquant_offset(x, w, 16, 3, 15, d, dmin, sc, mn, q);
  b->d = f32_to_f16(d), b->dmin = f32_to_f16(dmin);
  for (int g = 0; g < 16; ++g) b->scales[g] = static_cast<uint8_t>(sc[g] | mn[g] << 4);
  std::fill(std::begin(b->qs), std::end(b->qs), 0);
  for (int e = 0; e < kQKK; ++e) {
    int byte, shift;
    k2_place(e, byte, shift);
    b->qs[byte] |= static_cast<uint8_t>(q[e] << shift);
  }
}

void q_q3_k(const float* x, BlockQ3_K* b, const float* w) {
  float d;
  int sc[16], q[kQKK];
  kquant_symmetric(x, w, 16, -4, 3, -32, 31, d, sc, q);
  b->d = f32_to_f16(d);
  std::fill(std::begin(b->scales), std::end(b->scales), 0);
  for (int j = 0; j < 16; ++j) {
    const int l = sc[j] + 32;
    if (j < 8)
      b->scales[j] = static_cast<uint8_t>(l & 0xF);
    else
      b->scales[j - 8] |= static_cast<uint8_t>((l & 0xF) << 4);
    b->scales[j % 4 + 8] |= static_cast<uint8_t>((l >> 4) << (2 * (j / 4)));
  }
  std::fill(std::begin(b->qs), std::end(b->qs), 0);
  std::fill(std::begin(b->hmask), std::end(b->hmask), 0);
  for (int e = 0; e < kQKK; ++e) {
    int byte, shift;
    k2_place(e, byte, shift);
    const int v = q[e] + 4;  // 0..7
    b->qs[byte] |= static_cast<uint8_t>((v & 3) << shift);
    if (v & 4) b->hmask[e % 32] |= static_cast<uint8_t>(1 << ((e / 128) * 4 + (e % 128) / 32));
  }
}

void q_q4_k(const float* x, BlockQ4_K* b, const float* w) {
  float d, dmin;
  uint8_t sc[8], mn[8];
  int q[kQKK];
  kquant_offset(x, w, 32, 15, 63, d, dmin, sc, mn, q);
  b->d = f32_to_f16(d), b->dmin = f32_to_f16(dmin);
  pack_k4_scales(sc, mn, b->scales);
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l)
      b->qs[c * 32 + l] = static_cast<uint8_t>(q[c * 64 + l] | q[c * 64 + 32 + l] << 4);
}

void q_q5_k(const float* x, BlockQ5_K* b, const float* w) {
  float d, dmin;
  uint8_t sc[8], mn[8];
  int q[kQKK];
  kquant_offset(x, w, 32, 31, 63, d, dmin, sc, mn, q);
  b->d = f32_to_f16(d), b->dmin = f32_to_f16(dmin);
  pack_k4_scales(sc, mn, b->scales);
  std::fill(std::begin(b->qh), std::end(b->qh), 0);
  for (int c = 0; c < 4; ++c)
    for (int l = 0; l < 32; ++l) {
      const int lo = q[c * 64 + l], hi = q[c * 64 + 32 + l];
      b->qs[c * 32 + l] = static_cast<uint8_t>((lo & 0xF) | (hi & 0xF) << 4);
      b->qh[l] |= static_cast<uint8_t>((lo >> 4) << (2 * c) | (hi >> 4) << (2 * c + 1));
    }
}

void q_q6_k(const float* x, BlockQ6_K* b, const float* w) {
  float d;
  int sc[16], q[kQKK];
  kquant_symmetric(x, w, 16, -32, 31, -128, 127, d, sc, q);
  b->d = f32_to_f16(d);
  for (int g = 0; g < 16; ++g) b->scales[g] = static_cast<int8_t>(sc[g]);
  uint8_t v[kQKK];
  for (int e = 0; e < kQKK; ++e) v[e] = static_cast<uint8_t>(q[e] + 32);  // 0..63
  q6k_set_values(b, v);
}

template <class Block, void (*F)(const float*, Block*, const float*)>
void q_all(const float* src, void* dst, int64_t n, int per, const float* w) {
  Block* b = static_cast<Block*>(dst);
  for (int64_t i = 0; i < n / per; ++i) F(src + i * per, b + i, w ? w + i * per : nullptr);
}

}  // namespace

int q6k_value(const BlockQ6_K* b, int e) {
  const int h = e / 128, r = e % 128, quarter = r / 32, l = r % 32;
  const uint8_t ql = b->ql[h * 64 + l + (quarter & 1) * 32];
  const int lo = quarter < 2 ? (ql & 0xF) : (ql >> 4);
  const int hi = (b->qh[h * 32 + l] >> (2 * quarter)) & 3;
  return lo | (hi << 4);
}

void q6k_values(const BlockQ6_K* b, uint8_t* v) {
  for (int h = 0; h < 2; ++h)
    for (int l = 0; l < 32; ++l) {
      const int lo0 = b->ql[h * 64 + l], lo1 = b->ql[h * 64 + 32 + l], hi = b->qh[h * 32 + l];
      uint8_t* o = v + h * 128 + l;
      o[0] = static_cast<uint8_t>((lo0 & 0xF) | (hi & 3) << 4);
      o[32] = static_cast<uint8_t>((lo1 & 0xF) | ((hi >> 2) & 3) << 4);
      o[64] = static_cast<uint8_t>((lo0 >> 4) | ((hi >> 4) & 3) << 4);
      o[96] = static_cast<uint8_t>((lo1 >> 4) | ((hi >> 6) & 3) << 4);
    }
}

void q6k_set_values(BlockQ6_K* b, const uint8_t* v) {
  std::fill(std::begin(b->ql), std::end(b->ql), 0);
  std::fill(std::begin(b->qh), std::end(b->qh), 0);
  for (int e = 0; e < kQKK; ++e) {
    const int h = e / 128, r = e % 128, quarter = r / 32, l = r % 32;
    uint8_t& ql = b->ql[h * 64 + l + (quarter & 1) * 32];
    ql |= static_cast<uint8_t>(quarter < 2 ? (v[e] & 0xF) : (v[e] & 0xF) << 4);
    b->qh[h * 32 + l] |= static_cast<uint8_t>((v[e] >> 4) << (2 * quarter));
  }
}

void q3k_scales(const uint8_t* p, int8_t out[16]) {
  for (int j = 0; j < 16; ++j) out[j] = static_cast<int8_t>(q3k_scale(p, j));
}

namespace {

// Per quantized type: values per block, and its row dequantizer and quantizer.
struct QuantType {
  DType type;
  int per;
  void (*deq)(const void*, float*, int64_t, int);
  void (*quant)(const float*, void*, int64_t, int, const float*);
};

constexpr QuantType kQuantTypes[] = {
    {DType::Q4_0, kQK, deq_all<BlockQ4_0, deq_q4_0>, q_all<BlockQ4_0, q_q4_0>},
    {DType::Q4_1, kQK, deq_all<BlockQ4_1, deq_q4_1>, q_all<BlockQ4_1, q_q4_1>},
    {DType::Q5_0, kQK, deq_all<BlockQ5_0, deq_q5_0>, q_all<BlockQ5_0, q_q5_0>},
    {DType::Q5_1, kQK, deq_all<BlockQ5_1, deq_q5_1>, q_all<BlockQ5_1, q_q5_1>},
    {DType::Q8_0, kQK, deq_all<BlockQ8_0, deq_q8_0>, q_all<BlockQ8_0, q_q8_0>},
    {DType::Q2_K, kQKK, deq_all<BlockQ2_K, deq_q2_k>, q_all<BlockQ2_K, q_q2_k>},
    {DType::Q3_K, kQKK, deq_all<BlockQ3_K, deq_q3_k>, q_all<BlockQ3_K, q_q3_k>},
    {DType::Q4_K, kQKK, deq_all<BlockQ4_K, deq_q4_k>, q_all<BlockQ4_K, q_q4_k>},
    {DType::Q5_K, kQKK, deq_all<BlockQ5_K, deq_q5_k>, q_all<BlockQ5_K, q_q5_k>},
    {DType::Q6_K, kQKK, deq_all<BlockQ6_K, deq_q6_k>, q_all<BlockQ6_K, q_q6_k>},
    {DType::IQ4_NL, kQK, deq_all<BlockIQ4_NL, dequantize_iq4_nl>,
     q_all<BlockIQ4_NL, quantize_iq4_nl>},
    {DType::IQ4_XS, kQKK, deq_all<BlockIQ4_XS, dequantize_iq4_xs>,
     q_all<BlockIQ4_XS, quantize_iq4_xs>},
    {DType::IQ2_XXS, kQKK, deq_all<BlockIQ2_XXS, dequantize_iq<BlockIQ2_XXS>>,
     q_all<BlockIQ2_XXS, quantize_iq2_xxs>},
    {DType::IQ2_XS, kQKK, deq_all<BlockIQ2_XS, dequantize_iq<BlockIQ2_XS>>,
     q_all<BlockIQ2_XS, quantize_iq2_xs>},
    {DType::IQ2_S, kQKK, deq_all<BlockIQ2_S, dequantize_iq<BlockIQ2_S>>,
     q_all<BlockIQ2_S, quantize_iq2_s>},
    {DType::IQ3_XXS, kQKK, deq_all<BlockIQ3_XXS, dequantize_iq<BlockIQ3_XXS>>,
     q_all<BlockIQ3_XXS, quantize_iq3_xxs>},
    {DType::IQ3_S, kQKK, deq_all<BlockIQ3_S, dequantize_iq<BlockIQ3_S>>,
     q_all<BlockIQ3_S, quantize_iq3_s>},
    {DType::IQ1_S, kQKK, deq_all<BlockIQ1_S, dequantize_iq<BlockIQ1_S>>,
     q_all<BlockIQ1_S, quantize_iq1_s>},
    {DType::IQ1_M, kQKK, deq_all<BlockIQ1_M, dequantize_iq<BlockIQ1_M>>,
     q_all<BlockIQ1_M, quantize_iq1_m>},
    {DType::TQ1_0, kQKK, deq_all<BlockTQ1_0, dequantize_iq<BlockTQ1_0>>,
     q_all<BlockTQ1_0, quantize_tq1_0>},
    {DType::TQ2_0, kQKK, deq_all<BlockTQ2_0, dequantize_iq<BlockTQ2_0>>,
     q_all<BlockTQ2_0, quantize_tq2_0>},
    {DType::MXFP4, kQK, deq_all<BlockMXFP4, dequantize_mxfp4>, q_all<BlockMXFP4, quantize_mxfp4>},
};

const QuantType* quant_type(DType t) {
  for (const auto& q : kQuantTypes)
    if (q.type == t) return &q;
  return nullptr;
}

}  // namespace

bool dtype_is_quantized(DType t) {
  return quant_type(t) != nullptr;
}

bool dtype_is_weight_supported(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || dtype_is_quantized(t);
}

void dequantize_row(DType t, const void* src, float* dst, int64_t n) {
  if (t == DType::F32 || t == DType::F16 || t == DType::BF16)
    return convert_row_to_f32(t, src, dst, n);
  const QuantType* q = quant_type(t);
  if (!q) fail("cannot dequantize {} rows", dtype_name(t));
  q->deq(src, dst, n, q->per);
}

void quantize_row(DType t, const float* src, void* dst, int64_t n, const float* w) {
  const auto& info = dtype_info(t);
  if (n % info.block_elems != 0)
    fail("{} rows hold whole blocks of {}: {} elements do not divide", info.name, info.block_elems,
         n);
  switch (t) {
    case DType::F32:
      std::copy(src, src + n, static_cast<float*>(dst));
      return;
    case DType::F16:
      for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = f32_to_f16(src[i]);
      return;
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = f32_to_bf16(src[i]);
      return;
    default:
      break;
  }
  const QuantType* q = quant_type(t);
  if (!q) fail("cannot quantize to {}", info.name);
  q->quant(src, dst, n, q->per, w);
}

}  // namespace brisk
