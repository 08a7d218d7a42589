// The optimized forward against the reference forward on random-weight models of many shapes, and
// the determinism promise: a token's logits do not depend on the batch around it or the threads.
#include <gtest/gtest.h>

#include <cmath>

#include "model/forward.h"
#include "model/reference.h"
#include "model_gen.h"
#include "support/test_util.h"

namespace brisk {
namespace {

struct Config {
  const char* name;
  tools::GenConfig gen;
  float tol;  // max |optimized - reference| relative to (1 + max |reference logit|)
};

tools::GenConfig base() {
  tools::GenConfig c;
  c.n_vocab = 300, c.n_embd = 64, c.n_layer = 2, c.n_ff = 96, c.n_head = 4, c.n_head_kv = 4;
  c.type = DType::F32, c.embd_type = DType::F32;
  return c;
}

// gpt-oss's layer at a small size: biases everywhere, sinks, a window of 6 positions on every
// other layer (shorter than the prompts, and crossing the attention's 16-key chunks), YaRN.
tools::GenConfig gpt_oss() {
  auto c = base();
  c.arch = "gpt-oss", c.n_head = 4, c.n_head_kv = 2, c.head_dim = 16, c.qkv_bias = true;
  c.n_expert = 8, c.n_expert_used = 2, c.n_ff_exp = 32, c.expert_bias = true;
  c.out_bias = true, c.sinks = true, c.window = 6, c.ffn_norm = "post_attention_norm";
  c.n_layer = 3, c.rope_theta = 150000, c.rope_scaling = "yarn", c.rope_factor = 8;
  c.rope_original_ctx = 64;
  return c;
}

// Gemma 2 at a small size: a window of 6 on every other layer, sandwich norms, GeGLU, scaled
// embeddings, tied output; soft-caps low enough that the random scores and logits reach them.
tools::GenConfig gemma2() {
  auto c = base();
  c.arch = "gemma2", c.n_head = 4, c.n_head_kv = 2, c.head_dim = 32, c.n_layer = 3;
  c.tied = true, c.post_norms = true, c.window = 6, c.attn_softcap = 1.5f, c.final_softcap = 4;
  return c;
}

// Gemma 3 at a small size: two local layers (window 6, rope base 10000 unscaled) then a global
// one (base 1e6, linear scaling 4x), q/k norms.
tools::GenConfig gemma3() {
  auto c = base();
  c.arch = "gemma3", c.n_head = 4, c.n_head_kv = 1, c.head_dim = 16, c.n_layer = 3;
  c.tied = true, c.post_norms = true, c.qk_norm = true, c.window = 6, c.window_period = 3;
  c.rope_theta = 1e6f, c.rope_scaling = "linear", c.rope_factor = 4;
  return c;
}

std::vector<Config> configs() {
  std::vector<Config> v;
  {  // Llama, MHA, tied, F32.
    auto c = base();
    c.tied = true;
    v.push_back({"llama_mha_tied_f32", c, 2e-4f});
  }
  {  // Llama 3 style: GQA 4:1, llama3 rope scaling, F16, odd FFN width.
    auto c = base();
    c.n_embd = 96, c.n_head = 8, c.n_head_kv = 2, c.n_ff = 173, c.type = DType::F16,
    c.embd_type = DType::F16;
    c.rope_scaling = "llama3", c.rope_factor = 8, c.rope_theta = 500000;
    v.push_back({"llama3_gqa4_f16", c, 2e-4f});
  }
  {  // Qwen2: q/k/v biases, neox rope, head dim 40, GQA 3:1, BF16 (activations rounded to bf16).
    auto c = base();
    c.arch = "qwen2", c.n_embd = 240, c.n_head = 6, c.n_head_kv = 2, c.qkv_bias = true,
    c.type = DType::BF16;
    c.embd_type = DType::BF16, c.n_ff = 200, c.tied = true;
    v.push_back({"qwen2_bias_hd40_bf16", c, 3e-2f});
  }
  {  // Qwen3: per-head q/k RMSNorm, head dim 24 with q dim != n_embd, MQA.
    auto c = base();
    c.arch = "qwen3", c.n_embd = 80, c.n_head = 5, c.n_head_kv = 1, c.head_dim = 24,
    c.qk_norm = true;
    c.type = DType::F16, c.embd_type = DType::F32;
    v.push_back({"qwen3_qknorm_mqa_hd24_f16", c, 2e-4f});
  }
  {  // Mistral-like: linear rope scaling, untied, 3 layers, head dim 12.
    auto c = base();
    c.n_embd = 48, c.n_head = 4, c.n_head_kv = 2, c.n_layer = 3, c.rope_scaling = "linear",
    c.rope_factor = 2;
    v.push_back({"llama_linear_rope_hd12_f32", c, 2e-4f});
  }
  // Quantized weights: both forwards round activations to int8 blocks, but their inputs differ in
  // the last float bits, which can flip a rounding: a looser bound.
  {  // Q8_0 with an FFN of 3 blocks of 32 (an odd count), F16 embeddings.
    auto c = base();
    c.type = DType::Q8_0, c.embd_type = DType::F16;
    v.push_back({"llama_q8_0", c, 2e-2f});
  }
  {  // Q4_K matrices and Q6_K embeddings (tied), GQA 2:1.
    auto c = base();
    c.n_embd = 256, c.n_ff = 512, c.n_head = 4, c.n_head_kv = 2, c.tied = true;
    c.type = DType::Q4_K, c.embd_type = DType::Q6_K;
    v.push_back({"llama_q4_k_q6_k", c, 2e-2f});
  }
  {  // Q5_0 matrices, Q4_1 embeddings.
    auto c = base();
    c.type = DType::Q5_0, c.embd_type = DType::Q4_1;
    v.push_back({"llama_q5_0", c, 2e-2f});
  }
  {  // IQ4_XS matrices, IQ4_NL embeddings (a mixed file, as i-quant releases are).
    auto c = base();
    c.n_embd = 256, c.n_ff = 512, c.n_head = 4, c.n_head_kv = 2;
    c.type = DType::IQ4_XS, c.embd_type = DType::IQ4_NL;
    v.push_back({"llama_iq4_xs_iq4_nl", c, 2e-2f});
  }
  {  // Qwen3-MoE: 8 experts of width 32, 3 chosen per token, renormalised; GQA 2:1, F32.
    auto c = base();
    c.arch = "qwen3moe", c.n_head_kv = 2, c.qk_norm = true, c.head_dim = 16;
    c.n_expert = 8, c.n_expert_used = 3, c.n_ff_exp = 32;
    v.push_back({"qwen3moe_8x3_f32", c, 2e-4f});
  }
  {  // Mixtral-like: a Llama layer with 4 experts, 2 chosen, in Q8_0 (expert rows of 64).
    auto c = base();
    c.n_expert = 4, c.n_expert_used = 2, c.n_ff_exp = 64, c.type = DType::Q8_0;
    c.embd_type = DType::F16;
    v.push_back({"llama_moe_4x2_q8_0", c, 2e-2f});
  }
  {  // Qwen3-MoE in Q4_K with 16 experts of width 256 (regrouped for the SIMD kernels), 4 chosen.
    auto c = base();
    c.arch = "qwen3moe", c.n_embd = 256, c.n_head_kv = 2, c.qk_norm = true;
    c.n_expert = 16, c.n_expert_used = 4, c.n_ff_exp = 256, c.type = DType::Q4_K;
    c.embd_type = DType::Q6_K;
    v.push_back({"qwen3moe_16x4_q4_k", c, 2e-2f});
  }
  v.push_back({"gpt_oss_8x2_f32", gpt_oss(), 2e-4f});
  {  // Phi-3: fused qkv and gate/up, GQA 2:1, LongRoPE (the long factors: a 2048 context past
     // the original 512).
    auto c = base();
    c.arch = "phi3", c.n_head_kv = 2, c.fused_qkv = true, c.fused_gate_up = true;
    c.long_rope = true, c.rope_original_ctx = 512;
    v.push_back({"phi3_fused_longrope_f32", c, 2e-4f});
    c.type = DType::Q4_K, c.embd_type = DType::Q8_0, c.n_embd = 256, c.n_ff = 256;
    v.push_back({"phi3_fused_longrope_q4_k", c, 2e-2f});
  }
  v.push_back({"gemma2_softcap_window_f32", gemma2(), 2e-4f});
  v.push_back({"gemma3_local_global_f32", gemma3(), 2e-4f});
  {  // Gemma 3 in Q4_K with Q6_K embeddings (the release mix's types).
    auto c = gemma3();
    c.n_embd = 256, c.n_ff = 512, c.head_dim = 64, c.type = DType::Q4_K, c.embd_type = DType::Q6_K;
    v.push_back({"gemma3_q4_k", c, 2e-2f});
  }
  {  // gpt-oss in MXFP4, its release type, with F16 embeddings.
    auto c = gpt_oss();
    c.type = DType::MXFP4, c.embd_type = DType::F16;
    v.push_back({"gpt_oss_8x2_mxfp4", c, 2e-2f});
  }
  return v;
}

float max_abs(const std::vector<float>& v) {
  float m = 0;
  for (float x : v) m = std::max(m, std::fabs(x));
  return m;
}

class ForwardVsReference : public ::testing::TestWithParam<Config> {};

TEST_P(ForwardVsReference, PrefillAndDecodeMatch) {
  const Config& cfg = GetParam();
  test::TempDir dir;
  tools::write_random_model(cfg.gen, dir.file("m.gguf"));
  auto m = Model::load(dir.file("m.gguf"));
  ReferenceForward ref(*m);
  ThreadPool pool(2);
  Forward fwd(*m, pool);
  ContiguousKvCache cache(static_cast<int>(m->hp.n_layer), m->hp.n_head_kv, m->hp.head_dim, 64);

  const std::vector<int32_t> prompt = {1,  17, 260, 299, 5,   42,  101, 7, 250,
                                       33, 64, 2,   9,   120, 200, 11,  3};
  Batch b;
  for (size_t i = 0; i < prompt.size(); ++i) b.add(prompt[i], static_cast<int64_t>(i), 0, true);
  const float* logits = fwd.run(b, cache);
  const int64_t V = m->hp.n_vocab;
  for (size_t i = 0; i < prompt.size(); ++i) {
    const auto r = ref.step(prompt[i], static_cast<int64_t>(i));
    const float bound = cfg.tol * (1 + max_abs(r));
    for (int64_t j = 0; j < V; ++j)
      ASSERT_NEAR(logits[i * V + j], r[j], bound) << "prefill token " << i << " logit " << j;
  }
  // Decode steps, one token at a time.
  int64_t pos = static_cast<int64_t>(prompt.size());
  for (int32_t t : {5, 77, 290, 1, 144}) {
    b.clear();
    b.add(t, pos, 0, true);
    const float* l = fwd.run(b, cache);
    const auto r = ref.step(t, pos);
    const float bound = cfg.tol * (1 + max_abs(r));
    for (int64_t j = 0; j < V; ++j)
      ASSERT_NEAR(l[j], r[j], bound) << "decode pos " << pos << " logit " << j;
    ++pos;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, ForwardVsReference, ::testing::ValuesIn(configs()),
                         [](const auto& pinfo) { return std::string(pinfo.param.name); });

class Determinism : public ::testing::TestWithParam<Config> {};

// Logits of sequence 0 must be the same bits whether it runs alone, one token at a time, or batched
// with another sequence's tokens, on 1 or 2 threads.
TEST_P(Determinism, LogitsIndependentOfBatchAndThreads) {
  const Config& cfg = GetParam();
  test::TempDir dir;
  tools::write_random_model(cfg.gen, dir.file("m.gguf"));
  auto m = Model::load(dir.file("m.gguf"));
  const int64_t V = m->hp.n_vocab;
  const std::vector<int32_t> seq0 = {1,  40, 41, 42, 260, 261, 262, 7,  8,  9,
                                     10, 11, 12, 13, 14,  15,  16,  17, 18, 19};
  const std::vector<int32_t> seq1 = {1, 99, 98, 97, 96};

  auto alone_batched = [&](int threads) {
    ThreadPool pool(threads);
    Forward fwd(*m, pool);
    ContiguousKvCache cache(static_cast<int>(m->hp.n_layer), m->hp.n_head_kv, m->hp.head_dim, 64,
                            2);
    Batch b;
    for (size_t i = 0; i < seq0.size(); ++i) b.add(seq0[i], static_cast<int64_t>(i), 0, true);
    const float* l = fwd.run(b, cache);
    return std::vector<float>(l, l + seq0.size() * V);
  };
  auto token_by_token_mixed = [&](int threads) {
    ThreadPool pool(threads);
    Forward fwd(*m, pool);
    ContiguousKvCache cache(static_cast<int>(m->hp.n_layer), m->hp.n_head_kv, m->hp.head_dim, 64,
                            2);
    std::vector<float> out;
    Batch b;
    // Interleave: the other sequence's prompt first, then seq0 in chunks of 3 mixed with seq1
    // decode.
    for (size_t i = 0; i < seq1.size(); ++i) b.add(seq1[i], static_cast<int64_t>(i), 1, false);
    fwd.run(b, cache);
    int64_t p1 = static_cast<int64_t>(seq1.size());
    for (size_t i = 0; i < seq0.size(); i += 3) {
      b.clear();
      b.add(seq1[i % seq1.size()], p1++, 1, true);
      const size_t end = std::min(seq0.size(), i + 3);
      for (size_t j = i; j < end; ++j) b.add(seq0[j], static_cast<int64_t>(j), 0, true);
      const float* l = fwd.run(b, cache);
      out.insert(out.end(), l + V, l + (1 + end - i) * V);
    }
    return out;
  };
  const auto a = alone_batched(2);
  EXPECT_EQ(a, alone_batched(1));
  EXPECT_EQ(a, token_by_token_mixed(1));
  EXPECT_EQ(a, token_by_token_mixed(2));
}

INSTANTIATE_TEST_SUITE_P(Shapes, Determinism, ::testing::ValuesIn(configs()),
                         [](const auto& pinfo) { return std::string(pinfo.param.name); });

// A batch whose experts' slots exceed the memory allowed goes through in runs of tokens: the same
// logits as in one run.
TEST(MixtureOfExperts, ABatchInRunsGivesTheSameLogits) {
  tools::GenConfig c = base();
  c.arch = "qwen3moe", c.n_head_kv = 2, c.qk_norm = true, c.head_dim = 16;
  c.n_expert = 8, c.n_expert_used = 3, c.n_ff_exp = 32;
  test::TempDir dir;
  tools::write_random_model(c, dir.file("m.gguf"));
  auto m = Model::load(dir.file("m.gguf"));
  const int64_t V = m->hp.n_vocab;
  auto logits = [&](int64_t run_bytes) {
    ThreadPool pool(2);
    Forward fwd(*m, pool);
    fwd.set_expert_run_bytes(run_bytes);
    ContiguousKvCache cache(static_cast<int>(m->hp.n_layer), m->hp.n_head_kv, m->hp.head_dim, 64);
    Batch b;
    for (int32_t i = 0; i < 23; ++i) b.add(1 + (i * 37) % 290, i, 0, true);
    const float* l = fwd.run(b, cache);
    return std::vector<float>(l, l + 23 * V);
  };
  const auto whole = logits(int64_t{256} << 20);
  EXPECT_EQ(logits(1), whole);             // a token per run
  EXPECT_EQ(logits(5 * 3 * 1500), whole);  // a few tokens per run, the last run shorter
}

// LongRoPE's factors follow the context the model runs with: the short set within the original
// context, the long one beyond it (and with no context given, the model's own).
TEST(LongRope, FactorsFollowTheContext) {
  tools::GenConfig c = base();
  c.arch = "phi3", c.fused_qkv = true, c.fused_gate_up = true, c.long_rope = true;
  c.rope_original_ctx = 512;
  test::TempDir dir;
  tools::write_random_model(c, dir.file("m.gguf"));
  LoadOptions within, beyond;
  within.context = 512, beyond.context = 513;
  const auto a = Model::load(dir.file("m.gguf"), "", within);
  const auto b = Model::load(dir.file("m.gguf"), "", beyond);
  const auto d = Model::load(dir.file("m.gguf"));  // its 2048 positions: beyond
  EXPECT_EQ(a->rope_inv_freq, rope_inv_freq(a->hp.rope_dim, a->hp.rope_theta, a->hp.rope_scaling,
                                            a->w.rope_freqs.data()));
  EXPECT_EQ(b->rope_inv_freq, rope_inv_freq(b->hp.rope_dim, b->hp.rope_theta, b->hp.rope_scaling,
                                            b->w.rope_freqs_long.data()));
  EXPECT_NE(a->rope_inv_freq, b->rope_inv_freq);
  EXPECT_EQ(d->rope_inv_freq, b->rope_inv_freq);
  // The attention factor the file gives scales the rotated values.
  EXPECT_NEAR(a->rope_magnitude, std::sqrt(1 + std::log(4.0) / std::log(512.0)), 1e-6);
}

// Gemma's keys as llama.cpp reads them: Gemma 2's caps and window default to 50, 30 and 4096 when
// the file has none, with every other layer local; a Gemma 3 file with no window has no local
// layers; the 27B shapes (told by their layer counts) scale queries by 1/sqrt(n_embd / n_head).
TEST(Gemma, HyperParametersReadAsLlamaCppReadsThem) {
  test::TempDir dir;
  auto g2 = gemma2();
  g2.window = 0, g2.attn_softcap = 0, g2.final_softcap = 0;
  tools::write_random_model(g2, dir.file("g2.gguf"));
  const auto a = Model::load(dir.file("g2.gguf"));
  EXPECT_EQ(a->hp.attn_softcap, 50.0f);
  EXPECT_EQ(a->hp.final_softcap, 30.0f);
  EXPECT_EQ(a->hp.window, 4096);
  EXPECT_EQ(a->hp.windowed, (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(a->hp.embd_scale, std::sqrt(64.0f));
  EXPECT_EQ(a->hp.attention_scale(), 1.0f / std::sqrt(32.0f));
  EXPECT_TRUE(a->rope_inv_freq_windowed.empty());

  auto g3 = gemma3();
  g3.window = 0, g3.window_period = 0;
  tools::write_random_model(g3, dir.file("g3.gguf"));
  const auto b = Model::load(dir.file("g3.gguf"));
  EXPECT_EQ(b->hp.window, 0);
  EXPECT_TRUE(b->hp.windowed.empty());
  EXPECT_EQ(b->hp.final_softcap, 0.0f);
  EXPECT_TRUE(b->rope_inv_freq_windowed.empty());

  g3 = gemma3();  // local layers: base 10000, unscaled; the global one: 1e6 with 4x linear
  tools::write_random_model(g3, dir.file("g3w.gguf"));
  const auto c = Model::load(dir.file("g3w.gguf"));
  EXPECT_EQ(c->hp.windowed, (std::vector<uint8_t>{1, 1, 0}));
  EXPECT_EQ(c->rope_table(0), c->rope_inv_freq_windowed.data());
  EXPECT_EQ(c->rope_table(2), c->rope_inv_freq.data());
  EXPECT_EQ(c->rope_inv_freq_windowed, rope_inv_freq(16, 10000.0f, RopeScaling{}));
  EXPECT_FLOAT_EQ(c->rope_inv_freq[1], std::pow(1e6f, -2.0f / 16) / 4);

  g3.n_layer = 62, g3.window = 4, g3.head_dim = 32;  // the 27B's layer count; n_embd / n_head 16
  tools::write_random_model(g3, dir.file("g3-27b.gguf"));
  EXPECT_EQ(Model::load(dir.file("g3-27b.gguf"))->hp.attention_scale(), 1.0f / std::sqrt(16.0f));
}

}  // namespace
}  // namespace brisk
