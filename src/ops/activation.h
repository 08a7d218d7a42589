#pragma once

#include <cstdint>

namespace brisk {

// SwiGLU's gate: out[i] = silu(gate[i]) * up[i].
void silu_mul(const float* gate, const float* up, float* out, int64_t n);
// Softmax in place over n values.
void softmax(float* x, int64_t n);

}  // namespace brisk
