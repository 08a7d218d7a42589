#include "ops/activation.h"

#include <algorithm>
#include <cmath>

#include "ops/isa_target.h"
#include "ops/simd_math-inl.h"

namespace brisk {
namespace {

// GELU's tanh approximation: 0.5 x (1 + tanh(kGeluC (x + kGeluCubic x^3))), kGeluC = sqrt(2/pi).
constexpr float kGeluC = 0.7978845608028654f, kGeluCubic = 0.044715f;

// Softmax weights are summed in blocks of this many values (lane-wise partial sums in float, each
// block's total then added in double, in order): the order depends on n and the tier only.
constexpr int64_t kSumBlock = 1024;

#if defined(__x86_64__)
// g / d as a 14-bit reciprocal estimate and one Newton step (float's precision, within 2 ulp), for
// silu(g) = g / (1 + e^-g) and the other sigmoid-gated units: a 512-bit divide issues only every
// few cycles here and held silu_mul to 2/3 of the 256-bit kernel's speed.
BRISK_INLINE(BRISK_ISA_AVX512) __m512 divide16(__m512 g, __m512 d) {
  const __m512 one = _mm512_set1_ps(1.0f);
  const __m512 r0 = _mm512_rcp14_ps(d);
  return _mm512_mul_ps(g, _mm512_fmadd_ps(r0, _mm512_fnmadd_ps(d, r0, one), r0));
}

BRISK_INLINE(BRISK_ISA_AVX512) __m512 silu16(__m512 g) {
  return divide16(
      g, _mm512_add_ps(_mm512_set1_ps(1.0f), exp16(_mm512_sub_ps(_mm512_setzero_ps(), g))));
}

BRISK_TARGET(BRISK_ISA_AVX512)
void silu_mul_avx512(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(out + i,
                     _mm512_mul_ps(silu16(_mm512_loadu_ps(gate + i)), _mm512_loadu_ps(up + i)));
  if (i < n) {
    const auto m = static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 s = silu16(_mm512_maskz_loadu_ps(m, gate + i));
    _mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(s, _mm512_maskz_loadu_ps(m, up + i)));
  }
}

// The same on 8 lanes, dividing: here a 256-bit divide keeps pace (the estimate and Newton step
// measured 20% slower).
BRISK_INLINE(BRISK_ISA_AVX2) void silu_mul8(const float* g8, const float* u8, float* o8) {
  const __m256 g = _mm256_loadu_ps(g8);
  const __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), g));
  const __m256 s = _mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e));
  _mm256_storeu_ps(o8, _mm256_mul_ps(s, _mm256_loadu_ps(u8)));
}

// An 8-lane gated unit over n values, the last ones through a zero-padded copy.
template <void (*K8)(const float*, const float*, float*)>
BRISK_TARGET(BRISK_ISA_AVX2)
void gated_avx2(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) K8(gate + i, up + i, out + i);
  if (i < n) {
    float g[8] = {}, u[8] = {}, o[8];
    std::copy(gate + i, gate + n, g);
    std::copy(up + i, up + n, u);
    K8(g, u, o);
    std::copy(o, o + (n - i), out + i);
  }
}

// The clamped SwiGLU (GatedUnit::Kind::SwiGluClamped) on 16 lanes, with silu16's divide.
BRISK_TARGET(BRISK_ISA_AVX512)
void swiglu_clamped_avx512(const float* gate, const float* up, float* out, int64_t n, float alpha,
                           float limit) {
  const __m512 one = _mm512_set1_ps(1.0f), lim = _mm512_set1_ps(limit);
  const __m512 nlim = _mm512_set1_ps(-limit), va = _mm512_set1_ps(alpha);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m =
        n - i >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 g = _mm512_min_ps(_mm512_maskz_loadu_ps(m, gate + i), lim);
    const __m512 u = _mm512_max_ps(_mm512_min_ps(_mm512_maskz_loadu_ps(m, up + i), lim), nlim);
    const __m512 d =
        _mm512_add_ps(one, exp16(_mm512_sub_ps(_mm512_setzero_ps(), _mm512_mul_ps(va, g))));
    _mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(divide16(g, d), _mm512_add_ps(u, one)));
  }
}

BRISK_INLINE(BRISK_ISA_AVX2)
void swiglu_clamped8(const float* g8, const float* u8, float* o8, __m256 va, __m256 lim) {
  const __m256 one = _mm256_set1_ps(1.0f);
  const __m256 g = _mm256_min_ps(_mm256_loadu_ps(g8), lim);
  const __m256 u = _mm256_max_ps(_mm256_min_ps(_mm256_loadu_ps(u8), lim),
                                 _mm256_sub_ps(_mm256_setzero_ps(), lim));
  const __m256 e = exp8(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(va, g)));
  const __m256 s = _mm256_div_ps(g, _mm256_add_ps(one, e));
  _mm256_storeu_ps(o8, _mm256_mul_ps(s, _mm256_add_ps(u, one)));
}

BRISK_TARGET(BRISK_ISA_AVX2)
void swiglu_clamped_avx2(const float* gate, const float* up, float* out, int64_t n, float alpha,
                         float limit) {
  const __m256 va = _mm256_set1_ps(alpha), lim = _mm256_set1_ps(limit);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) swiglu_clamped8(gate + i, up + i, out + i, va, lim);
  if (i < n) {  // the last values through a copy
    float g[8] = {}, u[8] = {}, o[8];
    std::copy(gate + i, gate + n, g);
    std::copy(up + i, up + n, u);
    swiglu_clamped8(g, u, o, va, lim);
    std::copy(o, o + (n - i), out + i);
  }
}

// GELU's tanh form (GatedUnit::Kind::GeGluTanh) on 16 lanes: 0.5 g (1 + tanh(y)) is g sigmoid(2y),
// with y = sqrt(2/pi) (g + 0.044715 g^3), divided as silu16 divides.
BRISK_TARGET(BRISK_ISA_AVX512)
void geglu_tanh_avx512(const float* gate, const float* up, float* out, int64_t n) {
  const __m512 one = _mm512_set1_ps(1.0f), c = _mm512_set1_ps(-2 * kGeluC);
  const __m512 c3 = _mm512_set1_ps(kGeluCubic);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m =
        n - i >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 g = _mm512_maskz_loadu_ps(m, gate + i);
    const __m512 y =
        _mm512_mul_ps(c, _mm512_fmadd_ps(_mm512_mul_ps(c3, g), _mm512_mul_ps(g, g), g));
    const __m512 s = divide16(g, _mm512_add_ps(one, exp16(y)));
    _mm512_mask_storeu_ps(out + i, m, _mm512_mul_ps(s, _mm512_maskz_loadu_ps(m, up + i)));
  }
}

BRISK_INLINE(BRISK_ISA_AVX2) void geglu_tanh8(const float* g8, const float* u8, float* o8) {
  const __m256 g = _mm256_loadu_ps(g8);
  const __m256 y = _mm256_mul_ps(
      _mm256_set1_ps(-2 * kGeluC),
      _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(kGeluCubic), g), _mm256_mul_ps(g, g), g));
  const __m256 s = _mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), exp8(y)));
  _mm256_storeu_ps(o8, _mm256_mul_ps(s, _mm256_loadu_ps(u8)));
}

// Soft-capping, x = cap tanh(x / cap), per tier.
BRISK_TARGET(BRISK_ISA_AVX512) void soft_cap_avx512(float* x, int64_t n, float cap) {
  const __m512 c = _mm512_set1_ps(cap), inv = _mm512_set1_ps(1.0f / cap);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m =
        n - i >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
    _mm512_mask_storeu_ps(x + i, m, _mm512_mul_ps(c, tanh16(_mm512_mul_ps(v, inv))));
  }
}

BRISK_TARGET(BRISK_ISA_AVX2) void soft_cap_avx2(float* x, int64_t n, float cap) {
  const __m256 c = _mm256_set1_ps(cap), inv = _mm256_set1_ps(1.0f / cap);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(x + i, _mm256_mul_ps(c, tanh8(_mm256_mul_ps(_mm256_loadu_ps(x + i), inv))));
  for (; i < n; ++i) x[i] = cap * std::tanh(x[i] * (1.0f / cap));
}

// One block's softmax weights (n <= kSumBlock) and their sum in float, per tier.
BRISK_TARGET(BRISK_ISA_AVX512)
float weights_block_avx512(const float* x, int64_t n, float mx, float scale, float* w) {
  const __m512 vm = _mm512_set1_ps(mx), vs = _mm512_set1_ps(scale);
  __m512 acc = _mm512_setzero_ps();
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m =
        n - i >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 v = exp16(_mm512_mul_ps(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), vm), vs));
    _mm512_mask_storeu_ps(w + i, m, v);
    acc = _mm512_add_ps(acc, _mm512_maskz_mov_ps(m, v));
  }
  return _mm512_reduce_add_ps(acc);
}

BRISK_TARGET(BRISK_ISA_AVX2)
float weights_block_avx2(const float* x, int64_t n, float mx, float scale, float* w) {
  const __m256 vm = _mm256_set1_ps(mx), vs = _mm256_set1_ps(scale);
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = exp8(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm), vs));
    _mm256_storeu_ps(w + i, v);
    acc = _mm256_add_ps(acc, v);
  }
  float s = hsum8(acc);
  if (i < n) {  // the last values through a copy, padded with mx (weight 1, not kept)
    float t[8], o[8];
    std::fill(t, t + 8, mx);
    std::copy(x + i, x + n, t);
    _mm256_storeu_ps(o, exp8(_mm256_mul_ps(_mm256_sub_ps(_mm256_loadu_ps(t), vm), vs)));
    for (int64_t j = 0; j < n - i; ++j) s += (w[i + j] = o[j]);
  }
  return s;
}
#endif

void silu_mul_generic(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

void swiglu_clamped_generic(const float* gate, const float* up, float* out, int64_t n, float alpha,
                            float limit) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = std::min(gate[i], limit);
    const float u = std::clamp(up[i], -limit, limit);
    out[i] = g / (1.0f + std::exp(-(alpha * g))) * (u + 1.0f);
  }
}

void geglu_tanh_generic(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    const float y = -2 * kGeluC * (g + kGeluCubic * g * g * g);
    out[i] = g / (1.0f + std::exp(std::min(y, 88.0f))) * up[i];
  }
}

void soft_cap_generic(float* x, int64_t n, float cap) {
  for (int64_t i = 0; i < n; ++i) x[i] = cap * std::tanh(x[i] * (1.0f / cap));
}

float weights_block_generic(const float* x, int64_t n, float mx, float scale, float* w) {
  float s = 0;
  for (int64_t i = 0; i < n; ++i) s += (w[i] = std::exp((x[i] - mx) * scale));
  return s;
}

}  // namespace

void silu_mul_isa(Isa isa, const float* gate, const float* up, float* out, int64_t n) {
  using SiluMul = void (*)(const float*, const float*, float*, int64_t);
  static constexpr TierTable<SiluMul> kSiluMul = {silu_mul_generic,
                                                  BRISK_X86(gated_avx2<silu_mul8>), nullptr,
                                                  BRISK_X86(silu_mul_avx512), nullptr};
  pick_tier(isa, kSiluMul)(gate, up, out, n);
}

void gated_unit_isa(Isa isa, const GatedUnit& u, const float* gate, const float* up, float* out,
                    int64_t n) {
  if (u.kind == GatedUnit::Kind::SwiGlu) return silu_mul_isa(isa, gate, up, out, n);
  if (u.kind == GatedUnit::Kind::GeGluTanh) {
    using GeGlu = void (*)(const float*, const float*, float*, int64_t);
    static constexpr TierTable<GeGlu> kGeGlu = {geglu_tanh_generic,
                                                BRISK_X86(gated_avx2<geglu_tanh8>), nullptr,
                                                BRISK_X86(geglu_tanh_avx512), nullptr};
    return pick_tier(isa, kGeGlu)(gate, up, out, n);
  }
  using Clamped = void (*)(const float*, const float*, float*, int64_t, float, float);
  static constexpr TierTable<Clamped> kClamped = {swiglu_clamped_generic,
                                                  BRISK_X86(swiglu_clamped_avx2), nullptr,
                                                  BRISK_X86(swiglu_clamped_avx512), nullptr};
  pick_tier(isa, kClamped)(gate, up, out, n, u.alpha, u.limit);
}

void soft_cap_isa(Isa isa, float* x, int64_t n, float cap) {
  using Cap = void (*)(float*, int64_t, float);
  static constexpr TierTable<Cap> kCap = {soft_cap_generic, BRISK_X86(soft_cap_avx2), nullptr,
                                          BRISK_X86(soft_cap_avx512), nullptr};
  pick_tier(isa, kCap)(x, n, cap);
}

void soft_cap(float* x, int64_t n, float cap) {
  soft_cap_isa(best_isa(), x, n, cap);
}

double softmax_weights_isa(Isa isa, const float* x, int64_t n, float mx, float scale, float* w) {
  using Block = float (*)(const float*, int64_t, float, float, float*);
  static constexpr TierTable<Block> kBlock = {weights_block_generic, BRISK_X86(weights_block_avx2),
                                              nullptr, BRISK_X86(weights_block_avx512), nullptr};
  const Block block = pick_tier(isa, kBlock);
  double sum = 0;
  for (int64_t b = 0; b < n; b += kSumBlock)
    sum += block(x + b, std::min(kSumBlock, n - b), mx, scale, w + b);
  return sum;
}

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  silu_mul_isa(best_isa(), gate, up, out, n);
}

void gated_unit(const GatedUnit& u, const float* gate, const float* up, float* out, int64_t n) {
  gated_unit_isa(best_isa(), u, gate, up, out, n);
}

double softmax_weights(const float* x, int64_t n, float mx, float scale, float* w) {
  return softmax_weights_isa(best_isa(), x, n, mx, scale, w);
}

float max_value(const float* x, int64_t n) {
  // Eight running maxima (vectorizable; the maximum is exact in any order).
  float m[8];
  std::fill(m, m + 8, x[0]);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) m[j] = std::max(m[j], x[i + j]);
  for (; i < n; ++i) m[0] = std::max(m[0], x[i]);
  return *std::max_element(m, m + 8);
}

void softmax(float* x, int64_t n) {
  if (n <= 0) return;
  const double sum = softmax_weights(x, n, max_value(x, n), 1.0f, x);
  const auto inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

}  // namespace brisk
