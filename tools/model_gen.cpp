#include "model_gen.h"

#include <cmath>
#include <cstring>
#include <map>

#include "core/error.h"
#include "formats/gguf.h"
#include "formats/rope_factors.h"
#include "quant/quant.h"

namespace brisk::tools {
namespace {

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Uniform in [-a, a).
float uniform(uint64_t& s, float a) {
  return (static_cast<float>(splitmix(s) >> 40) * (1.0f / 16777216.0f) * 2.0f - 1.0f) * a;
}

Tensor info(const std::string& name, std::initializer_list<int64_t> ne, DType t) {
  Tensor x;
  x.name = name;
  x.type = t;
  x.n_dims = static_cast<int>(ne.size());
  int d = 0;
  for (int64_t n : ne) x.ne[d++] = n;
  x.nbytes = checked_mul(*dtype_row_bytes(t, static_cast<uint64_t>(x.ne[0])),
                         static_cast<uint64_t>(x.rows()), "size");
  return x;
}

}  // namespace

std::vector<std::string> preset_names() {
  return {"tinyllama-1.1b", "llama-3.2-1b", "qwen2.5-0.5b",  "qwen3-0.6b",
          "smollm-135m",    "stories260k",  "qwen3-30b-a3b", "mixtral-8x7b",
          "gpt-oss-20b",    "phi-3.5-mini", "gemma-2-2b",    "gemma-3-4b"};
}

GenConfig preset(const std::string& name) {
  GenConfig c;
  c.name = name;
  if (name == "tinyllama-1.1b") {
    c.n_vocab = 32000, c.n_embd = 2048, c.n_layer = 22, c.n_ff = 5632, c.n_head = 32,
    c.n_head_kv = 4;
  } else if (name == "llama-3.2-1b") {
    c.n_vocab = 128256, c.n_embd = 2048, c.n_layer = 16, c.n_ff = 8192, c.n_head = 32,
    c.n_head_kv = 8;
    c.rope_theta = 500000, c.rope_scaling = "llama3", c.rope_factor = 32, c.tied = true,
    c.n_ctx = 131072;
  } else if (name == "qwen2.5-0.5b") {
    c.arch = "qwen2", c.n_vocab = 151936, c.n_embd = 896, c.n_layer = 24, c.n_ff = 4864,
    c.n_head = 14;
    c.n_head_kv = 2, c.qkv_bias = true, c.tied = true, c.rope_theta = 1000000, c.n_ctx = 32768;
  } else if (name == "qwen3-0.6b") {
    c.arch = "qwen3", c.n_vocab = 151936, c.n_embd = 1024, c.n_layer = 28, c.n_ff = 3072,
    c.n_head = 16;
    c.n_head_kv = 8, c.head_dim = 128, c.qk_norm = true, c.tied = true, c.rope_theta = 1000000,
    c.n_ctx = 40960;
  } else if (name == "smollm-135m") {
    c.n_vocab = 49152, c.n_embd = 576, c.n_layer = 30, c.n_ff = 1536, c.n_head = 9, c.n_head_kv = 3;
    c.tied = true, c.n_ctx = 2048;
  } else if (name == "stories260k") {
    c.n_vocab = 512, c.n_embd = 64, c.n_layer = 5, c.n_ff = 172, c.n_head = 8, c.n_head_kv = 4,
    c.n_ctx = 512;
  } else if (name == "qwen3-30b-a3b") {
    c.arch = "qwen3moe", c.n_vocab = 151936, c.n_embd = 2048, c.n_layer = 48, c.n_ff = 6144,
    c.n_head = 32, c.n_head_kv = 4, c.head_dim = 128, c.qk_norm = true, c.rope_theta = 1000000,
    c.n_ctx = 40960;
    c.n_expert = 128, c.n_expert_used = 8, c.n_ff_exp = 768;
  } else if (name == "mixtral-8x7b") {
    c.n_vocab = 32000, c.n_embd = 4096, c.n_layer = 32, c.n_ff = 14336, c.n_head = 32,
    c.n_head_kv = 8, c.rope_theta = 1000000, c.n_ctx = 32768;
    c.n_expert = 8, c.n_expert_used = 2, c.n_ff_exp = 14336;
  } else if (name == "gpt-oss-20b") {
    c.arch = "gpt-oss", c.n_vocab = 201088, c.n_embd = 2880, c.n_layer = 24, c.n_ff = 2880,
    c.n_head = 64, c.n_head_kv = 8, c.head_dim = 64, c.qkv_bias = true, c.n_ctx = 131072;
    c.n_expert = 32, c.n_expert_used = 4, c.n_ff_exp = 2880, c.expert_bias = true;
    c.out_bias = true, c.sinks = true, c.window = 128, c.ffn_norm = "post_attention_norm";
    c.rope_theta = 150000, c.rope_scaling = "yarn", c.rope_factor = 32, c.rope_original_ctx = 4096;
  } else if (name == "phi-3.5-mini") {
    c.arch = "phi3", c.n_vocab = 32064, c.n_embd = 3072, c.n_layer = 32, c.n_ff = 8192,
    c.n_head = 32, c.n_head_kv = 32, c.n_ctx = 131072, c.rope_original_ctx = 4096;
    c.fused_qkv = true, c.fused_gate_up = true, c.long_rope = true;
  } else if (name == "gemma-2-2b") {
    c.arch = "gemma2", c.n_vocab = 256000, c.n_embd = 2304, c.n_layer = 26, c.n_ff = 9216,
    c.n_head = 8, c.n_head_kv = 4, c.head_dim = 256, c.n_ctx = 8192, c.tied = true;
    c.post_norms = true, c.window = 4096, c.attn_softcap = 50, c.final_softcap = 30,
    c.rms_eps = 1e-6f;
  } else if (name == "gemma-3-4b") {
    c.arch = "gemma3", c.n_vocab = 262208, c.n_embd = 2560, c.n_layer = 34, c.n_ff = 10240,
    c.n_head = 8, c.n_head_kv = 4, c.head_dim = 256, c.n_ctx = 131072, c.tied = true;
    c.qk_norm = true, c.post_norms = true, c.window = 1024, c.rms_eps = 1e-6f;
    c.rope_theta = 1000000, c.rope_scaling = "linear", c.rope_factor = 8;
  } else {
    fail("unknown model preset '{}'", name);
  }
  return c;
}

void write_random_model(const GenConfig& c, const std::string& path) {
  const int64_t hd = c.head_dim > 0 ? c.head_dim : c.n_embd / c.n_head;
  const int64_t qd = hd * c.n_head, kvd = hd * c.n_head_kv;
  const std::string a = c.arch + ".";
  std::map<std::string, Value> m;
  m["general.architecture"] = Value::of_str(c.arch);
  m["general.name"] = Value::of_str(c.name + " (random weights)");
  m[a + "context_length"] = Value::of_u32(static_cast<uint32_t>(c.n_ctx));
  m[a + "embedding_length"] = Value::of_u32(static_cast<uint32_t>(c.n_embd));
  m[a + "block_count"] = Value::of_u32(static_cast<uint32_t>(c.n_layer));
  m[a + "feed_forward_length"] = Value::of_u32(static_cast<uint32_t>(c.n_ff));
  m[a + "attention.head_count"] = Value::of_u32(static_cast<uint32_t>(c.n_head));
  m[a + "attention.head_count_kv"] = Value::of_u32(static_cast<uint32_t>(c.n_head_kv));
  m[a + "attention.layer_norm_rms_epsilon"] = Value::of_f32(c.rms_eps);
  if (c.attn_softcap > 0) m[a + "attn_logit_softcapping"] = Value::of_f32(c.attn_softcap);
  if (c.final_softcap > 0) m[a + "final_logit_softcapping"] = Value::of_f32(c.final_softcap);
  m[a + "rope.freq_base"] = Value::of_f32(c.rope_theta);
  if (c.head_dim > 0) m[a + "attention.key_length"] = Value::of_u32(static_cast<uint32_t>(hd));
  if (c.head_dim > 0) m[a + "attention.value_length"] = Value::of_u32(static_cast<uint32_t>(hd));
  m[a + "rope.dimension_count"] = Value::of_u32(static_cast<uint32_t>(hd));
  if (c.n_expert > 0) {
    m[a + "expert_count"] = Value::of_u32(static_cast<uint32_t>(c.n_expert));
    m[a + "expert_used_count"] = Value::of_u32(static_cast<uint32_t>(c.n_expert_used));
    m[a + "expert_feed_forward_length"] = Value::of_u32(static_cast<uint32_t>(c.n_ff_exp));
  }
  // Llama 3.x's scaling travels as the rope_freqs tensor below, as llama.cpp's converter writes it.
  if (c.rope_scaling == "linear" || c.rope_scaling == "yarn") {
    m[a + "rope.scaling.type"] = Value::of_str(c.rope_scaling);
    m[a + "rope.scaling.factor"] = Value::of_f32(c.rope_factor);
  }
  if (c.rope_scaling == "yarn" || c.long_rope)
    m[a + "rope.scaling.original_context_length"] =
        Value::of_u32(static_cast<uint32_t>(c.rope_original_ctx));
  if (c.long_rope) {
    const double scale = static_cast<double>(c.n_ctx) / static_cast<double>(c.rope_original_ctx);
    m[a + "rope.scaling.attn_factor"] = Value::of_f32(static_cast<float>(
        std::sqrt(1 + std::log(scale) / std::log(static_cast<double>(c.rope_original_ctx)))));
  }
  if (c.window > 0)
    m[a + "attention.sliding_window"] = Value::of_u32(static_cast<uint32_t>(c.window));
  if (c.window_period > 0)
    m[a + "attention.sliding_window_pattern"] =
        Value::of_u32(static_cast<uint32_t>(c.window_period));
  // A synthetic SentencePiece vocabulary: specials, the 256 byte tokens, then made-up pieces.
  std::vector<Value> toks, scores, types;
  for (int64_t i = 0; i < c.n_vocab; ++i) {
    std::string t;
    int32_t ty = 1;
    if (i == 0)
      t = "<unk>", ty = 2;
    else if (i == 1)
      t = "<s>", ty = 3;
    else if (i == 2)
      t = "</s>", ty = 3;
    else if (i < 259)
      t = fmt::format("<0x{:02X}>", i - 3), ty = 6;
    else if (i == 259)
      t = "\xe2\x96\x81";
    else if (i < 260 + 26)
      t = std::string(1, static_cast<char>('a' + (i - 260)));
    else if (c.arch == "phi3" && i == c.n_vocab - 1)
      t = "<|endoftext|>", ty = 3;  // llama.cpp looks it up in files named Phi-3
    else
      t = fmt::format("\xe2\x96\x81w{}", i);
    toks.push_back(Value::of_str(t));
    scores.push_back(Value::of_f32(-static_cast<float>(i)));
    types.push_back(Value::of_i32(ty));
  }
  m["tokenizer.ggml.model"] = Value::of_str("llama");
  m["tokenizer.ggml.tokens"] = Value::of_array(GgufType::STRING, std::move(toks));
  m["tokenizer.ggml.scores"] = Value::of_array(GgufType::F32, std::move(scores));
  m["tokenizer.ggml.token_type"] = Value::of_array(GgufType::I32, std::move(types));
  m["tokenizer.ggml.bos_token_id"] = Value::of_u32(1);
  m["tokenizer.ggml.eos_token_id"] = Value::of_u32(2);
  m["tokenizer.ggml.unknown_token_id"] = Value::of_u32(0);

  std::vector<Tensor> ts;
  std::vector<float> scale;  // init range of each tensor; 0 marks a norm (values near 1)
  auto add = [&](Tensor t, float s) {
    ts.push_back(std::move(t));
    scale.push_back(s);
  };
  auto lin = [&](int64_t fan_in) { return std::sqrt(3.0f / static_cast<float>(fan_in)); };
  const bool gemma = c.arch.rfind("gemma", 0) == 0;  // (whose embeddings are scaled up)
  add(info("token_embd.weight", {c.n_embd, c.n_vocab}, c.embd_type), gemma ? lin(c.n_embd) : 1.0f);
  for (int64_t l = 0; l < c.n_layer; ++l) {
    auto n = [&](const char* s) { return fmt::format("blk.{}.{}", l, s); };
    add(info(n("attn_norm.weight"), {c.n_embd}, DType::F32), 0);
    if (c.fused_qkv) {
      add(info(n("attn_qkv.weight"), {c.n_embd, qd + 2 * kvd}, c.type), lin(c.n_embd));
    } else {
      add(info(n("attn_q.weight"), {c.n_embd, qd}, c.type), lin(c.n_embd));
      add(info(n("attn_k.weight"), {c.n_embd, kvd}, c.type), lin(c.n_embd));
      add(info(n("attn_v.weight"), {c.n_embd, kvd}, c.type), lin(c.n_embd));
    }
    if (c.qkv_bias) {
      add(info(n("attn_q.bias"), {qd}, DType::F32), 0.1f);
      add(info(n("attn_k.bias"), {kvd}, DType::F32), 0.1f);
      add(info(n("attn_v.bias"), {kvd}, DType::F32), 0.1f);
    }
    if (c.qk_norm) {
      add(info(n("attn_q_norm.weight"), {hd}, DType::F32), 0);
      add(info(n("attn_k_norm.weight"), {hd}, DType::F32), 0);
    }
    add(info(n("attn_output.weight"), {qd, c.n_embd}, c.type), lin(qd));
    if (c.out_bias) add(info(n("attn_output.bias"), {c.n_embd}, DType::F32), 0.1f);
    if (c.sinks) add(info(n("attn_sinks.weight"), {c.n_head}, DType::F32), 2.0f);
    if (c.post_norms) add(info(n("post_attention_norm.weight"), {c.n_embd}, DType::F32), 0);
    add(info(n((c.ffn_norm + ".weight").c_str()), {c.n_embd}, DType::F32), 0);
    if (c.n_expert > 0) {
      const int64_t x = c.n_expert, f = c.n_ff_exp;
      add(info(n("ffn_gate_inp.weight"), {c.n_embd, x}, DType::F32), lin(c.n_embd));
      if (c.expert_bias) add(info(n("ffn_gate_inp.bias"), {x}, DType::F32), 0.1f);
      const DType et = c.expert_type.value_or(c.type);
      add(info(n("ffn_gate_exps.weight"), {c.n_embd, f, x}, et), lin(c.n_embd));
      add(info(n("ffn_up_exps.weight"), {c.n_embd, f, x}, et), lin(c.n_embd));
      add(info(n("ffn_down_exps.weight"), {f, c.n_embd, x}, et), lin(f));
      if (c.expert_bias) {
        add(info(n("ffn_gate_exps.bias"), {f, x}, DType::F32), 0.1f);
        add(info(n("ffn_up_exps.bias"), {f, x}, DType::F32), 0.1f);
        add(info(n("ffn_down_exps.bias"), {c.n_embd, x}, DType::F32), 0.1f);
      }
    } else if (c.fused_gate_up) {
      add(info(n("ffn_up.weight"), {c.n_embd, 2 * c.n_ff}, c.type), lin(c.n_embd));
      add(info(n("ffn_down.weight"), {c.n_ff, c.n_embd}, c.type), lin(c.n_ff));
    } else {
      add(info(n("ffn_gate.weight"), {c.n_embd, c.n_ff}, c.type), lin(c.n_embd));
      add(info(n("ffn_up.weight"), {c.n_embd, c.n_ff}, c.type), lin(c.n_embd));
      add(info(n("ffn_down.weight"), {c.n_ff, c.n_embd}, c.type), lin(c.n_ff));
    }
    if (c.post_norms) add(info(n("post_ffw_norm.weight"), {c.n_embd}, DType::F32), 0);
  }
  add(info("output_norm.weight", {c.n_embd}, DType::F32), 0);
  if (!c.tied) add(info("output.weight", {c.n_embd, c.n_vocab}, c.type), lin(c.n_embd));
  // Last, so that the other tensors' random values stay what they were. Rope factors are written
  // as given (their scale is -1), not random.
  std::map<size_t, std::vector<float>> given;
  if (c.rope_scaling == "llama3") {
    Llama3Rope r;
    r.factor = c.rope_factor;
    given[ts.size()] = llama3_rope_factors(hd, c.rope_theta, r);
    add(info("rope_freqs.weight", {hd / 2}, DType::F32), -1);
  }
  if (c.long_rope) {  // LongRoPE's shape: factors rising with the dimension, far more in the long
                      // set
    std::vector<float> lo(static_cast<size_t>(hd / 2)), hi(lo.size());
    for (size_t i = 0; i < lo.size(); ++i) {
      const float f = static_cast<float>(i) / static_cast<float>(lo.size());
      lo[i] = 1.0f + 0.5f * f * f, hi[i] = 1.0f + 40.0f * f * f;
    }
    given[ts.size()] = hi;
    add(info("rope_factors_long.weight", {hd / 2}, DType::F32), -1);
    given[ts.size()] = lo;
    add(info("rope_factors_short.weight", {hd / 2}, DType::F32), -1);
  }

  write_gguf_streaming(path, m, ts, [&](size_t i, uint8_t* dst) {
    const Tensor& t = ts[i];
    if (scale[i] < 0) {
      const std::vector<float>& v = given.at(i);
      std::memcpy(dst, v.data(), v.size() * sizeof(float));
      return;
    }
    uint64_t s = c.seed * 0x100000001b3ull + i * 0x9e3779b97f4a7c15ull;
    const int64_t cols = t.ne[0], rows = t.elements() / cols;
    const uint64_t row_bytes = *dtype_row_bytes(t.type, static_cast<uint64_t>(cols));
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      for (auto& v : row) v = scale[i] == 0 ? 1.0f + uniform(s, 0.1f) : uniform(s, scale[i]);
      quantize_row(t.type, row.data(), dst + static_cast<uint64_t>(r) * row_bytes, cols);
    }
  });
}

}  // namespace brisk::tools
