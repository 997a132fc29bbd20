// The Beast HTTP/1.1 server: accept loop and per-connection sessions, in
// the do_x/on_x style of Beast's advanced server example. The only
// translation unit of trench that includes Beast.
#include "orchestrator/api/http_server.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

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

class Session;

// The open connections, for the cap (HttpServerOptions::max_connections).
class Connections {
 public:
  // Registers `s`; returns its id.
  uint64_t Add(const std::shared_ptr<Session>& s) {
    std::lock_guard<std::mutex> lock(mu_);
    open_[++last_] = s;
    return last_;
  }
  void Remove(uint64_t id) {
    std::lock_guard<std::mutex> lock(mu_);
    open_.erase(id);
  }
  size_t Open() {
    std::lock_guard<std::mutex> lock(mu_);
    return open_.size();
  }
  // The connection idle longest (waiting for its next request), or null.
  std::shared_ptr<Session> LongestIdle();
  // Every open connection.
  std::vector<std::shared_ptr<Session>> All();

  // Connections being refused with 503 right now.
  std::atomic<int> refusing{0};
  // Connections past the cap waiting for a second look (Admit).
  std::atomic<int> waiting{0};

 private:
  std::mutex mu_;
  uint64_t last_ = 0;
  std::map<uint64_t, std::weak_ptr<Session>> open_;  // GUARDED_BY(mu_)
};

struct Shared {
  HttpServerOptions options;
  HttpHandler handler;
  Connections connections;
  std::atomic<bool> stopping{false};  // Long polls answer at once.
};

int64_t NowNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

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
  Session(tcp::socket&& socket, std::shared_ptr<Shared> shared)
      : stream_(std::move(socket)), shared_(std::move(shared)) {}
  ~Session() { shared_->connections.Remove(id_); }

  void Run() {
    id_ = shared_->connections.Add(shared_from_this());
    asio::dispatch(
        stream_.get_executor(),
        beast::bind_front_handler(&Session::DoRead, shared_from_this()));
  }

  // Since when the connection waits for a request (steady ns); 0 while
  // a request is handled or the connection is going.
  int64_t idle_since() const { return idle_since_.load(); }

  bool evicting() const { return evicting_.load(); }

  // Closes the connection to make room for a new one, unless a request
  // arrived meanwhile.
  void Evict() {
    evicting_ = true;
    auto self = shared_from_this();
    asio::dispatch(stream_.get_executor(), [self] {
      if (self->idle_since_.exchange(0) == 0) return;  // Busy after all.
      self->stream_.cancel();
    });
  }

 private:
  void DoRead() {
    idle_since_ = NowNanos();
    parser_.emplace();
    parser_->header_limit(shared_->options.header_limit);
    parser_->body_limit(shared_->options.body_limit);
    stream_.expires_after(shared_->options.read_timeout);
    http::async_read(
        stream_, buffer_, *parser_,
        beast::bind_front_handler(&Session::OnRead, shared_from_this()));
  }

  void OnRead(beast::error_code ec, size_t) {
    idle_since_ = 0;
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
    if (response.pending) {
      return StartPending(std::move(response.pending), version, keep_alive);
    }
    if (response.stream) return StartStream(std::move(response), version);
    Send(std::move(response), version, keep_alive);
  }

  // A stream (StreamResponse): the head, then what Next() gives, until it
  // is done, the client goes, or the server stops. A read stays pending
  // meanwhile only to notice the client closing.
  void StartStream(ApiResponse&& response, unsigned version) {
    stream_resp_ = std::move(response.stream);
    const auto status = static_cast<http::status>(response.status);
    std::string head = version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ";
    head += std::to_string(response.status) + " " +
            std::string(http::obsolete_reason(status)) +
            "\r\nServer: trench\r\nContent-Type: " + response.content_type +
            "\r\nConnection: close\r\n";
    for (const auto& [name, value] : response.headers) {
      if ((name + value).find_first_of("\r\n") != std::string::npos) continue;
      head += name + ": " + value + "\r\n";
    }
    head += "\r\n";
    std::weak_ptr<Session> weak = shared_from_this();
    stream_resp_->SetWaker([weak] {
      if (std::shared_ptr<Session> s = weak.lock()) s->WakePending();
    });
    WatchStreamPeer();
    ArmStreamTimer();
    WriteStream(std::move(head), false);
  }

  // Reads (and drops) what the client sends while streaming: its close
  // ends the stream at once instead of at the next failed write.
  void WatchStreamPeer() {
    peek_.resize(512);
    stream_.socket().async_read_some(
        asio::buffer(peek_),
        [self = shared_from_this()](beast::error_code ec, size_t) {
          if (self->stream_resp_ == nullptr) return;
          if (ec) return self->EndStream();
          self->WatchStreamPeer();
        });
  }

  void ArmStreamTimer() {
    const auto every = std::min(shared_->options.poll_interval,
                                shared_->options.heartbeat_interval);
    pending_timer_.expires_after(every);
    pending_timer_.async_wait(
        [self = shared_from_this()](beast::error_code ec) {
          if (ec || self->stream_resp_ == nullptr) return;
          self->PollStream();
          if (self->stream_resp_ != nullptr) self->ArmStreamTimer();
        });
  }

  void PollStream() {
    if (stream_resp_ == nullptr) return;
    if (stream_writing_) return;  // The write's end polls again.
    const bool final = shared_->stopping.load();
    bool done = false;
    std::string data;
    try {
      data = stream_resp_->Next(final, &done);
    } catch (const std::exception& e) {
      spdlog::warn("http: a stream failed: {}", e.what());
      done = true;
    }
    done = done || final;
    if (data.empty() && !done &&
        std::chrono::steady_clock::now() - stream_last_write_ >=
            shared_->options.heartbeat_interval) {
      data = stream_resp_->Heartbeat();
    }
    if (data.empty() && !done) return;
    WriteStream(std::move(data), done);
  }

  void WriteStream(std::string data, bool last) {
    stream_writing_ = true;
    stream_chunk_ = std::move(data);
    stream_.expires_after(shared_->options.write_timeout);
    asio::async_write(
        stream_, asio::buffer(stream_chunk_),
        [self = shared_from_this(), last](beast::error_code ec, size_t) {
          self->stream_writing_ = false;
          self->stream_last_write_ = std::chrono::steady_clock::now();
          if (ec || last) return self->EndStream();
          self->PollStream();  // More may be waiting.
        });
  }

  void EndStream() {
    if (stream_resp_ == nullptr) return;
    stream_resp_->SetWaker(nullptr);
    stream_resp_.reset();
    pending_timer_.cancel();
    DoClose();
  }

  // A long poll (PendingResponse): polled when woken, every poll interval,
  // and finally at its deadline or when the server stops. No read is
  // pending meanwhile, and the connection counts as busy (never evicted).
  void StartPending(std::shared_ptr<PendingResponse> pending, unsigned version,
                    bool keep_alive) {
    pending_ = std::move(pending);
    pending_version_ = version;
    pending_keep_alive_ = keep_alive;
    std::weak_ptr<Session> weak = shared_from_this();
    pending_->SetWaker([weak] {
      if (std::shared_ptr<Session> s = weak.lock()) s->WakePending();
    });
    ArmPendingTimer();
    PollPending();  // What happened before the waker was set.
  }

 public:
  // Polls the long poll or the stream (if any) on the connection's strand.
  // Thread-safe.
  void WakePending() {
    asio::post(stream_.get_executor(), [self = shared_from_this()] {
      self->PollPending();
      self->PollStream();
    });
  }

 private:
  void ArmPendingTimer() {
    const auto when =
        std::min(pending_->deadline(), std::chrono::steady_clock::now() +
                                           shared_->options.poll_interval);
    pending_timer_.expires_at(when);
    pending_timer_.async_wait(
        [self = shared_from_this()](beast::error_code ec) {
          if (ec || self->pending_ == nullptr) return;
          self->PollPending();
          if (self->pending_ != nullptr) self->ArmPendingTimer();
        });
  }

  void PollPending() {
    if (pending_ == nullptr) return;
    const bool final = shared_->stopping.load() ||
                       std::chrono::steady_clock::now() >= pending_->deadline();
    std::optional<ApiResponse> response;
    try {
      response = pending_->Poll(final);
    } catch (const std::exception& e) {
      response = ErrorResponse(500, "internal",
                               std::string("handler failed: ") + e.what());
    }
    if (!response && final) {
      response = ErrorResponse(500, "internal", "a long poll gave no answer");
    }
    if (!response) return;
    pending_->SetWaker(nullptr);
    pending_.reset();
    pending_timer_.cancel();
    response->pending.reset();
    Send(std::move(*response), pending_version_, pending_keep_alive_);
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
  std::shared_ptr<Shared> shared_;
  uint64_t id_ = 0;
  std::atomic<int64_t> idle_since_{0};
  std::atomic<bool> evicting_{false};
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<void> res_;  // The response being written.
  std::string drain_;
  size_t drained_ = 0;
  std::shared_ptr<PendingResponse> pending_;  // The long poll, if any.
  unsigned pending_version_ = 11;
  bool pending_keep_alive_ = false;
  asio::steady_timer pending_timer_{stream_.get_executor()};
  std::shared_ptr<StreamResponse> stream_resp_;  // The stream, if any.
  std::string stream_chunk_;                     // Being written.
  std::string peek_;  // What the client sends while streaming (dropped).
  bool stream_writing_ = false;
  std::chrono::steady_clock::time_point stream_last_write_ =
      std::chrono::steady_clock::now();
};

std::vector<std::shared_ptr<Session>> Connections::All() {
  std::vector<std::weak_ptr<Session>> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, weak] : open_) all.push_back(weak);
  }
  std::vector<std::shared_ptr<Session>> out;
  for (const std::weak_ptr<Session>& weak : all) {
    if (std::shared_ptr<Session> s = weak.lock()) out.push_back(std::move(s));
  }
  return out;
}

std::shared_ptr<Session> Connections::LongestIdle() {
  std::vector<std::weak_ptr<Session>> all;
  {
    // Copied out: a session locked here may be destroyed when dropped
    // below, and its destructor takes mu_.
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [id, weak] : open_) all.push_back(weak);
  }
  std::shared_ptr<Session> best;
  int64_t best_since = 0;
  for (const std::weak_ptr<Session>& weak : all) {
    std::shared_ptr<Session> s = weak.lock();
    const int64_t since = s ? s->idle_since() : 0;
    if (since == 0 || s->evicting()) continue;
    if (best == nullptr || since < best_since) {
      best = std::move(s);
      best_since = since;
    }
  }
  return best;
}

// A connection past the cap: answered 503 with Retry-After, without
// reading its request, then closed (after draining what the client sent,
// briefly, so that the answer is not lost to a reset).
class Refusal : public std::enable_shared_from_this<Refusal> {
 public:
  Refusal(tcp::socket&& socket, std::shared_ptr<Shared> shared)
      : stream_(std::move(socket)), shared_(std::move(shared)) {
    ++shared_->connections.refusing;
  }
  ~Refusal() { --shared_->connections.refusing; }

  void Run() {
    ApiResponse r = ErrorResponse(
        503, "unavailable",
        "the server has " + std::to_string(shared_->options.max_connections) +
            " connections open; try again shortly");
    text_ =
        "HTTP/1.1 503 Service Unavailable\r\nServer: trench\r\n"
        "Content-Type: application/json\r\nRetry-After: 1\r\n"
        "Connection: close\r\nContent-Length: " +
        std::to_string(r.body.size()) + "\r\n\r\n" + r.body;
    stream_.expires_after(std::chrono::seconds(2));
    asio::async_write(
        stream_, asio::buffer(text_),
        beast::bind_front_handler(&Refusal::OnWrite, shared_from_this()));
  }

 private:
  void OnWrite(beast::error_code ec, size_t) {
    if (ec) return Close();
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    if (ec) return Close();
    DoDrain();
  }
  void DoDrain() {
    drain_.resize(16 << 10);
    stream_.expires_after(std::chrono::seconds(1));
    stream_.async_read_some(
        asio::buffer(drain_),
        beast::bind_front_handler(&Refusal::OnDrain, shared_from_this()));
  }
  void OnDrain(beast::error_code ec, size_t n) {
    drained_ += n;
    if (ec || drained_ > (size_t{64} << 10)) return Close();
    DoDrain();
  }
  void Close() {
    beast::error_code ec;
    stream_.socket().close(ec);
  }

  beast::tcp_stream stream_;
  std::shared_ptr<Shared> shared_;
  std::string text_, drain_;
  size_t drained_ = 0;
};

// Refusals at once at most; more connections past the cap are closed
// unanswered.
constexpr int kMaxRefusing = 64;
// A connection past the cap with every open one busy looks again after
// this before it is refused: a session whose reply was just written turns
// idle only when its write handler runs, which can be after its client
// has read the reply and connected again.
constexpr std::chrono::milliseconds kSecondLook{25};

}  // namespace

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  Impl(asio::io_context& ioc, std::shared_ptr<Shared> shared)
      : ioc(ioc),
        acceptor(asio::make_strand(ioc)),
        backoff_timer(acceptor.get_executor()),
        shared(std::move(shared)),
        backoff(this->shared->options.accept_backoff_min) {}

  void DoAccept() {
    acceptor.async_accept(
        asio::make_strand(ioc),
        beast::bind_front_handler(&Impl::OnAccept, shared_from_this()));
  }

  void OnAccept(beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor.is_open()) return;
    if (ec) {
      // EMFILE, ENFILE, ENOBUFS...: accepting again at once would fail
      // again at once. Wait (doubling) for descriptors to come back; the
      // clients wait in the listen backlog meanwhile.
      spdlog::warn("http: accept failed: {}; retrying in {} ms", ec.message(),
                   backoff.count());
      backoff_timer.expires_after(backoff);
      backoff = std::min(backoff * 2, shared->options.accept_backoff_max);
      backoff_timer.async_wait(
          [self = shared_from_this()](beast::error_code wait_ec) {
            if (wait_ec || !self->acceptor.is_open()) return;
            self->DoAccept();
          });
      return;
    }
    backoff = shared->options.accept_backoff_min;
    Admit(std::move(socket));
    DoAccept();
  }

  // A session for `socket`, within the cap: past it, the connection idle
  // longest makes room, else (after a second look, kSecondLook later)
  // `socket` is refused with 503.
  void Admit(tcp::socket socket, bool second_look = false) {
    Connections& c = shared->connections;
    if (c.Open() >= shared->options.max_connections) {
      std::shared_ptr<Session> idle = c.LongestIdle();
      if (idle == nullptr && !second_look && c.waiting.load() < kMaxRefusing) {
        ++c.waiting;
        auto held = std::make_shared<tcp::socket>(std::move(socket));
        auto timer = std::make_shared<asio::steady_timer>(
            acceptor.get_executor(), kSecondLook);
        timer->async_wait(
            [self = shared_from_this(), held, timer](beast::error_code ec) {
              --self->shared->connections.waiting;
              if (ec || !self->acceptor.is_open()) return;
              self->Admit(std::move(*held), /*second_look=*/true);
            });
        return;
      }
      if (idle == nullptr) {
        if (c.refusing.load() < kMaxRefusing) {
          std::make_shared<Refusal>(std::move(socket), shared)->Run();
        }
        return;  // Else closed unanswered as `socket` goes.
      }
      idle->Evict();
    }
    std::make_shared<Session>(std::move(socket), shared)->Run();
  }

  asio::io_context& ioc;
  tcp::acceptor acceptor;
  asio::steady_timer backoff_timer;
  std::shared_ptr<Shared> shared;
  std::chrono::milliseconds backoff;
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
  if (options.max_connections == 0) {
    return InvalidArgument("http: max_connections must be positive");
  }
  auto shared = std::make_shared<Shared>();
  shared->options = options;
  shared->handler = std::move(handler);
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
    impl->backoff_timer.cancel();
  });
  // Long polls answer now (what they have) instead of at their deadline.
  impl_->shared->stopping = true;
  for (const std::shared_ptr<Session>& s : impl_->shared->connections.All()) {
    s->WakePending();
  }
}

}  // namespace trench::orchestrator
