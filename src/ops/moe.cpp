#include "ops/moe.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace brisk {

namespace {

// e^(x[i] - max) / sum over the n values, the sum in index order (in double, as ggml's softmax).
void softmax_in_order(float* x, int n) {
  float mx = x[0];
  for (int i = 1; i < n; ++i) mx = std::max(mx, x[i]);
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - mx);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int i = 0; i < n; ++i) x[i] *= inv;
}

}  // namespace

void route_experts(const ExpertRouting& r, const float* scores, int32_t* chosen, float* weights) {
  thread_local std::vector<float> p;
  thread_local std::vector<int32_t> order;
  p.assign(scores, scores + r.n_expert);
  if (r.gating == ExpertGating::Softmax) softmax_in_order(p.data(), r.n_expert);
  order.resize(static_cast<size_t>(r.n_expert));
  for (int i = 0; i < r.n_expert; ++i) order[static_cast<size_t>(i)] = i;
  // A NaN (from a broken file) sorts last, so the order stays a strict one.
  auto key = [](int32_t i) { return std::isnan(p[i]) ? -INFINITY : p[i]; };
  std::partial_sort(order.begin(), order.begin() + r.n_used, order.end(),
                    [&](int32_t a, int32_t b) {
                      const float ka = key(a), kb = key(b);
                      return ka > kb || (ka == kb && a < b);
                    });
  for (int j = 0; j < r.n_used; ++j) {
    chosen[j] = order[static_cast<size_t>(j)];
    weights[j] = p[static_cast<size_t>(chosen[j])];
  }
  if (r.gating == ExpertGating::SoftmaxChosen) softmax_in_order(weights, r.n_used);
  if (r.normalize) {
    float sum = 0;
    for (int j = 0; j < r.n_used; ++j) sum += weights[j];
    sum = std::max(sum, 6.103515625e-5f);  // as llama.cpp: the smallest normal F16
    for (int j = 0; j < r.n_used; ++j) weights[j] /= sum;
  }
  if (r.scale != 1.0f)
    for (int j = 0; j < r.n_used; ++j) weights[j] *= r.scale;
}

}  // namespace brisk
