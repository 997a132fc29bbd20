#include "agents/llm_http_client.h"

#include <utility>

#include "agents/http_client.h"
#include "agents/llm_retry.h"
#include "agents/llm_stream_fetch.h"

namespace trench::agents {
namespace {

class HttpLlmClient : public LlmClient {
 public:
  HttpLlmClient(LlmConfig config, std::string api_key, HttpLlmBackend backend)
      : config_(std::move(config)),
        api_key_(std::move(api_key)),
        backend_(std::move(backend)) {}

  std::string_view backend() const override { return backend_.name; }

  StatusOr<ChatResponse> Chat(const ChatRequest& request) override {
    auto result = ChatUnredacted(request);
    if (!result.ok()) return RedactStatus(result.status(), api_key_);
    return result;
  }

 private:
  StatusOr<ChatResponse> ChatUnredacted(const ChatRequest& request) {
    HttpRequest http;
    http.method = "POST";
    http.url = JoinUrl(config_.base_url, backend_.path);
    http.body = backend_.build_request(config_, request).Dump();
    http.timeout_seconds = config_.timeout_seconds;
    http.cancel = request.cancel;
    const RetryBounds bounds{request.cancel, request.time_limit_seconds};
    http.headers.emplace_back("Content-Type", "application/json");
    for (const auto& header : backend_.headers) http.headers.push_back(header);
    const std::string what = backend_.name + ": POST " + http.url;
    int attempts = 0;
    if (!config_.stream) {
      ASSIGN_OR_RETURN(HttpResponse resp, FetchWithRetries(
                                              config_, what,
                                              [&](double timeout) {
                                                http.timeout_seconds = timeout;
                                                return HttpFetch(http);
                                              },
                                              &attempts, bounds));
      ASSIGN_OR_RETURN(ChatResponse out,
                       backend_.parse_reply(resp.body, &ids_));
      out.attempts = attempts;
      return out;
    }
    http.headers.emplace_back("Accept", "text/event-stream");
    std::unique_ptr<LlmStreamAccumulator> acc;
    auto attempt = [&](double timeout) -> StatusOr<HttpResponse> {
      http.timeout_seconds = timeout;
      acc = backend_.new_stream(&ids_);
      return FetchEventStream(
          http, what, [&](const SseEvent& e) { return acc->OnEvent(e); },
          [&] { return acc->complete(); }, backend_.stream_end_name);
    };
    RETURN_IF_ERROR(
        FetchWithRetries(config_, what, attempt, &attempts, bounds).status());
    ASSIGN_OR_RETURN(ChatResponse out, acc->Finish());
    out.attempts = attempts;
    return out;
  }

  LlmConfig config_;
  std::string api_key_;
  HttpLlmBackend backend_;
  CallIdSource ids_;
};

}  // namespace

std::unique_ptr<LlmClient> NewHttpLlmClient(LlmConfig config,
                                            std::string api_key,
                                            HttpLlmBackend backend) {
  return std::make_unique<HttpLlmClient>(std::move(config), std::move(api_key),
                                         std::move(backend));
}

}  // namespace trench::agents
