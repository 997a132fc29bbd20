// Assembles a streamed Messages API reply (SSE events message_start,
// content_block_start/delta/stop, message_delta, message_stop, ping, error)
// into one ChatResponse. Text deltas are concatenated; a tool_use block's
// input is the concatenation of its input_json_delta pieces (or the
// block's own "input" when no piece came).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "agents/llm_client.h"
#include "agents/llm_common.h"
#include "agents/sse.h"
#include "base/json.h"
#include "base/status.h"

namespace trench::agents {

class AnthropicStreamAccumulator {
 public:
  // REQUIRES: ids outlives the accumulator.
  explicit AnthropicStreamAccumulator(CallIdSource* ids) : ids_(ids) {}

  // Takes one event. Errors: kInvalidArgument when the data is not a JSON
  // object; kIoError for an "error" event (e.g. overloaded_error: retried).
  Status OnEvent(const SseEvent& event);
  // True once message_stop (or a message_delta with a stop_reason) came.
  bool complete() const { return stopped_; }
  // Errors: kIoError when the stream ended early; kInvalidArgument for a
  // tool_use block without a name.
  StatusOr<ChatResponse> Finish();

 private:
  struct Block {
    std::string type;  // "text", "tool_use", others ignored.
    std::string text;
    std::string id;
    std::string name;
    std::string input_json;  // Concatenated input_json_delta pieces.
    Json initial_input;      // content_block_start's "input".
  };

  CallIdSource* ids_;
  int events_ = 0;
  bool stopped_ = false;
  std::string stop_reason_;
  std::map<int64_t, Block> blocks_;  // By content block index.
  Usage usage_;
};

}  // namespace trench::agents
