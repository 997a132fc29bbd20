#include "tests/agents/scripted_llm_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <optional>

namespace trench::agents::testing {
namespace {

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(uint8_t(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

const char* Reason(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 404:
      return "Not Found";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 529:
      return "Overloaded";
    default:
      return "Status";
  }
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool HasHeader(const ScriptedReply& r, std::string_view lower) {
  for (const auto& [name, value] : r.headers) {
    if (Lower(name) == lower) return true;
  }
  return false;
}

std::string ChunkFrame(std::string_view data) {
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  return std::string(size) + std::string(data) + "\r\n";
}

// Parses the head (request line + headers) of a request.
std::optional<RecordedRequest> ParseHead(std::string_view head) {
  RecordedRequest req;
  size_t eol = head.find("\r\n");
  std::string_view line = head.substr(0, eol);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = line.find(' ', sp1 + 1);
  if (sp1 == std::string_view::npos || sp2 == std::string_view::npos) {
    return std::nullopt;
  }
  req.method = std::string(line.substr(0, sp1));
  req.path = std::string(line.substr(sp1 + 1, sp2 - sp1 - 1));
  while (eol != std::string_view::npos) {
    const size_t start = eol + 2;
    eol = head.find("\r\n", start);
    line = head.substr(start,
                       eol == std::string_view::npos ? head.npos : eol - start);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    req.headers.emplace_back(Lower(Trim(line.substr(0, colon))),
                             std::string(Trim(line.substr(colon + 1))));
  }
  return req;
}

}  // namespace

ScriptedReply ScriptedReply::WithJson(int status, const Json& body) {
  return WithText(status, body.Dump());
}

ScriptedReply ScriptedReply::WithText(int status, std::string body,
                                      std::string content_type) {
  ScriptedReply r;
  r.status = status;
  r.body = std::move(body);
  r.headers.emplace_back("Content-Type", std::move(content_type));
  return r;
}

ScriptedReply ScriptedReply::WithChunks(std::vector<std::string> chunks) {
  ScriptedReply r;
  r.chunks = std::move(chunks);
  return r;
}

ScriptedReply ScriptedReply::WithSseData(const std::vector<Json>& events,
                                         bool done) {
  std::vector<std::string> chunks;
  for (const Json& e : events) chunks.push_back("data: " + e.Dump() + "\n\n");
  if (done) chunks.push_back("data: [DONE]\n\n");
  return WithChunks(std::move(chunks));
}

ScriptedReply ScriptedReply::Hang() {
  ScriptedReply r;
  r.hang = true;
  return r;
}

ScriptedReply& ScriptedReply::Header(std::string name, std::string value) {
  headers.emplace_back(std::move(name), std::move(value));
  return *this;
}

std::string RecordedRequest::Header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return "";
}

bool RecordedRequest::HasHeader(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return true;
  }
  return false;
}

StatusOr<Json> RecordedRequest::JsonBody() const { return ParseJson(body); }

ScriptedLlmServer::ScriptedLlmServer() {
  if (::pipe2(wake_fds_, O_CLOEXEC) != 0) {
    start_status_ = IoError(std::string("pipe: ") + std::strerror(errno));
    return;
  }
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (listen_fd_ < 0 ||
      ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) ||
      ::listen(listen_fd_, 16) ||
      ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len)) {
    start_status_ = IoError(std::string("listen: ") + std::strerror(errno));
    return;
  }
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { Serve(); });
}

ScriptedLlmServer::~ScriptedLlmServer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (wake_fds_[1] >= 0) {
    const char c = 'x';
    [[maybe_unused]] ssize_t n = ::write(wake_fds_[1], &c, 1);
  }
  if (thread_.joinable()) thread_.join();
  for (int fd : {listen_fd_, wake_fds_[0], wake_fds_[1]}) {
    if (fd >= 0) ::close(fd);
  }
}

std::string ScriptedLlmServer::url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

void ScriptedLlmServer::Enqueue(ScriptedReply reply) {
  std::lock_guard<std::mutex> lock(mu_);
  replies_.push_back(std::move(reply));
}

size_t ScriptedLlmServer::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return replies_.size();
}

std::vector<RecordedRequest> ScriptedLlmServer::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

void ScriptedLlmServer::WaitForRequests(size_t n) const {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return stopping_ || requests_.size() >= n; });
}

bool ScriptedLlmServer::Stopping() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stopping_;
}

void ScriptedLlmServer::Serve() {
  while (!Stopping()) {
    pollfd fds[2] = {{listen_fd_, POLLIN, 0}, {wake_fds_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) return;
    if (fds[1].revents) return;
    if (!(fds[0].revents & POLLIN)) continue;
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    HandleConnection(fd);
    ::close(fd);
  }
}

void ScriptedLlmServer::HandleConnection(int fd) {
  // Waits for `fd` to be readable; false on shutdown.
  auto wait_readable = [&] {
    pollfd fds[2] = {{fd, POLLIN, 0}, {wake_fds_[0], POLLIN, 0}};
    while (::poll(fds, 2, -1) < 0) {
      if (errno != EINTR) return false;
    }
    return fds[1].revents == 0;
  };
  std::string data;
  size_t head_end = std::string::npos;
  std::optional<RecordedRequest> req;
  size_t body_len = 0;
  char buf[16384];
  while (true) {
    if (!req && head_end == std::string::npos) {
      head_end = data.find("\r\n\r\n");
      if (head_end != std::string::npos) {
        req = ParseHead(std::string_view(data).substr(0, head_end));
        if (!req) return;
        const std::string cl = req->Header("content-length");
        body_len = cl.empty() ? 0 : std::strtoull(cl.c_str(), nullptr, 10);
      }
    }
    if (req && data.size() >= head_end + 4 + body_len) break;
    if (!wait_readable()) return;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return;  // The client went away before a full request.
    data.append(buf, static_cast<size_t>(n));
  }
  req->body = data.substr(head_end + 4, body_len);

  ScriptedReply reply;
  {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(*req);
    if (replies_.empty()) {
      reply = ScriptedReply::WithText(
          500, R"({"error":{"message":"scripted server: no reply queued",)"
               R"("type":"server_error"}})");
    } else {
      reply = std::move(replies_.front());
      replies_.pop_front();
    }
  }
  cv_.notify_all();

  if (reply.close_without_reply) return;
  if (reply.hang) {
    // Until the client hangs up (recv() == 0) or the server stops.
    while (wait_readable() && ::recv(fd, buf, sizeof(buf), 0) > 0) {
    }
    return;
  }
  const bool chunked = !reply.chunks.empty();
  std::string head = "HTTP/1.1 " + std::to_string(reply.status) + " " +
                     Reason(reply.status) + "\r\n";
  if (!HasHeader(reply, "content-type")) {
    head += chunked ? "Content-Type: text/event-stream\r\n"
                    : "Content-Type: application/json\r\n";
  }
  for (const auto& [name, value] : reply.headers) {
    head += name + ": " + value + "\r\n";
  }
  head += "Connection: close\r\n";
  if (chunked) {
    head += "Transfer-Encoding: chunked\r\n\r\n";
    if (!SendAll(fd, head)) return;
    for (const std::string& chunk : reply.chunks) {
      if (chunk.empty()) continue;  // An empty chunk would end the body.
      if (!SendAll(fd, ChunkFrame(chunk))) return;
    }
    SendAll(fd, "0\r\n\r\n");
  } else {
    head += "Content-Length: " + std::to_string(reply.body.size()) + "\r\n\r\n";
    SendAll(fd, head + reply.body);
  }
}

Json OpenAiToolCallReply(const std::string& name, const std::string& args) {
  StatusOr<Json> call = ParseJson(R"({"id": "call_1", "type": "function",
      "function": {"name": "", "arguments": ""}})");
  StatusOr<Json> reply = ParseJson(R"({"id": "c", "object": "chat.completion",
      "choices": [{"index": 0, "finish_reason": "tool_calls",
                   "message": {"role": "assistant", "content": null}}],
      "usage": {"prompt_tokens": 50, "completion_tokens": 7}})");
  (*call)["function"]["name"] = name;
  (*call)["function"]["arguments"] = args;
  (*reply)["choices"].mutable_array()[0]["message"]["tool_calls"] =
      Json(Json::Array{*call});
  return *reply;
}

}  // namespace trench::agents::testing
