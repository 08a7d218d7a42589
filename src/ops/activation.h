#pragma once

#include <cstdint>

#include "ops/cpu.h"

namespace brisk {

// SwiGLU's gate: out[i] = silu(gate[i]) * up[i].
void silu_mul(const float* gate, const float* up, float* out, int64_t n);

// The gated unit between a feed-forward's gate/up and down products: SwiGLU; gpt-oss's clamped
// form, out = g sigmoid(alpha g) (u + 1) with g = min(gate, limit), u = clamp(up, -limit, limit);
// or Gemma's GeGLU with GELU's tanh approximation, out = 0.5 g (1 + tanh(sqrt(2/pi) (g + 0.044715
// g^3))) up.
struct GatedUnit {
  enum class Kind { SwiGlu, SwiGluClamped, GeGluTanh } kind = Kind::SwiGlu;
  float alpha = 1.702f, limit = 7.0f;
};
void gated_unit(const GatedUnit& u, const float* gate, const float* up, float* out, int64_t n);
// Soft-capping in place (Gemma's final logits): x[i] = cap tanh(x[i] / cap), cap > 0.
void soft_cap(float* x, int64_t n, float cap);
// The largest of n >= 1 values.
float max_value(const float* x, int64_t n);
// Softmax weights: w[i] = e^((x[i] - mx) * scale) for i < n, where mx is at least every x[i]
// (so each weight is at most 1); returns their sum, added in an order fixed by n and the tier.
double softmax_weights(const float* x, int64_t n, float mx, float scale, float* w);
// Softmax in place over n values.
void softmax(float* x, int64_t n);

// The same on a given tier (tests; the entry points above run best_isa()'s).
void silu_mul_isa(Isa isa, const float* gate, const float* up, float* out, int64_t n);
void gated_unit_isa(Isa isa, const GatedUnit& u, const float* gate, const float* up, float* out,
                    int64_t n);
void soft_cap_isa(Isa isa, float* x, int64_t n, float cap);
double softmax_weights_isa(Isa isa, const float* x, int64_t n, float mx, float scale, float* w);

}  // namespace brisk
