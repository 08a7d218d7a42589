// brisk bench spec: what speculative decoding buys. Decodes one prompt with and without it, for
// a proposer (a draft model, prompt lookup or layer skipping) at each draft length and concurrency
// asked for, in one process: decode tokens/s (after the prompt), the speedup over plain decoding
// measured next to it, acceptance (over all repetitions), and whether the greedy text stayed the
// same.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "chat/prompt_format.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/options.h"
#include "cli/svg_plot.h"
#include "core/clock.h"
#include "core/error.h"
#include "ops/cpu.h"

namespace brisk::cli {
namespace {

// A quote-heavy task: a paragraph, then the start of it again. A model continues by copying it,
// which is what prompt lookup predicts well (as for code edits and retrieval-augmented answers).
constexpr const char* kQuotePrompt =
    "Once upon a time, there was a little girl named Lily. She loved to play outside in the park "
    "with her friends. One day, she saw a big red ball under a tree. Lily wanted to play with the "
    "ball, but it was too high. She asked her mom for help, and they got it down together.\n\n"
    "Once upon a time, there was a little girl named Lily. She loved to play";

struct SpecBenchArgs {
  Options opt;
  SpecArgs& spec = opt.engine.spec;
  std::string prompt, prompt_file, plot;
  int n_predict = 128;
  std::vector<int> drafts = {2, 4, 8};
  std::vector<int> concurrency = {1, 8};
  int reps = 3;
  float temp = 0;
};

struct RunResult {
  double tokens_per_s = 0;
  std::vector<std::vector<int32_t>> outputs;
  EngineStats stats;
};

// c copies of the prompt decoded together; the clock starts once every copy has its first token.
RunResult run_once(const Model& m, ThreadPool& pool, const std::vector<int32_t>& prompt,
                   const SpecBenchArgs& a, int c, int draft) {
  EngineConfig ec;
  ec.max_seqs = std::max(c, 1);
  ec.max_model_len = static_cast<int64_t>(prompt.size()) + a.n_predict + 1;
  SpecArgs sa = a.spec;  // shares the loaded draft model
  if (draft == 0) sa.method = "none", sa.draft_model.clear();
  sa.draft_max = std::max(draft, 1);
  sa.draft_min = std::min(sa.draft_min, sa.draft_max);
  ec.spec = spec_config(sa);
  Engine e(m, pool, ec);
  RunResult r;
  r.outputs.resize(static_cast<size_t>(c));
  for (int i = 0; i < c; ++i) {
    Request q;
    q.prompt = prompt;
    q.max_tokens = a.n_predict;
    q.ignore_eos = true;
    q.sampling.temperature = a.temp;
    q.sampling.seed = static_cast<uint64_t>(i + 1);
    auto& out = r.outputs[static_cast<size_t>(i)];
    e.submit(std::move(q), [&out](const Output& o) {
      if (o.token >= 0) out.push_back(o.token);
    });
  }
  auto all_started = [&] {
    return std::all_of(r.outputs.begin(), r.outputs.end(),
                       [](const auto& o) { return !o.empty(); });
  };
  while (!all_started() && e.step()) {
  }
  const EngineStats before = e.stats();
  const double t0 = now_seconds();
  e.run_until_idle();
  const double dt = now_seconds() - t0;
  r.stats = e.stats();
  const auto decoded = static_cast<double>(r.stats.generated_tokens - before.generated_tokens);
  r.tokens_per_s = dt > 0 ? decoded / dt : 0;
  return r;
}

int bench_spec(SpecBenchArgs& a) {
  double load_s = 0;
  auto m = load_model(a.opt.model, &load_s);
  if (a.spec.method.empty()) a.spec.method = a.spec.draft_model.empty() ? "ngram" : "draft";
  (void)spec_config(a.spec);  // checks the options, loads the draft model before any timing
  if (a.spec.draft) check_draft_vocab(*m, *a.spec.draft);
  std::string text = a.prompt;
  if (!a.prompt_file.empty()) text = read_text_file(a.prompt_file, "prompt file");
  if (text.empty()) text = kQuotePrompt;
  const PromptFormat fmt(*m->tokenizer);
  const std::vector<int32_t> prompt = fmt.encode_text(text, true);
  if (prompt.empty()) fail("the prompt is empty");
  const int threads = a.opt.thread_count();
  ThreadPool pool(threads);
  std::printf(
      "model: %s, %d threads, kernels: %s; prompt %zu tokens, %d generated (%s), median of %d\n",
      m->file.path.c_str(), threads, isa_name(best_isa()), prompt.size(), a.n_predict,
      a.temp > 0 ? fmt::format("temperature {}", a.temp).c_str() : "greedy", a.reps);
  std::printf("%-12s %5s %6s %12s %8s %10s %10s %6s\n", "proposer", "seqs", "draft", "decode t/s",
              "speedup", "accepted", "per verif.", "same");
  std::vector<PlotSeries> speedup, acceptance;  // per concurrency, by draft length
  for (int c : a.concurrency) {
    // Each repetition runs plain decoding and every draft length back to back, so that a slow
    // phase of the machine falls on all of them; a speedup is the median of the repetitions'
    // ratios to the plain run next to them.
    std::vector<int> settings = {0};
    settings.insert(settings.end(), a.drafts.begin(), a.drafts.end());
    std::vector<std::vector<RunResult>> runs(settings.size());
    for (int i = 0; i < a.reps; ++i)
      for (size_t k = 0; k < settings.size(); ++k)
        runs[k].push_back(run_once(*m, pool, prompt, a, c, settings[k]));
    auto rate = [&](size_t k) {
      std::vector<double> v;
      for (const RunResult& r : runs[k]) v.push_back(r.tokens_per_s);
      return median(v);
    };
    std::printf("%-12s %5d %6s %12.1f %8s %10s %10s %6s\n", "none", c, "-", rate(0), "1.00x", "-",
                "-", "-");
    const std::string label = fmt::format("{} sequence{}", c, c == 1 ? "" : "s");
    speedup.push_back({label, {{0, 1.0}}});
    acceptance.push_back({label, {}});
    for (size_t k = 1; k < settings.size(); ++k) {
      std::vector<double> ratios;
      bool same = true;
      int64_t drafts = 0, drafted = 0, accepted = 0;
      for (int i = 0; i < a.reps; ++i) {
        const RunResult& r = runs[k][static_cast<size_t>(i)];
        const RunResult& b = runs[0][static_cast<size_t>(i)];
        ratios.push_back(b.tokens_per_s > 0 ? r.tokens_per_s / b.tokens_per_s : 0.0);
        same = same && r.outputs == b.outputs;
        drafts += r.stats.spec_drafts, drafted += r.stats.spec_draft_tokens;
        accepted += r.stats.spec_accepted_tokens;
      }
      if (a.temp > 0) same = true;
      const double accepted_pct =
          drafted ? 100.0 * static_cast<double>(accepted) / static_cast<double>(drafted) : 0.0;
      speedup.back().points.emplace_back(settings[k], median(ratios));
      acceptance.back().points.emplace_back(settings[k], accepted_pct);
      std::printf("%-12s %5d %6d %12.1f %7.2fx %9.1f%% %10.2f %6s\n", a.spec.method.c_str(), c,
                  settings[k], rate(k), median(ratios), accepted_pct,
                  drafts ? 1.0 + static_cast<double>(accepted) / static_cast<double>(drafts) : 1.0,
                  a.temp > 0 ? "n/a"
                  : same     ? "yes"
                             : "NO");
      if (!same) std::fprintf(stderr, "error: greedy output changed with draft %d\n", settings[k]);
    }
  }
  if (!a.plot.empty())
    write_svg(a.plot, {{fmt::format("Speedup from speculative decoding ({})", a.spec.method),
                        "draft length", "decode tokens/s over plain decoding", speedup, false},
                       {"Draft tokens accepted", "draft length", "percent", acceptance, false}});
  return 0;
}

}  // namespace

void register_bench_spec(CLI::App& bench, Commands& c) {
  auto a = std::make_shared<SpecBenchArgs>();
  CLI::App* s = bench.add_subcommand(
      "spec",
      "Speculative decoding: decode speed and acceptance with and without it, by draft length and "
      "concurrency");
  s->option_defaults()->always_capture_default();
  // Takes speculation's tuning; the proposer and the draft lengths are this command's own.
  add_options(*s, a->opt, kModel | kThreads | kSpecTuning);
  s->add_option("-p,--prompt", a->prompt,
                "Prompt (default: a quote task, a paragraph and the start of it again)");
  s->add_option("-f,--file", a->prompt_file, "Read the prompt from a file")->excludes("-p");
  s->add_option("-n,--n-predict", a->n_predict, "Tokens generated per sequence (EOS ignored)")
      ->check(CLI::Range(2, 1 << 20));
  s->add_option("--drafts", a->drafts, "Draft lengths (--draft-max) to measure, e.g. 2,4,8")
      ->delimiter(',')
      ->check(CLI::Range(1, 64));
  s->add_option("--concurrency", a->concurrency, "Sequences decoding together, e.g. 1,8")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024));
  s->add_option("-r,--repetitions", a->reps, "Runs per setting (the median is shown)")
      ->check(CLI::Range(1, 100));
  s->add_option("--temp", a->temp, "Sampling temperature (0: greedy, and outputs are compared)")
      ->check(CLI::Range(0.0f, 10.0f));
  s->add_option(
      "--plot", a->plot,
      "Also draw the speedup and the acceptance against draft length as an SVG file here");
  a->spec.method = "";
  s->add_option("--spec", a->spec.method,
                "Proposer: draft (a draft model, -md), ngram (prompt lookup) or layer-skip "
                "(default: draft when -md is given, else ngram)")
      ->check(CLI::IsMember({"draft", "ngram", "layer-skip"}));
  s->callback([a, &c] { c.selected = [a] { return bench_spec(*a); }; });
}

}  // namespace brisk::cli
