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
  w.layers.resize(static_cast<size_t>(hp.n_layer));
  for (int l = 0; l < hp.n_layer; ++l) hp.architecture->bind(mf, hp, l, w.layers[l]);
  return w;
}

namespace {

void keep_rows(Tensor& t, int64_t first, int64_t count) {
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
  }
  keep_rows(output, s.vocab.first, s.vocab.count);
}

uint64_t Weights::matrix_bytes() const {
  uint64_t b = output.nbytes;
  for (const auto& L : layers)
    b += L.wq.nbytes + L.wk.nbytes + L.wv.nbytes + L.wo.nbytes + L.ffn_gate.nbytes +
         L.ffn_up.nbytes + L.ffn_down.nbytes;
  return b;
}

uint64_t Weights::matrix_elements() const {
  uint64_t n = static_cast<uint64_t>(output.elements());
  for (const auto& L : layers)
    for (const Tensor* t : {&L.wq, &L.wk, &L.wv, &L.wo, &L.ffn_gate, &L.ffn_up, &L.ffn_down})
      n += static_cast<uint64_t>(t->elements());
  return n;
}

}  // namespace brisk
