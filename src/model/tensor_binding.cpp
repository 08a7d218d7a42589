#include "model/tensor_binding.h"

#include "core/error.h"
#include "model/hparams.h"
#include "model/weights.h"
#include "quant/quant.h"

namespace brisk {

namespace {

const Tensor& need(const ModelFile& mf, const std::string& name) {
  const Tensor* t = mf.tensor(name);
  if (!t) fail("{}: tensor '{}' is missing", mf.path, name);
  return *t;
}

void check_weight_type(const ModelFile& mf, const Tensor& t) {
  if (dtype_is_weight_supported(t.type)) return;
  std::string supported;
  for (uint32_t id = 0; id < 64; ++id)
    if (auto info = dtype_info(id); info && dtype_is_weight_supported(info->type))
      supported += (supported.empty() ? "" : ", ") + std::string(info->name);
  fail("{}: tensor '{}' has type {}, which brisk cannot compute with (supported: {})", mf.path,
       t.name, dtype_name(t.type), supported);
}

// n_expert matrices of `rows` rows of `cols` values, stacked (GGUF's 3-D expert tensors).
const Tensor& stacked(const ModelFile& mf, const std::string& name, int64_t cols, int64_t rows,
                      int64_t n_expert) {
  const Tensor& t = need(mf, name);
  if (t.n_dims != 3 || t.ne[0] != cols || t.ne[1] != rows || t.ne[2] != n_expert)
    fail("{}: tensor '{}' has shape {}, expected [{}, {}, {}]", mf.path, name, t.shape_string(),
         cols, rows, n_expert);
  check_weight_type(mf, t);
  return t;
}

// Rows [first, first + rows) of expert e's matrix in a stack whose experts have ne[1] rows each.
Tensor expert_rows(const Tensor& s, int64_t e, int64_t first, int64_t rows) {
  Tensor t = s;
  t.ne[1] = s.ne[1] * s.ne[2];  // the stack as one matrix of every expert's rows
  t.ne[2] = 1;
  t.n_dims = 2;
  return matrix_rows(t, e * s.ne[1] + first, rows);
}

// Expert e's values [first, first + n) of a stacked bias (n_expert rows of `per` values).
std::vector<float> expert_values(const std::vector<float>& v, int64_t e, int64_t per, int64_t first,
                                 int64_t n) {
  if (v.empty()) return {};
  const auto b = v.begin() + e * per + first;
  return {b, b + n};
}

}  // namespace

std::string layer_tensor(int layer, std::string_view name) {
  return fmt::format("blk.{}.{}", layer, name);
}

bool has_tensor(const ModelFile& mf, const std::string& name) {
  return mf.tensor(name) != nullptr;
}

Tensor bind_matrix(const ModelFile& mf, const std::string& name, int64_t cols, int64_t rows) {
  const Tensor& t = need(mf, name);
  if (t.n_dims != 2 || t.ne[0] != cols || t.ne[1] != rows)
    fail("{}: tensor '{}' has shape {}, expected [{}, {}]", mf.path, name, t.shape_string(), cols,
         rows);
  check_weight_type(mf, t);
  return t;
}

Tensor matrix_rows(const Tensor& t, int64_t first, int64_t rows) {
  Tensor r = t;
  r.data = t.row(first);
  r.ne[1] = rows;
  r.nbytes = static_cast<uint64_t>(rows) * t.row_bytes();
  return r;
}

std::vector<float> bind_vector(const ModelFile& mf, const std::string& name, int64_t n) {
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

void bind_attention(const ModelFile& mf, const HParams& h, int l, LayerWeights& L) {
  auto n = [l](std::string_view s) { return layer_tensor(l, s); };
  L.attn_norm = bind_vector(mf, n("attn_norm.weight"), h.n_embd);
  L.wq = bind_matrix(mf, n("attn_q.weight"), h.n_embd, h.q_dim());
  L.wk = bind_matrix(mf, n("attn_k.weight"), h.n_embd, h.kv_dim());
  L.wv = bind_matrix(mf, n("attn_v.weight"), h.n_embd, h.kv_dim());
  L.wo = bind_matrix(mf, n("attn_output.weight"), h.q_dim(), h.n_embd);
  if (h.qkv_bias) {
    L.bq = bind_vector(mf, n("attn_q.bias"), h.q_dim());
    L.bk = bind_vector(mf, n("attn_k.bias"), h.kv_dim());
    L.bv = bind_vector(mf, n("attn_v.bias"), h.kv_dim());
  }
  if (h.qk_norm) {
    L.q_norm = bind_vector(mf, n("attn_q_norm.weight"), h.head_dim);
    L.k_norm = bind_vector(mf, n("attn_k_norm.weight"), h.head_dim);
  }
}

void bind_feed_forward(const ModelFile& mf, const HParams& h, int l, LayerWeights& L) {
  auto n = [l](std::string_view s) { return layer_tensor(l, s); };
  L.ffn_norm = bind_vector(mf, n("ffn_norm.weight"), h.n_embd);
  L.ffn_gate = bind_matrix(mf, n("ffn_gate.weight"), h.n_embd, h.n_ff);
  L.ffn_up = bind_matrix(mf, n("ffn_up.weight"), h.n_embd, h.n_ff);
  L.ffn_down = bind_matrix(mf, n("ffn_down.weight"), h.n_ff, h.n_embd);
}

void bind_mixture_of_experts(const ModelFile& mf, const HParams& h, int l, LayerWeights& L,
                             std::string_view norm) {
  auto n = [l](std::string_view s) { return layer_tensor(l, s); };
  const int64_t E = h.n_embd, F = h.n_ff_exp, X = h.experts.n_expert;
  L.ffn_norm = bind_vector(mf, n(norm), E);
  L.ffn_gate_inp = bind_matrix(mf, n("ffn_gate_inp.weight"), E, X);
  if (has_tensor(mf, n("ffn_gate_inp.bias")))
    L.ffn_gate_inp_b = bind_vector(mf, n("ffn_gate_inp.bias"), X);
  const bool fused = has_tensor(mf, n("ffn_gate_up_exps.weight"));
  const Tensor& gate_up = stacked(mf, n(fused ? "ffn_gate_up_exps.weight" : "ffn_gate_exps.weight"),
                                  E, fused ? 2 * F : F, X);
  const Tensor& up = fused ? gate_up : stacked(mf, n("ffn_up_exps.weight"), E, F, X);
  const Tensor& down = stacked(mf, n("ffn_down_exps.weight"), F, E, X);
  auto bias = [&](std::string_view name, int64_t per) {
    return has_tensor(mf, n(name)) ? bind_vector(mf, n(name), per * X) : std::vector<float>{};
  };
  const std::vector<float> gate_b =
      bias(fused ? "ffn_gate_up_exps.bias" : "ffn_gate_exps.bias", fused ? 2 * F : F);
  const std::vector<float> up_b = fused ? gate_b : bias("ffn_up_exps.bias", F);
  const std::vector<float> down_b = bias("ffn_down_exps.bias", E);
  const int64_t per = fused ? 2 * F : F, up0 = fused ? F : 0;  // where up's rows start
  L.experts.resize(static_cast<size_t>(X));
  for (int64_t e = 0; e < X; ++e) {
    LayerWeights::Expert& x = L.experts[static_cast<size_t>(e)];
    x.gate = expert_rows(gate_up, e, 0, F);
    x.up = expert_rows(up, e, up0, F);
    x.down = expert_rows(down, e, 0, E);
    x.gate_b = expert_values(gate_b, e, per, 0, F);
    x.up_b = expert_values(up_b, e, fused ? per : F, up0, F);
    x.down_b = expert_values(down_b, e, E, 0, E);
  }
}

}  // namespace brisk
