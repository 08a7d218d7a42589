#include "model/imatrix.h"

#include <algorithm>

#include "core/error.h"
#include "kv/kv_cache.h"
#include "model/forward.h"

namespace brisk {
namespace {

// The weight matrices that read the activations of a layer's site.
std::vector<const Tensor*> readers(const Weights& w, int layer, Forward::Site site) {
  using S = Forward::Site;
  if (site == S::Output) return {&w.output};
  const auto& L = w.layers[static_cast<size_t>(layer)];
  switch (site) {
    case S::AttnIn:
      return {&L.wq, &L.wk, &L.wv};
    case S::AttnOut:
      return {&L.wo};
    case S::FfnIn:
      // A mixture of experts: the router reads every token; each expert only the tokens that
      // chose it, which this site does not see (its matrices get no importance entries).
      if (!L.experts.empty()) return {&L.ffn_gate_inp};
      return {&L.ffn_gate, &L.ffn_up};
    default:
      return {&L.ffn_down};
  }
}

}  // namespace

Imatrix compute_imatrix(const Model& m, ThreadPool& pool, const std::vector<int32_t>& tokens,
                        const ImatrixOptions& opt) {
  const auto& h = m.hp;
  const int64_t n_ctx = opt.n_ctx;
  int64_t n_chunks = static_cast<int64_t>(tokens.size()) / n_ctx;
  if (opt.max_chunks >= 0) n_chunks = std::min(n_chunks, opt.max_chunks);
  if (n_chunks < 1)
    fail("the calibration text has {} tokens, fewer than one window of {}", tokens.size(), n_ctx);
  Imatrix im;
  // Accumulated in double per site, once per site and token (several matrices share an input).
  std::vector<std::vector<double>> sums(static_cast<size_t>((h.n_layer + 1) * 5));
  std::vector<double> counts(sums.size(), 0.0);
  Forward fwd(m, pool);
  fwd.set_observer([&](int layer, Forward::Site site, const float* x, int64_t n, int64_t dim) {
    const size_t k = static_cast<size_t>(layer) * 5 + static_cast<size_t>(site);
    auto& s = sums[k];
    if (s.empty()) s.assign(static_cast<size_t>(dim), 0.0);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t c = 0; c < dim; ++c)
        s[c] += static_cast<double>(x[i * dim + c]) * x[i * dim + c];
    counts[k] += static_cast<double>(n);
  });
  ContiguousKvCache cache(static_cast<int>(h.n_layer), h.n_head_kv, h.head_dim, n_ctx);
  Batch b;
  const auto& vocab = m.tokenizer->vocab();
  const int32_t bos = vocab.add_bos ? vocab.bos : -1;
  for (int64_t c = 0; c < n_chunks; ++c) {
    b.clear();
    for (int64_t p = 0; p < n_ctx; ++p) {
      int32_t t = tokens[static_cast<size_t>(c * n_ctx + p)];
      if (p == 0 && bos >= 0) t = bos;
      b.add(t, p, 0, opt.process_output);  // no logits: the classifier is skipped
    }
    fwd.run(b, cache);
    if (opt.progress) opt.progress(c + 1, n_chunks);
  }
  for (int layer = 0; layer <= h.n_layer; ++layer)
    for (int site = 0; site < 5; ++site) {
      const size_t k = static_cast<size_t>(layer) * 5 + static_cast<size_t>(site);
      if (sums[k].empty()) continue;
      const auto s = static_cast<Forward::Site>(site);
      if ((layer == h.n_layer) != (s == Forward::Site::Output)) continue;
      for (const Tensor* t : readers(m.w, layer, s)) {
        ImatrixEntry& e = im.entries[t->name];
        e.sum_sq.assign(sums[k].begin(), sums[k].end());
        e.count = static_cast<float>(counts[k]);
      }
    }
  im.chunk_count = static_cast<uint32_t>(n_chunks);
  im.chunk_size = static_cast<uint32_t>(n_ctx);
  if (!opt.dataset.empty()) im.datasets.push_back(opt.dataset);
  return im;
}

}  // namespace brisk
