#include "model/forward.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/quant.h"
#include "ops/activation.h"
#include "ops/matmul.h"
#include "ops/norm.h"
#include "ops/rope.h"

namespace brisk {

void Forward::ensure(int64_t n) {
  if (n <= cap_) return;
  const auto& h = m_.hp;
  auto sz = [n](int64_t d) { return static_cast<size_t>(n * d); };
  x_.resize(sz(h.n_embd));
  xn_.resize(sz(h.n_embd));
  tmp_.resize(sz(h.n_embd));
  q_.resize(sz(h.q_dim()));
  att_.resize(sz(h.q_dim()));
  k_.resize(sz(h.kv_dim()));
  v_.resize(sz(h.kv_dim()));
  gate_.resize(sz(h.n_ff));
  up_.resize(sz(h.n_ff));
  cap_ = n;
}

const float* Forward::run(const Batch& b, KvCache& cache, int n_layers) {
  const auto& h = m_.hp;
  const auto& W = m_.w;
  const int64_t n = b.size();
  if (n == 0) return nullptr;
  for (int64_t i = 0; i < n; ++i) {
    if (b.token[i] < 0 || b.token[i] >= h.n_vocab)
      fail("token id {} is outside the vocabulary", b.token[i]);
    if (b.pos[i] < 0) fail("negative position {}", b.pos[i]);
    cache.reserve(b.seq[i], b.pos[i] + 1);
  }
  ensure(n);
  seqs_.clear();
  tok_seq_.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    size_t k = 0;
    while (k < seqs_.size() && seqs_[k].first != b.seq[i])
      ++k;  // a batch holds tens of sequences at most
    if (k == seqs_.size()) seqs_.push_back({b.seq[i], 0});
    seqs_[k].second = std::max(seqs_[k].second, b.pos[i] + 1);
    tok_seq_[i] = static_cast<int32_t>(k);
  }
  // Token indices grouped by sequence (batch order within each): seq_first_[k] .. seq_first_[k+1].
  seq_first_.assign(seqs_.size() + 1, 0);
  for (int64_t i = 0; i < n; ++i) ++seq_first_[static_cast<size_t>(tok_seq_[i]) + 1];
  for (size_t k = 0; k < seqs_.size(); ++k) seq_first_[k + 1] += seq_first_[k];
  by_seq_.resize(static_cast<size_t>(n));
  {
    std::vector<int32_t> fill(seq_first_.begin(), seq_first_.end() - 1);
    for (int64_t i = 0; i < n; ++i) by_seq_[static_cast<size_t>(fill[tok_seq_[i]]++)] = i;
  }
  const int64_t E = h.n_embd, Q = h.q_dim(), KV = h.kv_dim(), F = h.n_ff;

  for (int64_t i = 0; i < n; ++i)
    dequantize_row(W.token_embd.type, W.token_embd.row(b.token[i]), &x_[i * E], E);

  const int64_t layers = n_layers < 0 ? h.n_layer : std::min<int64_t>(n_layers, h.n_layer);
  if (layers > 0) residual_norm(n, nullptr, W.layers[0].attn_norm.data());
  for (int l = 0; l < layers; ++l) {
    const LayerWeights& L = W.layers[l];
    // Attention block (its input norm came with the previous block's residual).
    observe(l, Site::AttnIn, xn_, n, E);
    const MatmulOut qkv[] = {{&L.wq, q_.data(), Q}, {&L.wk, k_.data(), KV}, {&L.wv, v_.data(), KV}};
    matmul_shared(qkv, xn_.data(), E, n, pool_);
    pool_.parallel_for(n, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t i = t0; i < t1; ++i) {
        float* q = &q_[i * Q];
        float* k = &k_[i * KV];
        float* v = &v_[i * KV];
        if (h.qkv_bias) {
          for (int64_t j = 0; j < Q; ++j) q[j] += L.bq[j];
          for (int64_t j = 0; j < KV; ++j) k[j] += L.bk[j], v[j] += L.bv[j];
        }
        if (h.qk_norm) {
          for (int hh = 0; hh < h.n_head; ++hh)
            rmsnorm(q + hh * h.head_dim, L.q_norm.data(), q + hh * h.head_dim, h.head_dim,
                    h.rms_eps);
          for (int hh = 0; hh < h.n_head_kv; ++hh)
            rmsnorm(k + hh * h.head_dim, L.k_norm.data(), k + hh * h.head_dim, h.head_dim,
                    h.rms_eps);
        }
        rope(q, h.n_head, h.head_dim, h.rope_dim, b.pos[i], h.rope_type, m_.rope_inv_freq.data());
        rope(k, h.n_head_kv, h.head_dim, h.rope_dim, b.pos[i], h.rope_type,
             m_.rope_inv_freq.data());
      }
    });
    // Each sequence's rows are stored in batch order by one thread: a cache may rescale a block
    // as rows arrive (8-bit KV), which needs them in order.
    auto store = [&](int64_t s0, int64_t s1) {
      for (int64_t s = s0; s < s1; ++s)
        for (int32_t j = seq_first_[static_cast<size_t>(s)];
             j < seq_first_[static_cast<size_t>(s) + 1]; ++j) {
          const int64_t i = by_seq_[static_cast<size_t>(j)];
          cache.store(l, b.seq[i], b.pos[i], &k_[i * KV], &v_[i * KV]);
        }
    };
    const int64_t n_seqs = static_cast<int64_t>(seqs_.size());
    if (n_seqs == 1)
      store(0, 1);  // one sequence is one thread's work: no hand-off to the pool
    else
      pool_.parallel_for(n_seqs, 1, store);
    attention(l, b, cache);
    observe(l, Site::AttnOut, att_, n, Q);
    matmul(L.wo, att_.data(), Q, n, tmp_.data(), E, pool_);
    residual_norm(n, tmp_.data(), L.ffn_norm.data());

    // Feed-forward block (SwiGLU).
    observe(l, Site::FfnIn, xn_, n, E);
    const MatmulOut gate_up[] = {{&L.ffn_gate, gate_.data(), F}, {&L.ffn_up, up_.data(), F}};
    matmul_shared(gate_up, xn_.data(), E, n, pool_);
    pool_.parallel_for(n, 1, [&](int64_t t0, int64_t t1) {
      silu_mul(&gate_[t0 * F], &up_[t0 * F], &gate_[t0 * F], (t1 - t0) * F);
    });
    observe(l, Site::DownIn, gate_, n, F);
    matmul(L.ffn_down, gate_.data(), F, n, tmp_.data(), E, pool_);
    residual_norm(n, tmp_.data(), l + 1 < layers ? W.layers[l + 1].attn_norm.data() : nullptr);
  }

  // Final norm and classifier, only for the rows whose logits are wanted.
  int64_t n_out = 0;
  for (int64_t i = 0; i < n; ++i)
    if (b.logits[i]) rmsnorm(&x_[i * E], W.output_norm.data(), &xn_[n_out++ * E], E, h.rms_eps);
  logits_.resize(static_cast<size_t>(n_out * h.n_vocab));
  if (n_out == 0) return logits_.data();  // only the cache was wanted (a draft catching up)
  observe(static_cast<int>(h.n_layer), Site::Output, xn_, n_out, E);
  matmul(W.output, xn_.data(), E, n_out, logits_.data(), h.n_vocab, pool_);
  return logits_.data();
}

void Forward::residual_norm(int64_t n, const float* add, const float* norm) {
  const auto& h = m_.hp;
  const int64_t E = h.n_embd;
  pool_.parallel_for(n, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t i = t0; i < t1; ++i) {
      float* x = &x_[i * E];
      if (add)
        for (int64_t j = 0; j < E; ++j) x[j] += add[i * E + j];
      if (norm) rmsnorm(x, norm, &xn_[i * E], E, h.rms_eps);
    }
  });
}

void Forward::attention(int layer, const Batch& b, KvCache& cache) {
  const auto& h = m_.hp;
  const int64_t n = b.size();
  // Each token attends to positions [0, pos] of its own sequence; spans are gathered once per
  // sequence (for its largest position in the batch) and shared by its tokens.
  spans_.clear();
  seq_spans_.clear();
  for (const auto& [s, len] : seqs_) {
    const size_t first = spans_.size();
    cache.spans(layer, s, len, spans_);
    seq_spans_.push_back({first, spans_.size() - first});
  }
  const AttnShape shape{h.n_head,
                        h.n_head_kv,
                        h.head_dim,
                        cache.row_stride(),
                        1.0f / std::sqrt(static_cast<float>(h.head_dim)),
                        cache.type()};
  // Work items: up to kGroup tokens of one sequence with one KV head, so each K/V chunk is loaded
  // once for all their query heads. The costliest (latest positions) go first, in small pieces
  // claimed in order, so the threads finish together.
  constexpr int32_t kGroup = 8;
  queries_.resize(static_cast<size_t>(n));
  groups_.clear();
  for (size_t k = 0; k < seqs_.size(); ++k)
    for (int32_t j0 = seq_first_[k]; j0 < seq_first_[k + 1]; j0 += kGroup) {
      const int32_t j1 = std::min(seq_first_[k + 1], j0 + kGroup);
      int64_t cost = 0;
      for (int32_t j = j0; j < j1; ++j) {
        const int64_t i = by_seq_[static_cast<size_t>(j)];
        queries_[static_cast<size_t>(j)] = {&q_[i * h.q_dim()], &att_[i * h.q_dim()], b.pos[i] + 1};
        cost += b.pos[i] + 1;
      }
      groups_.push_back({cost, static_cast<int32_t>(k), j0, j1 - j0});
    }
  std::stable_sort(groups_.begin(), groups_.end(),
                   [](const Group& x, const Group& y) { return x.cost > y.cost; });
  const int64_t items = static_cast<int64_t>(groups_.size()) * h.n_head_kv;
  pool_.parallel_chunks(items, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t it = i0; it < i1; ++it) {
      const Group& gr = groups_[static_cast<size_t>(it / h.n_head_kv)];
      const auto [first, count] = seq_spans_[static_cast<size_t>(gr.seq)];
      attention_group(shape, static_cast<int>(it % h.n_head_kv),
                      &queries_[static_cast<size_t>(gr.first)], gr.count, spans_.data() + first,
                      count);
    }
  });
}

}  // namespace brisk
