// brisk imatrix: an importance matrix from calibration text, in llama.cpp's GGUF format (so
// llama-quantize and brisk quantize --imatrix both read it).
#include <cstdio>
#include <optional>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/options.h"
#include "core/progress.h"
#include "model/imatrix.h"

namespace brisk::cli {
namespace {

struct ImatrixArgs {
  Options opt;
  std::string file, out = "imatrix.gguf";
  int64_t n_ctx = 512, chunks = -1;
  bool process_output = false;
};

int run_imatrix(ImatrixArgs& a) {
  auto m = load_model(a.opt.model, nullptr);
  const std::string text = read_text_file(a.file, "calibration text");
  const auto tokens = m->tokenizer->encode(text, true);
  ThreadPool pool(a.opt.thread_count());
  std::fprintf(stderr, "%s: %zu tokens, windows of %lld\n", a.file.c_str(), tokens.size(),
               static_cast<long long>(a.n_ctx));
  std::optional<ProgressBar> bar;
  ImatrixOptions o;
  o.n_ctx = a.n_ctx;
  o.max_chunks = a.chunks;
  o.dataset = a.file;
  o.process_output = a.process_output;
  o.progress = [&](int64_t done, int64_t total) {
    if (!bar) bar.emplace("imatrix", static_cast<double>(total));
    bar->update(static_cast<double>(done));
  };
  const Imatrix im = compute_imatrix(*m, pool, tokens, o);
  if (bar) bar->finish();
  write_imatrix(a.out, im);
  std::fprintf(stderr, "wrote %s: %zu matrices, %u windows of %u tokens\n", a.out.c_str(),
               im.entries.size(), im.chunk_count, im.chunk_size);
  return 0;
}

}  // namespace

void register_imatrix(CLI::App& app, Commands& c) {
  auto a = std::make_shared<ImatrixArgs>();
  CLI::App* s = app.add_subcommand(
      "imatrix",
      "Importance matrix from calibration text for quantizing (like llama-imatrix; GGUF output)");
  s->option_defaults()->always_capture_default();
  add_options(*s, a->opt, kModel | kThreads);
  s->add_option("-f,--file", a->file, "Calibration text")->required();
  s->add_option("-o,--output", a->out, "Output file (llama.cpp's imatrix GGUF)");
  s->add_option("-c,--ctx-size", a->n_ctx, "Window length in tokens")
      ->check(CLI::Range(int64_t{8}, int64_t{1} << 16));
  s->add_option("--chunks", a->chunks, "Use at most this many windows (-1: all)");
  s->add_flag("--process-output", a->process_output,
              "Collect the classifier's (output.weight's) input too");
  s->callback([a, &c] { c.selected = [a] { return run_imatrix(*a); }; });
}

}  // namespace brisk::cli
