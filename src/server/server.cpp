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
#include "server/openai.h"
#include "server/props.h"
#include "server/response_shapes.h"
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

void send_error(Exchange& ex, const ApiError& e, const Headers& extra = {}) {
  ex.respond(static_cast<http::status>(e.status), "application/json", error_body(e), extra);
}

void send_json(Exchange& ex, const json& j) {
  ex.respond(http::status::ok, "application/json", dump(j));
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

}  // namespace

// One completion or chat request in flight: its engine requests (one per prompt), what each of
// its choices has produced, and how it is answered (a stream of chunks, or one body at the end).
struct Server::Job : std::enable_shared_from_this<Server::Job> {
  struct Choice {
    std::string text;
    std::vector<int32_t> tokens;
    std::vector<TokenLogprobs> logprobs;
    FinishReason finish = FinishReason::None;
    double last_token = 0;
    int64_t text_bytes = 0;              // for the completions logprobs' text offsets
    std::unique_ptr<ReplyStream> reply;  // a streamed chat reply that is parsed
    std::vector<std::string> call_ids;
  };
  struct Prompt {
    RequestId id = 0;
    int64_t n_prompt = 0, cached = 0;
    double first_token = 0;
    int open = 0;
    std::string echo;
  };

  Job(Server& s, std::shared_ptr<Exchange> e, ApiRequest g)
      : srv(s), ex(std::move(e)), request(std::move(g)), timer(s.io_) {}

  Server& srv;
  std::shared_ptr<Exchange> ex;
  ApiRequest request;
  ResponseHead head;
  double arrival = 0;
  std::vector<Prompt> prompts;
  std::vector<Choice> choices;
  int open = 0;
  bool gone = false, timed_out = false, shut_down = false, finished = false;
  net::steady_timer timer;

  bool chat() const { return request.api == Api::Chat; }
  // Whether the chat reply is split into reasoning, content and tool calls.
  bool parsed() const {
    return chat() &&
           (request.tool_family != ToolFamily::None || request.reasoning != ReasoningFamily::None);
  }
  ReplyParser parser() const {
    return ReplyParser(request.tool_family, request.reasoning, request.in_reasoning, request.tools);
  }
  int n() const { return request.base.n; }

  json usage() const {
    int64_t p = 0, c = 0, cached = 0;
    for (const auto& pr : prompts) p += pr.n_prompt, cached += pr.cached;
    for (const auto& ch : choices) c += static_cast<int64_t>(ch.tokens.size());
    return server::usage(p, c, cached);
  }
  // llama-server's timings: the prompt until the first token, then the rest of the tokens.
  json timings() const {
    double first = 0, last = 0;
    int64_t p = 0, c = 0;
    for (const auto& pr : prompts)
      if (pr.first_token > 0) first = first == 0 ? pr.first_token : std::min(first, pr.first_token);
    for (const auto& pr : prompts) p += pr.n_prompt;
    for (const auto& ch : choices) last = std::max(last, ch.last_token), c += std::ssize(ch.tokens);
    return server::timings(p, first > 0 ? first - arrival : 0, c, first > 0 ? last - first : 0);
  }
  void send_event(const json& j) { ex->send("data: " + dump(j) + "\n\n"); }
  void send_chunk(int index, const std::string& text, const json& logprobs, const char* finish) {
    send_event(text_chunk(head, index, text, logprobs, finish, request.include_usage));
  }

  void start() {
    head = new_response_head(request.api, srv.c_.model_name);
    arrival = now_seconds();
    const int np = static_cast<int>(request.prompts.size());
    prompts.resize(static_cast<size_t>(np));
    choices.resize(static_cast<size_t>(np * n()));
    if (request.stream && parsed())
      for (Choice& ch : choices) ch.reply = std::make_unique<ReplyStream>(parser());
    open = np * n();
    for (int p = 0; p < np; ++p) {
      prompts[p].open = n();
      if (request.echo) {
        StreamDecoder dec(srv.fmt_.tokenizer());
        for (int32_t t : request.prompts[p]) prompts[p].echo += dec.push(t);
        prompts[p].echo += dec.flush();
      }
    }
    auto self = shared_from_this();
    // Submitted before anything is sent: a rejection (thrown) is answered as an error. No
    // callback can run before this returns: they are posted to this thread.
    for (int p = 0; p < np; ++p) {
      Request r = request.base;
      r.prompt = request.prompts[static_cast<size_t>(p)];
      net::io_context& io = srv.io_;
      prompts[static_cast<size_t>(p)].id =
          srv.engine_.submit(std::move(r), [weak = weak_from_this(), p, &io](const Output& o) {
            Output copy = o;
            std::shared_ptr<TokenLogprobs> lp;
            if (o.logprobs) lp = std::make_shared<TokenLogprobs>(*o.logprobs);
            copy.logprobs = nullptr;
            net::post(io, [weak, p, copy = std::move(copy), lp] {
              if (auto job = weak.lock()) job->on_output(p, copy, lp);
            });
          });
    }
    if (request.stream) {
      ex->begin_stream("text/event-stream");
      for (int i = 0; i < np * n(); ++i) {
        if (chat())
          send_event(role_chunk(head, i, request.include_usage));
        else if (request.echo)
          send_chunk(i, prompts[static_cast<size_t>(i / n())].echo, nullptr, nullptr);
      }
    }
    ex->on_disconnect([self] {
      self->gone = true;
      self->abort();
    });
    timer.expires_after(
        std::chrono::milliseconds(static_cast<int64_t>(srv.c_.request_timeout_seconds * 1000)));
    timer.async_wait([self](const boost::system::error_code& ec) {
      if (ec || self->finished) return;
      self->timed_out = true;
      self->abort();
    });
  }

  void abort() {
    for (const auto& p : prompts)
      if (p.id != 0 && p.open > 0) srv.engine_.abort(p.id);
  }

  void on_output(int p, const Output& o, const std::shared_ptr<TokenLogprobs>& lp) {
    if (finished) return;
    Prompt& pr = prompts[static_cast<size_t>(p)];
    const int index = p * n() + o.index;
    Choice& ch = choices[static_cast<size_t>(index)];
    const double t = now_seconds();
    Metrics& m = srv.metrics_;
    pr.n_prompt = o.prompt_tokens;
    pr.cached = o.cached_tokens;
    json lps = nullptr;
    if (o.token >= 0) {
      ++m.generation_tokens;
      if (pr.first_token == 0) {
        pr.first_token = t;
        m.ttft.observe(t - arrival);
        m.queue.observe(std::max(0.0, o.scheduled_at - arrival));
        m.prompt_tokens += static_cast<uint64_t>(o.prompt_tokens);
        m.prompt_len.observe(static_cast<double>(o.prompt_tokens));
      }
      if (ch.last_token > 0) m.itl.observe(t - ch.last_token);
      ch.last_token = t;
      ch.tokens.push_back(o.token);
      if (lp) {
        ch.logprobs.push_back(*lp);
        if (request.stream) {
          const Tokenizer& tok = srv.fmt_.tokenizer();
          lps = chat() ? chat_logprobs(tok, {o.token}, {*lp})
                       : completion_logprobs(tok, {o.token}, {*lp}, ch.text_bytes);
          ch.text_bytes += static_cast<int64_t>(tok.token_bytes(o.token, true).size());
        }
      }
    }
    ch.text += o.text;
    const bool last = o.finish != FinishReason::None;
    if (ch.reply) {
      stream_reply(index, ch, o, lps);
    } else if (request.stream && !gone) {
      const bool aborted = o.finish == FinishReason::Abort;
      if (!o.text.empty() || !lps.is_null() || (last && !aborted))
        send_chunk(index, o.text, lps, last && !aborted ? finish_reason(o.finish) : nullptr);
    }
    if (!last) return;
    ch.finish = o.finish;
    ++m.finished[o.finish == FinishReason::Abort ? "abort" : finish_reason(o.finish)];
    m.generation_len.observe(static_cast<double>(ch.tokens.size()));
    --open;
    if (--pr.open == 0) m.e2e.observe(t - arrival);
    if (open == 0) complete();
  }

  // A parsed chat reply's new text as OpenAI streams it: what became final since the last piece.
  void stream_reply(int index, Choice& ch, const Output& o, const json& lps) {
    const bool last = o.finish != FinishReason::None;
    ReplyDelta d = ch.reply->push(o.text);
    if (last) {
      ReplyDelta rest = ch.reply->finish();
      d.reasoning += rest.reasoning;
      d.content += rest.content;
      for (auto& c : rest.calls) {
        if (!c.first && !d.calls.empty() && d.calls.back().index == c.index)
          d.calls.back().arguments += c.arguments;
        else
          d.calls.push_back(std::move(c));
      }
    }
    for (const auto& c : d.calls)
      if (c.first) ch.call_ids.push_back(new_call_id(request.tool_family));
    if (gone) return;
    const bool aborted = o.finish == FinishReason::Abort;
    const char* fin =
        last && !aborted ? reply_finish_reason(o.finish, !ch.reply->sent().calls.empty()) : nullptr;
    for (json& c : reply_chunks(head, index, d, ch.call_ids, lps, fin, request.include_usage)) {
      if (request.legacy_functions)
        for (json& choice : c["choices"]) to_legacy_function_call(choice);
      send_event(c);
    }
  }

  void complete() {
    finished = true;
    timer.cancel();
    bool aborted = false;
    for (const auto& ch : choices) aborted |= ch.finish == FinishReason::Abort;
    if (!gone) {
      if (aborted && (timed_out || shut_down)) {
        const ApiError e = timed_out ? ApiError(504, fmt::format("the request took longer than the "
                                                                 "server's limit of {} s",
                                                                 srv.c_.request_timeout_seconds))
                                     : ApiError(503, "the server is shutting down");
        if (request.stream) {
          send_event(json::parse(error_body(e)));
          ex->send("data: [DONE]\n\n");
          ex->end_stream();
        } else {
          send_error(*ex, e);
        }
      } else if (request.stream) {
        if (request.include_usage) {
          json c = usage_chunk(head, usage());
          c["timings"] = timings();
          send_event(c);
        }
        ex->send("data: [DONE]\n\n");
        ex->end_stream();
      } else {
        respond();
      }
    }
    Server& server = srv;
    const auto keep = shared_from_this();  // erasing may drop the last reference
    server.jobs_.erase(this);
    server.maybe_finish_shutdown();
  }

  void respond() {
    const Tokenizer& tok = srv.fmt_.tokenizer();
    const bool lp = request.base.logprobs >= 0;
    json list = json::array();
    for (size_t i = 0; i < choices.size(); ++i) {
      const Choice& ch = choices[i];
      const json lps = lp ? chat_logprobs(tok, ch.tokens, ch.logprobs) : json(nullptr);
      if (parsed()) {
        const Reply r = parser().parse(ch.text, false);
        std::vector<std::string> ids;
        for (size_t k = 0; k < r.calls.size(); ++k) ids.push_back(new_call_id(request.tool_family));
        list.push_back(
            reply_choice(i, r, ids, lps, reply_finish_reason(ch.finish, !r.calls.empty())));
        if (request.legacy_functions) to_legacy_function_call(list.back());
      } else if (chat()) {
        list.push_back(choice_body(head, i, ch.text, lps, ch.finish));
      } else {
        const std::string& echo = prompts[i / static_cast<size_t>(n())].echo;
        list.push_back(choice_body(
            head, i, echo + ch.text,
            lp ? completion_logprobs(tok, ch.tokens, ch.logprobs, 0) : json(nullptr), ch.finish));
      }
    }
    json body = response_body(head, std::move(list), usage());
    body["timings"] = timings();
    send_json(*ex, body);
  }
};

Server::Server(Engine& engine, const PromptFormat& fmt, const ServerConfig& c)
    : engine_(engine), fmt_(fmt), c_(c), signals_(io_, SIGINT, SIGTERM), grace_timer_(io_) {
  http_ = std::make_unique<HttpServer>(io_, c_.host, c_.port, c_.http,
                                       [this](std::shared_ptr<Exchange> ex) { handle(ex); });
  stats_ = engine_.stats();
  reply_format_ = detect_reply_format(fmt_.chat_template().source());
  if (c_.tool_parser) reply_format_.tools = *c_.tool_parser;
  if (c_.reasoning_parser) reply_format_.reasoning = *c_.reasoning_parser;
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
               jobs_.size(), c_.shutdown_grace_seconds);
  http_->stop_accepting();
  grace_timer_.expires_after(
      std::chrono::milliseconds(static_cast<int64_t>(c_.shutdown_grace_seconds * 1000)));
  grace_timer_.async_wait([this](const boost::system::error_code& ec) {
    if (ec) return;
    aborting_ = true;
    for (auto& [j, owned] : jobs_) j->shut_down = true, j->abort();
  });
  maybe_finish_shutdown();
}

void Server::maybe_finish_shutdown() {
  if (!draining_ || !jobs_.empty() || compiling_ > 0) return;
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

void Server::route(const std::shared_ptr<Exchange>& ex) {
  const HttpRequest& req = ex->request();
  std::string target(req.target());
  if (auto q = target.find('?'); q != std::string::npos) target.resize(q);
  struct Route {
    const char* path;
    http::verb method;
    bool open;  // reachable without the API key
  };
  static const Route kRoutes[] = {
      {"/v1/completions", http::verb::post, false},
      {"/v1/chat/completions", http::verb::post, false},
      {"/v1/models", http::verb::get, false},
      {"/v1/models/{id}", http::verb::get, false},
      {"/tokenize", http::verb::post, false},
      {"/detokenize", http::verb::post, false},
      {"/health", http::verb::get, true},
      {"/metrics", http::verb::get, true},
      {"/version", http::verb::get, true},
      {"/props", http::verb::get, false},
  };
  // The chat page, the dashboard and their files are open: the page asks for the API key itself.
  if (const WebAsset* page = find_web_asset(target)) {
    if (req.method() == http::verb::get) return send_web_asset(*ex, *page);
    return send_error(
        *ex,
        ApiError(405, fmt::format("{} takes GET requests", target), "", "", "method_not_allowed"),
        {{"Allow", "GET"}});
  }
  // One route for every model id (ids such as "org/name" hold slashes).
  const std::string model_prefix = "/v1/models/";
  const bool model_route = target.size() > model_prefix.size() && target.starts_with(model_prefix);
  const std::string path = model_route ? "/v1/models/{id}" : target;
  const Route* route = nullptr;
  for (const auto& r : kRoutes)
    if (path == r.path) route = &r;
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
  if (!route->open && !c_.api_key.empty()) {
    const std::string auth(req[http::field::authorization]);
    if (!same_secret(auth, "Bearer " + c_.api_key))
      throw ApiError(401, "Incorrect API key provided.", "", "invalid_request_error",
                     "invalid_api_key");
  }
  if (target == "/health") return ex->respond(http::status::ok, "", "");
  if (target == "/version") return send_json(*ex, json{{"version", BRISK_VERSION}});
  if (target == "/metrics")
    return ex->respond(http::status::ok, "text/plain; version=0.0.4; charset=utf-8",
                       metrics_.render(c_.model_name, stats()));
  if (target == "/props")
    return send_json(
        *ex, props_body(engine_, c_.model_name, reply_format_, fmt_.uses_fallback_template()));
  if (target == "/v1/models")
    return send_json(*ex, models_body(c_.model_name, engine_.max_model_len()));
  if (model_route) {
    const std::string id = percent_decode(target.substr(model_prefix.size()));
    if (id != c_.model_name)
      throw ApiError(404, fmt::format("The model `{}` does not exist.", id), "model",
                     "invalid_request_error", "model_not_found");
    return send_json(*ex, model_object(c_.model_name, engine_.max_model_len()));
  }
  if (draining_) throw ApiError(503, "the server is shutting down");
  if (target == "/tokenize") return tokenize(ex);
  if (target == "/detokenize") return detokenize(ex);
  generate(ex, target == "/v1/chat/completions");
}

void Server::generate(const std::shared_ptr<Exchange>& ex, bool chat) {
  const json body = parse_body(ex->request().body());
  ApiRequest request = chat ? parse_chat_request(body, fmt_, engine_.max_model_len(), reply_format_)
                            : parse_completion_request(body, fmt_, engine_.max_model_len());
  if (!request.model.empty() && request.model != c_.model_name)
    throw ApiError(404, fmt::format("The model `{}` does not exist.", request.model), "model", "",
                   "model_not_found");
  if (jobs_.size() + static_cast<size_t>(compiling_) >=
      static_cast<size_t>(engine_.config().max_seqs + c_.max_queue))
    return send_error(
        *ex,
        ApiError(429, "the server is busy: too many requests are waiting; retry later", "", "",
                 "rate_limit_exceeded"),
        {{"Retry-After", "1"}});
  if (request.base.constraint) return compile_then_start(ex, std::move(request));
  start_job(ex, std::move(request));
}

// The request's constraint is compiled (or found compiled) off the I/O thread before its job
// starts, so that its errors are a 400 naming the field it came from; the request carries the
// compiled grammar to the engine, which never compiles it again.
void Server::compile_then_start(const std::shared_ptr<Exchange>& ex, ApiRequest request) {
  ++compiling_;
  auto s = std::make_shared<ApiRequest>(std::move(request));
  net::post(compile_pool_, [this, ex, s] {
    std::optional<ApiError> err;
    try {
      s->base.compiled_constraint = engine_.compile(*s->base.constraint);
    } catch (const Error& e) {
      err.emplace(400, e.what(), s->constraint_param);
    } catch (const std::exception& e) {
      err.emplace(500, std::string("internal error: ") + e.what());
    }
    net::post(io_, [this, ex, s, err] {
      --compiling_;
      if (err) {
        send_error(*ex, *err);
      } else if (draining_) {
        send_error(*ex, ApiError(503, "the server is shutting down"));
      } else {
        try {
          start_job(ex, std::move(*s));
        } catch (const ApiError& e) {
          send_error(*ex, e);
        } catch (const std::exception& e) {
          send_error(*ex, ApiError(500, std::string("internal error: ") + e.what()));
        }
      }
      maybe_finish_shutdown();
    });
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

void Server::tokenize(const std::shared_ptr<Exchange>& ex) {
  const json b = parse_body(ex->request().body());
  std::vector<int32_t> ids;
  if (b.contains("messages")) {
    const auto gen = b.find("add_generation_prompt");
    if (gen != b.end() && !gen->is_boolean())
      throw ApiError(400, "'add_generation_prompt' must be true or false", "add_generation_prompt");
    ids = fmt_.encode_chat(render_messages(
        b, parse_tools(b), fmt_, gen == b.end() || gen->get<bool>(), reply_format_.tools));
  } else {
    if (!b.contains("prompt") || !b.at("prompt").is_string())
      throw ApiError(400, "'prompt' (a string) or 'messages' is required", "prompt");
    const auto add = b.find("add_special_tokens");
    if (add != b.end() && !add->is_boolean())
      throw ApiError(400, "'add_special_tokens' must be true or false", "add_special_tokens");
    ids = fmt_.encode_text(b.at("prompt").get<std::string>(), add == b.end() || add->get<bool>());
  }
  send_json(*ex, json{{"count", ids.size()},
                      {"max_model_len", engine_.max_model_len()},
                      {"tokens", ids},
                      {"token_strs", nullptr}});
}

void Server::detokenize(const std::shared_ptr<Exchange>& ex) {
  const json b = parse_body(ex->request().body());
  if (!b.contains("tokens") || !b.at("tokens").is_array())
    throw ApiError(400, "'tokens' (a list of token ids) is required", "tokens");
  const Tokenizer& tok = fmt_.tokenizer();
  StreamDecoder dec(tok);
  std::string text;
  for (const json& t : b.at("tokens")) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= tok.vocab().size())
      throw ApiError(400, fmt::format("token {} is not a token id of this model", t.dump()),
                     "tokens");
    text += dec.push(static_cast<int32_t>(t.get<int64_t>()));
  }
  text += dec.flush();
  send_json(*ex, json{{"prompt", text}});
}

}  // namespace brisk::server
