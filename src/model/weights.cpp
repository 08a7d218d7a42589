#include "model/weights.h"

#include "core/error.h"
#include "quant/quant.h"

namespace brisk {
namespace {

const Tensor& need(const ModelFile& mf, const std::string& name) {
  const Tensor* t = mf.tensor(name);
  if (!t) fail("{}: tensor '{}' is missing", mf.path, name);
  return *t;
}

Tensor matrix(const ModelFile& mf, const std::string& name, int64_t cols, int64_t rows) {
  const Tensor& t = need(mf, name);
  if (t.n_dims != 2 || t.ne[0] != cols || t.ne[1] != rows)
    fail("{}: tensor '{}' has shape {}, expected [{}, {}]", mf.path, name, t.shape_string(), cols,
         rows);
  if (!dtype_is_weight_supported(t.type)) {
    std::string supported;
    for (uint32_t id = 0; id < 64; ++id)
      if (auto info = dtype_info(id); info && dtype_is_weight_supported(info->type))
        supported += (supported.empty() ? "" : ", ") + std::string(info->name);
    fail("{}: tensor '{}' has type {}, which brisk cannot compute with (supported: {})", mf.path,
         name, dtype_name(t.type), supported);
  }
  return t;
}

std::vector<float> vec(const ModelFile& mf, const std::string& name, int64_t n) {
  const Tensor& t = need(mf, name);
  if (t.elements() != n)
    fail("{}: tensor '{}' has {} elements, expected {}", mf.path, name, t.elements(), n);
  if (t.type != DType::F32 && t.type != DType::F16 && t.type != DType::BF16)
    fail("{}: tensor '{}' has type {}; vectors must be F32, F16 or BF16", mf.path, name,
         dtype_name(t.type));
  std::vector<float> v(static_cast<size_t>(n));
  convert_row_to_f32(t.type, t.data, v.data(), n);
  return v;
}

}  // namespace

Weights Weights::bind(const ModelFile& mf, const HParams& hp) {
  Weights w;
  w.token_embd = matrix(mf, "token_embd.weight", hp.n_embd, hp.n_vocab);
  w.output_norm = vec(mf, "output_norm.weight", hp.n_embd);
  w.output = hp.tied_output ? w.token_embd : matrix(mf, "output.weight", hp.n_embd, hp.n_vocab);
  if (mf.tensor("rope_freqs.weight")) w.rope_freqs = vec(mf, "rope_freqs.weight", hp.rope_dim / 2);
  for (int64_t l = 0; l < hp.n_layer; ++l) {
    auto n = [&](const char* s) { return fmt::format("blk.{}.{}", l, s); };
    LayerWeights L;
    L.attn_norm = vec(mf, n("attn_norm.weight"), hp.n_embd);
    L.ffn_norm = vec(mf, n("ffn_norm.weight"), hp.n_embd);
    L.wq = matrix(mf, n("attn_q.weight"), hp.n_embd, hp.q_dim());
    L.wk = matrix(mf, n("attn_k.weight"), hp.n_embd, hp.kv_dim());
    L.wv = matrix(mf, n("attn_v.weight"), hp.n_embd, hp.kv_dim());
    L.wo = matrix(mf, n("attn_output.weight"), hp.q_dim(), hp.n_embd);
    if (hp.qkv_bias) {
      L.bq = vec(mf, n("attn_q.bias"), hp.q_dim());
      L.bk = vec(mf, n("attn_k.bias"), hp.kv_dim());
      L.bv = vec(mf, n("attn_v.bias"), hp.kv_dim());
    }
    if (hp.qk_norm) {
      L.q_norm = vec(mf, n("attn_q_norm.weight"), hp.head_dim);
      L.k_norm = vec(mf, n("attn_k_norm.weight"), hp.head_dim);
    }
    L.ffn_gate = matrix(mf, n("ffn_gate.weight"), hp.n_embd, hp.n_ff);
    L.ffn_up = matrix(mf, n("ffn_up.weight"), hp.n_embd, hp.n_ff);
    L.ffn_down = matrix(mf, n("ffn_down.weight"), hp.n_ff, hp.n_embd);
    w.layers.push_back(std::move(L));
  }
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
