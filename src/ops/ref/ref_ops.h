// Plain scalar references for every kernel: the equations, no blocking, double accumulation.
// Tests compare the optimized kernels against these.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "ops/rope.h"

namespace brisk::ref {

// y[t][r] = sum_k W[r][k] x[t][k]. For quantized W, x is first rounded to int8 blocks of
// activation_block(type) values with a scale each (largest magnitude / 127), as the integer
// kernels do.
void matmul(const Tensor& w, const float* x, int64_t n, float* y);
void rmsnorm(const float* x, const float* w, float* out, int64_t n, float eps);
void rope(float* x, int n_heads, int head_dim, int rope_dim, int64_t pos, RopeType type,
          const float* inv_freq, float magnitude = 1.0f);
void silu_mul(const float* gate, const float* up, float* out, int64_t n);
// gpt-oss's clamped SwiGLU (ops/activation.h: GatedUnit), in double.
void swiglu_clamped(const float* gate, const float* up, float* out, int64_t n, float alpha,
                    float limit);
// GeGLU with GELU's tanh approximation (ops/activation.h: GatedUnit), in double.
void geglu_tanh(const float* gate, const float* up, float* out, int64_t n);
// Causal attention of one query head over keys[0..n_keys) (each key/value row head_dim floats,
// `stride` floats apart), computed with a materialized score row.
void attention_head(const float* q, const float* k, const float* v, int64_t stride, int64_t n_keys,
                    int head_dim, float scale, float* out);
// The same over keys [first_key, n_keys) (a sliding window), with a sink logit that joins the
// softmax's denominator only (-infinity: none) and scores soft-capped to softcap tanh(s / softcap)
// (0: not capped).
void attention_head(const float* q, const float* k, const float* v, int64_t stride,
                    int64_t first_key, int64_t n_keys, int head_dim, float scale, float sink,
                    float* out, float softcap = 0.0f);

}  // namespace brisk::ref
