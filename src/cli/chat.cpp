// brisk chat: an interactive conversation in the terminal. The model's chat template renders the
// whole conversation each turn; the engine's prefix cache keeps the KV of what earlier turns
// computed, so a turn only computes the tokens that are new since the last one.
#include <atomic>
#include <cstdio>
#include <iostream>
#include <memory>

#include "chat/prompt_format.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/generate.h"
#include "cli/options.h"
#include "core/error.h"
#include "core/thread_pool.h"

namespace brisk::cli {
namespace {

struct ChatArgs {
  Options opt;
  std::string system;
  int64_t n_predict = -1;
  bool verbose = false;
};

// One user message: a line, or several joined while a line ends with a backslash.
bool read_message(std::string& out) {
  out.clear();
  std::string line;
  while (std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\\') {
      line.pop_back();
      out += line + "\n";
      std::fputs(". ", stderr);
      continue;
    }
    out += line;
    return true;
  }
  return !out.empty();
}

int chat(ChatArgs& a) {
  double load_s = 0;
  a.opt.model.context = a.opt.engine.max_model_len;
  auto model = load_model(a.opt.model, &load_s);
  const PromptFormat fmt(*model->tokenizer, a.opt.chat_template_source());
  // Every reply follows it.
  const auto constraint = a.opt.output_constraint(fmt.chat_template().source());
  if (fmt.uses_fallback_template())
    std::fprintf(stderr,
                 "note: the model has no chat template; using ChatML (--chat-template "
                 "FILE to choose one)\n");
  const uint64_t seed = a.opt.resolve_seed(a.verbose);
  ThreadPool pool(a.opt.thread_count());
  // Each turn is a request for the whole conversation; the prefix cache keeps the blocks of what
  // earlier turns computed, so only the new tokens are processed.
  Engine engine(*model, pool, engine_config(a.opt.engine, *model));
  const int64_t n_ctx = engine.max_model_len();
  const auto compiled = constraint ? engine.compile(*constraint) : nullptr;

  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  if (!a.system.empty()) messages.push_back({{"role", "system"}, {"content", a.system}});
  std::fprintf(stderr,
               "brisk chat: %s, context %lld tokens. Type a message and press Enter; end a line "
               "with \\ to continue it. /reset starts over, /exit (or Ctrl-D) quits, Ctrl-C "
               "stops a reply.\n",
               model->file.path.c_str(), static_cast<long long>(n_ctx));
  catch_interrupts(true);
  std::string input;
  uint64_t turn = 0;
  while (true) {
    std::fputs("\n> ", stderr);
    std::fflush(stderr);
    g_interrupted = false;
    if (!read_message(input)) break;
    if (input == "/exit" || input == "/quit") break;
    if (input == "/reset") {
      messages = nlohmann::ordered_json::array();
      if (!a.system.empty()) messages.push_back({{"role", "system"}, {"content", a.system}});
      engine.clear_prefix_cache();
      std::fputs("(conversation cleared)\n", stderr);
      continue;
    }
    if (input.empty()) continue;
    messages.push_back({{"role", "user"}, {"content", input}});
    Request req;
    try {
      req.prompt = fmt.encode_chat(fmt.render_chat(messages, true));
      engine.check(req);  // the conversation still fits the context
    } catch (const RequestError& e) {
      messages.erase(messages.end() - 1);
      std::fprintf(stderr, "error: %s (/reset starts over; -c sets the context size)\n", e.what());
      continue;
    } catch (const Error& e) {
      messages.erase(messages.end() - 1);
      std::fprintf(stderr, "error: %s\n", e.what());
      continue;
    }
    req.sampling = a.opt.sampling;
    req.sampling.seed = seed + turn++;
    req.constraint = constraint;
    req.compiled_constraint = compiled;
    const auto room = n_ctx - static_cast<int64_t>(req.prompt.size());
    req.max_tokens = a.n_predict >= 0 ? std::min(room, a.n_predict) : room;
    std::string reply;
    Generation g;
    if (req.max_tokens > 0)
      g = generate(engine, std::move(req), [&](const std::string& s) {
        reply += s;
        std::fwrite(s.data(), 1, s.size(), stdout);
        std::fflush(stdout);
      });
    std::fputc('\n', stdout);
    std::fflush(stdout);
    messages.push_back({{"role", "assistant"}, {"content", reply}});
    const int64_t steps = std::max<int64_t>(g.generated_tokens - 1, 0);
    std::fprintf(stderr,
                 "[%s%lld prompt tokens: %lld reused from the cache, %lld processed in %.2f s | "
                 "%lld generated, %.2f tokens/s]\n",
                 g.interrupted ? "stopped | " : "", static_cast<long long>(g.prompt_tokens),
                 static_cast<long long>(g.cached_tokens),
                 static_cast<long long>(g.prompt_tokens - g.cached_tokens), g.prompt_seconds,
                 static_cast<long long>(g.generated_tokens),
                 g.generate_seconds > 0 ? steps / g.generate_seconds : 0.0);
  }
  catch_interrupts(false);
  std::fputc('\n', stderr);
  return 0;
}

}  // namespace

void register_chat(CLI::App& app, Commands& c) {
  auto a = std::make_shared<ChatArgs>();
  CLI::App* s = app.add_subcommand(
      "chat", "Chat with a model in the terminal, using its chat template (replies on stdout)");
  s->option_defaults()->always_capture_default();
  a->opt.engine.max_seqs = 1;  // the engine with one sequence
  add_options(*s, a->opt,
              kModel | kThreads | kChatTemplate | kEngine | kSpeculation | kSampling | kConstraint);
  s->add_option("--system", a->system, "System message that opens the conversation");
  s->add_option("-n,--n-predict", a->n_predict,
                "Most tokens per reply (-1: until the end of the turn or a full context)");
  s->add_flag("-v,--verbose", a->verbose, "Print run details to stderr");
  s->callback([a, &c] { c.selected = [a] { return chat(*a); }; });
}

}  // namespace brisk::cli
