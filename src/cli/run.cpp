// brisk run: generate text from a prompt, streaming it to standard output.
#include <atomic>
#include <cstdio>
#include <memory>
#include <random>

#include "cli/commands.h"
#include "cli/common.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "engine/session.h"
#include "ops/cpu.h"

namespace brisk::cli {
namespace {

struct RunArgs {
  ModelArgs model;
  std::string prompt, prompt_file;
  int64_t n_predict = -1, n_ctx = 0, n_batch = 512;
  int threads = 0;
  SamplingParams sp;
  int64_t seed = -1;
  bool ignore_eos = false, verbose = false, no_display_prompt = false;
};

int run(RunArgs& a) {
  if (!a.prompt_file.empty()) a.prompt = read_text_file(a.prompt_file, "prompt file");
  const int threads = a.threads > 0 ? a.threads : ThreadPool::default_threads();
  double load_s = 0;
  auto model = load_model(a.model, &load_s);
  const auto& hp = model->hp;
  const int64_t n_ctx = a.n_ctx > 0 ? a.n_ctx : std::min<int64_t>(hp.n_ctx_train, 4096);
  if (a.verbose) {
    std::fprintf(stderr, "model: %s (%s, %s), %lld layers, embd %lld, heads %d/%d, vocab %lld\n",
                 model->file.path.c_str(), model->file.format.c_str(), hp.arch.c_str(),
                 static_cast<long long>(hp.n_layer), static_cast<long long>(hp.n_embd), hp.n_head,
                 hp.n_head_kv, static_cast<long long>(hp.n_vocab));
    std::fprintf(stderr, "threads: %d, context: %lld, kernels: %s\n", threads,
                 static_cast<long long>(n_ctx), isa_name(best_isa()));
  }
  a.sp.seed = a.seed >= 0 ? static_cast<uint64_t>(a.seed) : std::random_device{}();
  if (a.verbose || a.seed < 0)
    std::fprintf(stderr, "seed: %llu\n", static_cast<unsigned long long>(a.sp.seed));

  ThreadPool pool(threads);
  Session session(*model, pool, n_ctx, a.n_batch);
  const Tokenizer& tok = *model->tokenizer;
  std::vector<int32_t> prompt = tok.encode(a.prompt, true);
  if (prompt.empty())
    fail("the prompt is empty and the model adds no BOS token: give a prompt with -p");
  Sampler sampler(a.sp);
  for (int32_t t : prompt) sampler.accept(t);

  StreamDecoder dec(tok);
  std::string echoed;
  for (int32_t t : prompt) echoed += dec.push(t);
  if (!a.no_display_prompt) {
    std::fwrite(echoed.data(), 1, echoed.size(), stdout);
    std::fflush(stdout);
  }

  catch_interrupts(true);
  session.feed(prompt);
  int64_t n_predict = a.n_predict;
  if (n_predict < 0 || static_cast<int64_t>(prompt.size()) + n_predict > n_ctx)
    n_predict = n_ctx - static_cast<int64_t>(prompt.size());
  session.generate(
      sampler, n_predict, a.ignore_eos,
      [&](int32_t t) {
        const std::string s = dec.push(t);
        std::fwrite(s.data(), 1, s.size(), stdout);
        std::fflush(stdout);
        return true;
      },
      &g_interrupted);
  const std::string rest = dec.flush();
  std::fwrite(rest.data(), 1, rest.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
  catch_interrupts(false);

  const auto& st = session.stats();
  if (g_interrupted) std::fprintf(stderr, "\n[interrupted]\n");
  std::fprintf(stderr, "\nload time:    %10.2f ms", load_s * 1e3);
  if (model->repack_seconds > 0)
    std::fprintf(stderr, " (%.2f ms interleaving weight rows)", model->repack_seconds * 1e3);
  std::fputc('\n', stderr);
  std::fprintf(stderr, "prompt:       %10.2f ms / %5lld tokens (%9.2f tokens/s)\n",
               st.prompt_seconds * 1e3, static_cast<long long>(st.prompt_tokens),
               st.prompt_seconds > 0 ? st.prompt_tokens / st.prompt_seconds : 0.0);
  std::fprintf(stderr, "generation:   %10.2f ms / %5lld tokens (%9.2f tokens/s)\n",
               st.generate_seconds * 1e3, static_cast<long long>(st.generated_tokens),
               st.generate_seconds > 0 ? st.generated_tokens / st.generate_seconds : 0.0);
  return g_interrupted ? 130 : 0;
}

}  // namespace

void register_run(CLI::App& app, Commands& c) {
  auto a = std::make_shared<RunArgs>();
  CLI::App* s = app.add_subcommand(
      "run", "Generate text from a prompt (streams to stdout; statistics to stderr)");
  s->option_defaults()->always_capture_default();  // --help shows each default
  add_model_options(*s, a->model);
  s->add_option("-p,--prompt", a->prompt, "Prompt text");
  s->add_option("-f,--file", a->prompt_file, "Read the prompt from a file")->excludes("-p");
  s->add_option("-n,--n-predict", a->n_predict,
                "Number of tokens to generate (-1: until end of text or full context)");
  s->add_option("-t,--threads", a->threads, "Threads to compute with (default: all cores)")
      ->check(CLI::Range(1, 1024));
  s->add_option("-c,--ctx-size", a->n_ctx,
                "Context size in tokens (default: the model's, at most 4096)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24));
  s->add_option("-b,--batch-size", a->n_batch, "Prompt tokens processed per forward pass")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 16));
  add_sampling_options(*s, a->sp, a->seed);
  s->add_flag("--ignore-eos", a->ignore_eos, "Keep generating past the end-of-text token");
  s->add_flag("--no-display-prompt", a->no_display_prompt, "Do not echo the prompt to stdout");
  s->add_flag("-v,--verbose", a->verbose, "Print model and run details to stderr");
  c.selected = nullptr;
  s->callback([a, &c] { c.selected = [a] { return run(*a); }; });
}

}  // namespace brisk::cli
