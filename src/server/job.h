// One completion or chat request in flight on the server's I/O thread (server.h): its engine
// requests, each choice's output, and how it is answered. Its lifecycle: start() submits and
// opens the stream, on_output() takes each engine event, complete() answers and leaves.
#pragma once

#include <boost/asio/steady_timer.hpp>
#include <memory>
#include <string>
#include <vector>

#include "chat/reply_stream.h"
#include "server/openai.h"
#include "server/response_shapes.h"
#include "server/server.h"

namespace brisk::server {

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
  boost::asio::steady_timer timer;

  bool chat() const { return request.api == Api::Chat; }
  // Whether the chat reply is split into reasoning, content and tool calls.
  bool parsed() const {
    return chat() && (request.reply_format.tools->writes_calls() ||
                      request.reply_format.reasoning != ReasoningFamily::None);
  }
  ReplyParser parser() const {
    return ReplyParser(request.reply_format, request.in_reasoning, request.tools);
  }
  int n() const { return request.base.n; }

  json usage() const;
  // llama-server's timings: the prompt until the first token, then the rest of the tokens.
  json timings() const;
  void send_event(const json& j) { ex->send("data: " + dump(j) + "\n\n"); }
  void send_chunk(int index, const std::string& text, const json& logprobs, const char* finish);

  // Submits its engine requests (a rejection throws before anything is sent), then opens the
  // stream and arms the timeout.
  void start();
  void abort();  // ends its engine requests wherever they are
  // An engine event, posted to the I/O thread: metrics, the choice's text, a chunk when streaming.
  void on_output(int p, const Output& o, const std::shared_ptr<TokenLogprobs>& lp);
  // A parsed chat reply's new text as OpenAI streams it: what became final since the last piece.
  void stream_reply(int index, Choice& ch, const Output& o, const json& lps);
  // Every choice finished: the stream's end or the whole body (or the timeout's or shutdown's
  // error), then the job leaves the server.
  void complete();
  void respond();  // the whole body of a request that is not streamed
};

}  // namespace brisk::server
