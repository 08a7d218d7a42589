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

}  // namespace brisk
