#include "engine/session.h"

#include <chrono>

#include "core/error.h"

namespace brisk {

namespace {
double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

Session::Session(const Model& m, ThreadPool& pool, int64_t n_ctx, int64_t n_batch)
    : m_(m),
      n_ctx_(n_ctx),
      n_batch_(n_batch),
      cache_(static_cast<int>(m.hp.n_layer), m.hp.n_head_kv, m.hp.head_dim, n_ctx),
      forward_(m, pool) {}

void Session::truncate(int64_t n) {
  if (n < static_cast<int64_t>(tokens_.size())) {
    tokens_.resize(static_cast<size_t>(n));
    last_logits_ = nullptr;
  }
}

const float* Session::feed_conversation(const std::vector<int32_t>& all) {
  size_t common = 0;
  while (common < all.size() && common < tokens_.size() && all[common] == tokens_[common]) ++common;
  // At least the last token is evaluated again, so there are logits to sample from.
  if (common == all.size() && common > 0) --common;
  truncate(static_cast<int64_t>(common));
  return feed(std::vector<int32_t>(all.begin() + static_cast<std::ptrdiff_t>(common), all.end()));
}

const float* Session::feed(const std::vector<int32_t>& toks) {
  if (toks.empty()) return last_logits_;
  if (static_cast<int64_t>(tokens_.size() + toks.size()) > n_ctx_)
    fail("the prompt needs {} positions but the context size is {} (raise -c)",
         tokens_.size() + toks.size(), n_ctx_);
  const double t0 = now();
  for (size_t i = 0; i < toks.size(); i += static_cast<size_t>(n_batch_)) {
    const size_t end = std::min(toks.size(), i + static_cast<size_t>(n_batch_));
    batch_.clear();
    for (size_t j = i; j < end; ++j)
      batch_.add(toks[j], static_cast<int64_t>(tokens_.size() + (j - i)), 0, j + 1 == toks.size());
    last_logits_ = forward_.run(batch_, cache_);
    tokens_.insert(tokens_.end(), toks.begin() + static_cast<std::ptrdiff_t>(i),
                   toks.begin() + static_cast<std::ptrdiff_t>(end));
  }
  stats_.prompt_tokens += static_cast<int64_t>(toks.size());
  stats_.prompt_seconds += now() - t0;
  return last_logits_;
}

void Session::generate(Sampler& sampler, int64_t n_predict, bool ignore_eos,
                       const std::function<bool(int32_t)>& on_token,
                       const std::atomic<bool>* stop) {
  if (!last_logits_) fail("generate: no prompt has been processed");
  const auto& vocab = m_.tokenizer->vocab();
  const double t0 = now();
  int64_t produced = 0;
  while (n_predict < 0 || produced < n_predict) {
    if (stop && stop->load()) break;
    const int32_t tok = sampler.sample(last_logits_, m_.hp.n_vocab);
    sampler.accept(tok);
    ++produced;
    ++stats_.generated_tokens;
    if (!ignore_eos && vocab.is_eog(tok)) break;
    if (!on_token(tok)) break;
    // The last token is not evaluated: nothing would read its logits. A later feed() of the whole
    // conversation evaluates it then.
    if (produced == n_predict || static_cast<int64_t>(tokens_.size()) >= n_ctx_) break;
    batch_.clear();
    batch_.add(tok, static_cast<int64_t>(tokens_.size()), 0, true);
    last_logits_ = forward_.run(batch_, cache_);
    tokens_.push_back(tok);
  }
  stats_.generate_seconds += now() - t0;
}

}  // namespace brisk
