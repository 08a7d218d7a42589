// GCC 12 with the sanitizers reports Beast's parser (boost::optional) as maybe uninitialized
// where it is inlined: a false positive in Boost's headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "server/server.h"
#include "core/clock.h"

#include <boost/asio/post.hpp>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <optional>

#include "core/error.h"
#include "server/job.h"
#include "server/openai.h"
#include "server/props.h"
#include "server/response_shapes.h"
#include "server/send.h"
#include "server/tools.h"
#include "server/web_assets.h"

namespace brisk::server {

namespace net = boost::asio;

namespace {

// Compares without an early exit, so response timing does not reveal how much of a key matched.
bool same_secret(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return diff == 0;
}

// A path segment's %XX escapes decoded (a model id "org/name" arrives as "org%2Fname" from
// clients that escape it); a malformed escape stays as it is.
std::string percent_decode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(s[i + 2]))) {
      out += static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

constexpr std::string_view kModelPrefix = "/v1/models/";

}  // namespace

Server::Server(Engine& engine, const PromptFormat& fmt, const ServerConfig& c)
    : engine_(engine), fmt_(fmt), config_(c), signals_(io_, SIGINT, SIGTERM), grace_timer_(io_) {
  http_ = std::make_unique<HttpServer>(io_, config_.host, config_.port, config_.http,
                                       [this](std::shared_ptr<Exchange> ex) { handle(ex); });
  stats_ = engine_.stats();
  reply_format_ = detect_reply_format(fmt_.chat_template().source());
  if (config_.tool_parser) reply_format_.tools = config_.tool_parser;
  if (config_.reasoning_parser) reply_format_.reasoning = *config_.reasoning_parser;
}

Server::~Server() {
  stop_engine_ = true;
  if (engine_thread_.joinable()) engine_thread_.join();
}

uint16_t Server::port() const {
  return http_->port();
}

void Server::run() {
  signals_.async_wait([this](const boost::system::error_code& ec, int) {
    if (ec) return;
    // A second signal ends the running requests at once. Armed first: begin_shutdown() cancels
    // the wait when nothing is running.
    signals_.async_wait([this](const boost::system::error_code& ec2, int) {
      if (ec2) return;
      grace_timer_.cancel();
      aborting_ = true;
      for (auto& [j, owned] : jobs_) j->shut_down = true, j->abort();
    });
    begin_shutdown();
  });
  engine_thread_ = std::thread([this] { engine_loop(); });
  io_.run();
  stop_engine_ = true;
  engine_thread_.join();
}

void Server::shutdown() {
  net::post(io_, [this] { begin_shutdown(); });
}

void Server::engine_loop() {
  bool was_idle = true;
  while (!stop_engine_) {
    const bool worked = engine_.step();
    if (worked || !was_idle) {
      // Whenever the engine goes idle its block accounting must be exact.
      if (!worked) engine_.check();
      std::lock_guard lk(stats_mu_);
      stats_ = engine_.stats();
    }
    was_idle = !worked;
    if (!worked) engine_.wait_for_work(0.1);
  }
}

EngineStats Server::stats() const {
  std::lock_guard lk(stats_mu_);
  return stats_;
}

void Server::begin_shutdown() {
  if (draining_) return;
  draining_ = true;
  std::fprintf(stderr, "shutting down: %zu requests running, up to %.0f s to finish\n",
               jobs_.size(), config_.shutdown_grace_seconds);
  http_->stop_accepting();
  grace_timer_.expires_after(
      std::chrono::milliseconds(static_cast<int64_t>(config_.shutdown_grace_seconds * 1000)));
  grace_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    aborting_ = true;
    for (auto& [j, owned] : jobs_) j->shut_down = true, j->abort();
  });
  maybe_finish_shutdown();
}

void Server::maybe_finish_shutdown() {
  if (!draining_ || !jobs_.empty() || preparing_ > 0) return;
  grace_timer_.cancel();
  signals_.cancel();
  // Responses still being written get a moment; then every connection is closed and run() returns.
  http_->stop_accepting();
  if (http_->n_open_connections() == 0) return;
  grace_timer_.expires_after(std::chrono::seconds(2));
  grace_timer_.async_wait([this](const boost::system::error_code&) { http_->close_all(); });
}

void Server::handle(std::shared_ptr<Exchange> ex) {
  try {
    route(ex);
  } catch (const ApiError& e) {
    send_error(*ex, e);
  } catch (const Error& e) {
    send_error(*ex, ApiError(400, e.what()));
  } catch (const std::exception& e) {
    send_error(*ex, ApiError(500, std::string("internal error: ") + e.what()));
  }
}

// The one route table: a path, its method, whether it is open without the API key, whether it
// starts work (refused while the server drains), and its handler.
struct Server::Route {
  const char* path;
  http::verb method;
  bool open, work;
  void (Server::*handle)(const std::shared_ptr<Exchange>& ex, const std::string& target);
};

const Server::Route* Server::find_route(const std::string& path) {
  static const Route kRoutes[] = {
      {"/v1/completions", http::verb::post, false, true, &Server::completions},
      {"/v1/chat/completions", http::verb::post, false, true, &Server::chat_completions},
      {"/v1/models", http::verb::get, false, false, &Server::models},
      {"/v1/models/{id}", http::verb::get, false, false, &Server::model},
      {"/tokenize", http::verb::post, false, true, &Server::tokenize},
      {"/detokenize", http::verb::post, false, true, &Server::detokenize},
      {"/health", http::verb::get, true, false, &Server::health},
      {"/metrics", http::verb::get, true, false, &Server::metrics},
      {"/version", http::verb::get, true, false, &Server::version},
      {"/props", http::verb::get, false, false, &Server::props},
  };
  for (const Route& r : kRoutes)
    if (path == r.path) return &r;
  return nullptr;
}

void Server::route(const std::shared_ptr<Exchange>& ex) {
  const HttpRequest& req = ex->request();
  std::string target(req.target());
  if (auto q = target.find('?'); q != std::string::npos) target.resize(q);
  // The chat page, the dashboard and their files are open: the page asks for the API key itself.
  if (const WebAsset* page = find_web_asset(target)) {
    if (req.method() == http::verb::get) return send_web_asset(*ex, *page);
    return send_error(
        *ex,
        ApiError(405, fmt::format("{} takes GET requests", target), "", "", "method_not_allowed"),
        {{"Allow", "GET"}});
  }
  // One route for every model id (ids such as "org/name" hold slashes).
  const bool model_route = target.size() > kModelPrefix.size() && target.starts_with(kModelPrefix);
  const Route* route = find_route(model_route ? "/v1/models/{id}" : target);
  if (!route)
    throw ApiError(404, fmt::format("no route {} {}", std::string(req.method_string()), target), "",
                   "", "not_found");
  if (req.method() != route->method) {
    const std::string allow = route->method == http::verb::get ? "GET" : "POST";
    return send_error(*ex,
                      ApiError(405, fmt::format("{} takes {} requests", target, allow), "", "",
                               "method_not_allowed"),
                      {{"Allow", allow}});
  }
  if (!route->open && !config_.api_key.empty()) {
    const std::string auth(req[http::field::authorization]);
    if (!same_secret(auth, "Bearer " + config_.api_key))
      throw ApiError(401, "Incorrect API key provided.", "", "invalid_request_error",
                     "invalid_api_key");
  }
  if (route->work && draining_) throw ApiError(503, "the server is shutting down");
  (this->*route->handle)(ex, target);
}

void Server::health(const std::shared_ptr<Exchange>& ex, const std::string&) {
  ex->respond(http::status::ok, "", "");
}

void Server::version(const std::shared_ptr<Exchange>& ex, const std::string&) {
  send_json(*ex, json{{"version", BRISK_VERSION}});
}

void Server::metrics(const std::shared_ptr<Exchange>& ex, const std::string&) {
  ex->respond(http::status::ok, "text/plain; version=0.0.4; charset=utf-8",
              metrics_.render(config_.model_name, stats()));
}

void Server::props(const std::shared_ptr<Exchange>& ex, const std::string&) {
  send_json(*ex,
            props_body(engine_, config_.model_name, reply_format_, fmt_.uses_fallback_template()));
}

void Server::models(const std::shared_ptr<Exchange>& ex, const std::string&) {
  send_json(*ex, models_body(config_.model_name, engine_.max_model_len()));
}

void Server::model(const std::shared_ptr<Exchange>& ex, const std::string& target) {
  const std::string id = percent_decode(target.substr(kModelPrefix.size()));
  if (id != config_.model_name)
    throw ApiError(404, fmt::format("The model `{}` does not exist.", id), "model",
                   "invalid_request_error", "model_not_found");
  send_json(*ex, model_object(config_.model_name, engine_.max_model_len()));
}

void Server::completions(const std::shared_ptr<Exchange>& ex, const std::string&) {
  generate(ex, false);
}

void Server::chat_completions(const std::shared_ptr<Exchange>& ex, const std::string&) {
  generate(ex, true);
}

// A request is parsed (its chat template rendered, its prompt tokenized) on the parse thread and
// its constraint compiled (or found compiled) on the compile thread, so that the I/O thread
// answers others meanwhile (/health among them) and a schema's errors are a 400 naming its field;
// the request carries the compiled grammar to the engine, which never compiles it again.
void Server::generate(const std::shared_ptr<Exchange>& ex, bool chat) {
  if (jobs_.size() + static_cast<size_t>(preparing_) >=
      static_cast<size_t>(engine_.config().max_seqs + config_.max_queue))
    return send_error(
        *ex,
        ApiError(429, "the server is busy: too many requests are waiting; retry later", "", "",
                 "rate_limit_exceeded"),
        {{"Retry-After", "1"}});
  ++preparing_;
  net::post(parse_pool_, [this, ex, chat] {
    auto s = std::make_shared<ApiRequest>();
    try {
      const json body = parse_body(ex->request().body());
      *s = chat ? parse_chat_request(body, fmt_, engine_.bounds(), reply_format_)
                : parse_completion_request(body, fmt_, engine_.bounds());
      if (!s->model.empty() && s->model != config_.model_name)
        throw ApiError(404, fmt::format("The model `{}` does not exist.", s->model), "model", "",
                       "model_not_found");
    } catch (const ApiError& e) {
      return prepared(ex, nullptr, e);
    } catch (const std::exception& e) {
      return prepared(ex, nullptr, ApiError(500, std::string("internal error: ") + e.what()));
    }
    if (!s->base.constraint) return prepared(ex, s, std::nullopt);
    net::post(compile_pool_, [this, ex, s] {
      try {
        s->base.compiled_constraint = engine_.compile(*s->base.constraint);
      } catch (const Error& e) {
        return prepared(ex, nullptr, ApiError(400, e.what(), s->constraint_param));
      } catch (const std::exception& e) {
        return prepared(ex, nullptr, ApiError(500, std::string("internal error: ") + e.what()));
      }
      prepared(ex, s, std::nullopt);
    });
  });
}

// Back on the I/O thread: the request starts, or its error is the reply.
void Server::prepared(const std::shared_ptr<Exchange>& ex, std::shared_ptr<ApiRequest> request,
                      std::optional<ApiError> err) {
  net::post(io_, [this, ex, request = std::move(request), err = std::move(err)] {
    --preparing_;
    if (err) {
      send_error(*ex, *err);
    } else if (draining_) {
      send_error(*ex, ApiError(503, "the server is shutting down"));
    } else {
      try {
        start_job(ex, std::move(*request));
      } catch (const ApiError& e) {
        send_error(*ex, e);
      } catch (const std::exception& e) {
        send_error(*ex, ApiError(500, std::string("internal error: ") + e.what()));
      }
    }
    maybe_finish_shutdown();
  });
}

void Server::start_job(const std::shared_ptr<Exchange>& ex, ApiRequest request) {
  auto job = std::make_shared<Job>(*this, ex, std::move(request));
  jobs_.emplace(job.get(), job);
  // The job keeps itself alive through the engine callbacks and posted events.
  try {
    job->start();
  } catch (...) {
    job->finished = true;
    job->abort();
    jobs_.erase(job.get());
    throw;
  }
}

void Server::tokenize(const std::shared_ptr<Exchange>& ex, const std::string&) {
  answer_off_io(ex, [this, ex] {
    const std::vector<int32_t> ids =
        parse_tokenize_request(parse_body(ex->request().body()), fmt_, *reply_format_.tools);
    return json{{"count", ids.size()},
                {"max_model_len", engine_.max_model_len()},
                {"tokens", ids},
                {"token_strs", nullptr}};
  });
}

void Server::detokenize(const std::shared_ptr<Exchange>& ex, const std::string&) {
  answer_off_io(ex, [this, ex] {
    const Tokenizer& tok = fmt_.tokenizer();
    StreamDecoder dec(tok);
    std::string text;
    for (int32_t t : parse_detokenize_request(parse_body(ex->request().body()),
                                              static_cast<int64_t>(tok.vocab().size())))
      text += dec.push(t);
    text += dec.flush();
    return json{{"prompt", text}};
  });
}

// Work that renders or tokenizes runs on the parse thread; the reply is sent from the I/O thread.
void Server::answer_off_io(const std::shared_ptr<Exchange>& ex, std::function<json()> work) {
  ++preparing_;
  net::post(parse_pool_, [this, ex, work = std::move(work)] {
    std::optional<json> reply;
    std::optional<ApiError> err;
    try {
      reply = work();
    } catch (const ApiError& e) {
      err = e;
    } catch (const std::exception& e) {
      err.emplace(500, std::string("internal error: ") + e.what());
    }
    net::post(io_, [this, ex, reply = std::move(reply), err = std::move(err)] {
      --preparing_;
      if (err)
        send_error(*ex, *err);
      else
        send_json(*ex, *reply);
      maybe_finish_shutdown();
    });
  });
}

}  // namespace brisk::server
