// brisk serve: the OpenAI-compatible HTTP server on the batching engine.
// GCC 12 with the sanitizers reports Beast's parser (boost::optional) as maybe uninitialized
// where it is inlined: a false positive in Boost's headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <cstdio>
#include <filesystem>
#include <memory>

#include "chat/tool_family.h"
#include "cli/commands.h"
#include "cli/common.h"
#include "cli/options.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "ops/cpu.h"
#include "server/server.h"

namespace brisk::cli {
namespace {

struct ServeArgs {
  Options opt;
  server::ServerConfig server;
  std::string max_body = "8MiB";
  std::string tool_parser = "auto", reasoning_parser = "auto";
};

int serve(ServeArgs& a) {
  double load_s = 0;
  a.opt.model.context = a.opt.engine.max_model_len;
  auto m = load_model(a.opt.model, &load_s);
  const int threads = a.opt.thread_count();
  ThreadPool pool(threads);
  Engine engine(*m, pool, engine_config(a.opt.engine, *m));
  const PromptFormat fmt(*m->tokenizer, a.opt.chat_template_source());
  server::ServerConfig c = a.server;
  if (c.model_name.empty()) c.model_name = std::filesystem::path(m->file.path).stem().string();
  c.http.max_body_bytes = parse_size(a.max_body, "--max-body-size");
  if (a.tool_parser != "auto") c.tool_parser = ToolFamily::named(a.tool_parser);
  if (a.reasoning_parser != "auto") c.reasoning_parser = reasoning_family_named(a.reasoning_parser);
  server::Server srv(engine, fmt, c);
  std::fprintf(stderr, "model: %s (%s), %d threads, kernels: %s, load %.0f ms%s\n",
               m->file.path.c_str(), c.model_name.c_str(), threads, isa_name(best_isa()),
               load_s * 1e3, repack_summary(*m).c_str());
  std::fprintf(stderr, "%s\n", describe_kv(engine).c_str());
  if (fmt.uses_fallback_template())
    std::fprintf(stderr, "note: the model has no chat template; chat requests use ChatML\n");
  const ReplyFormat reply_format = srv.reply_format();
  std::fprintf(stderr, "tool calls: %s, reasoning: %s\n",
               std::string(reply_format.tools->name()).c_str(),
               reasoning_family_name(reply_format.reasoning));
  std::fprintf(stderr, "listening on http://%s:%u (Ctrl-C or SIGTERM stops)\n", c.host.c_str(),
               static_cast<unsigned>(srv.port()));
  std::fflush(stderr);
  srv.run();
  std::fprintf(stderr, "stopped\n");
  return 0;
}

}  // namespace

void register_serve(CLI::App& app, Commands& c) {
  auto a = std::make_shared<ServeArgs>();
  CLI::App* s = app.add_subcommand(
      "serve",
      "Serve the model over HTTP with OpenAI's API (/v1/completions, /v1/chat/completions)");
  s->option_defaults()->always_capture_default();
  add_options(*s, a->opt, kModel | kThreads | kChatTemplate);
  auto& sc = a->server;
  s->add_option("--host", sc.host, "Address to listen on (0.0.0.0: every interface)");
  s->add_option("--port", sc.port, "Port to listen on (0: any free port, printed at start)");
  s->add_option("--api-key", sc.api_key,
                "Require 'Authorization: Bearer KEY' on every API route (/health and /metrics "
                "stay open)");
  s->add_option("--served-model-name", sc.model_name,
                "Model name clients give and /v1/models lists (default: the file's name)");
  s->add_option("--max-queue", sc.max_queue,
                "Requests that may wait beyond --max-seqs running; more are refused with 429")
      ->check(CLI::Range(0, 1 << 20));
  s->add_option("--timeout", sc.request_timeout_seconds,
                "Longest a request may run, in seconds; then it is ended (504)")
      ->check(CLI::Range(0.001, 1e7));
  s->add_option("--shutdown-timeout", sc.shutdown_grace_seconds,
                "On SIGTERM or Ctrl-C, seconds running requests get to finish before they are "
                "ended")
      ->check(CLI::Range(0.0, 1e6));
  s->add_option("--max-body-size", a->max_body, "Largest request body (413 beyond it)");
  s->add_option("--read-timeout", sc.http.read_timeout_seconds,
                "Seconds a client has to send a whole request (headers and body)")
      ->check(CLI::Range(0.001, 1e6));
  s->add_option("--max-connections", sc.http.max_connections, "Open connections at most")
      ->check(CLI::Range(1, 1 << 20));
  std::vector<std::string> tools = ToolFamily::names();
  tools.insert(tools.begin(), "auto");
  s->add_option("--tool-call-parser", a->tool_parser,
                "How tool calls are written and read back: auto (from the chat template), " +
                    fmt::format("{}", fmt::join(tools.begin() + 1, tools.end(), ", ")))
      ->check(CLI::IsMember(tools));
  s->add_option("--reasoning-parser", a->reasoning_parser,
                "Where reasoning goes to reasoning_content: auto (from the chat template), think "
                "(<think>...</think>), command_r7b, harmony (gpt-oss's analysis channel), none")
      ->check(CLI::IsMember({"auto", "think", "command_r7b", "harmony", "none"}));
  add_options(*s, a->opt, kEngine | kConcurrency | kSpeculation);
  s->callback([a, &c] { c.selected = [a] { return serve(*a); }; });
}

}  // namespace brisk::cli
