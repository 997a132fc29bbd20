// The daemon's HTTP/1.1 server (Boost.Beast) on the daemon's Asio event
// loop. It only carries requests: each one becomes an ApiRequest, goes to
// the handler, and the ApiResponse goes back. All Beast code of trench is
// in http_server.cc.
//
// Per connection: keep-alive (as the client asks), a deadline on each read
// (headers and body together), a header size limit (431) and a body size
// limit (413, checked from Content-Length before the body is read, and
// while reading a chunked body). Malformed HTTP gets 400. Those error
// responses are JSON ({"error": {"code", "message"}}) and close the
// connection. A handler exception (none are expected) becomes a 500.
//
// Long polls: a response with `pending` set (api_request.h) keeps the
// connection without a thread: it is polled on a handler thread when
// woken, every poll_interval, and finally at its deadline; Stop() makes
// each answer at once.
//
// Streams (server-sent events): a response with `stream` set is written as
// its head, then chunk by chunk as the stream gives them (when woken, every
// poll_interval, heartbeats when idle), until it ends, the client closes
// the connection, or Stop() (then it ends at once). The connection is then
// closed; it counts as busy meanwhile.
//
// Per server: a cap on open connections (idle ones make room, else 503;
// see HttpServerOptions), and an accept loop that backs off when accept
// fails (out of file descriptors) instead of spinning.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "orchestrator/api/api_request.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace trench::orchestrator {

struct HttpServerOptions {
  std::string address = "127.0.0.1";
  uint16_t port = 0;                       // 0: an ephemeral port.
  size_t body_limit = size_t{8} << 20;     // Bytes; larger bodies get 413.
  size_t header_limit = size_t{16} << 10;  // Bytes; larger headers get 431.
  // A request must arrive completely within this time after the previous
  // response (or the connection's start); otherwise the connection closes.
  // (So an idle keep-alive connection closes after it too.)
  std::chrono::milliseconds read_timeout{30'000};
  std::chrono::milliseconds write_timeout{30'000};
  // Open connections at most. Past it, a new connection closes the one
  // that has waited longest for its next request; when every connection
  // is busy with a request, the new one looks again 25 ms later (a
  // connection whose reply was just sent may be about to wait), then is
  // answered 503 with "Retry-After: 1" and closed.
  size_t max_connections = 256;
  // When accept fails (EMFILE, ENFILE, ENOBUFS, ...), the next try waits
  // this long, doubling up to accept_backoff_max; a success resets it.
  std::chrono::milliseconds accept_backoff_min{50};
  std::chrono::milliseconds accept_backoff_max{1'000};
  // A long poll (ApiResponse::pending) is polled at least this often, as
  // well as when it is woken: the fallback for wakes that cannot come
  // (another process's writes).
  std::chrono::milliseconds poll_interval{1'000};
  // A stream (ApiResponse::stream) with nothing to send for this long
  // writes its heartbeat, so that proxies keep it and a client that left
  // is noticed.
  std::chrono::milliseconds heartbeat_interval{15'000};
};

using HttpHandler = std::function<ApiResponse(const ApiRequest&)>;

class HttpServer {
 public:
  // Binds and starts accepting on `ioc` (which the caller runs; handlers
  // run on the threads that run it). `ioc` must outlive the server.
  // Errors: InvalidArgument for a bad address; IoError when the address
  // cannot be bound ("cannot listen on 127.0.0.1:80: Permission denied").
  static StatusOr<std::unique_ptr<HttpServer>> Start(
      boost::asio::io_context& ioc, const HttpServerOptions& options,
      HttpHandler handler);
  ~HttpServer();  // Stops accepting (as Stop()).

  // The bound port (the real one when options.port was 0).
  uint16_t port() const { return port_; }
  // Stops accepting new connections; open connections finish their
  // current request (long polls answer at once) and close when the client
  // is done or the io_context stops. Safe to call more than once, from any
  // thread.
  void Stop();

 private:
  struct Impl;
  explicit HttpServer(std::shared_ptr<Impl> impl, uint16_t port)
      : impl_(std::move(impl)), port_(port) {}
  std::shared_ptr<Impl> impl_;
  uint16_t port_;
};

}  // namespace trench::orchestrator
