// brisk run: generate text from a prompt, streaming it to standard output.
#include <atomic>
#include <cstdio>
#include <memory>
#include <random>

#include "chat/prompt_format.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/engine_options.h"
#include "cli/generate.h"
#include "core/error.h"
#include "core/thread_pool.h"
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
  std::string kv_dtype = "auto";
  SpecArgs spec;
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

  const PromptFormat fmt(*model->tokenizer);
  Request req;
  req.prompt = fmt.encode_text(a.prompt, true);
  if (req.prompt.empty())
    fail("the prompt is empty and the model adds no BOS token: give a prompt with -p");
  const auto n_prompt = static_cast<int64_t>(req.prompt.size());
  if (n_prompt >= n_ctx)
    fail("the prompt has {} tokens but the context size is {} (raise -c)", n_prompt, n_ctx);
  req.sampling = a.sp;
  req.ignore_eos = a.ignore_eos;
  req.max_tokens = a.n_predict < 0 ? n_ctx - n_prompt : std::min(a.n_predict, n_ctx - n_prompt);

  ThreadPool pool(threads);
  const EngineConfig ec =
      single_sequence_config(*model, n_ctx, a.n_batch, a.kv_dtype, spec_config(a.spec));
  Engine engine(*model, pool, ec);
  if (a.verbose) std::fprintf(stderr, "%s\n", describe_kv(engine).c_str());

  if (!a.no_display_prompt) {
    StreamDecoder dec(*model->tokenizer);
    std::string echoed;
    for (int32_t t : req.prompt) echoed += dec.push(t);
    echoed += dec.flush();
    std::fwrite(echoed.data(), 1, echoed.size(), stdout);
    std::fflush(stdout);
  }

  catch_interrupts(true);
  Generation g;
  if (req.max_tokens > 0)
    g = generate(engine, std::move(req), [](const std::string& s) {
      std::fwrite(s.data(), 1, s.size(), stdout);
      std::fflush(stdout);
    });
  std::fputc('\n', stdout);
  std::fflush(stdout);
  catch_interrupts(false);

  if (g.interrupted) std::fprintf(stderr, "\n[interrupted]\n");
  std::fprintf(stderr, "\nload time:    %10.2f ms", load_s * 1e3);
  if (model->repack_seconds > 0)
    std::fprintf(stderr, " (%.2f ms interleaving weight rows)", model->repack_seconds * 1e3);
  std::fputc('\n', stderr);
  std::fprintf(stderr, "prompt:       %10.2f ms / %5lld tokens (%9.2f tokens/s)\n",
               g.prompt_seconds * 1e3, static_cast<long long>(g.prompt_tokens),
               g.prompt_seconds > 0 ? g.prompt_tokens / g.prompt_seconds : 0.0);
  // The first token comes with the prompt; each later one is a forward pass of its own.
  const int64_t steps = std::max<int64_t>(g.generated_tokens - 1, 0);
  std::fprintf(stderr, "generation:   %10.2f ms / %5lld tokens (%9.2f tokens/s)\n",
               g.generate_seconds * 1e3, static_cast<long long>(g.generated_tokens),
               g.generate_seconds > 0 ? steps / g.generate_seconds : 0.0);
  const std::string spec = describe_spec(engine.stats());
  if (!spec.empty()) std::fprintf(stderr, "%s\n", spec.c_str());
  return g.interrupted ? 130 : 0;
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
  s->add_option("--kv-cache-dtype", a->kv_dtype, kKvDtypeHelp);
  add_sampling_options(*s, a->sp, a->seed);
  add_spec_options(*s, a->spec);
  s->add_flag("--ignore-eos", a->ignore_eos, "Keep generating past the end-of-text token");
  s->add_flag("--no-display-prompt", a->no_display_prompt, "Do not echo the prompt to stdout");
  s->add_flag("-v,--verbose", a->verbose, "Print model and run details to stderr");
  c.selected = nullptr;
  s->callback([a, &c] { c.selected = [a] { return run(*a); }; });
}

}  // namespace brisk::cli
