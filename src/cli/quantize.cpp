// brisk quantize: writes a model (GGUF or a Hugging Face directory) as a GGUF in a quantized type
// mix, like llama-quantize, optionally with activation-aware scaling (AWQ).
#include <chrono>
#include <cstdio>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/options.h"
#include "core/error.h"
#include "formats/imatrix_file.h"
#include "formats/loader.h"
#include "model/awq.h"
#include "model/quantize.h"

namespace brisk::cli {
namespace {

struct QuantizeArgs {
  Options opt;
  std::string in, out, type, type_pos;
  bool awq = false;
  std::string calib, imatrix;
  AwqOptions awq_opt;
};

int quantize(QuantizeArgs& a) {
  const std::string tname = !a.type.empty() ? a.type : a.type_pos;
  if (tname.empty()) fail("no target type: give --type TYPE ({})", quant_target_names());
  const QuantTarget target = parse_quant_target(tname);
  const auto t0 = std::chrono::steady_clock::now();
  ThreadPool pool(a.opt.thread_count());
  QuantizeJob job;
  job.out_path = a.out;
  job.target = target;
  std::unique_ptr<Model> model;
  ModelFile mf;
  AwqResult awq;
  std::map<std::string, std::vector<float>> importance;
  if (a.awq && !a.imatrix.empty())
    fail("--awq and --imatrix both weigh the rounding errors: give one of them");
  if (a.awq) {
    if (a.calib.empty()) fail("--awq needs calibration text: --calib FILE");
    const std::string calib = read_text_file(a.calib, "calibration text");
    model = Model::load(a.in, "", LoadOptions::as_stored());  // AWQ reads the weights as stored
    const auto toks = model->tokenizer->encode(calib, true);
    awq = awq_search(*model, pool, toks, target, a.awq_opt);
    job.in = &model->file;
    job.overrides = &awq.overrides;
    job.importance = &awq.importance;
    job.extra_meta["brisk.quantize.awq_calibration"] = Value::of_str(a.calib);
    double plain = 0, scaled = 0;
    for (const auto& g : awq.groups) plain += g.err_plain, scaled += g.err_awq;
    std::fprintf(stderr,
                 "AWQ: %zu layer groups searched on %zu calibration tokens; output error of the "
                 "quantized layers %.4g -> %.4g (%.1f%% lower)\n",
                 awq.groups.size(), std::min<size_t>(toks.size(), a.awq_opt.max_tokens), plain,
                 scaled, plain > 0 ? 100.0 * (1 - scaled / plain) : 0.0);
  } else {
    mf = load_model_file(a.in);
    job.in = &mf;
  }
  if (!a.imatrix.empty()) {
    const Imatrix im = read_imatrix(a.imatrix);
    importance = im.importance();
    size_t used = 0;
    for (const Tensor& t : job.in->tensors) {
      auto it = importance.find(t.name);
      if (it == importance.end()) continue;
      if (static_cast<int64_t>(it->second.size()) != t.ne[0])
        fail("{}: '{}' has {} channels, the model's tensor {} columns", a.imatrix, t.name,
             it->second.size(), t.ne[0]);
      ++used;
    }
    if (used == 0) fail("{}: none of its matrices are in {}", a.imatrix, a.in);
    job.importance = &importance;
    job.extra_meta["quantize.imatrix.file"] = Value::of_str(a.imatrix);
    job.extra_meta["quantize.imatrix.entries_count"] = Value::of_i32(static_cast<int32_t>(used));
    job.extra_meta["quantize.imatrix.chunks_count"] =
        Value::of_i32(static_cast<int32_t>(im.chunk_count));
    std::fprintf(stderr, "importance matrix %s: %zu of its %zu matrices are the model's\n",
                 a.imatrix.c_str(), used, importance.size());
  }
  const auto report = quantize_model(job, pool);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  uint64_t in_bytes = 0, out_bytes = 0, elems = 0, fallbacks = 0;
  std::printf("%-32s %-22s %-6s    %-6s %10s\n", "tensor", "shape", "from", "to", "MiB");
  for (const auto& r : report) {
    std::printf("%-32s %-22s %-6s -> %-6s %10.2f%s%s\n", r.name.c_str(), r.shape.c_str(),
                dtype_name(r.from), dtype_name(r.to), static_cast<double>(r.bytes_out) / 1048576,
                r.note.empty() ? "" : "  ", r.note.c_str());
    in_bytes += r.bytes_in, out_bytes += r.bytes_out;
    fallbacks += !r.note.empty();
  }
  for (const Tensor& t : job.in->tensors) elems += static_cast<uint64_t>(t.elements());
  std::printf(
      "%s: %.2f MiB -> %.2f MiB (%.2f bits per weight), %s, %llu tensors (%llu with a fallback "
      "type), %.1f s\n",
      a.out.c_str(), static_cast<double>(in_bytes) / 1048576,
      static_cast<double>(out_bytes) / 1048576, 8.0 * static_cast<double>(out_bytes) / elems,
      target.name.c_str(), static_cast<unsigned long long>(report.size()),
      static_cast<unsigned long long>(fallbacks), secs);
  return 0;
}

}  // namespace

void register_quantize(CLI::App& app, Commands& c) {
  auto a = std::make_shared<QuantizeArgs>();
  CLI::App* s = app.add_subcommand(
      "quantize", "Write a model as a GGUF in a quantized type mix (like llama-quantize)");
  s->option_defaults()->always_capture_default();
  s->add_option("input", a->in, "Model to read: a GGUF file or a Hugging Face directory")
      ->required();
  s->add_option("output", a->out, "GGUF file to write")->required();
  s->add_option("type_pos", a->type_pos, "Target type (same as --type)");
  s->add_option("--type", a->type, "Target type: " + quant_target_names());
  add_options(*s, a->opt, kThreads);
  s->add_flag("--awq", a->awq,
              "Activation-aware scaling (AWQ): search per-channel scales on --calib text before "
              "quantizing");
  s->add_option("--calib", a->calib, "Calibration text for --awq");
  s->add_option("--imatrix", a->imatrix,
                "Importance matrix (llama.cpp's GGUF or .dat, e.g. from brisk imatrix or "
                "llama-imatrix): rounding errors weighed by each input channel's mean square");
  s->add_option("--calib-tokens", a->awq_opt.max_tokens, "Calibration tokens for --awq")
      ->check(CLI::Range(int64_t{16}, int64_t{1} << 24));
  s->add_option("--calib-ctx", a->awq_opt.n_ctx, "Calibration window length for --awq")
      ->check(CLI::Range(int64_t{16}, int64_t{1} << 20));
  s->add_option("--awq-grid", a->awq_opt.grid, "Steps of the scale exponent search over [0, 1]")
      ->check(CLI::Range(1, 100));
  s->callback([a, &c] { c.selected = [a] { return quantize(*a); }; });
}

}  // namespace brisk::cli
