// Assembles a streamed Chat Completions reply (SSE "chat.completion.chunk"
// events) into one ChatResponse, tolerating the quirks listed in
// agents/llm_client.h: arguments streamed as string pieces or sent whole as
// an object, missing ids, parallel calls that all carry index 0 (a new id,
// or a name while the current call already has one, starts a new call),
// and finish_reason "stop" with tool calls.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "agents/llm_client.h"
#include "agents/llm_common.h"
#include "agents/sse.h"
#include "base/json.h"
#include "base/status.h"

namespace trench::agents {

class OpenAiStreamAccumulator {
 public:
  // REQUIRES: ids outlives the accumulator.
  explicit OpenAiStreamAccumulator(CallIdSource* ids) : ids_(ids) {}

  // Takes one event. Errors: kInvalidArgument when the data is not a JSON
  // object (naming the event number); kIoError when the server sent an
  // error object in the stream (retryable, like a dropped connection).
  Status OnEvent(const SseEvent& event);
  // True once "data: [DONE]" arrived.
  bool done() const { return done_; }
  // True once [DONE] or a finish_reason arrived (Finish() can succeed).
  bool complete() const { return done_ || finished_; }
  // The assembled reply. Errors: kIoError when the stream ended before
  // both a finish_reason and [DONE]; kInvalidArgument for a tool call
  // without a name.
  StatusOr<ChatResponse> Finish();

 private:
  struct PartialCall {
    std::string id;
    std::string name;
    std::string arguments;
  };
  void OnToolCallDelta(const Json& delta);

  CallIdSource* ids_;
  int events_ = 0;
  bool done_ = false;
  bool finished_ = false;  // A finish_reason arrived.
  std::string finish_reason_;
  std::string content_;
  std::vector<PartialCall> calls_;
  std::map<int64_t, size_t> slot_;  // Stream index -> its latest call.
  Usage usage_;
};

}  // namespace trench::agents
