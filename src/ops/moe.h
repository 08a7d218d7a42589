// A mixture-of-experts router: one token's scores over the experts (the router's matrix product,
// its bias added) to the experts it runs and the weight of each one's output, as llama.cpp's
// gating functions do it. Scalar: a router sees tens to hundreds of scores per token.
#pragma once

#include <cstdint>

namespace brisk {

enum class ExpertGating {
  // A softmax over every expert, the n_used most probable chosen, their probabilities the
  // weights (Qwen3-MoE, Mixtral, most others).
  Softmax,
  // The n_used highest scores chosen, a softmax over those alone the weights (gpt-oss).
  SoftmaxChosen,
};

struct ExpertRouting {
  int n_expert = 0, n_used = 0;
  ExpertGating gating = ExpertGating::Softmax;
  bool normalize = false;  // the chosen weights divided by their sum (Qwen3's norm_topk_prob)
  float scale = 1.0f;      // then multiplied by this
};

// chosen: n_used expert ids, the highest-scoring first (of equal scores, the lower id first);
// weights: theirs, in the same order.
void route_experts(const ExpertRouting& r, const float* scores, int32_t* chosen, float* weights);

}  // namespace brisk
