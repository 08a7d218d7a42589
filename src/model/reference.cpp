#include "model/reference.h"

#include <cmath>
#include <limits>

#include "model/architecture.h"
#include "ops/moe.h"
#include "ops/ref/ref_ops.h"
#include "quant/quant.h"

namespace brisk {

ReferenceForward::ReferenceForward(const Model& m) : m_(m) {
  k_cache_.resize(static_cast<size_t>(m.hp.n_layer));
  v_cache_.resize(static_cast<size_t>(m.hp.n_layer));
}

std::vector<float> ReferenceForward::step(int32_t token, int64_t pos) {
  const HParams& h = m_.hp;
  const Weights& W = m_.w;
  const int64_t E = h.n_embd;
  x_.resize(E);
  pos_ = pos;
  dequantize_row(W.token_embd.type, W.token_embd.row(token), x_.data(), E);
  for (auto& v : x_) v *= h.embd_scale;
  for (int l = 0; l < h.n_layer; ++l) h.architecture->layer(h, *this, l);
  std::vector<float> xn(E);
  ref::rmsnorm(x_.data(), W.output_norm.data(), xn.data(), E, h.rms_eps);
  std::vector<float> logits(h.n_vocab);
  ref::matmul(W.output, xn.data(), 1, logits.data());
  if (h.final_softcap > 0)
    for (auto& v : logits)
      v = static_cast<float>(h.final_softcap * std::tanh(static_cast<double>(v) / h.final_softcap));
  return logits;
}

void ReferenceForward::attention(int l) {
  const HParams& h = m_.hp;
  const LayerWeights& L = m_.w.layers[l];
  const int64_t E = h.n_embd, hd = h.head_dim, KV = h.kv_dim();
  std::vector<float> xn(E), q(h.q_dim()), k(KV), v(KV), att(h.q_dim()), o(E);
  ref::rmsnorm(x_.data(), L.attn_norm.data(), xn.data(), E, h.rms_eps);
  ref::matmul(L.wq, xn.data(), 1, q.data());
  ref::matmul(L.wk, xn.data(), 1, k.data());
  ref::matmul(L.wv, xn.data(), 1, v.data());
  if (h.qkv_bias) {
    for (int64_t i = 0; i < h.q_dim(); ++i) q[i] += L.bq[i];
    for (int64_t i = 0; i < KV; ++i) k[i] += L.bk[i], v[i] += L.bv[i];
  }
  if (h.qk_norm) {
    for (int hh = 0; hh < h.n_head; ++hh)
      ref::rmsnorm(&q[hh * hd], L.q_norm.data(), &q[hh * hd], hd, h.rms_eps);
    for (int hh = 0; hh < h.n_head_kv; ++hh)
      ref::rmsnorm(&k[hh * hd], L.k_norm.data(), &k[hh * hd], hd, h.rms_eps);
  }
  ref::rope(q.data(), h.n_head, h.head_dim, h.rope_dim, pos_, h.rope_type, m_.rope_table(l),
            m_.rope_magnitude);
  ref::rope(k.data(), h.n_head_kv, h.head_dim, h.rope_dim, pos_, h.rope_type, m_.rope_table(l),
            m_.rope_magnitude);
  auto& kc = k_cache_[l];
  auto& vc = v_cache_[l];
  kc.resize(static_cast<size_t>((pos_ + 1) * KV));
  vc.resize(static_cast<size_t>((pos_ + 1) * KV));
  std::copy(k.begin(), k.end(), kc.begin() + pos_ * KV);
  std::copy(v.begin(), v.end(), vc.begin() + pos_ * KV);
  const int group = h.n_head / h.n_head_kv;
  for (int hh = 0; hh < h.n_head; ++hh) {
    const int64_t kvo = static_cast<int64_t>(hh / group) * hd;
    const float sink = L.sinks.empty() ? -std::numeric_limits<float>::infinity() : L.sinks[hh];
    ref::attention_head(&q[hh * hd], kc.data() + kvo, vc.data() + kvo, KV, h.first_key(l, pos_),
                        pos_ + 1, h.head_dim, h.attention_scale(), sink, &att[hh * hd],
                        h.attn_softcap);
  }
  ref::matmul(L.wo, att.data(), 1, o.data());
  for (size_t i = 0; i < L.bo.size(); ++i) o[i] += L.bo[i];
  add_output(o, L.attn_post_norm);
}

void ReferenceForward::add_output(std::vector<float>& o, const std::vector<float>& post_norm) {
  if (!post_norm.empty())
    ref::rmsnorm(o.data(), post_norm.data(), o.data(), m_.hp.n_embd, m_.hp.rms_eps);
  for (int64_t i = 0; i < m_.hp.n_embd; ++i) x_[i] += o[i];
}

void ReferenceForward::glu(const float* gate, const float* up, float* out, int64_t n) const {
  const GatedUnit& u = m_.hp.glu;
  if (u.kind == GatedUnit::Kind::SwiGluClamped)
    ref::swiglu_clamped(gate, up, out, n, u.alpha, u.limit);
  else if (u.kind == GatedUnit::Kind::GeGluTanh)
    ref::geglu_tanh(gate, up, out, n);
  else
    ref::silu_mul(gate, up, out, n);
}

void ReferenceForward::feed_forward(int l) {
  const HParams& h = m_.hp;
  const LayerWeights& L = m_.w.layers[l];
  const int64_t E = h.n_embd;
  std::vector<float> xn(E), gate(h.n_ff), up(h.n_ff), ff(h.n_ff), o(E);
  ref::rmsnorm(x_.data(), L.ffn_norm.data(), xn.data(), E, h.rms_eps);
  ref::matmul(L.ffn_gate, xn.data(), 1, gate.data());
  ref::matmul(L.ffn_up, xn.data(), 1, up.data());
  glu(gate.data(), up.data(), ff.data(), h.n_ff);
  ref::matmul(L.ffn_down, ff.data(), 1, o.data());
  add_output(o, L.ffn_post_norm);
}

void ReferenceForward::mixture_of_experts(int l) {
  const HParams& h = m_.hp;
  const LayerWeights& L = m_.w.layers[l];
  const ExpertRouting& r = h.experts;
  const int64_t E = h.n_embd, F = h.n_ff_exp;
  std::vector<float> xn(E), scores(r.n_expert), weights(r.n_used), acc(E);
  std::vector<float> gate(F), up(F), ff(F), y(E);
  std::vector<int32_t> chosen(r.n_used);
  ref::rmsnorm(x_.data(), L.ffn_norm.data(), xn.data(), E, h.rms_eps);
  ref::matmul(L.ffn_gate_inp, xn.data(), 1, scores.data());
  for (size_t e = 0; e < L.ffn_gate_inp_b.size(); ++e) scores[e] += L.ffn_gate_inp_b[e];
  route_experts(r, scores.data(), chosen.data(), weights.data());
  for (int j = 0; j < r.n_used; ++j) {
    const LayerWeights::Expert& x = L.experts[static_cast<size_t>(chosen[j])];
    ref::matmul(x.gate, xn.data(), 1, gate.data());
    ref::matmul(x.up, xn.data(), 1, up.data());
    for (size_t i = 0; i < x.gate_b.size(); ++i) gate[i] += x.gate_b[i];
    for (size_t i = 0; i < x.up_b.size(); ++i) up[i] += x.up_b[i];
    glu(gate.data(), up.data(), ff.data(), F);
    ref::matmul(x.down, ff.data(), 1, y.data());
    for (size_t i = 0; i < x.down_b.size(); ++i) y[i] += x.down_b[i];
    for (int64_t i = 0; i < E; ++i)
      acc[i] = j == 0 ? weights[j] * y[i] : acc[i] + weights[j] * y[i];
  }
  add_output(acc, L.ffn_post_norm);
}

}  // namespace brisk
