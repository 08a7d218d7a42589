// HTTP/1.1 with keep-alive on Boost.Beast/Asio: every connection is asynchronous and all of them
// run on one I/O thread, so nothing here needs a lock. Beast parses requests (with size limits);
// responses are written as plain bytes, whole or as a chunked stream (Server-Sent Events).
//
// While a request is being answered the connection keeps a read pending: a client that goes away
// is noticed at once (its request can then be aborted), and bytes of a pipelined next request are
// kept for the next parse.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>
#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace brisk::server {

namespace http = boost::beast::http;
using HttpRequest = http::request<http::string_body>;
using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpLimits {
  size_t max_body_bytes = size_t{8} << 20;
  size_t max_header_bytes = size_t{16} << 10;
  // To receive a whole request, headers and body; a keep-alive connection waiting for its next
  // request is closed after as long.
  double read_timeout_seconds = 30;
  double write_timeout_seconds = 60;  // for the client to take each piece of a response
  int max_connections = 1024;
};

class Connection;

// One request and its response. Whole responses and streams are exclusive; after the response
// is complete (or the client has gone) further calls do nothing.
class Exchange {
 public:
  Exchange(std::shared_ptr<Connection> c, HttpRequest req);
  ~Exchange();
  const HttpRequest& request() const { return req_; }

  void respond(http::status status, const std::string& content_type, std::string body,
               const Headers& extra = {});
  void begin_stream(const std::string& content_type, const Headers& extra = {});
  void send(std::string chunk);
  void end_stream();

  // Called once if the client disconnects before the response is complete (at once if it has).
  void on_disconnect(std::function<void()> fn);
  bool done() const { return done_; }

 private:
  std::shared_ptr<Connection> conn_;
  HttpRequest req_;
  bool streaming_ = false, done_ = false;
};

using Handler = std::function<void(std::shared_ptr<Exchange>)>;

class HttpServer {
 public:
  HttpServer(boost::asio::io_context& io, const std::string& host, uint16_t port,
             const HttpLimits& limits, Handler handler);
  ~HttpServer();
  uint16_t port() const;
  // Stops accepting and closes connections that wait for a request; those answering one stay.
  void stop_accepting();
  // Closes every connection (their requests see a disconnect).
  void close_all();
  size_t n_open_connections() const;

 private:
  friend class Connection;
  void accept();

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  HttpLimits limits_;
  Handler handler_;
  bool accepting_ = true;
  std::unordered_set<Connection*> conns_;
};

}  // namespace brisk::server
