// The Beast HTTP/1.1 server: accept loop and per-connection sessions, in
// the do_x/on_x style of Beast's advanced server example. The only
// translation unit of trench that includes Beast.
#include "orchestrator/api/http_server.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <exception>
#include <optional>

namespace trench::orchestrator {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// A client that stops reading our error response while it sends a body we
// refused gets its connection drained up to this many bytes, so that it
// can read the response before the close.
constexpr size_t kMaxDrainBytes = size_t{64} << 20;

struct Shared {
  HttpServerOptions options;
  HttpHandler handler;
};

// True for errors of the transport (the peer left, a timeout, the server
// stopping) as opposed to a malformed request.
bool IsTransportError(const beast::error_code& ec) {
  return ec == beast::error::timeout || ec == asio::error::operation_aborted ||
         ec.category() == asio::error::get_system_category() ||
         ec.category() == asio::error::get_misc_category();
}

ApiRequest ToApiRequest(http::request<http::string_body>&& req,
                        Status* status) {
  ApiRequest r;
  r.method = std::string(req.method_string());
  const beast::string_view target = req.target();
  *status = ParseTarget(std::string_view(target.data(), target.size()), &r.path,
                        &r.query);
  for (const auto& field : req) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    r.headers[name] = std::string(field.value());
  }
  r.body = std::move(req.body());
  return r;
}

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& socket, std::shared_ptr<const Shared> shared)
      : stream_(std::move(socket)), shared_(std::move(shared)) {}

  void Run() {
    asio::dispatch(
        stream_.get_executor(),
        beast::bind_front_handler(&Session::DoRead, shared_from_this()));
  }

 private:
  void DoRead() {
    parser_.emplace();
    parser_->header_limit(shared_->options.header_limit);
    parser_->body_limit(shared_->options.body_limit);
    stream_.expires_after(shared_->options.read_timeout);
    http::async_read(
        stream_, buffer_, *parser_,
        beast::bind_front_handler(&Session::OnRead, shared_from_this()));
  }

  void OnRead(beast::error_code ec, size_t) {
    if (ec == http::error::end_of_stream) return DoClose();
    if (ec == http::error::body_limit) {
      return SendError(413, "payload_too_large",
                       "request body exceeds the limit of " +
                           std::to_string(shared_->options.body_limit) +
                           " bytes");
    }
    if (ec == http::error::header_limit) {
      return SendError(431, "header_too_large",
                       "request header exceeds the limit of " +
                           std::to_string(shared_->options.header_limit) +
                           " bytes");
    }
    if (ec && IsTransportError(ec)) return DoClose();
    if (ec) {
      return SendError(400, "bad_request",
                       "malformed HTTP request: " + ec.message());
    }
    http::request<http::string_body> req = parser_->release();
    const bool keep_alive = req.keep_alive();
    const unsigned version = req.version();
    Status target_status;
    ApiRequest request = ToApiRequest(std::move(req), &target_status);
    ApiResponse response;
    if (!target_status.ok()) {
      response = StatusResponse(target_status);
    } else {
      try {
        response = shared_->handler(request);
      } catch (const std::exception& e) {
        response = ErrorResponse(500, "internal",
                                 std::string("handler failed: ") + e.what());
      }
    }
    Send(std::move(response), version, keep_alive);
  }

  void SendError(int status, std::string_view code, const std::string& msg) {
    Send(ErrorResponse(status, code, msg), 11, false);
  }

  void Send(ApiResponse&& response, unsigned version, bool keep_alive) {
    auto res = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(response.status), version);
    res->set(http::field::server, "trench");
    res->set(http::field::content_type, response.content_type);
    for (auto& [name, value] : response.headers) res->set(name, value);
    res->keep_alive(keep_alive);
    res->body() = std::move(response.body);
    res->prepare_payload();
    res_ = res;
    stream_.expires_after(shared_->options.write_timeout);
    http::async_write(
        stream_, *res,
        beast::bind_front_handler(&Session::OnWrite, shared_from_this(),
                                  res->need_eof()));
  }

  void OnWrite(bool close, beast::error_code ec, size_t) {
    res_.reset();
    if (ec) return DoClose();
    if (close) return DoLingeringClose();
    DoRead();
  }

  // Half-closes, then reads and drops what the client still sends (the
  // rest of a refused body) until it closes, times out or sends too much.
  void DoLingeringClose() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) return;
    drained_ = 0;
    DoDrain();
  }

  void DoDrain() {
    stream_.expires_after(shared_->options.read_timeout);
    drain_.resize(64 << 10);
    stream_.async_read_some(
        asio::buffer(drain_),
        beast::bind_front_handler(&Session::OnDrain, shared_from_this()));
  }

  void OnDrain(beast::error_code ec, size_t n) {
    drained_ += n;
    if (ec || drained_ > kMaxDrainBytes) return DoClose();
    DoDrain();
  }

  void DoClose() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::shared_ptr<const Shared> shared_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<void> res_;  // The response being written.
  std::string drain_;
  size_t drained_ = 0;
};

}  // namespace

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  Impl(asio::io_context& ioc, std::shared_ptr<const Shared> shared)
      : ioc(ioc), acceptor(asio::make_strand(ioc)), shared(std::move(shared)) {}

  void DoAccept() {
    acceptor.async_accept(
        asio::make_strand(ioc),
        beast::bind_front_handler(&Impl::OnAccept, shared_from_this()));
  }

  void OnAccept(beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
    if (ec) {
      spdlog::warn("http: accept failed: {}", ec.message());
    } else {
      std::make_shared<Session>(std::move(socket), shared)->Run();
    }
    DoAccept();
  }

  asio::io_context& ioc;
  tcp::acceptor acceptor;
  std::shared_ptr<const Shared> shared;
};

StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(
    asio::io_context& ioc, const HttpServerOptions& options,
    HttpHandler handler) {
  beast::error_code ec;
  asio::ip::address address = asio::ip::make_address(options.address, ec);
  if (ec) {
    return InvalidArgument("http: bad listen address '" + options.address +
                           "': " + ec.message());
  }
  auto shared = std::make_shared<Shared>(Shared{options, std::move(handler)});
  auto impl = std::make_shared<Impl>(ioc, std::move(shared));
  const tcp::endpoint endpoint(address, options.port);
  const std::string where =
      options.address + ":" + std::to_string(options.port);
  impl->acceptor.open(endpoint.protocol(), ec);
  if (!ec)
    impl->acceptor.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(endpoint, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return IoError("cannot listen on " + where + ": " + ec.message());
  const uint16_t port = impl->acceptor.local_endpoint(ec).port();
  if (ec) return IoError("cannot listen on " + where + ": " + ec.message());
  impl->DoAccept();
  spdlog::info("http: listening on {}:{}", options.address, port);
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl), port));
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  asio::post(impl_->acceptor.get_executor(), [impl = impl_] {
    beast::error_code ec;
    impl->acceptor.close(ec);
  });
}

}  // namespace trench::orchestrator
