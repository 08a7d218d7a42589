#include "server/job.h"

#include <fmt/format.h>
#include <boost/asio/post.hpp>
#include <chrono>

#include "core/clock.h"
#include "server/send.h"
#include "server/tools.h"

namespace brisk::server {

namespace net = boost::asio;

json Server::Job::usage() const {
  int64_t p = 0, c = 0, cached = 0;
  for (const auto& pr : prompts) p += pr.n_prompt, cached += pr.cached;
  for (const auto& ch : choices) c += static_cast<int64_t>(ch.tokens.size());
  return server::usage(p, c, cached);
}

json Server::Job::timings() const {
  double first = 0, last = 0;
  int64_t p = 0, c = 0;
  for (const auto& pr : prompts)
    if (pr.first_token > 0) first = first == 0 ? pr.first_token : std::min(first, pr.first_token);
  for (const auto& pr : prompts) p += pr.n_prompt;
  for (const auto& ch : choices) last = std::max(last, ch.last_token), c += std::ssize(ch.tokens);
  return server::timings(p, first > 0 ? first - arrival : 0, c, first > 0 ? last - first : 0);
}

void Server::Job::send_chunk(int index, const std::string& text, const json& logprobs,
                             const char* finish) {
  send_event(text_chunk(head, index, text, logprobs, finish, request.include_usage));
}

void Server::Job::start() {
  head = new_response_head(request.api, srv.config_.model_name);
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
      std::chrono::milliseconds(static_cast<int64_t>(srv.config_.request_timeout_seconds * 1000)));
  timer.async_wait([self](const boost::system::error_code& ec) {
    if (ec || self->finished) return;
    self->timed_out = true;
    self->abort();
  });
}

void Server::Job::abort() {
  for (const auto& p : prompts)
    if (p.id != 0 && p.open > 0) srv.engine_.abort(p.id);
}

void Server::Job::on_output(int p, const Output& o, const std::shared_ptr<TokenLogprobs>& lp) {
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

void Server::Job::stream_reply(int index, Choice& ch, const Output& o, const json& lps) {
  const bool last = o.finish != FinishReason::None;
  const ReplyDelta d = last ? ch.reply->push_last(o.text) : ch.reply->push(o.text);
  for (const auto& c : d.calls)
    if (c.first) ch.call_ids.push_back(new_call_id(*request.reply_format.tools));
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

void Server::Job::complete() {
  finished = true;
  timer.cancel();
  bool aborted = false;
  for (const auto& ch : choices) aborted |= ch.finish == FinishReason::Abort;
  if (!gone) {
    if (aborted && (timed_out || shut_down)) {
      const ApiError e = timed_out ? ApiError(504, fmt::format("the request took longer than the "
                                                               "server's limit of {} s",
                                                               srv.config_.request_timeout_seconds))
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

void Server::Job::respond() {
  const Tokenizer& tok = srv.fmt_.tokenizer();
  const bool lp = request.base.logprobs >= 0;
  json list = json::array();
  for (size_t i = 0; i < choices.size(); ++i) {
    const Choice& ch = choices[i];
    const json lps = lp ? chat_logprobs(tok, ch.tokens, ch.logprobs) : json(nullptr);
    if (parsed()) {
      const Reply r = parser().parse(ch.text, false);
      std::vector<std::string> ids;
      for (size_t k = 0; k < r.calls.size(); ++k)
        ids.push_back(new_call_id(*request.reply_format.tools));
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

}  // namespace brisk::server
