#include "model/weights.h"

#include "core/error.h"
#include "model/architecture.h"
#include "model/tensor_binding.h"

namespace brisk {

Weights Weights::bind(const ModelFile& mf, const HParams& hp) {
  Weights w;
  w.token_embd = bind_matrix(mf, "token_embd.weight", hp.n_embd, hp.n_vocab);
  w.output_norm = bind_vector(mf, "output_norm.weight", hp.n_embd);
  w.output =
      hp.tied_output ? w.token_embd : bind_matrix(mf, "output.weight", hp.n_embd, hp.n_vocab);
  if (has_tensor(mf, "rope_freqs.weight"))
    w.rope_freqs = bind_vector(mf, "rope_freqs.weight", hp.rope_dim / 2);
  // LongRoPE (Phi-3's 128K models): a set of factors for each side of the original context.
  if (has_tensor(mf, "rope_factors_short.weight"))
    w.rope_freqs = bind_vector(mf, "rope_factors_short.weight", hp.rope_dim / 2);
  if (has_tensor(mf, "rope_factors_long.weight"))
    w.rope_freqs_long = bind_vector(mf, "rope_factors_long.weight", hp.rope_dim / 2);
  w.n_expert = hp.experts.n_expert;
  w.n_expert_used = hp.experts.n_used;
  w.layers.resize(static_cast<size_t>(hp.n_layer));
  for (int l = 0; l < hp.n_layer; ++l) hp.architecture->bind(mf, hp, l, w.layers[l]);
  return w;
}

namespace {

void keep_rows(Tensor& t, int64_t first, int64_t count) {
  if (!t.data) return;  // a matrix this layer does not have
  t.data = t.row(first);
  t.ne[1] = count;
  t.nbytes = static_cast<uint64_t>(count) * t.row_bytes();
}

void keep_values(std::vector<float>& v, int64_t first, int64_t count) {
  if (v.empty()) return;
  v.erase(v.begin() + first + count, v.end());
  v.erase(v.begin(), v.begin() + first);
}

}  // namespace

void Weights::take_share(const Split& s) {
  if (!s.active()) return;
  const int64_t kv0 = s.kv_rows.first, kvn = s.kv_rows.count;
  for (auto& L : layers) {
    keep_rows(L.wq, s.q_rows.first, s.q_rows.count);
    keep_rows(L.wk, kv0, kvn);
    keep_rows(L.wv, kv0, kvn);
    keep_rows(L.wo, s.embd.first, s.embd.count);
    keep_rows(L.ffn_gate, s.ff.first, s.ff.count);
    keep_rows(L.ffn_up, s.ff.first, s.ff.count);
    keep_rows(L.ffn_down, s.embd.first, s.embd.count);
    keep_values(L.bq, s.q_rows.first, s.q_rows.count);
    keep_values(L.bk, kv0, kvn);
    keep_values(L.bv, kv0, kvn);
    keep_values(L.bo, s.embd.first, s.embd.count);  // (sinks stay whole: heads index them)
    for (LayerWeights::Expert& e : L.experts) {
      keep_rows(e.gate, s.ff_exp.first, s.ff_exp.count);
      keep_rows(e.up, s.ff_exp.first, s.ff_exp.count);
      keep_rows(e.down, s.embd.first, s.embd.count);
      keep_values(e.gate_b, s.ff_exp.first, s.ff_exp.count);
      keep_values(e.up_b, s.ff_exp.first, s.ff_exp.count);
      keep_values(e.down_b, s.embd.first, s.embd.count);
    }
  }
  keep_rows(output, s.vocab.first, s.vocab.count);
}

namespace {

// The layer's matrices, with the share of them one token reads (experts: n_used of n_expert).
template <typename F>
void for_each_matrix(const Weights& w, const LayerWeights& L, F&& f) {
  for (const Tensor* t : {&L.wq, &L.wk, &L.wv, &L.wo, &L.ffn_gate, &L.ffn_up, &L.ffn_down})
    if (t->data) f(*t, 1.0);
  if (L.ffn_gate_inp.data) f(L.ffn_gate_inp, 1.0);
  for (const LayerWeights::Expert& e : L.experts)
    for (const Tensor* t : {&e.gate, &e.up, &e.down})
      f(*t, static_cast<double>(w.n_expert_used) / w.n_expert);
}

}  // namespace

uint64_t Weights::matrix_bytes() const {
  double b = static_cast<double>(output.nbytes);
  for (const auto& L : layers)
    for_each_matrix(*this, L, [&](const Tensor& t, double share) { b += t.nbytes * share; });
  return static_cast<uint64_t>(b);
}

uint64_t Weights::matrix_elements() const {
  double n = static_cast<double>(output.elements());
  for (const auto& L : layers)
    for_each_matrix(*this, L, [&](const Tensor& t, double share) {
      n += static_cast<double>(t.elements()) * share;
    });
  return static_cast<uint64_t>(n);
}

}  // namespace brisk
