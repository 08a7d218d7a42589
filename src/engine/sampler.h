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
// Under a constraint (mask not null) the distribution is the model's over the allowed tokens.
TokenLogprobs token_logprobs(const float* logits, int64_t n_vocab, int32_t token, int top,
                             const uint64_t* mask = nullptr);

// What a constraint on the output (structured output) allows next, asked lazily: the sampler
// checks the token it drew against it first where that gives the masked distribution exactly, and
// asks for the whole mask only when it must.
class TokenFilter {
 public:
  virtual bool allows(int32_t token) = 0;
  // Bit t set for each allowed token, over (n_vocab + 63) / 64 words.
  virtual const uint64_t* mask() = 0;

 protected:
  ~TokenFilter() = default;
};

// A proposal's distribution q over tokens: (token, probability) pairs. Empty: all the mass on the
// proposed token (a deterministic proposer, or a greedy draft).
using Distribution = std::vector<std::pair<int32_t, float>>;

class Sampler {
 public:
  explicit Sampler(const SamplingParams& p);
  // Picks a token from n_vocab logits (not modified), among those `filter` allows when given:
  // every setting applies to the allowed tokens' logits. -1 when the filter allows none.
  int32_t sample(const float* logits, int64_t n_vocab, TokenFilter* filter = nullptr);
  // The token of a position a proposer guessed `draft` for (drawn from q), distributed exactly as
  // sample() draws it: keep the draft with probability min(1, p/q), else draw from max(0, p - q)
  // normalized. For a one-hot q (empty) that is: keep it with probability p(draft), else draw
  // from p without it. Greedy: the same argmax as sample().
  // Under a filter, p is the masked distribution (and q a proposal drawn under the same filter).
  int32_t sample_verified(const float* logits, int64_t n_vocab, int32_t draft,
                          const Distribution& q = {}, TokenFilter* filter = nullptr);
  // A draft model's proposal: a token drawn from this sampler's distribution of the draft's
  // logits (the same settings as the target's, so p and q are shaped alike), and that
  // distribution in q (left empty when greedy: the argmax, all the mass on it).
  // -1 when the filter allows no token.
  int32_t propose(const float* logits, int64_t n_vocab, Distribution& q,
                  TokenFilter* filter = nullptr);
  // Records a token (prompt or generated) for the penalties.
  void accept(int32_t token);
  // Takes o's recent tokens for the penalties (a draft's sampler, before it proposes).
  void follow(const Sampler& o) { history_ = o.history_; }
  const SamplingParams& params() const { return p_; }

 private:
  double uniform();
  // The candidates sample() draws from, as cands_[0, n): after the mask (when not null),
  // penalties, top-k, top-p, min-p and temperature, with probabilities; greedy: only the argmax.
  // 0 when the mask allows no token.
  size_t distribution(const float* logits, int64_t n_vocab, const uint64_t* mask);
  // Whether `tok`, drawn from the unmasked candidates cands_[0, n), is a draw from the masked
  // distribution: it is allowed, and the settings' cut of the masked logits keeps exactly the
  // allowed part of the unmasked cut (then drawing until allowed is drawing from the mask).
  bool unmasked_draw_exact(size_t n, int64_t n_vocab, int32_t tok, TokenFilter& f);
  // The top-p and min-p cut of candidates ids_[0, n) (sorted when `sorted`): sorts only as many
  // of them as the cut may keep; returns how many it keeps, now first in ids_ and sorted.
  size_t cut_tail(size_t n, bool sorted);
  // Sets the logits of the tokens the mask refuses to -inf; false if it allows none.
  bool apply_mask(const uint64_t* mask, size_t n_vocab);
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
  std::vector<float> lg_;       // the logits after biases and penalties, by token
  std::vector<int32_t> ids_;    // candidate tokens, in the order they are drawn
  std::vector<float> x_, w_;    // candidates' logits in that order, and their softmax weights
  std::vector<uint64_t> keys_;  // candidates being sorted, as order keys
  std::vector<double> hist_;    // top-p's weight by gap below the best logit
  std::vector<float> q_dense_;  // q scattered by token for verification; all zeros between calls
};

}  // namespace brisk
