// brisk run: generate text from a prompt, streaming it to standard output.
#include <atomic>
#include <cstdio>
#include <memory>

#include "chat/prompt_format.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/generate.h"
#include "cli/options.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ops/cpu.h"

namespace brisk::cli {
namespace {

struct RunArgs {
  Options opt;
  std::string prompt, prompt_file;
  int64_t n_predict = -1;
  bool ignore_eos = false, verbose = false, no_display_prompt = false;
};

int run(RunArgs& a) {
  if (!a.prompt_file.empty()) a.prompt = read_text_file(a.prompt_file, "prompt file");
  const int threads = a.opt.thread_count();
  double load_s = 0;
  a.opt.model.context = a.opt.engine.max_model_len;
  auto model = load_model(a.opt.model, &load_s);
  const auto constraint = a.opt.output_constraint(model->tokenizer->vocab().chat_template);
  ThreadPool pool(threads);
  Engine engine(*model, pool, engine_config(a.opt.engine, *model));
  const int64_t n_ctx = engine.max_model_len();
  const auto compiled = constraint ? engine.compile(*constraint) : nullptr;
  if (a.verbose) {
    const auto& hp = model->hp;
    std::fprintf(stderr, "model: %s (%s, %s), %lld layers, embd %lld, heads %d/%d, vocab %lld\n",
                 model->file.path.c_str(), model->file.format.c_str(), hp.arch.c_str(),
                 static_cast<long long>(hp.n_layer), static_cast<long long>(hp.n_embd), hp.n_head,
                 hp.n_head_kv, static_cast<long long>(hp.n_vocab));
    std::fprintf(stderr, "threads: %d, context: %lld, kernels: %s\n", threads,
                 static_cast<long long>(n_ctx), isa_name(best_isa()));
    std::fprintf(stderr, "%s\n", describe_kv(engine).c_str());
  }

  const PromptFormat fmt(*model->tokenizer);
  Request req;
  req.prompt = fmt.encode_text(a.prompt, true);
  try {
    engine.check(req);  // the prompt is not empty and fits the context
  } catch (const RequestError& e) {
    fail("{} (-p gives the prompt, -c the context size)", e.what());
  }
  req.sampling = a.opt.sampling;
  req.sampling.seed = a.opt.resolve_seed(a.verbose);
  req.ignore_eos = a.ignore_eos;
  // -n: at most the room the context leaves (-1: until it is full).
  const int64_t room = n_ctx - static_cast<int64_t>(req.prompt.size());
  req.max_tokens = a.n_predict < 0 ? room : std::min(a.n_predict, room);
  req.constraint = constraint;
  req.compiled_constraint = compiled;

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
  std::fprintf(stderr, "%s\n", repack_summary(*model).c_str());
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
  a->opt.engine.max_seqs = 1;                      // the engine with one sequence
  add_options(*s, a->opt, kModel | kThreads | kEngine | kSpeculation | kSampling | kConstraint);
  s->add_option("-p,--prompt", a->prompt, "Prompt text");
  s->add_option("-f,--file", a->prompt_file, "Read the prompt from a file")->excludes("-p");
  s->add_option("-n,--n-predict", a->n_predict,
                "Number of tokens to generate (-1: until end of text or full context)");
  s->add_flag("--ignore-eos", a->ignore_eos, "Keep generating past the end-of-text token");
  s->add_flag("--no-display-prompt", a->no_display_prompt, "Do not echo the prompt to stdout");
  s->add_flag("-v,--verbose", a->verbose, "Print model and run details to stderr");
  c.selected = nullptr;
  s->callback([a, &c] { c.selected = [a] { return run(*a); }; });
}

}  // namespace brisk::cli
