// Helpers for the HTTP API tests: a server on 127.0.0.1 (ephemeral port)
// over a temporary store, its io_context run by a thread, and a small
// blocking HTTP/1.1 client on POSIX sockets (no Beast in the tests).
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "base/json.h"
#include "orchestrator/api/api_handlers.h"
#include "orchestrator/api/http_server.h"
#include "tests/orchestrator/store/store_test_util.h"

namespace trench::orchestrator::testing {

// A small valid module for reports.
inline constexpr char kHlo[] = R"(HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  ROOT c = f32[2] add(a, b)
})";

inline constexpr char kToken[] = "s3cret-token";

struct HttpReply {
  int status = 0;
  std::map<std::string, std::string> headers;  // Lowercased names.
  std::string body;
  // The body parsed as JSON (null when it is not JSON).
  Json json() const {
    StatusOr<Json> j = ParseJson(body);
    return j.ok() ? *j : Json();
  }
  // error.message of a JSON error body, or "".
  std::string error_message() const {
    Json j = json();
    const Json* e = j.Find("error");
    const Json* m = e ? e->Find("message") : nullptr;
    return m && m->is_string() ? m->string_value() : "";
  }
};

// One keep-alive connection to 127.0.0.1:port.
class HttpClient {
 public:
  // `receive_buffer` > 0: SO_RCVBUF before connecting (a small window, for
  // a client that stops reading).
  explicit HttpClient(uint16_t port, int receive_buffer = 0) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (receive_buffer > 0) {
      setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer,
                 sizeof(receive_buffer));
    }
    timeval tv{20, 0};  // A hung server fails the test instead of hanging.
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ =
        connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~HttpClient() { close(fd_); }
  bool connected() const { return connected_; }
  int fd() const { return fd_; }

  bool SendRaw(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t n = send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (n <= 0) return false;
      bytes.remove_prefix(n);
    }
    return true;
  }

  // Reads one response (Content-Length framed); nullopt on EOF or error.
  std::optional<HttpReply> ReadReply() {
    size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return std::nullopt;
    }
    HttpReply r;
    std::string head = buf_.substr(0, end + 2);
    buf_.erase(0, end + 4);
    if (head.size() < 12) return std::nullopt;
    r.status = std::atoi(head.c_str() + 9);  // "HTTP/1.1 200 OK"
    size_t pos = head.find("\r\n") + 2;
    while (pos < head.size()) {
      size_t eol = head.find("\r\n", pos);
      std::string line = head.substr(pos, eol - pos);
      pos = eol + 2;
      size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string name = line.substr(0, colon);
      for (char& c : name) c = std::tolower(static_cast<unsigned char>(c));
      r.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
    }
    size_t length = std::atoll(r.headers["content-length"].c_str());
    while (buf_.size() < length) {
      if (!Fill()) return std::nullopt;
    }
    r.body = buf_.substr(0, length);
    buf_.erase(0, length);
    return r;
  }

  // Sends one request and reads its reply (status 0 when none came).
  HttpReply Request(const std::string& method, const std::string& target,
                    const std::string& body = "", const std::string& token = "",
                    const std::string& extra_headers = "") {
    std::string req = method + " " + target + " HTTP/1.1\r\nHost: test\r\n";
    if (!token.empty()) req += "Authorization: Bearer " + token + "\r\n";
    if (!body.empty() || method == "POST") {
      req += "Content-Type: application/json\r\nContent-Length: " +
             std::to_string(body.size()) + "\r\n";
    }
    req += extra_headers + "\r\n" + body;
    if (!SendRaw(req)) return HttpReply{};
    return ReadReply().value_or(HttpReply{});
  }

  // Reads until `needle` arrives (a stream's bytes, no framing); returns
  // everything up to and including it, consumed, or nullopt on EOF, error
  // or the socket's 20 s timeout.
  std::optional<std::string> ReadUntil(std::string_view needle) {
    size_t at;
    while ((at = buf_.find(needle)) == std::string::npos) {
      if (!Fill()) return std::nullopt;
    }
    std::string out = buf_.substr(0, at + needle.size());
    buf_.erase(0, at + needle.size());
    return out;
  }

  // True when the server closed the connection (EOF).
  bool AtEof() {
    char c;
    return buf_.empty() && recv(fd_, &c, 1, 0) == 0;
  }

 private:
  bool Fill() {
    char chunk[16384];
    ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
    if (n <= 0) return false;
    buf_.append(chunk, n);
    return true;
  }
  int fd_ = -1;
  bool connected_ = false;
  std::string buf_;
};

// What a request must not change: row counts and every bug's state.
struct StoreSnapshot {
  int64_t cases = 0;
  std::vector<std::pair<int64_t, std::string>> bugs;  // (id, state).
  std::vector<int64_t> events;
  bool operator==(const StoreSnapshot&) const = default;
};

// A server over a fresh store in a temporary directory.
class ApiTest : public StoreTest {
 protected:
  static constexpr size_t kBodyLimit = 64 << 10;

  void SetUp() override {
    StoreTest::SetUp();
    store_ = OpenStore(&clock_);
    check_ = OpenStore(&clock_);  // The test's own connection.
    ASSERT_TRUE(store_ && check_);
    handlers_ = std::make_unique<ApiHandlers>(store_.get(), Options());
    HttpServerOptions server_options = ServerOptions();
    auto server = HttpServer::Start(
        ioc_, server_options,
        [h = handlers_.get()](const ApiRequest& r) { return h->Handle(r); });
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    ASSERT_NE(server_->port(), 0);
    thread_ = std::thread([this] { ioc_.run(); });
  }

  void TearDown() override {
    if (server_) server_->Stop();
    ioc_.stop();
    if (thread_.joinable()) thread_.join();
    server_.reset();
    handlers_.reset();
    StoreTest::TearDown();
  }

  // The handlers' options; tests may override (starting from these).
  virtual ApiOptions Options() {
    ApiOptions options;
    options.token = kToken;
    options.cases_dir = dir_ + "/cases";
    return options;
  }

  // The server's options; tests may override.
  virtual HttpServerOptions ServerOptions() {
    HttpServerOptions options;
    options.body_limit = kBodyLimit;
    return options;
  }

  // A request on a fresh connection.
  HttpReply Call(const std::string& method, const std::string& target,
                 const std::string& body = "", const std::string& token = "") {
    HttpClient client(server_->port());
    EXPECT_TRUE(client.connected());
    return client.Request(method, target, body, token);
  }

  StoreSnapshot Snapshot() {
    StoreSnapshot s;
    auto st = check_->db()->Prepare("SELECT count(*) FROM cases");
    if (st.ok()) {
      StatusOr<bool> row = st->Step();
      if (row.ok() && *row) s.cases = st->ColumnInt64(0);
    }
    auto bugs = check_->ListBugs(std::nullopt, 0, 1 << 20);
    EXPECT_TRUE(bugs.ok());
    if (bugs.ok()) {
      for (const Bug& b : *bugs) {
        s.bugs.emplace_back(b.id, std::string(BugStateName(b.state)));
      }
    }
    auto events = check_->ListEvents(std::nullopt, 0, 1 << 20);
    EXPECT_TRUE(events.ok());
    if (events.ok()) {
      for (const Event& e : *events) s.events.push_back(e.id);
    }
    return s;
  }

  // The server still answers.
  void ExpectHealthy() {
    HttpReply r = Call("GET", "/healthz");
    EXPECT_EQ(r.status, 200) << r.body;
  }

  std::unique_ptr<Store> store_;  // The server's connection.
  std::unique_ptr<Store> check_;
  std::unique_ptr<ApiHandlers> handlers_;
  boost::asio::io_context ioc_;
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
};

}  // namespace trench::orchestrator::testing
