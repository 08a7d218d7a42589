#include "ops/ref/ref_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ops/matmul.h"
#include "ops/repack.h"
#include "quant/quant.h"

namespace brisk::ref {

void matmul(const Tensor& w, const float* x, int64_t n, float* y) {
  const int64_t k = w.cols(), rows = w.rows();
  std::vector<float> row(static_cast<size_t>(k));
  std::vector<double> xq(static_cast<size_t>(n * k));
  for (int64_t i = 0; i < n * k; ++i) xq[static_cast<size_t>(i)] = x[i];
  const int64_t blk = activation_block(w.type);
  if (dtype_is_quantized(w.type))
    for (int64_t b = 0; b < n * k; b += blk) {
      float amax = 0;
      for (int64_t i = b; i < b + blk; ++i) amax = std::max(amax, std::fabs(x[i]));
      const float d = amax / 127.0f, id = d > 0 ? 1.0f / d : 0.0f;
      for (int64_t i = b; i < b + blk; ++i)
        xq[static_cast<size_t>(i)] = static_cast<double>(d) * std::lrintf(x[i] * id);
    }
  std::vector<uint8_t> gguf(w.interleaved ? w.row_bytes() : 0);
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* src = w.row(r);
    if (w.interleaved) {  // repacked at load time: back to the GGUF layout first
      unpack_group_row(w.type, w.row(r / kInterleave * kInterleave),
                       static_cast<int>(r % kInterleave), gguf.data(), k);
      src = gguf.data();
    }
    dequantize_row(w.type, src, row.data(), k);
    for (int64_t t = 0; t < n; ++t) {
      double s = 0;
      for (int64_t j = 0; j < k; ++j) s += static_cast<double>(row[j]) * xq[t * k + j];
      y[t * rows + r] = static_cast<float>(s);
    }
  }
}

void rmsnorm(const float* x, const float* w, float* out, int64_t n, float eps) {
  double ss = 0;
  for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  const double scale = 1.0 / std::sqrt(ss / n + eps);
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(x[i] * scale * w[i]);
}

void rope(float* x, int n_heads, int head_dim, int rope_dim, int64_t pos, RopeType type,
          const float* inv_freq, float magnitude) {
  for (int h = 0; h < n_heads; ++h) {
    float* v = x + static_cast<int64_t>(h) * head_dim;
    for (int i = 0; i < rope_dim / 2; ++i) {
      const int a = type == RopeType::Norm ? 2 * i : i;
      const int b = type == RopeType::Norm ? 2 * i + 1 : i + rope_dim / 2;
      const double ang = static_cast<double>(pos) * inv_freq[i];
      const double c = std::cos(ang) * magnitude, sn = std::sin(ang) * magnitude;
      const double v0 = v[a], v1 = v[b];
      v[a] = static_cast<float>(v0 * c - v1 * sn);
      v[b] = static_cast<float>(v0 * sn + v1 * c);
    }
  }
}

void silu_mul(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double g = gate[i];
    out[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * up[i]);
  }
}

void swiglu_clamped(const float* gate, const float* up, float* out, int64_t n, float alpha,
                    float limit) {
  for (int64_t i = 0; i < n; ++i) {
    const double g = std::min(gate[i], limit);
    const double u = std::clamp(up[i], -limit, limit);
    out[i] = static_cast<float>(g / (1.0 + std::exp(-alpha * g)) * (u + 1.0));
  }
}

void geglu_tanh(const float* gate, const float* up, float* out, int64_t n) {
  const double c = std::sqrt(2.0 / M_PI);
  for (int64_t i = 0; i < n; ++i) {
    const double g = gate[i];
    out[i] =
        static_cast<float>(0.5 * g * (1.0 + std::tanh(c * (g + 0.044715 * g * g * g))) * up[i]);
  }
}

void attention_head(const float* q, const float* k, const float* v, int64_t stride, int64_t n_keys,
                    int head_dim, float scale, float* out) {
  attention_head(q, k, v, stride, 0, n_keys, head_dim, scale,
                 -std::numeric_limits<float>::infinity(), out);
}

void attention_head(const float* q, const float* k, const float* v, int64_t stride,
                    int64_t first_key, int64_t n_keys, int head_dim, float scale, float sink,
                    float* out, float softcap) {
  std::vector<double> s(static_cast<size_t>(n_keys - first_key));
  double mx = sink;
  for (int64_t j = first_key; j < n_keys; ++j) {
    double d = 0;
    for (int i = 0; i < head_dim; ++i) d += static_cast<double>(q[i]) * k[j * stride + i];
    s[j - first_key] = d * scale;
    if (softcap > 0) s[j - first_key] = softcap * std::tanh(s[j - first_key] / softcap);
    if (s[j - first_key] > mx) mx = s[j - first_key];
  }
  double sum = std::exp(static_cast<double>(sink) - mx);
  for (auto& e : s) sum += (e = std::exp(e - mx));
  for (int i = 0; i < head_dim; ++i) {
    double o = 0;
    for (int64_t j = first_key; j < n_keys; ++j) o += s[j - first_key] * v[j * stride + i];
    out[i] = static_cast<float>(o / sum);
  }
}

}  // namespace brisk::ref
