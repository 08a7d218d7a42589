// An HTTP request from anywhere, read as the server reads it (Boost.Beast's parser with the
// server's default header and body limits), then its body through the OpenAI request schema of
// the endpoint it names. Bad requests must end in an ApiError (a 4xx answer), nothing else.
// GCC 12 with the sanitizers reports Beast's parser (boost::optional) as maybe uninitialized where
// it is inlined: a false positive in Boost's headers, as in server/http.cpp.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>

#include "formats/loader.h"
#include "fuzz_util.h"
#include "server/http.h"
#include "server/openai.h"

namespace {
struct Fixture {
  std::unique_ptr<brisk::Tokenizer> tok;
  std::unique_ptr<brisk::PromptFormat> fmt;
};
const Fixture& fixture() {
  static const Fixture f = [] {
    Fixture x;
    x.tok = brisk::Tokenizer::create(
        brisk::load_model_file(brisk::fuzz::shared("models/stories260K/stories260K.gguf")));
    x.fmt = std::make_unique<brisk::PromptFormat>(*x.tok);  // ChatML, as the server falls back
    return x;
  }();
  return f;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace http = boost::beast::http;
  using namespace brisk::server;
  const Fixture& f = fixture();
  const HttpLimits lim;
  http::request_parser<http::string_body> parser;
  parser.body_limit(lim.max_body_bytes);
  parser.header_limit(static_cast<uint32_t>(lim.max_header_bytes));
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(data, size), ec);
  if (ec || !parser.is_done()) return 0;
  const auto& req = parser.get();
  const std::string target(req.target());
  const brisk::RequestBounds bounds{static_cast<int64_t>(f.fmt->tokenizer().vocab().size()), 2048};
  try {
    const json body = parse_body(req.body());
    if (target == "/v1/chat/completions")
      (void)parse_chat_request(
          body, *f.fmt, bounds,
          {brisk::ToolFamily::named("hermes"), brisk::ReasoningFamily::ThinkTags});
    else
      (void)parse_completion_request(body, *f.fmt, bounds);
  } catch (const ApiError&) {
  }
  return 0;
}
