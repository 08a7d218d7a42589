// brisk's OpenAI-compatible server: the HTTP layer on one I/O thread, the engine stepping on its
// own thread. A request is checked and tokenized on the I/O thread and submitted to the engine;
// the engine's callbacks post each new token back to the I/O thread, which streams it or keeps it
// for the whole response.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

#include "chat/prompt_format.h"
#include "engine/engine.h"
#include "server/http.h"
#include "server/metrics.h"
#include "server/openai.h"

namespace brisk::server {

struct ServerConfig {
  std::string host = "127.0.0.1";
  uint16_t port = 8080;
  std::string api_key;                   // "": no authentication
  std::string model_name;                // as /v1/models lists it
  int max_queue = 1024;                  // requests waiting beyond those running; then 429
  double request_timeout_seconds = 600;  // a request running longer is ended
  double shutdown_grace_seconds = 10;    // running requests may finish this long on SIGTERM
  HttpLimits http;
  // How replies are split into reasoning, content and tool calls: the chat template's family
  // unless given (--tool-call-parser, --reasoning-parser).
  const ToolFamily* tool_parser = nullptr;
  std::optional<ReasoningFamily> reasoning_parser;
};

class Server {
 public:
  Server(Engine& engine, const PromptFormat& fmt, const ServerConfig& c);
  ~Server();
  // Serves until SIGINT/SIGTERM (or shutdown()) and the grace period are over.
  void run();
  // Starts a graceful shutdown from any thread.
  void shutdown();
  uint16_t port() const;
  ReplyFormat reply_format() const { return reply_format_; }

  struct Job;  // one API request in flight

 private:
  struct Route;
  static const Route* find_route(const std::string& path);
  void handle(std::shared_ptr<Exchange> ex);
  void route(const std::shared_ptr<Exchange>& ex);
  // The routes' handlers (target: the path without its query).
  void health(const std::shared_ptr<Exchange>& ex, const std::string& target);
  void version(const std::shared_ptr<Exchange>& ex, const std::string& target);
  void metrics(const std::shared_ptr<Exchange>& ex, const std::string& target);
  void props(const std::shared_ptr<Exchange>& ex, const std::string& target);
  void models(const std::shared_ptr<Exchange>& ex, const std::string& target);
  void model(const std::shared_ptr<Exchange>& ex, const std::string& target);
  void completions(const std::shared_ptr<Exchange>& ex, const std::string& target);
  void chat_completions(const std::shared_ptr<Exchange>& ex, const std::string& target);
  void tokenize(const std::shared_ptr<Exchange>& ex, const std::string& target);
  void detokenize(const std::shared_ptr<Exchange>& ex, const std::string& target);
  void generate(const std::shared_ptr<Exchange>& ex, bool chat);
  void answer_off_io(const std::shared_ptr<Exchange>& ex, std::function<json()> work);
  void prepared(const std::shared_ptr<Exchange>& ex, std::shared_ptr<ApiRequest> request,
                std::optional<ApiError> err);
  void start_job(const std::shared_ptr<Exchange>& ex, ApiRequest request);
  void engine_loop();
  void begin_shutdown();
  void maybe_finish_shutdown();
  EngineStats stats() const;

  friend struct Job;
  Engine& engine_;
  const PromptFormat& fmt_;
  ServerConfig config_;
  ReplyFormat reply_format_;
  boost::asio::io_context io_;
  std::unique_ptr<HttpServer> http_;
  boost::asio::signal_set signals_;
  boost::asio::steady_timer grace_timer_;
  Metrics metrics_;
  // Requests in flight, owned here: the engine's callbacks hold only weak references, so a job
  // is always destroyed on the I/O thread.
  std::unordered_map<Job*, std::shared_ptr<Job>> jobs_;
  bool draining_ = false, aborting_ = false;
  // Requests are parsed on one thread and constraints new to the engine compiled on another, off
  // the I/O thread (a schema may take up to its compile budget, and a plain request does not
  // wait behind it); requests being prepared count as in flight.
  boost::asio::thread_pool parse_pool_{1};
  boost::asio::thread_pool compile_pool_{1};
  int preparing_ = 0;

  std::thread engine_thread_;
  std::atomic<bool> stop_engine_{false};
  mutable std::mutex stats_mu_;
  EngineStats stats_;
};

}  // namespace brisk::server
