// Tensor parallelism's promise: a model split over ranks gives every token the same logits bits as
// one process, for any number of ranks that divides it. Ranks are threads of this process here
// (make_thread_communicators); the Open MPI path is the same code over MPI collectives, run end to
// end by tests/cli/mpi_e2e.sh.
#include <gtest/gtest.h>

#include <thread>

#include "core/error.h"
#include "engine/engine.h"
#include "engine_runs.h"
#include "model/follower.h"
#include "model/forward.h"
#include "model_gen.h"
#include "support/test_util.h"

namespace brisk {
namespace {

// Runs `lead` on rank 0 of n ranks (threads) while the others follow its plans; each rank loads
// its own share of the file. Returns what lead returns.
template <class Lead>
auto with_ranks(const std::string& path, const std::string& tok, int n, Lead lead) {
  auto comms = make_thread_communicators(n);
  std::vector<std::thread> followers;
  for (int r = 1; r < n; ++r)
    followers.emplace_back([&, r] {
      auto m = Model::load(path, tok, {}, comms[static_cast<size_t>(r)].get());
      follow_plans(*m);
    });
  auto m = Model::load(path, tok, {}, comms[0].get());
  auto result = [&] {
    try {
      return lead(*m);
    } catch (...) {
      end_plans(*comms[0]);
      for (auto& t : followers) t.join();
      throw;
    }
  }();
  end_plans(*comms[0]);
  for (auto& t : followers) t.join();
  return result;
}

// Two sequences, prefill in chunks mixed with the other's decode steps: every logit row.
std::vector<float> mixed_batches(const Model& m, int threads) {
  ThreadPool pool(threads);
  Forward fwd(m, pool);
  ContiguousKvCache cache(static_cast<int>(m.hp.n_layer), m.split.n_head_kv, m.hp.head_dim, 64, 2);
  const int64_t V = m.hp.n_vocab;
  std::vector<float> out;
  Batch b;
  auto run = [&] {
    const float* l = fwd.run(b, cache);
    int64_t rows = 0;
    for (uint8_t want : b.logits) rows += want;
    out.insert(out.end(), l, l + rows * V);
    b.clear();
  };
  for (int64_t p = 0; p < 9; ++p) b.add(static_cast<int32_t>((p * 37 + 1) % V), p, 1, p == 8);
  run();
  for (int64_t p = 0; p < 20; ++p) {
    b.add(static_cast<int32_t>((p * 53 + 7) % V), p, 0, true);
    if (p % 4 == 3) {
      b.add(static_cast<int32_t>((p * 11 + 3) % V), 9 + p / 4, 1, true);
      run();
    }
  }
  return out;
}

struct Shape {
  const char* name;
  tools::GenConfig gen;
  std::vector<int> ranks;
};

std::vector<Shape> shapes() {
  std::vector<Shape> v;
  auto base = [] {
    tools::GenConfig c;
    c.n_vocab = 300, c.n_embd = 64, c.n_layer = 2, c.n_ff = 96, c.n_head = 4, c.n_head_kv = 4;
    c.type = DType::F32, c.embd_type = DType::F32;
    return c;
  };
  {  // MHA, tied classifier, F32; vocabulary and FFN rows not a multiple of 16 per rank.
    auto c = base();
    c.tied = true;
    v.push_back({"mha_tied_f32", c, {2, 4}});
  }
  {  // GQA 4:1 with fewer KV heads than ranks at 4 (each rank keeps its group's KV head).
    auto c = base();
    c.n_embd = 96, c.n_head = 8, c.n_head_kv = 2, c.n_ff = 173, c.type = DType::F16;
    v.push_back({"gqa4_f16_odd_ffn", c, {2, 4}});
  }
  {  // Qwen2: biases split with their rows, BF16.
    auto c = base();
    c.arch = "qwen2", c.n_embd = 96, c.n_head = 6, c.n_head_kv = 2, c.qkv_bias = true;
    c.type = DType::BF16, c.embd_type = DType::BF16, c.n_ff = 200;
    v.push_back({"qwen2_bias_bf16", c, {2}});
  }
  {  // Qwen3: per-head q/k norms, MQA (one KV head on every rank).
    auto c = base();
    c.arch = "qwen3", c.n_embd = 80, c.n_head = 4, c.n_head_kv = 1, c.head_dim = 24;
    c.qk_norm = true, c.type = DType::F16;
    v.push_back({"qwen3_mqa_f16", c, {2, 4}});
  }
  {  // Quantized and interleaved: Q4_K matrices, Q6_K tied embeddings.
    auto c = base();
    c.n_embd = 256, c.n_ff = 512, c.n_head = 4, c.n_head_kv = 2, c.tied = true;
    c.type = DType::Q4_K, c.embd_type = DType::Q6_K;
    v.push_back({"q4_k", c, {2}});
  }
  {  // Q8_0 matrices, untied F16 classifier.
    auto c = base();
    c.type = DType::Q8_0, c.embd_type = DType::F16;
    v.push_back({"q8_0", c, {2, 4}});
  }
  {  // Qwen3-MoE: each expert split by rows as the FFN is, the router whole on every rank.
    auto c = base();
    c.arch = "qwen3moe", c.n_embd = 80, c.n_head = 4, c.n_head_kv = 2, c.head_dim = 16;
    c.qk_norm = true, c.n_expert = 8, c.n_expert_used = 3, c.n_ff_exp = 48;
    v.push_back({"qwen3moe_f32", c, {2, 4}});
  }
  {  // Mixtral-like experts in Q8_0 with untied F16 classifier.
    auto c = base();
    c.type = DType::Q8_0, c.embd_type = DType::F16, c.n_expert = 4, c.n_expert_used = 2;
    c.n_ff_exp = 64;
    v.push_back({"llama_moe_q8_0", c, {2}});
  }
  {  // gpt-oss: sinks indexed by each rank's heads, the output bias split with its rows, windows.
    auto c = base();
    c.arch = "gpt-oss", c.n_embd = 80, c.n_head = 4, c.n_head_kv = 2, c.head_dim = 16;
    c.qkv_bias = true, c.n_expert = 8, c.n_expert_used = 2, c.n_ff_exp = 48, c.expert_bias = true;
    c.out_bias = true, c.sinks = true, c.window = 5, c.ffn_norm = "post_attention_norm";
    c.rope_scaling = "yarn", c.rope_factor = 4, c.rope_original_ctx = 64;
    v.push_back({"gpt_oss_f32", c, {2, 4}});
  }
  {  // Phi-3: the fused matrices' parts split by rows as separate ones are.
    auto c = base();
    c.arch = "phi3", c.n_head = 4, c.n_head_kv = 2, c.fused_qkv = true, c.fused_gate_up = true;
    c.long_rope = true, c.rope_original_ctx = 512, c.type = DType::F16;
    v.push_back({"phi3_f16", c, {2, 4}});
  }
  {  // Gemma 2: post-norms over the gathered rows, soft-capped scores and logits, windows.
    auto c = base();
    c.arch = "gemma2", c.n_head = 4, c.n_head_kv = 2, c.head_dim = 16, c.tied = true;
    c.post_norms = true, c.window = 5, c.attn_softcap = 1.5f, c.final_softcap = 4;
    v.push_back({"gemma2_f32", c, {2, 4}});
  }
  {  // Gemma 3: q/k norms, a rope base per layer kind (two local layers, then a global one).
    auto c = base();
    c.arch = "gemma3", c.n_head = 4, c.n_head_kv = 2, c.head_dim = 16, c.n_layer = 3;
    c.tied = true, c.post_norms = true, c.qk_norm = true, c.window = 5, c.window_period = 3;
    c.rope_theta = 1e6f, c.rope_scaling = "linear", c.rope_factor = 4, c.type = DType::F16;
    v.push_back({"gemma3_f16", c, {2, 4}});
  }
  return v;
}

class SplitForward : public ::testing::TestWithParam<Shape> {};

TEST_P(SplitForward, LogitsBitIdenticalToOneProcess) {
  const Shape& s = GetParam();
  test::TempDir dir;
  const std::string path = dir.file("m.gguf");
  tools::write_random_model(s.gen, path);
  const auto one = mixed_batches(*Model::load(path), 2);
  for (int n : s.ranks)
    for (int threads : {1, 2}) {
      const auto split =
          with_ranks(path, "", n, [&](const Model& m) { return mixed_batches(m, threads); });
      EXPECT_EQ(split, one) << n << " ranks, " << threads << " threads each";
    }
}

INSTANTIATE_TEST_SUITE_P(Shapes, SplitForward, ::testing::ValuesIn(shapes()),
                         [](const auto& p) { return std::string(p.param.name); });

TEST(Split, RefusesHeadsThatDoNotDivide) {
  HParams h;
  h.n_vocab = 100, h.n_embd = 48, h.n_ff = 64, h.n_layer = 1, h.head_dim = 8;
  h.n_head = 6, h.n_head_kv = 6;
  auto comms = make_thread_communicators(4);
  try {
    Split::make(h, *comms[1]);
    FAIL() << "6 heads over 4 ranks was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("divides head_count"), std::string::npos) << e.what();
  }
  h.n_head = 12, h.n_head_kv = 3;  // 3 KV heads, 4 ranks: neither divides the other
  EXPECT_THROW(Split::make(h, *comms[1]), Error);
}

// The engine over the split model: paged blocks mirrored by table changes, a shared prefix from
// the prefix cache, n = 2 completions sharing a prompt (copy-on-write), a second engine (a new
// mirror cache), 8-bit KV.
std::vector<std::vector<int32_t>> engine_texts(const Model& m) {
  ThreadPool pool(2);
  std::vector<std::vector<int32_t>> out;
  for (KvType kv : {KvType::F16, KvType::Q8}) {
    EngineConfig c;
    c.kv_type = kv;
    c.max_batched_tokens = 24;  // prompts arrive in chunks beside decodes
    Engine e(m, pool, c);
    std::vector<int32_t> sys;
    for (int i = 0; i < 40; ++i) sys.push_back(1 + (i * 7) % 200);
    auto with = [&](std::vector<int32_t> tail) {
      auto p = sys;
      p.insert(p.end(), tail.begin(), tail.end());
      return p;
    };
    const auto first = run_all(e, {greedy(with({5, 6}), 12)});
    const auto rest =
        run_all(e, {greedy(with({9}), 20, 2), greedy({1, 2, 3}, 30), greedy(with({5, 6, 7}), 16)});
    for (const auto& req : {first, rest})
      for (const auto& completions : req)
        for (const auto& r : completions) out.push_back(r.tokens);
  }
  return out;
}

TEST(SplitEngine, GreedyTextsEqualOneProcess) {
  test::TempDir dir;
  const std::string path = dir.file("m.gguf");
  tools::GenConfig g;
  g.n_vocab = 256, g.n_embd = 128, g.n_layer = 2, g.n_ff = 256, g.n_head = 8, g.n_head_kv = 2;
  g.type = DType::Q8_0, g.embd_type = DType::F16;
  tools::write_random_model(g, path);
  const auto one = engine_texts(*Model::load(path));
  for (int n : {2, 4}) EXPECT_EQ(with_ranks(path, "", n, engine_texts), one) << n << " ranks";
}

TEST(SplitEngine, StoriesReferenceText) {
  const std::string dir = test::shared("models/stories260K");
  auto texts = [](const Model& m) {
    ThreadPool pool(1);
    Engine e(m, pool, EngineConfig{});
    const auto prompt = m.tokenizer->encode("Once upon a time", true);
    return run_all(e, {greedy(prompt, 64 - static_cast<int64_t>(prompt.size()) + 1)})[0][0].text;
  };
  const std::string bin = dir + "/stories260K.bin", tok = dir + "/tok512.bin";
  const auto one = Model::load(bin, tok);
  const std::string text = texts(*one);
  const auto logits = mixed_batches(*one, 1);
  // 8 heads of 8 values, 4 KV heads: at 4 ranks a rank's KV head is half a row group.
  for (int n : {2, 4}) {
    EXPECT_EQ(with_ranks(bin, tok, n, texts), text) << n << " ranks";
    EXPECT_EQ(with_ranks(bin, tok, n, [](const Model& m) { return mixed_batches(m, 1); }), logits)
        << n << " ranks";
  }
}

}  // namespace
}  // namespace brisk
