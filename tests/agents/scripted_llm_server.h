// A scripted HTTP server for tests of HTTP clients (LLM backends, the CLI).
//
// It listens on 127.0.0.1 on an ephemeral port, serves one connection at a
// time on its own thread (plain POSIX sockets), and answers each request with
// the next reply from a queue the test fills. Every request is recorded
// (method, path, lower-case headers, body) so the test can assert what the
// client sent. Each reply closes its connection ("Connection: close").
//
// When the queue is empty the server answers 500 with the JSON body
// {"error":{"message":"scripted server: no reply
// queued","type":"server_error"}}.
//
// Thread-safety: all public methods may be called from the test thread while
// the server thread runs.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace trench::agents::testing {

struct ScriptedReply {
  int status = 200;
  // Extra headers (Content-Type defaults to application/json, or
  // text/event-stream when `chunks` is set, unless given here).
  std::vector<std::pair<std::string, std::string>> headers;
  // Sent with Content-Length when `chunks` is empty.
  std::string body;
  // When not empty: sent with Transfer-Encoding: chunked, one HTTP chunk
  // (and one write) per element, in order.
  std::vector<std::string> chunks;
  // Read the request, then never answer (until the client hangs up or the
  // server stops): for timeout tests.
  bool hang = false;
  // Read the request, then close the connection without any answer.
  bool close_without_reply = false;

  // `status` with `body` as compact JSON.
  static ScriptedReply WithJson(int status, const Json& body);
  // `status` with a raw (possibly malformed) body.
  static ScriptedReply WithText(int status, std::string body,
                                std::string content_type = "application/json");
  // 200 text/event-stream, each element sent as its own chunk verbatim
  // (the caller writes the "data: ...\n\n" framing, so it can split events
  // anywhere).
  static ScriptedReply WithChunks(std::vector<std::string> chunks);
  // 200 text/event-stream: one "data: <json>\n\n" chunk per event, then
  // "data: [DONE]\n\n" when `done`.
  static ScriptedReply WithSseData(const std::vector<Json>& events,
                                   bool done = true);
  static ScriptedReply Hang();
  // Adds a header; returns *this for chaining.
  ScriptedReply& Header(std::string name, std::string value);
};

struct RecordedRequest {
  std::string method;  // "POST"
  std::string path;    // "/v1/chat/completions" (with any query string).
  std::vector<std::pair<std::string, std::string>> headers;  // Lower-case.
  std::string body;

  // The first header with this lower-case name, or "".
  std::string Header(std::string_view lower_name) const;
  bool HasHeader(std::string_view lower_name) const;
  // The body parsed as JSON (InvalidArgument when it is not).
  StatusOr<Json> JsonBody() const;
};

class ScriptedLlmServer {
 public:
  // Binds 127.0.0.1:0 and starts the server thread. Check ok() / status().
  ScriptedLlmServer();
  // Stops the thread (hung connections are dropped) and closes the socket.
  ~ScriptedLlmServer();
  ScriptedLlmServer(const ScriptedLlmServer&) = delete;
  ScriptedLlmServer& operator=(const ScriptedLlmServer&) = delete;

  bool ok() const { return start_status_.ok(); }
  const Status& status() const { return start_status_; }
  int port() const { return port_; }
  // "http://127.0.0.1:<port>"
  std::string url() const;
  // url() + "/v1": what an LLM config's base_url takes.
  std::string base_url() const { return url() + "/v1"; }

  // Appends a reply to the queue.
  void Enqueue(ScriptedReply reply);
  // Replies not yet served.
  size_t pending() const;
  // A copy of all requests received so far, in order.
  std::vector<RecordedRequest> requests() const;
  // Blocks until at least `n` requests were recorded or the server stopped.
  void WaitForRequests(size_t n) const;

 private:
  void Serve();
  void HandleConnection(int fd);
  bool Stopping() const;

  Status start_status_;
  int listen_fd_ = -1;
  int wake_fds_[2] = {-1, -1};  // A pipe that wakes poll() on shutdown.
  int port_ = 0;
  std::thread thread_;

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool stopping_ = false;                  // GUARDED_BY(mu_)
  std::deque<ScriptedReply> replies_;      // GUARDED_BY(mu_)
  std::vector<RecordedRequest> requests_;  // GUARDED_BY(mu_)
};

// Replies the scripts send. An OpenAI chat completion calling tool `name`
// with `args` (a JSON string, as OpenAI sends it; usage 50 + 7 tokens).
Json OpenAiToolCallReply(const std::string& name, const std::string& args);

}  // namespace trench::agents::testing
