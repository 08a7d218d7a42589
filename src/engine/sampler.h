// Chooses the next token from logits: penalties, then top-k, top-p, min-p, temperature, and a draw
// from a seeded generator (llama.cpp's order). The same seed and settings give the same tokens.
#pragma once

#include <cstdint>
#include <deque>
#include <random>
#include <utility>
#include <vector>

namespace brisk {

struct SamplingParams {
  float temperature = 0.8f;     // <= 0: greedy
  int top_k = 40;               // <= 0: off
  float top_p = 0.95f;          // >= 1: off
  float min_p = 0.05f;          // <= 0: off
  float repeat_penalty = 1.0f;  // 1: off
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  int penalty_last_n = 64;  // tokens the penalties look back over (-1: the whole context)
  uint64_t seed = 0;
  std::vector<std::pair<int32_t, float>> logit_bias;  // added to those tokens' logits first
};

// Log-probabilities of the model's own distribution (raw logits, before any sampling setting):
// the chosen token's and the `top` most likely tokens' (most likely first, ties by id).
struct TokenLogprobs {
  float logprob = 0;
  std::vector<std::pair<int32_t, float>> top;
};
TokenLogprobs token_logprobs(const float* logits, int64_t n_vocab, int32_t token, int top);

class Sampler {
 public:
  explicit Sampler(const SamplingParams& p);
  // Picks a token from n_vocab logits (not modified).
  int32_t sample(const float* logits, int64_t n_vocab);
  // The token of a position a proposer guessed `draft` for, distributed exactly as sample() draws
  // it. The proposer picks deterministically (its q is one-hot), so the speculative rule (accept
  // with min(1, p/q), else draw from max(0, p - q) normalized) becomes: keep the draft with
  // probability p(draft), else draw from p without it. Greedy: the same argmax as sample().
  int32_t sample_verified(const float* logits, int64_t n_vocab, int32_t draft);
  // Records a token (prompt or generated) for the penalties.
  void accept(int32_t token);
  const SamplingParams& params() const { return p_; }

 private:
  double uniform();
  // The candidates sample() draws from, as cands_[0, n): after penalties, top-k, top-p, min-p and
  // temperature, with probabilities; greedy: only the argmax.
  size_t distribution(const float* logits, int64_t n_vocab);
  // Draws from cands_[0, n), leaving out token `skip` (-1: none) and renormalizing.
  int32_t draw(size_t n, int32_t skip);
  SamplingParams p_;
  std::mt19937_64 rng_;
  std::deque<int32_t> history_;
  struct Cand {
    int32_t id;
    float logit;
    float p;
  };
  std::vector<Cand> cands_;
};

}  // namespace brisk
