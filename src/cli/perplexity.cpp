// brisk perplexity: how well a model predicts a text, computed like llama-perplexity so figures
// compare with other tools'.
#include <cstdio>
#include <optional>

#include "cli/commands.h"
#include "cli/common.h"
#include "cli/options.h"
#include "core/error.h"
#include "core/progress.h"
#include "model/perplexity.h"

namespace brisk::cli {
namespace {

struct PerplexityArgs {
  Options opt;
  std::string file;
  int64_t n_ctx = 512, n_batch = 512, chunks = -1;
};

int run_perplexity(PerplexityArgs& a) {
  double load_s = 0;
  a.opt.model.context = a.n_ctx;
  auto m = load_model(a.opt.model, &load_s);
  const std::string text = read_text_file(a.file, "text file");
  const auto tokens = m->tokenizer->encode(text, true);
  const int64_t n_ctx = a.n_ctx;
  if (m->hp.n_ctx_train > 0 && n_ctx > m->hp.n_ctx_train)
    std::fprintf(stderr, "warning: -c %lld is beyond the model's training context %lld\n",
                 static_cast<long long>(n_ctx), static_cast<long long>(m->hp.n_ctx_train));
  const int threads = a.opt.thread_count();
  ThreadPool pool(threads);
  std::fprintf(stderr, "%s: %zu bytes, %zu tokens; %lld-token windows, second halves scored\n",
               a.file.c_str(), text.size(), tokens.size(), static_cast<long long>(n_ctx));
  std::optional<ProgressBar> bar;
  const auto r = perplexity(*m, pool, tokens, n_ctx, std::min(a.n_batch, n_ctx), a.chunks,
                            [&](int64_t c, int64_t n, double running) {
                              if (!bar) bar.emplace("perplexity", static_cast<double>(n));
                              bar->update(static_cast<double>(c + 1),
                                          fmt::format("[{}/{}] PPL {:.4f}", c + 1, n, running));
                            });
  if (bar) bar->finish();
  std::printf("Final estimate: PPL = %.4f +/- %.4f (%lld chunks, %lld tokens scored)\n", r.ppl,
              r.ppl_error, static_cast<long long>(r.chunks), static_cast<long long>(r.scored));
  return 0;
}

}  // namespace

void register_perplexity(CLI::App& app, Commands& c) {
  auto a = std::make_shared<PerplexityArgs>();
  CLI::App* s =
      app.add_subcommand("perplexity", "Perplexity of a model over a text (like llama-perplexity)");
  s->option_defaults()->always_capture_default();
  add_options(*s, a->opt, kModel | kThreads);
  s->add_option("-f,--file", a->file, "Text file to score")->required();
  // llama-perplexity's -c and -b: the scoring window and its forward passes, not an engine's.
  s->add_option("-c,--ctx-size", a->n_ctx, "Window length in tokens (the second half is scored)")
      ->check(CLI::Range(int64_t{8}, int64_t{1} << 20));
  s->add_option("-b,--batch-size", a->n_batch, "Tokens per forward pass")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  s->add_option("--chunks", a->chunks, "Score at most this many windows (-1: all)");
  s->callback([a, &c] { c.selected = [a] { return run_perplexity(*a); }; });
}

}  // namespace brisk::cli
