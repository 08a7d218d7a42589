// brisk info: what a model file holds — architecture, hyper-parameters, tokenizer, template,
// tensors.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/options.h"
#include "core/error.h"
#include "formats/loader.h"
#include "model/architecture.h"
#include "model/hparams.h"
#include "ops/cpu.h"
#include "tokenizer/vocab.h"

namespace brisk::cli {
namespace {

struct InfoArgs {
  Options opt;
  std::string positional;
  bool all_meta = false;
};

std::string human(uint64_t b) {
  if (b >= (uint64_t{1} << 30)) return fmt::format("{:.2f} GiB", b / 1073741824.0);
  if (b >= (uint64_t{1} << 20)) return fmt::format("{:.2f} MiB", b / 1048576.0);
  if (b >= 1024) return fmt::format("{:.2f} KiB", b / 1024.0);
  return fmt::format("{} B", b);
}

int info(InfoArgs& a) {
  if (!a.positional.empty()) a.opt.model.path = a.positional;
  const std::string path = resolve_model(a.opt.model);
  ModelFile mf = load_model_file(path, a.opt.model.tokenizer);
  fmt::print("file:          {}\nformat:        {} ({})\n", mf.path, mf.format,
             human(mf.file_bytes));
  std::string tiers;
  for (int i = 0; i < kIsaCount; ++i)
    if (isa_available(static_cast<Isa>(i)))
      tiers += fmt::format(" {}", isa_name(static_cast<Isa>(i)));
  fmt::print("kernels:       {} (this CPU runs:{}; BRISK_ISA caps the choice)\n",
             isa_name(best_isa()), tiers);
  fmt::print("architecture:  {}\n", mf.arch().empty() ? "(none)" : mf.arch());
  if (auto n = mf.get_str("general.name")) fmt::print("name:          {}\n", *n);
  if (mf.tensors.empty()) {
    fmt::print("  (vocabulary only: the file holds no tensors)\n");
  } else if (Architecture::find(mf.arch())) {
    const HParams h = HParams::from_model(mf);
    fmt::print("hyper-parameters:\n");
    fmt::print("  vocab {}  embd {}  layers {}  ffn {}\n", h.n_vocab, h.n_embd, h.n_layer, h.n_ff);
    fmt::print("  heads {}  kv heads {}  head dim {}  context {}\n", h.n_head, h.n_head_kv,
               h.head_dim, h.n_ctx_train);
    const RopeScaling& rs = h.rope_scaling;
    fmt::print("  rope: {} over {} dims, theta {}, scaling {}\n",
               h.rope_type == RopeType::Norm ? "norm" : "neox", h.rope_dim, h.rope_theta,
               rs.kind == RopeScaling::Kind::None     ? "none"
               : rs.kind == RopeScaling::Kind::Linear ? fmt::format("linear x{}", rs.factor)
               : rs.kind == RopeScaling::Kind::Llama3
                   ? fmt::format("llama3 x{}", rs.factor)
                   : fmt::format("yarn x{} from {} positions", rs.factor, rs.original_context));
    fmt::print("  rms eps {}  qkv bias {}  qk norm {}  output {}\n", h.rms_eps,
               h.qkv_bias ? "yes" : "no", h.qk_norm ? "yes" : "no",
               h.tied_output ? "tied to embeddings" : "separate");
    if (!h.windowed.empty()) {
      int64_t n = 0;
      for (uint8_t w : h.windowed) n += w;
      fmt::print("  sliding window {} positions on {} of {} layers{}\n", h.window, n, h.n_layer,
                 h.rope_theta_windowed > 0
                     ? fmt::format(" (rope theta {}, unscaled)", h.rope_theta_windowed)
                     : "");
    }
    if (h.attn_softcap > 0 || h.final_softcap > 0)
      fmt::print("  soft-capping: attention scores {}, final logits {}\n",
                 h.attn_softcap > 0 ? fmt::format("{}", h.attn_softcap) : "none",
                 h.final_softcap > 0 ? fmt::format("{}", h.final_softcap) : "none");
    if (h.attn_scale > 0 || h.embd_scale != 1)
      fmt::print("  query scale {:.6g}  embedding scale {:.6g}\n", h.attention_scale(),
                 h.embd_scale);
    // Parameters, and of a mixture of experts those one token runs through (n_used of n_expert
    // of the stacked expert tensors).
    double total = 0, experts = 0;
    for (const Tensor& t : mf.tensors) {
      total += static_cast<double>(t.elements());
      if (t.name.find("_exps.") != std::string::npos) experts += static_cast<double>(t.elements());
    }
    if (h.has_experts()) {
      const double active =
          total - experts * (1.0 - static_cast<double>(h.experts.n_used) / h.experts.n_expert);
      fmt::print("  experts {} ({} per token, {} wide, {} gating{})\n", h.experts.n_expert,
                 h.experts.n_used, h.n_ff_exp,
                 h.experts.gating == ExpertGating::Softmax ? "softmax" : "softmax over the chosen",
                 h.experts.normalize ? ", renormalised" : "");
      fmt::print("parameters:    {:.3f} B ({:.3f} B active per token)\n", total / 1e9,
                 active / 1e9);
    } else {
      fmt::print("parameters:    {:.3f} B\n", total / 1e9);
    }
  } else if (!mf.arch().empty()) {
    fmt::print("  (architecture '{}' is not supported for inference)\n", mf.arch());
  }
  if (mf.find("tokenizer.ggml.model")) {
    const Vocab v = Vocab::from_model(mf);
    fmt::print("tokenizer:     {} (pre-tokenizer {}), {} tokens\n", v.model, v.pre, v.size());
    auto sp = [&](const char* name, int32_t id) {
      if (id >= 0) fmt::print("  {:<5} {:>7}  '{}'\n", name, id, v.tokens[id]);
    };
    sp("bos", v.bos);
    sp("eos", v.eos);
    sp("eot", v.eot);
    sp("unk", v.unk);
    sp("pad", v.pad);
    fmt::print("  add bos {}  add eos {}\n", v.add_bos, v.add_eos);
    if (!v.chat_template.empty())
      fmt::print("chat template:\n{}\n", v.chat_template);
    else
      fmt::print("chat template: (none)\n");
  } else {
    fmt::print("tokenizer:     (none)\n");
  }
  if (a.all_meta) {
    fmt::print("metadata ({} keys):\n", mf.meta.size());
    for (const auto& [k, v] : mf.meta) fmt::print("  {:<45} {}\n", k, v.to_display());
  }
  fmt::print("tensors ({}):\n", mf.tensors.size());
  fmt::print("  {:<36} {:<6} {:<22} {:>12}\n", "name", "type", "shape", "bytes");
  uint64_t total = 0, elems = 0;
  for (const auto& t : mf.tensors) {
    fmt::print("  {:<36} {:<6} {:<22} {:>12}\n", t.name, dtype_name(t.type), t.shape_string(),
               t.nbytes);
    total += t.nbytes;
    elems += static_cast<uint64_t>(t.elements());
  }
  fmt::print("total: {} parameters, {} ({} bytes)\n", elems, human(total), total);
  return 0;
}

}  // namespace

void register_info(CLI::App& app, Commands& c) {
  auto a = std::make_shared<InfoArgs>();
  CLI::App* s = app.add_subcommand(
      "info", "Describe a model: architecture, hyper-parameters, tokenizer, tensors");
  s->option_defaults()->always_capture_default();  // --help shows each default
  s->add_option("model", a->positional, "Model file or directory (same as -m)");
  add_options(*s, a->opt, kModel);
  s->add_flag("--all", a->all_meta, "Also list every metadata key and value");
  s->callback([a, &c] { c.selected = [a] { return info(*a); }; });
}

}  // namespace brisk::cli
