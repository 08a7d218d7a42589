// GCC 12 with the sanitizers reports Beast's parser (boost::optional) as maybe uninitialized
// where it is inlined: a false positive in Boost's headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "server/http.h"

#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <chrono>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/error.h"

namespace brisk::server {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

namespace {
std::chrono::milliseconds ms(double seconds) {
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

std::string head(http::status status, const std::string& content_type, const Headers& extra,
                 bool keep_alive) {
  std::string h = "HTTP/1.1 " + std::to_string(static_cast<unsigned>(status)) + " " +
                  std::string(http::obsolete_reason(status)) + "\r\n";
  h += "Server: brisk\r\n";
  if (!content_type.empty()) h += "Content-Type: " + content_type + "\r\n";
  for (const auto& [k, v] : extra) h += k + ": " + v + "\r\n";
  h += keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
  return h;
}
}  // namespace

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(HttpServer& s, tcp::socket sock) : server_(s), stream_(std::move(sock)) {
    server_.conns_.insert(this);
  }
  ~Connection() { server_.conns_.erase(this); }

  void start() { read_request(); }

  void write(std::string bytes) {
    if (closed_) return;
    out_.push_back(std::move(bytes));
    if (!writing_) write_next();
  }
  // The response is complete once everything queued has been written.
  void finish_response() {
    answering_ = false;
    if (!writing_) after_response();
  }
  void set_disconnect(std::function<void()> fn) { on_disconnect_ = std::move(fn); }
  bool closed() const { return closed_; }
  bool keep_alive() const { return keep_alive_ && server_.accepting_; }
  bool idle() const { return !answering_ && !writing_; }

  void close() {
    if (closed_) return;
    closed_ = true;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.close();
    out_.clear();
    if (auto fn = std::move(on_disconnect_)) fn();
  }

 private:
  void read_request() {
    if (closed_) return;
    parser_.emplace();
    parser_->body_limit(server_.limits_.max_body_bytes);
    parser_->header_limit(static_cast<uint32_t>(server_.limits_.max_header_bytes));
    stream_.expires_after(ms(server_.limits_.read_timeout_seconds));
    reading_ = true;
    http::async_read(stream_, buf_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       self->reading_ = false;
                       self->on_request(ec);
                     });
  }

  void on_request(beast::error_code ec) {
    if (closed_) return;
    if (ec) {
      // Answer what can be answered; then the connection is done.
      keep_alive_ = false;
      if (ec == http::error::body_limit)
        return reject(http::status::payload_too_large, "the request body is over the size limit");
      if (ec == http::error::header_limit)
        return reject(http::status::request_header_fields_too_large,
                      "the request headers are over the size limit");
      // A request Beast could not parse gets a 400; a client that went away or timed out (the
      // stream is closed then) gets nothing.
      if (ec.category() == make_error_code(http::error::bad_method).category() &&
          ec != http::error::end_of_stream && ec != http::error::partial_message)
        return reject(http::status::bad_request, "malformed HTTP request: " + ec.message());
      return close();
    }
    stream_.expires_never();
    keep_alive_ = parser_->get().keep_alive();
    answering_ = true;
    watch();
    auto ex = std::make_shared<Exchange>(shared_from_this(), parser_->release());
    try {
      server_.handler_(ex);
    } catch (const std::exception& e) {
      ex->respond(
          http::status::internal_server_error, "application/json",
          R"({"error":{"message":"internal error","type":"server_error","param":null,"code":500}})");
    }
  }

  void reject(http::status st, const std::string& msg) {
    const std::string body = nlohmann::json{{"error",
                                             {{"message", msg},
                                              {"type", "invalid_request_error"},
                                              {"param", nullptr},
                                              {"code", static_cast<unsigned>(st)}}}}
                                 .dump();
    std::string h = head(st, "application/json", {}, false);
    h += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    answering_ = true;
    write(std::move(h));
    finish_response();
  }

  // A read kept pending while the request is answered: an error means the client went away.
  void watch() {
    if (closed_ || watching_ || reading_) return;
    if (buf_.size() >= server_.limits_.max_body_bytes) return;  // pipelined plenty already
    watching_ = true;
    stream_.socket().async_read_some(
        buf_.prepare(4096), [self = shared_from_this()](beast::error_code ec, size_t n) {
          self->watching_ = false;
          if (self->closed_) return;
          if (!ec) {
            self->buf_.commit(n);
            if (self->answering_ || self->writing_) return self->watch();
            return self->read_request();
          }
          if (ec == net::error::operation_aborted && !self->answering_ && !self->writing_)
            return self->next_request();
          self->close();
        });
  }

  void write_next() {
    if (closed_ || out_.empty()) return;
    writing_ = true;
    stream_.expires_after(ms(server_.limits_.write_timeout_seconds));
    net::async_write(stream_, net::buffer(out_.front()),
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       self->writing_ = false;
                       if (self->closed_) return;
                       if (ec) return self->close();
                       self->out_.pop_front();
                       self->stream_.expires_never();
                       if (!self->out_.empty()) return self->write_next();
                       if (!self->answering_) self->after_response();
                     });
  }

  void after_response() {
    on_disconnect_ = nullptr;
    if (!keep_alive()) return close();
    // The watching read must end before the next request's read starts.
    if (watching_) {
      beast::error_code ec;
      stream_.socket().cancel(ec);
      return;
    }
    next_request();
  }
  void next_request() {
    if (!keep_alive()) return close();
    read_request();
  }

  HttpServer& server_;
  beast::tcp_stream stream_;
  beast::flat_buffer buf_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::deque<std::string> out_;
  std::function<void()> on_disconnect_;
  bool writing_ = false, watching_ = false, reading_ = false, answering_ = false;
  bool closed_ = false, keep_alive_ = true;
};

Exchange::Exchange(std::shared_ptr<Connection> c, HttpRequest req)
    : conn_(std::move(c)), req_(std::move(req)) {}

Exchange::~Exchange() {
  // A request dropped without an answer must not leave its connection hanging.
  if (!done_ && !conn_->closed()) {
    if (streaming_) {
      end_stream();
    } else {
      respond(
          http::status::internal_server_error, "application/json",
          R"({"error":{"message":"no response","type":"server_error","param":null,"code":500}})");
    }
  }
}

void Exchange::respond(http::status status, const std::string& content_type, std::string body,
                       const Headers& extra) {
  if (done_ || streaming_) return;
  done_ = true;
  std::string h = head(status, content_type, extra, conn_->keep_alive());
  // A 304 has no body, and a length would claim one of the representation's (RFC 9110 8.6).
  if (status != http::status::not_modified)
    h += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  h += "\r\n";
  h += body;
  conn_->write(std::move(h));
  conn_->finish_response();
}

void Exchange::begin_stream(const std::string& content_type, const Headers& extra) {
  if (done_ || streaming_) return;
  streaming_ = true;
  std::string h = head(http::status::ok, content_type, extra, conn_->keep_alive());
  h += "Cache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";
  conn_->write(std::move(h));
}

void Exchange::send(std::string chunk) {
  if (done_ || !streaming_ || chunk.empty()) return;
  char size[32];
  std::snprintf(size, sizeof size, "%zx\r\n", chunk.size());
  chunk.insert(0, size);
  chunk += "\r\n";
  conn_->write(std::move(chunk));
}

void Exchange::end_stream() {
  if (done_ || !streaming_) return;
  done_ = true;
  conn_->write("0\r\n\r\n");
  conn_->finish_response();
}

void Exchange::on_disconnect(std::function<void()> fn) {
  if (conn_->closed() && !done_) return fn();  // gone already (while the request waited)
  conn_->set_disconnect(std::move(fn));
}

HttpServer::HttpServer(net::io_context& io, const std::string& host, uint16_t port,
                       const HttpLimits& limits, Handler handler)
    : io_(io), acceptor_(io), limits_(limits), handler_(std::move(handler)) {
  beast::error_code ec;
  const auto addr = net::ip::make_address(host, ec);
  if (ec) fail("--host: '{}' is not an IP address", host);
  const tcp::endpoint ep(addr, port);
  acceptor_.open(ep.protocol(), ec);
  if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(ep, ec);
  if (!ec) acceptor_.listen(net::socket_base::max_listen_connections, ec);
  if (ec) fail("cannot listen on {}:{}: {}", host, port, ec.message());
  accept();
}

HttpServer::~HttpServer() = default;

uint16_t HttpServer::port() const {
  return acceptor_.local_endpoint().port();
}

void HttpServer::accept() {
  acceptor_.async_accept([this](beast::error_code ec, tcp::socket sock) {
    if (!accepting_) return;
    if (!ec) {
      if (static_cast<int>(conns_.size()) >= limits_.max_connections) {
        beast::error_code ignored;
        sock.close(ignored);
      } else {
        std::make_shared<Connection>(*this, std::move(sock))->start();
      }
    }
    accept();
  });
}

void HttpServer::stop_accepting() {
  accepting_ = false;
  beast::error_code ec;
  acceptor_.close(ec);
  std::vector<std::shared_ptr<Connection>> idle;
  for (Connection* c : conns_)
    if (c->idle()) idle.push_back(c->shared_from_this());
  for (auto& c : idle) c->close();
}

size_t HttpServer::n_open_connections() const {
  size_t n = 0;
  for (const Connection* c : conns_) n += c->closed() ? 0 : 1;
  return n;
}

void HttpServer::close_all() {
  std::vector<std::shared_ptr<Connection>> all;
  for (Connection* c : conns_) all.push_back(c->shared_from_this());
  for (auto& c : all) c->close();
}

}  // namespace brisk::server
