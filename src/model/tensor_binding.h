// Binding a model's tensors by name, checked against the shapes the hyper-parameters give: the
// helpers every architecture's bind() is written with, and the shared blocks' own tensors.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/metadata.h"

namespace brisk {

struct HParams;
struct LayerWeights;

// "blk.{layer}.{name}", GGUF's name for a layer's tensor.
std::string layer_tensor(int layer, std::string_view name);
bool has_tensor(const ModelFile& mf, const std::string& name);
// A matrix of `rows` rows of `cols` values, in a type brisk computes with (a view into the file).
Tensor bind_matrix(const ModelFile& mf, const std::string& name, int64_t cols, int64_t rows);
// Rows [first, first + rows) of a matrix, as a matrix of their own (a fused tensor's parts).
Tensor matrix_rows(const Tensor& t, int64_t first, int64_t rows);
// A vector of n values (F32, F16 or BF16), converted to f32.
std::vector<float> bind_vector(const ModelFile& mf, const std::string& name, int64_t n);

// The attention block's tensors: attn_norm, attn_q/k/v/output, and the q/k/v biases and per-head
// q/k norms where h says the model has them.
void bind_attention(const ModelFile& mf, const HParams& h, int layer, LayerWeights& L);
// The SwiGLU feed-forward's: ffn_norm, ffn_gate, ffn_up, ffn_down.
void bind_feed_forward(const ModelFile& mf, const HParams& h, int layer, LayerWeights& L);
// The mixture of experts': its input norm (`norm`, ffn_norm in most files), the router
// ffn_gate_inp (and its bias where present), and each expert's view of the stacked ffn_gate_exps,
// ffn_up_exps (or the fused ffn_gate_up_exps) and ffn_down_exps, with their biases where present.
void bind_mixture_of_experts(const ModelFile& mf, const HParams& h, int layer, LayerWeights& L,
                             std::string_view norm = "ffn_norm.weight");

}  // namespace brisk
