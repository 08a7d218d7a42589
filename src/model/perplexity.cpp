#include "model/perplexity.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "kv/kv_cache.h"
#include "model/forward.h"

namespace brisk {

PerplexityResult perplexity(const Model& m, ThreadPool& pool, const std::vector<int32_t>& tokens,
                            int64_t n_ctx, int64_t n_batch, int64_t max_chunks,
                            const std::function<void(int64_t, int64_t, double)>& on_chunk) {
  if (n_ctx < 8) fail("perplexity needs a context of at least 8 tokens (got {})", n_ctx);
  if (n_batch < 1) fail("batch size must be at least 1");
  int64_t n_chunks = static_cast<int64_t>(tokens.size()) / n_ctx;
  if (max_chunks > 0) n_chunks = std::min(n_chunks, max_chunks);
  if (n_chunks < 1)
    fail("the text has {} tokens; perplexity needs at least one window of {} (lower -c)",
         tokens.size(), n_ctx);
  const auto& h = m.hp;
  const auto& vocab = m.tokenizer->vocab();
  ContiguousKvCache cache(static_cast<int>(h.n_layer), m.split.n_head_kv, h.head_dim, n_ctx);
  Forward fwd(m, pool);
  Batch b;
  const int64_t first = n_ctx / 2;
  double sum = 0, sum2 = 0;
  int64_t count = 0;
  for (int64_t c = 0; c < n_chunks; ++c) {
    std::vector<int32_t> w(tokens.begin() + c * n_ctx, tokens.begin() + (c + 1) * n_ctx);
    if (vocab.add_bos && vocab.bos >= 0) w[0] = vocab.bos;
    for (int64_t p0 = 0; p0 < n_ctx; p0 += n_batch) {
      const int64_t p1 = std::min(n_ctx, p0 + n_batch);
      b.clear();
      // Positions first .. n_ctx-2 predict the next token of the window.
      for (int64_t p = p0; p < p1; ++p)
        b.add(w[static_cast<size_t>(p)], p, 0, p >= first && p < n_ctx - 1);
      const float* logits = fwd.run(b, cache);
      int64_t row = 0;
      for (int64_t p = std::max(p0, first); p < std::min(p1, n_ctx - 1); ++p, ++row) {
        const float* lg = logits + row * h.n_vocab;
        const float mx = *std::max_element(lg, lg + h.n_vocab);
        double z = 0;
        for (int64_t v = 0; v < h.n_vocab; ++v) z += std::exp(static_cast<double>(lg[v]) - mx);
        const double nll = std::log(z) + mx - lg[w[static_cast<size_t>(p + 1)]];
        sum += nll, sum2 += nll * nll, ++count;
      }
    }
    if (on_chunk) on_chunk(c, n_chunks, std::exp(sum / static_cast<double>(count)));
  }
  PerplexityResult r;
  r.chunks = n_chunks;
  r.scored = count;
  r.mean_nll = sum / static_cast<double>(count);
  r.ppl = std::exp(r.mean_nll);
  const double var = count > 1 ? (sum2 / count - r.mean_nll * r.mean_nll) : 0;
  r.ppl_error =
      r.ppl * std::sqrt(std::max(0.0, var) / static_cast<double>(std::max<int64_t>(1, count - 1)));
  return r;
}

}  // namespace brisk
