// An incremental Server-Sent-Events parser (the WHATWG "text/event-stream"
// format), fed with the bytes of a response as they arrive.
//
// Lines end with LF, CR or CRLF (a CRLF split across two Feed calls counts
// once). "data:" lines append to the event's data (joined with "\n"),
// "event:" sets its type, "id:" its id; one space after the colon is
// dropped; lines starting with ':' are comments; "retry:" and unknown
// fields are ignored. A blank line dispatches the event when it has data.
// A leading UTF-8 BOM is skipped. The parser does not interpret the data
// (OpenAI's "[DONE]" is an ordinary event; see IsDone()).
//
// Errors: kResourceExhausted when one line or one event's data grows past
// max_event_bytes (the stream is then unusable).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace trench::agents {

struct SseEvent {
  std::string event;  // "" when the stream gave no "event:" line.
  std::string data;
  std::string id;
};

// True for the OpenAI end-of-stream sentinel "data: [DONE]".
bool IsDone(const SseEvent& event);

class SseParser {
 public:
  explicit SseParser(size_t max_event_bytes = size_t{16} << 20)
      : max_event_bytes_(max_event_bytes) {}

  // Parses `bytes` and appends each completed event to `*out`.
  Status Feed(std::string_view bytes, std::vector<SseEvent>* out);
  // End of stream: a last line without its line break is processed and an
  // event without its blank line is dispatched (lenient, since some servers
  // omit the final blank line).
  Status Finish(std::vector<SseEvent>* out);

 private:
  Status ProcessLine(std::string_view line, std::vector<SseEvent>* out);
  void Dispatch(std::vector<SseEvent>* out);

  size_t max_event_bytes_;
  std::string line_;      // The current, unfinished line.
  bool skip_lf_ = false;  // The last byte was a CR: an LF next is its pair.
  bool at_start_ = true;  // BOM check pending.
  std::string event_;
  std::string data_;
  bool has_data_ = false;
  std::string id_;
};

}  // namespace trench::agents
