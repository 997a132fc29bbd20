// The client flow shared by the HTTP LLM backends (agents/llm_openai.h,
// agents/llm_anthropic.h): build the POST, send it with the retry policy
// (agents/llm_retry.h), plain or as an event stream
// (agents/llm_stream_fetch.h), parse the reply, and redact the API key from
// every error. Each backend supplies only what differs, as an HttpLlmBackend.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "agents/llm_client.h"
#include "agents/llm_common.h"
#include "agents/sse.h"
#include "base/json.h"
#include "base/status.h"

namespace trench::agents {

// Gathers one streamed reply (one per attempt). OnEvent's first error stops
// the transfer; complete() says the stream reached its end marker; Finish()
// gives the reply. Adapts the backends' accumulator classes via
// MakeStreamAccumulator.
class LlmStreamAccumulator {
 public:
  virtual ~LlmStreamAccumulator() = default;
  virtual Status OnEvent(const SseEvent& event) = 0;
  virtual bool complete() const = 0;
  virtual StatusOr<ChatResponse> Finish() = 0;
};

// Wraps an accumulator class T (constructible from CallIdSource*, with
// OnEvent / complete / Finish as above) as an LlmStreamAccumulator.
template <typename T>
std::unique_ptr<LlmStreamAccumulator> MakeStreamAccumulator(CallIdSource* ids) {
  class Adapter : public LlmStreamAccumulator {
   public:
    explicit Adapter(CallIdSource* ids) : acc_(ids) {}
    Status OnEvent(const SseEvent& event) override {
      return acc_.OnEvent(event);
    }
    bool complete() const override { return acc_.complete(); }
    StatusOr<ChatResponse> Finish() override { return acc_.Finish(); }

   private:
    T acc_;
  };
  return std::make_unique<Adapter>(ids);
}

// What one backend adds to the shared flow.
struct HttpLlmBackend {
  // The backend's name: LlmClient::backend() and the error context
  // "<name>: POST <url>".
  std::string name;
  // Joined to LlmConfig::base_url (JoinUrl), e.g. "chat/completions".
  std::string path;
  // Headers sent after "Content-Type: application/json" (version, auth).
  // They may hold the API key; they are never logged.
  std::vector<std::pair<std::string, std::string>> headers;
  // The JSON request body (asks for a stream when config.stream is set).
  std::function<Json(const LlmConfig&, const ChatRequest&)> build_request;
  // Parses a non-streamed 2xx reply body; errors name the problem.
  std::function<StatusOr<ChatResponse>(std::string_view, CallIdSource*)>
      parse_reply;
  // A fresh accumulator for one streamed attempt (with config.stream).
  std::function<std::unique_ptr<LlmStreamAccumulator>(CallIdSource*)>
      new_stream;
  // What the stream must reach to be complete, for the error
  // "the stream ended before <stream_end_name>".
  std::string stream_end_name;
};

// An LlmClient that POSTs to backend.path under config.base_url. Without
// config.stream the reply body goes to backend.parse_reply; with it, the
// request also sends "Accept: text/event-stream" and the events go to a new
// backend.new_stream accumulator per attempt. Retries follow
// FetchWithRetries; ChatResponse::attempts counts the attempts. Every error
// has api_key replaced by "[redacted]". One CallIdSource per client.
// REQUIRES: build_request, parse_reply and new_stream are set.
std::unique_ptr<LlmClient> NewHttpLlmClient(LlmConfig config,
                                            std::string api_key,
                                            HttpLlmBackend backend);

}  // namespace trench::agents
