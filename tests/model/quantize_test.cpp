// Perplexity against the figures shipped with the kjv models, and the quantizer end to end: the
// file it writes loads back, every tensor gets the mix's type (or a reported fallback), and the
// quality loss is what each type should cost.
#include <gtest/gtest.h>

#include <map>

#include "core/error.h"
#include "formats/loader.h"
#include "model/awq.h"
#include "model/imatrix.h"
#include "model/perplexity.h"
#include "model/quantize.h"
#include "model_gen.h"
#include "quant/quant.h"
#include "support/test_util.h"

namespace brisk {
namespace {

std::vector<int32_t> valid_tokens(const Model& m) {
  return m.tokenizer->encode(test::read_file(test::shared("models/kjv-pair/valid.txt")), true);
}

TEST(Perplexity, MatchesTheReferenceFigureOfTheDraftModel) {
  auto m = Model::load(test::shared("models/kjv-pair/draft.gguf"));
  ThreadPool pool(2);
  const auto r = perplexity(*m, pool, valid_tokens(*m), 256, 256);
  EXPECT_NEAR(r.ppl, 35.17, 0.01);  // SOURCE.md: 35.17, llama-perplexity's method, -c 256
  EXPECT_EQ(r.chunks, 227);
  EXPECT_EQ(r.scored, 227 * 127);
  // The batch size changes nothing: logits do not depend on how a window is split.
  const auto r2 = perplexity(*m, pool, valid_tokens(*m), 256, 37, 20);
  const auto r3 = perplexity(*m, pool, valid_tokens(*m), 256, 256, 20);
  EXPECT_EQ(r2.ppl, r3.ppl);
}

TEST(Quantize, MixesFallbacksAndQualityPerType) {
  const std::string src = test::shared("models/kjv-pair/draft.gguf");
  ModelFile mf = load_model_file(src);
  auto f32 = Model::load(src);
  ThreadPool pool(2);
  const auto toks = valid_tokens(*f32);
  const double base = perplexity(*f32, pool, toks, 256, 256, 60).ppl;
  test::TempDir dir;
  for (auto [type, max_ratio] : {std::pair{"q8_0", 1.01},
                                 {"q6_k", 1.03},
                                 {"q5_0", 1.05},
                                 {"q4_0", 1.15},
                                 {"q4_k_m", 1.15},
                                 {"iq4_nl", 1.10},
                                 {"iq4_xs", 1.10},
                                 {"iq3_s", 1.3},
                                 {"tq2_0", 3.0},
                                 {"q3_k_m", 1.4}}) {
    QuantizeJob job;
    job.in = &mf;
    job.out_path = dir.file(std::string(type) + ".gguf");
    job.target = parse_quant_target(type);
    job.progress = false;
    const auto report = quantize_model(job, pool);
    for (const auto& r : report) {
      const Tensor* t = nullptr;
      for (const auto& x : mf.tensors)
        if (x.name == r.name) t = &x;
      ASSERT_NE(t, nullptr);
      if (t->n_dims < 2) {
        EXPECT_EQ(r.to, DType::F32) << r.name;
      } else if (t->ne[0] % dtype_info(r.to).block_elems != 0) {
        ADD_FAILURE() << r.name << " got " << dtype_name(r.to) << " for rows of " << t->ne[0];
      }
      // A type other than the mix's own comes with a reason.
      std::string note;
      const DType chosen = choose_quant_type(job.target, *t, quant_mix_context(job), &note);
      EXPECT_EQ(chosen, r.to);
      EXPECT_EQ(note, r.note);
    }
    auto q = Model::load(job.out_path);
    const double ppl = perplexity(*q, pool, toks, 256, 256, 60).ppl;
    EXPECT_LT(ppl, base * max_ratio) << type << " ppl " << ppl << " vs f32 " << base;
    EXPECT_GT(ppl, base * 0.98) << type;
    EXPECT_EQ(q->file.meta.at("general.file_type").as_int(), job.target.file_type);
  }
  EXPECT_THROW(parse_quant_target("q7_z"), Error);
}

// A mixture of experts' file: the router stays F32, the stacked experts take their FFN matrix's
// rules (ffn_down_exps as ffn_down), eight experts give attention's k and v 8 bits; the result
// loads and runs.
TEST(Quantize, ExpertsTakeTheirMatrixRulesAndTheRouterStaysExact) {
  test::TempDir dir;
  for (int experts : {4, 8}) {
    tools::GenConfig g;
    g.arch = "qwen3moe", g.n_embd = 256, g.n_layer = 8, g.n_head = 4, g.n_head_kv = 2;
    g.qk_norm = true, g.type = DType::F32, g.embd_type = DType::F32;
    g.n_expert = experts, g.n_expert_used = 2, g.n_ff_exp = 256;
    const std::string src = dir.file("moe.gguf");
    tools::write_random_model(g, src);
    ModelFile mf = load_model_file(src);
    QuantizeJob job;
    job.in = &mf;
    job.out_path = dir.file("moe-q4_k_m.gguf");
    job.target = parse_quant_target("q4_k_m");
    job.progress = false;
    ThreadPool pool(2);
    std::map<std::string, DType> to;
    for (const auto& r : quantize_model(job, pool)) to[r.name] = r.to;
    EXPECT_EQ(to.at("blk.0.ffn_gate_inp.weight"), DType::F32);
    EXPECT_EQ(to.at("blk.0.ffn_down_exps.weight"), DType::Q6_K);  // a layer with more bits
    EXPECT_EQ(to.at("blk.2.ffn_down_exps.weight"), DType::Q4_K);
    EXPECT_EQ(to.at("blk.3.ffn_gate_exps.weight"), DType::Q4_K);
    EXPECT_EQ(to.at("blk.3.attn_k.weight"), experts == 8 ? DType::Q8_0 : DType::Q4_K);
    auto q = Model::load(job.out_path);
    EXPECT_EQ(q->hp.experts.n_expert, experts);
  }
}

// gpt-oss in the release mix (experts MXFP4, the rest Q8_0; biases, sinks and norms exact) and
// Phi-3's fused q/k/v matrix a step up in Q4_K_M, as llama-quantize gives them; both load.
TEST(Quantize, GptOssMixAndPhi3FusedQkv) {
  test::TempDir dir;
  auto quantize = [&](const tools::GenConfig& g, const char* target) {
    const std::string src = dir.file(g.arch + ".gguf");
    tools::write_random_model(g, src);
    ModelFile mf = load_model_file(src);
    QuantizeJob job;
    job.in = &mf;
    job.out_path = dir.file(g.arch + "-" + target + ".gguf");
    job.target = parse_quant_target(target);
    job.progress = false;
    ThreadPool pool(2);
    std::map<std::string, DType> to;
    for (const auto& r : quantize_model(job, pool)) to[r.name] = r.to;
    EXPECT_NO_THROW(Model::load(job.out_path));
    return to;
  };
  tools::GenConfig g;
  g.arch = "gpt-oss", g.n_embd = 256, g.n_layer = 2, g.n_head = 4, g.n_head_kv = 2;
  g.head_dim = 64, g.qkv_bias = true, g.type = DType::F32, g.embd_type = DType::F32;
  g.n_expert = 4, g.n_expert_used = 2, g.n_ff_exp = 256, g.expert_bias = true;
  g.out_bias = true, g.sinks = true, g.window = 8, g.ffn_norm = "post_attention_norm";
  auto to = quantize(g, "mxfp4_moe");
  EXPECT_EQ(to.at("blk.0.ffn_up_exps.weight"), DType::MXFP4);
  EXPECT_EQ(to.at("blk.0.ffn_down_exps.bias"), DType::F32);
  EXPECT_EQ(to.at("blk.0.attn_sinks.weight"), DType::F32);
  EXPECT_EQ(to.at("blk.0.attn_q.weight"), DType::Q8_0);
  EXPECT_EQ(to.at("blk.0.ffn_gate_inp.weight"), DType::F32);
  tools::GenConfig p;
  p.arch = "phi3", p.n_embd = 256, p.n_ff = 512, p.n_layer = 2, p.n_head = 4, p.n_head_kv = 2;
  p.fused_qkv = true, p.fused_gate_up = true, p.type = DType::F32, p.embd_type = DType::F32;
  to = quantize(p, "q4_k_m");
  EXPECT_EQ(to.at("blk.1.attn_qkv.weight"), DType::Q5_K);
  EXPECT_EQ(to.at("blk.1.ffn_up.weight"), DType::Q4_K);
}

// AWQ on the real stories model: the searched scales keep the function (before quantization) and
// lower perplexity at 4 bits against the same quantizer without them. Calibration text is the
// model's own sampled stories (bench/text/stories-calib.txt), evaluation text another one.
TEST(Awq, LowersPerplexityAtFourBits) {
  auto m = Model::load(test::shared("models/stories260K/stories260K.gguf"));
  ThreadPool pool(2);
  const auto calib = m->tokenizer->encode(test::read_file("bench/text/stories-calib.txt"), true);
  const auto eval = m->tokenizer->encode(test::read_file("bench/text/stories.txt"), true);
  test::TempDir dir;
  for (const char* type : {"q4_1", "q4_0"}) {
    const QuantTarget target = parse_quant_target(type);
    AwqOptions opt;
    opt.n_ctx = 256;
    opt.progress = false;
    const AwqResult awq = awq_search(*m, pool, calib, target, opt);
    ASSERT_EQ(awq.groups.size(), 4u * m->hp.n_layer);
    for (const auto& g : awq.groups) EXPECT_LE(g.err_awq, g.err_plain) << g.name;
    double ppl[2];
    for (int with = 0; with < 2; ++with) {
      QuantizeJob job;
      job.in = &m->file;
      job.out_path = dir.file(std::string(type) + std::to_string(with) + ".gguf");
      job.target = target;
      job.progress = false;
      if (with) job.overrides = &awq.overrides, job.importance = &awq.importance;
      quantize_model(job, pool);
      auto q = Model::load(job.out_path);
      ppl[with] = perplexity(*q, pool, eval, 256, 256).ppl;
    }
    EXPECT_LT(ppl[1], ppl[0] * 0.998) << type << ": AWQ " << ppl[1] << " vs plain " << ppl[0];
  }
  // The folded scales alone (written as F32) leave the model's function unchanged.
  const AwqResult awq = awq_search(*m, pool, calib, parse_quant_target("q4_0"),
                                   AwqOptions{256, 4096, 256, 20, false});
  QuantizeJob job;
  job.in = &m->file;
  job.out_path = dir.file("scaled_f32.gguf");
  job.target = parse_quant_target("f32");
  job.overrides = &awq.overrides;
  job.progress = false;
  quantize_model(job, pool);
  auto scaled = Model::load(job.out_path);
  const double a = perplexity(*m, pool, eval, 256, 256, 10).ppl;
  const double b = perplexity(*scaled, pool, eval, 256, 256, 10).ppl;
  EXPECT_NEAR(a, b, a * 1e-4);
}

// An importance matrix from the kjv train text, computed as llama-imatrix does: an entry per linear
// layer (the classifier only when asked) with its tokens counted, a file that reads back the same,
// and quantizing with it lowers perplexity against the same type without it.
TEST(Imatrix, ComputedWrittenReadAndLowersTheQuantizationLoss) {
  const std::string src = test::shared("models/kjv-pair/draft.gguf");
  auto m = Model::load(src);
  ThreadPool pool(2);
  const auto train =
      m->tokenizer->encode(test::read_file(test::shared("models/kjv-pair/train.txt")), true);
  ImatrixOptions o;
  o.n_ctx = 256;
  o.max_chunks = 24;
  o.dataset = "train.txt";
  const Imatrix im = compute_imatrix(*m, pool, train, o);
  EXPECT_EQ(im.entries.size(), static_cast<size_t>(7 * m->hp.n_layer));
  EXPECT_EQ(im.entries.count("output.weight"), 0u);
  const ImatrixEntry& q0 = im.entries.at("blk.0.attn_q.weight");
  EXPECT_EQ(q0.count, 24.0f * 256);
  EXPECT_EQ(q0.sum_sq.size(), static_cast<size_t>(m->hp.n_embd));
  EXPECT_EQ(im.entries.at("blk.0.attn_k.weight").sum_sq, q0.sum_sq);  // one input, one entry each
  EXPECT_EQ(im.entries.at("blk.1.ffn_down.weight").sum_sq.size(), static_cast<size_t>(m->hp.n_ff));
  o.process_output = true;
  EXPECT_EQ(compute_imatrix(*m, pool, train, o).entries.at("output.weight").count, 24.0f * 256);

  test::TempDir dir;
  write_imatrix(dir.file("im.gguf"), im);
  const Imatrix back = read_imatrix(dir.file("im.gguf"));
  EXPECT_EQ(back.chunk_count, 24u);
  EXPECT_EQ(back.chunk_size, 256u);
  EXPECT_EQ(back.datasets, std::vector<std::string>{"train.txt"});
  ASSERT_EQ(back.entries.size(), im.entries.size());
  for (const auto& [name, e] : im.entries) {
    EXPECT_EQ(back.entries.at(name).sum_sq, e.sum_sq) << name;
    EXPECT_EQ(back.entries.at(name).count, e.count) << name;
  }

  ModelFile mf = load_model_file(src);
  const auto toks = valid_tokens(*m);
  const auto importance = back.importance();
  double ppl[2];
  for (int with = 0; with < 2; ++with) {
    QuantizeJob job;
    job.in = &mf;
    job.out_path = dir.file("q.gguf");
    job.target = parse_quant_target("q3_k_m");
    job.progress = false;
    if (with) job.importance = &importance;
    quantize_model(job, pool);
    ppl[with] = perplexity(*Model::load(job.out_path), pool, toks, 256, 256, 60).ppl;
  }
  EXPECT_LT(ppl[1], ppl[0]);

  // The 1- and 2-bit mixes need the matrix, as llama-quantize's do; with it they keep the model.
  const double base = perplexity(*m, pool, toks, 256, 256, 60).ppl;
  for (auto [type, max_ratio] : {std::pair{"iq2_xxs", 1.6}, {"iq1_m", 2.0}}) {
    QuantizeJob job;
    job.in = &mf;
    job.out_path = dir.file(std::string(type) + ".gguf");
    job.target = parse_quant_target(type);
    job.progress = false;
    EXPECT_THROW(quantize_model(job, pool), Error) << type;
    job.importance = &importance;
    quantize_model(job, pool);
    const double p = perplexity(*Model::load(job.out_path), pool, toks, 256, 256, 60).ppl;
    EXPECT_LT(p, base * max_ratio) << type << " ppl " << p << " vs f32 " << base;
  }
}

}  // namespace
}  // namespace brisk
