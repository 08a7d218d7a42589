#include "model/hparams.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "model/architecture.h"

namespace brisk {

HParams HParams::from_model(const ModelFile& mf) {
  HParams h;
  h.arch = mf.arch();
  if (h.arch.empty()) fail("{}: general.architecture is missing", mf.path);
  h.architecture = Architecture::find(h.arch);
  if (!h.architecture)
    fail("{}: architecture '{}' is not supported (supported: {})", mf.path, h.arch,
         Architecture::supported_names());
  const std::string a = h.arch + ".";
  auto positive = [&](const std::string& key, int64_t v, int64_t max) {
    if (v <= 0 || v > max) fail("{}: {} = {} is out of range (1..{})", mf.path, key, v, max);
    return v;
  };
  h.n_embd = positive(a + "embedding_length", mf.require_int(a + "embedding_length"), 1 << 16);
  h.n_layer = positive(a + "block_count", mf.require_int(a + "block_count"), 1024);
  h.n_ff = positive(a + "feed_forward_length", mf.require_int(a + "feed_forward_length"), 1 << 18);
  h.n_head = static_cast<int>(
      positive(a + "attention.head_count", mf.require_int(a + "attention.head_count"), 1024));
  h.n_head_kv = static_cast<int>(
      positive(a + "attention.head_count_kv",
               mf.get_int(a + "attention.head_count_kv").value_or(h.n_head), 1024));
  if (h.n_head % h.n_head_kv != 0)
    fail("{}: head_count {} is not a multiple of head_count_kv {}", mf.path, h.n_head, h.n_head_kv);
  if (h.n_head / h.n_head_kv > 64) fail("{}: more than 64 query heads per KV head", mf.path);
  const int64_t def_hd = h.n_embd % h.n_head == 0 ? h.n_embd / h.n_head : 0;
  h.head_dim = static_cast<int>(positive(
      a + "attention.key_length", mf.get_int(a + "attention.key_length").value_or(def_hd), 1024));
  if (auto vl = mf.get_int(a + "attention.value_length"); vl && *vl != h.head_dim)
    fail("{}: attention.value_length {} differs from key_length {} (not supported)", mf.path, *vl,
         h.head_dim);
  h.rope_dim = static_cast<int>(mf.get_int(a + "rope.dimension_count").value_or(h.head_dim));
  if (h.rope_dim <= 0 || h.rope_dim > h.head_dim || h.rope_dim % 2 != 0)
    fail("{}: rope.dimension_count {} must be even and at most the head size {}", mf.path,
         h.rope_dim, h.head_dim);
  h.n_ctx_train = mf.get_int(a + "context_length").value_or(2048);
  if (h.n_ctx_train <= 0) fail("{}: context_length must be positive", mf.path);
  h.rms_eps =
      static_cast<float>(mf.get_float(a + "attention.layer_norm_rms_epsilon").value_or(1e-5));
  if (!(h.rms_eps > 0 && h.rms_eps < 1))
    fail("{}: layer_norm_rms_epsilon {} is out of range", mf.path, h.rms_eps);
  h.rope_theta = static_cast<float>(mf.get_float(a + "rope.freq_base").value_or(10000.0));
  if (!(h.rope_theta > 1)) fail("{}: rope.freq_base {} is out of range", mf.path, h.rope_theta);
  // A factor on the rotated values (LongRoPE's and YaRN's attention factor), as llama.cpp applies
  // it whatever the scaling type.
  h.rope_scaling.attn_factor =
      static_cast<float>(mf.get_float(a + "rope.scaling.attn_factor").value_or(1.0));
  if (!(h.rope_scaling.attn_factor > 0 && h.rope_scaling.attn_factor < 100))
    fail("{}: rope.scaling.attn_factor {} is out of range", mf.path, h.rope_scaling.attn_factor);
  if (auto st = mf.get_str(a + "rope.scaling.type")) {
    const float factor = static_cast<float>(mf.get_float(a + "rope.scaling.factor").value_or(1.0));
    if (*st == "linear") {
      if (!(factor >= 1)) fail("{}: rope.scaling.factor {} is out of range", mf.path, factor);
      h.rope_scaling.kind = RopeScaling::Kind::Linear;
      h.rope_scaling.factor = factor;
    } else if (*st == "llama3") {
      h.rope_scaling.kind = RopeScaling::Kind::Llama3;
      h.rope_scaling.factor = factor;
      h.rope_scaling.low_freq_factor =
          static_cast<float>(mf.get_float(a + "rope.scaling.low_freq_factor").value_or(1));
      h.rope_scaling.high_freq_factor =
          static_cast<float>(mf.get_float(a + "rope.scaling.high_freq_factor").value_or(4));
      h.rope_scaling.original_context =
          mf.get_int(a + "rope.scaling.original_context_length").value_or(8192);
      if (!(h.rope_scaling.factor >= 1 &&
            h.rope_scaling.high_freq_factor > h.rope_scaling.low_freq_factor &&
            h.rope_scaling.original_context > 0))
        fail("{}: invalid llama3 rope scaling parameters", mf.path);
    } else if (*st == "yarn") {
      RopeScaling& y = h.rope_scaling;
      y.kind = RopeScaling::Kind::Yarn;
      y.factor = factor == 0 ? 1.0f : factor;  // llama.cpp reads 0 as "not given"
      y.original_context =
          mf.get_int(a + "rope.scaling.original_context_length").value_or(h.n_ctx_train);
      y.log_multiplier =
          static_cast<float>(mf.get_float(a + "rope.scaling.yarn_log_multiplier").value_or(0.0));
      y.beta_fast =
          static_cast<float>(mf.get_float(a + "rope.scaling.yarn_beta_fast").value_or(32.0));
      y.beta_slow =
          static_cast<float>(mf.get_float(a + "rope.scaling.yarn_beta_slow").value_or(1.0));
      if (!(y.factor >= 1 && y.factor <= 1024 && y.original_context > 0 &&
            std::isfinite(y.log_multiplier) && y.beta_fast > 0 && y.beta_slow > 0 &&
            y.beta_fast < 1e6 && y.beta_slow < 1e6))
        fail("{}: invalid yarn rope scaling parameters", mf.path);
    } else if (*st != "none") {
      fail("{}: rope scaling type '{}' is not supported", mf.path, *st);
    }
  }
  const Tensor* emb = mf.tensor("token_embd.weight");
  if (!emb) fail("{}: tensor 'token_embd.weight' is missing", mf.path);
  h.n_vocab = emb->ne[1];
  h.tied_output = mf.tensor("output.weight") == nullptr;
  h.architecture->read(mf, h);
  return h;
}

void read_experts(const ModelFile& mf, HParams& h, ExpertGating gating, bool normalize,
                  int64_t default_width) {
  const std::string a = h.arch + ".";
  const int64_t n = mf.require_int(a + "expert_count");
  const int64_t used = mf.require_int(a + "expert_used_count");
  if (n < 1 || n > 1024) fail("{}: {}expert_count = {} is out of range (1..1024)", mf.path, a, n);
  if (used < 1 || used > n || used > 64)
    fail("{}: {}expert_used_count = {} is out of range (1..{})", mf.path, a, used,
         std::min<int64_t>(n, 64));
  h.n_ff_exp = mf.get_int(a + "expert_feed_forward_length").value_or(default_width);
  if (h.n_ff_exp < 1 || h.n_ff_exp > (1 << 18))
    fail("{}: {}expert_feed_forward_length = {} is out of range (1..{})", mf.path, a, h.n_ff_exp,
         1 << 18);
  h.experts.n_expert = static_cast<int>(n);
  h.experts.n_used = static_cast<int>(used);
  h.experts.gating = gating;
  h.experts.normalize = normalize;
  h.experts.scale = static_cast<float>(mf.get_float(a + "expert_weights_scale").value_or(1.0));
  if (h.experts.scale == 0) h.experts.scale = 1;  // llama.cpp reads 0 as "not given"
  if (!std::isfinite(h.experts.scale))
    fail("{}: {}expert_weights_scale is not a finite number", mf.path, a);
}

void read_sliding_window(const ModelFile& mf, HParams& h, int64_t default_period,
                         int64_t default_window) {
  const std::string a = h.arch + ".";
  h.window = default_window < 0
                 ? mf.require_int(a + "attention.sliding_window")
                 : mf.get_int(a + "attention.sliding_window").value_or(default_window);
  if (h.window == 0 && default_window >= 0) return;  // (as llama.cpp reads Gemma 3's 0)
  if (h.window < 1 || h.window > (int64_t{1} << 24))
    fail("{}: {}attention.sliding_window = {} is out of range (1..{})", mf.path, a, h.window,
         int64_t{1} << 24);
  h.windowed.assign(static_cast<size_t>(h.n_layer), 0);
  const std::string pattern_key = a + "attention.sliding_window_pattern";
  if (const Value* v = mf.find(pattern_key); v && v->type == GgufType::ARRAY) {
    // A flag per layer (newer converters write Gemma 3's so).
    if (static_cast<int64_t>(v->arr.size()) != h.n_layer)
      fail("{}: {} has {} values for {} layers", mf.path, pattern_key, v->arr.size(), h.n_layer);
    for (size_t l = 0; l < v->arr.size(); ++l) {
      const auto flag = v->arr[l].as_int();
      if (!flag || *flag < 0 || *flag > 1)
        fail("{}: {}[{}] should be a flag (0 or 1)", mf.path, pattern_key, l);
      h.windowed[l] = static_cast<uint8_t>(*flag);
    }
    return;
  }
  const int64_t period = mf.get_int(pattern_key).value_or(default_period);
  if (period < 0 || period > h.n_layer)
    fail("{}: {}attention.sliding_window_pattern = {} is out of range (0..{})", mf.path, a, period,
         h.n_layer);
  for (int64_t l = 0; l < h.n_layer; ++l)  // (0: every layer, as llama.cpp reads it)
    h.windowed[static_cast<size_t>(l)] = period == 0 || l % period < period - 1;
}

}  // namespace brisk
