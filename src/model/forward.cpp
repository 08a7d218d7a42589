#include "model/forward.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.h"
#include "model/architecture.h"
#include "model/follower.h"
#include "ops/activation.h"
#include "ops/matmul.h"
#include "ops/moe.h"
#include "ops/norm.h"
#include "ops/rope.h"
#include "quant/quant.h"

namespace brisk {

void Forward::set_observer(Observer o) {
  if (s_.active()) fail("activations can be observed only in one process (not under mpirun)");
  observer_ = std::move(o);
}

void Forward::ensure(int64_t n) {
  if (n <= cap_) return;
  const auto& h = m_.hp;
  auto sz = [n](int64_t d) { return static_cast<size_t>(n * d); };
  x_.resize(sz(h.n_embd));
  xn_.resize(sz(h.n_embd));
  tmp_.resize(sz(s_.embd.count));
  q_.resize(sz(s_.q_rows.count));
  att_.resize(sz(s_.q.count));
  k_.resize(sz(s_.kv_rows.count));
  v_.resize(sz(s_.kv_rows.count));
  gate_.resize(sz(s_.ff.count));
  up_.resize(sz(s_.ff.count));
  cap_ = n;
}

const float* Forward::run(const Batch& b, KvCache& cache, int n_layers) {
  // A batch the model cannot run is refused before the other ranks are told to run it.
  check(b, cache);
  if (!s_.active() || b.size() == 0) return compute(b, cache, n_layers);
  if (s_.rank == 0) send_plan(*s_.comm, b, cache, n_layers, pool_.size());
  try {
    return compute(b, cache, n_layers);
  } catch (const std::exception& e) {
    // The other ranks are inside this batch's collectives: none of them can go on.
    s_.comm->abort(fmt::format("the forward pass failed: {}", e.what()));
  }
}

void Forward::check(const Batch& b, KvCache& cache) const {
  for (int64_t i = 0; i < b.size(); ++i) {
    if (b.token[i] < 0 || b.token[i] >= m_.hp.n_vocab)
      fail("token id {} is outside the vocabulary", b.token[i]);
    if (b.pos[i] < 0) fail("negative position {}", b.pos[i]);
    cache.reserve(b.seq[i], b.pos[i] + 1);
  }
}

float* Forward::gather(std::vector<float>& local, int64_t n, const RowShare& share,
                       std::vector<float>& full, bool to_all) {
  if (!s_.active()) return local.data();
  const int64_t total = std::accumulate(share.counts.begin(), share.counts.end(), int64_t{0});
  std::vector<int64_t>& counts = gather_counts_;
  counts.assign(share.counts.begin(), share.counts.end());
  for (auto& c : counts) c *= n;
  gathered_.resize(static_cast<size_t>(n * total));
  if (!to_all) {
    s_.comm->gather(local.data(), counts, gathered_.data());
    if (s_.rank != 0) return nullptr;
  } else {
    s_.comm->allgather(local.data(), counts, gathered_.data());
  }
  full.resize(gathered_.size());
  // Rank-major ([rank][token][its rows]) to token-major ([token][all rows]).
  const float* src = gathered_.data();
  for (int64_t r0 = 0, r = 0; r < static_cast<int64_t>(counts.size()); ++r) {
    const int64_t c = share.counts[static_cast<size_t>(r)];
    for (int64_t i = 0; i < n; ++i, src += c)
      std::copy(src, src + c, &full[static_cast<size_t>(i * total + r0)]);
    r0 += c;
  }
  return full.data();
}

void Forward::index_batch(const Batch& b) {
  const int64_t n = b.size();
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
  // Token indices grouped by sequence (batch order within each): seq_first_[k] .. [k+1].
  seq_first_.assign(seqs_.size() + 1, 0);
  for (int64_t i = 0; i < n; ++i) ++seq_first_[static_cast<size_t>(tok_seq_[i]) + 1];
  for (size_t k = 0; k < seqs_.size(); ++k) seq_first_[k + 1] += seq_first_[k];
  by_seq_.resize(static_cast<size_t>(n));
  {
    std::vector<int32_t> fill(seq_first_.begin(), seq_first_.end() - 1);
    for (int64_t i = 0; i < n; ++i) by_seq_[static_cast<size_t>(fill[tok_seq_[i]]++)] = i;
  }
}

const float* Forward::compute(const Batch& b, KvCache& cache, int n_layers) {
  const auto& h = m_.hp;
  const auto& W = m_.w;
  const int64_t n = b.size();
  if (n == 0) return nullptr;
  ensure(n);
  index_batch(b);
  batch_ = &b;
  cache_ = &cache;
  residual_ = nullptr;
  const int64_t E = h.n_embd;
  for (int64_t i = 0; i < n; ++i) {
    float* x = &x_[i * E];
    dequantize_row(W.token_embd.type, W.token_embd.row(b.token[i]), x, E);
    if (h.embd_scale != 1)
      for (int64_t j = 0; j < E; ++j) x[j] *= h.embd_scale;
  }

  const int64_t layers = n_layers < 0 ? h.n_layer : std::min<int64_t>(n_layers, h.n_layer);
  for (int l = 0; l < layers; ++l) h.architecture->layer(h, *this, l);
  if (residual_) residual_norm(n, residual_, nullptr);

  // Final norm and classifier, only for the rows whose logits are wanted.
  int64_t n_out = 0;
  for (int64_t i = 0; i < n; ++i)
    if (b.logits[i]) rmsnorm(&x_[i * E], W.output_norm.data(), &xn_[n_out++ * E], E, h.rms_eps);
  const int64_t Vl = s_.vocab.count;
  logits_.resize(static_cast<size_t>(n_out * Vl));
  if (n_out == 0) return logits_.data();  // only the cache was wanted (a draft catching up)
  observe(static_cast<int>(h.n_layer), Site::Output, xn_, n_out, E);
  if (Vl > 0) matmul(W.output, xn_.data(), E, n_out, logits_.data(), Vl, pool_);
  if (h.final_softcap > 0 && Vl > 0)
    pool_.parallel_for(n_out, 1, [&](int64_t t0, int64_t t1) {
      soft_cap(&logits_[t0 * Vl], (t1 - t0) * Vl, h.final_softcap);
    });
  // Only rank 0 samples: the classifier's rows are gathered there alone.
  return gather(logits_, n_out, s_.vocab, logits_all_, /*to_all=*/false);
}

void Forward::block_input(const std::vector<float>& norm) {
  residual_norm(batch_->size(), residual_, norm.data());
  residual_ = nullptr;
}

void Forward::attention(int l) {
  const auto& h = m_.hp;
  const LayerWeights& L = m_.w.layers[l];
  const Batch& b = *batch_;
  KvCache& cache = *cache_;
  const int64_t n = b.size(), E = h.n_embd;
  // This rank's rows (all of them in one process): the rows of q, k and v it computes (its heads
  // from qo and ko on), its heads' attention output, and its rows of the output projection.
  const int64_t Q = s_.q_rows.count, KV = s_.kv_rows.count, A = s_.q.count;
  const int64_t qo = s_.q_rows.offset, ko = s_.kv_rows.offset;
  const int64_t El = s_.embd.count;
  const int n_head = s_.n_head, n_head_kv = s_.n_head_kv;
  block_input(L.attn_norm);
  observe(l, Site::AttnIn, xn_, n, E);
  const MatmulOut qkv[] = {{&L.wq, q_.data(), Q}, {&L.wk, k_.data(), KV}, {&L.wv, v_.data(), KV}};
  matmul_shared(qkv, xn_.data(), E, n, pool_);
  const float* rope_freq = m_.rope_table(l);
  pool_.parallel_for(n, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t i = t0; i < t1; ++i) {
      float* q = &q_[i * Q];
      float* k = &k_[i * KV];
      float* v = &v_[i * KV];
      if (h.qkv_bias) {
        for (int64_t j = 0; j < Q; ++j) q[j] += L.bq[j];
        for (int64_t j = 0; j < KV; ++j) k[j] += L.bk[j], v[j] += L.bv[j];
      }
      q += qo, k += ko;
      if (h.qk_norm) {
        for (int hh = 0; hh < n_head; ++hh)
          rmsnorm(q + hh * h.head_dim, L.q_norm.data(), q + hh * h.head_dim, h.head_dim, h.rms_eps);
        for (int hh = 0; hh < n_head_kv; ++hh)
          rmsnorm(k + hh * h.head_dim, L.k_norm.data(), k + hh * h.head_dim, h.head_dim, h.rms_eps);
      }
      rope(q, n_head, h.head_dim, h.rope_dim, b.pos[i], h.rope_type, rope_freq, m_.rope_magnitude);
      rope(k, n_head_kv, h.head_dim, h.rope_dim, b.pos[i], h.rope_type, rope_freq,
           m_.rope_magnitude);
    }
  });
  // Each sequence's rows are stored in batch order by one thread: a cache may rescale a block
  // as rows arrive (8-bit KV), which needs them in order.
  auto store = [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s)
      for (int32_t j = seq_first_[static_cast<size_t>(s)];
           j < seq_first_[static_cast<size_t>(s) + 1]; ++j) {
        const int64_t i = by_seq_[static_cast<size_t>(j)];
        cache.store(l, b.seq[i], b.pos[i], &k_[i * KV + ko], &v_[i * KV + ko]);
      }
  };
  const int64_t n_seqs = static_cast<int64_t>(seqs_.size());
  if (n_seqs == 1)
    store(0, 1);  // one sequence is one thread's work: no hand-off to the pool
  else
    pool_.parallel_for(n_seqs, 1, store);
  attend(l, b, cache);
  observe(l, Site::AttnOut, att_, n, A);
  const float* att = gather(att_, n, s_.q, att_all_);
  if (El > 0) matmul(L.wo, att, h.q_dim(), n, tmp_.data(), El, pool_);
  if (!L.bo.empty() && El > 0)
    pool_.parallel_for(n, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t i = t0; i < t1; ++i)
        for (int64_t j = 0; j < El; ++j) tmp_[i * El + j] += L.bo[j];
    });
  residual_ = post_norm(gather(tmp_, n, s_.embd, tmp_all_), n, L.attn_post_norm);
}

float* Forward::post_norm(float* rows, int64_t n, const std::vector<float>& norm) {
  if (norm.empty() || !rows) return rows;
  const int64_t E = m_.hp.n_embd;
  pool_.parallel_for(n, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t i = t0; i < t1; ++i)
      rmsnorm(rows + i * E, norm.data(), rows + i * E, E, m_.hp.rms_eps);
  });
  return rows;
}

void Forward::feed_forward(int l) {
  const auto& h = m_.hp;
  const LayerWeights& L = m_.w.layers[l];
  const int64_t n = batch_->size(), E = h.n_embd, F = h.n_ff;
  const int64_t El = s_.embd.count, Fl = s_.ff.count;  // this rank's rows of down and gate/up
  block_input(L.ffn_norm);
  observe(l, Site::FfnIn, xn_, n, E);
  const MatmulOut gate_up[] = {{&L.ffn_gate, gate_.data(), Fl}, {&L.ffn_up, up_.data(), Fl}};
  if (Fl > 0) matmul_shared(gate_up, xn_.data(), E, n, pool_);
  pool_.parallel_for(n, 1, [&](int64_t t0, int64_t t1) {
    float* g = gate_.data() + t0 * Fl;  // (a rank may hold none of the FFN's rows)
    gated_unit(h.glu, g, up_.data() + t0 * Fl, g, (t1 - t0) * Fl);
  });
  observe(l, Site::DownIn, gate_, n, F);
  const float* hidden = gather(gate_, n, s_.ff, gate_all_);
  if (El > 0) matmul(L.ffn_down, hidden, F, n, tmp_.data(), El, pool_);
  residual_ = post_norm(gather(tmp_, n, s_.embd, tmp_all_), n, L.ffn_post_norm);
}

int64_t Forward::route(int l, int64_t t0, int64_t n) {
  const LayerWeights& L = m_.w.layers[l];
  const ExpertRouting& r = m_.hp.experts;
  const int64_t X = r.n_expert, K = r.n_used;
  moe_scores_.resize(static_cast<size_t>(n * X));
  moe_chosen_.resize(static_cast<size_t>(n * K));
  moe_weight_.resize(static_cast<size_t>(n * K));
  // The router is whole on every rank, so that all of them choose the same experts.
  matmul(L.ffn_gate_inp, &xn_[t0 * m_.hp.n_embd], m_.hp.n_embd, n, moe_scores_.data(), X, pool_);
  pool_.parallel_for(n, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      float* sc = &moe_scores_[i * X];
      if (!L.ffn_gate_inp_b.empty())
        for (int64_t e = 0; e < X; ++e) sc[e] += L.ffn_gate_inp_b[e];
      route_experts(r, sc, &moe_chosen_[i * K], &moe_weight_[i * K]);
    }
  });
  // Slots grouped by expert, in batch order within each.
  const int64_t S = n * K;
  moe_first_.assign(static_cast<size_t>(X + 1), 0);
  for (int64_t s = 0; s < S; ++s) ++moe_first_[static_cast<size_t>(moe_chosen_[s]) + 1];
  for (int64_t e = 0; e < X; ++e) moe_first_[e + 1] += moe_first_[e];
  moe_token_.resize(static_cast<size_t>(S));
  moe_slot_.resize(static_cast<size_t>(S));
  std::vector<int64_t> fill(moe_first_.begin(), moe_first_.end() - 1);
  for (int64_t s = 0; s < S; ++s) {
    const int64_t p = fill[static_cast<size_t>(moe_chosen_[s])]++;
    moe_slot_[s] = p;
    moe_token_[p] = s / K;
  }
  return S;
}

void Forward::mixture_of_experts(int l) {
  const auto& h = m_.hp;
  const int64_t n = batch_->size(), E = h.n_embd, F = h.n_ff_exp, K = h.experts.n_used;
  block_input(m_.w.layers[l].ffn_norm);
  observe(l, Site::FfnIn, xn_, n, E);
  moe_out_.resize(static_cast<size_t>(n * E));
  // A slot's buffers hold about 3 rows of n_embd and 4 of the expert width: tokens go through in
  // runs whose slots fit in expert_run_bytes_, so a file with many wide experts per token cannot
  // make a batch allocate without bound. (A token's result does not depend on the run it is in.)
  const int64_t slot_bytes = (3 * E + 4 * F) * static_cast<int64_t>(sizeof(float)) * K;
  const int64_t run = std::max<int64_t>(1, expert_run_bytes_ / slot_bytes);
  for (int64_t t0 = 0; t0 < n; t0 += run) run_experts(l, t0, std::min(run, n - t0));
  residual_ = post_norm(moe_out_.data(), n, m_.w.layers[l].ffn_post_norm);
}

void Forward::run_experts(int l, int64_t t0, int64_t n) {
  const auto& h = m_.hp;
  const LayerWeights& L = m_.w.layers[l];
  const int64_t E = h.n_embd, F = h.n_ff_exp, X = h.experts.n_expert, K = h.experts.n_used;
  const int64_t El = s_.embd.count, Fl = s_.ff_exp.count;  // this rank's rows of down, gate/up
  const int64_t S = route(l, t0, n);
  moe_x_.resize(static_cast<size_t>(S * E));
  pool_.parallel_for(S, 16, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p)
      std::copy_n(&xn_[(t0 + moe_token_[p]) * E], E, &moe_x_[p * E]);
  });
  // Each chosen expert's weights are read once for all the slots that chose it.
  moe_gate_.resize(static_cast<size_t>(S * Fl));
  moe_up_.resize(static_cast<size_t>(S * Fl));
  for (int64_t e = 0; e < X && Fl > 0; ++e) {
    const int64_t p0 = moe_first_[e], c = moe_first_[e + 1] - p0;
    if (c == 0) continue;
    const LayerWeights::Expert& x = L.experts[static_cast<size_t>(e)];
    const MatmulOut gate_up[] = {{&x.gate, &moe_gate_[p0 * Fl], Fl},
                                 {&x.up, &moe_up_[p0 * Fl], Fl}};
    matmul_shared(gate_up, &moe_x_[p0 * E], E, c, pool_);
    for (int64_t p = p0; p < p0 + c; ++p) {
      for (int64_t j = 0; j < static_cast<int64_t>(x.gate_b.size()); ++j)
        moe_gate_[p * Fl + j] += x.gate_b[j];
      for (int64_t j = 0; j < static_cast<int64_t>(x.up_b.size()); ++j)
        moe_up_[p * Fl + j] += x.up_b[j];
    }
  }
  pool_.parallel_for(S, 1, [&](int64_t p0, int64_t p1) {
    // Pointers, not elements: a rank may hold none of the experts' rows (empty buffers).
    float* g = moe_gate_.data() + p0 * Fl;
    gated_unit(h.glu, g, moe_up_.data() + p0 * Fl, g, (p1 - p0) * Fl);
  });
  const float* hidden = gather(moe_gate_, S, s_.ff_exp, moe_gate_all_);
  moe_y_.resize(static_cast<size_t>(S * El));
  for (int64_t e = 0; e < X && El > 0; ++e) {
    const int64_t p0 = moe_first_[e], c = moe_first_[e + 1] - p0;
    if (c == 0) continue;
    const LayerWeights::Expert& x = L.experts[static_cast<size_t>(e)];
    matmul(x.down, hidden + p0 * F, F, c, &moe_y_[p0 * El], El, pool_);
    if (!x.down_b.empty())
      for (int64_t p = p0; p < p0 + c; ++p)
        for (int64_t j = 0; j < El; ++j) moe_y_[p * El + j] += x.down_b[j];
  }
  const float* y = gather(moe_y_, S, s_.embd, moe_y_all_);
  // Each token's experts summed in its own order, whatever the batch around it.
  pool_.parallel_for(n, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      float* o = &moe_out_[(t0 + i) * E];
      const float w0 = moe_weight_[i * K];
      const float* y0 = y + moe_slot_[i * K] * E;
      for (int64_t c = 0; c < E; ++c) o[c] = w0 * y0[c];
      for (int64_t j = 1; j < K; ++j) {
        const float w = moe_weight_[i * K + j];
        const float* yj = y + moe_slot_[i * K + j] * E;
        for (int64_t c = 0; c < E; ++c) o[c] += w * yj[c];
      }
    }
  });
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

void Forward::attend(int layer, const Batch& b, KvCache& cache) {
  const auto& h = m_.hp;
  const int64_t n = b.size();
  // Each token attends to positions [0, pos] of its own sequence (in a sliding-window layer, the
  // last `window` of them); spans are gathered once per sequence (for its largest position in the
  // batch) and shared by its tokens.
  spans_.clear();
  seq_spans_.clear();
  for (const auto& [s, len] : seqs_) {
    const size_t first = spans_.size();
    cache.spans(layer, s, len, spans_);
    seq_spans_.push_back({first, spans_.size() - first});
  }
  const std::vector<float>& sinks = m_.w.layers[static_cast<size_t>(layer)].sinks;
  const AttnShape shape{s_.n_head,
                        s_.n_head_kv,
                        h.head_dim,
                        cache.row_stride(),
                        h.attention_scale(),
                        cache.type(),
                        sinks.empty() ? nullptr : sinks.data() + s_.head0,
                        h.attn_softcap};
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
        const int64_t first = h.first_key(layer, b.pos[i]);
        queries_[static_cast<size_t>(j)] = {&q_[i * s_.q_rows.count + s_.q_rows.offset],
                                            &att_[i * s_.q.count], b.pos[i] + 1, first};
        cost += b.pos[i] + 1 - first;
      }
      groups_.push_back({cost, static_cast<int32_t>(k), j0, j1 - j0});
    }
  std::stable_sort(groups_.begin(), groups_.end(),
                   [](const Group& x, const Group& y) { return x.cost > y.cost; });
  const int64_t items = static_cast<int64_t>(groups_.size()) * s_.n_head_kv;
  pool_.parallel_chunks(items, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t it = i0; it < i1; ++it) {
      const Group& gr = groups_[static_cast<size_t>(it / s_.n_head_kv)];
      const auto [first, count] = seq_spans_[static_cast<size_t>(gr.seq)];
      attention_group(shape, static_cast<int>(it % s_.n_head_kv),
                      &queries_[static_cast<size_t>(gr.first)], gr.count, spans_.data() + first,
                      count);
    }
  });
}

}  // namespace brisk
