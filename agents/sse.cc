#include "agents/sse.h"

namespace trench::agents {

bool IsDone(const SseEvent& event) {
  std::string_view d = event.data;
  while (!d.empty() && (d.back() == ' ' || d.back() == '\n')) {
    d.remove_suffix(1);
  }
  return d == "[DONE]";
}

Status SseParser::Feed(std::string_view bytes, std::vector<SseEvent>* out) {
  if (at_start_ && !bytes.empty()) {
    // The BOM may itself be split; wait until three bytes are known.
    line_.append(bytes);
    if (line_.size() < 3 &&
        std::string_view("\xEF\xBB\xBF").starts_with(line_)) {
      return Status::Ok();
    }
    at_start_ = false;
    std::string pending = std::move(line_);
    line_.clear();
    std::string_view rest = pending;
    if (rest.starts_with("\xEF\xBB\xBF")) rest.remove_prefix(3);
    return Feed(rest, out);
  }
  size_t start = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    const char c = bytes[i];
    if (c != '\n' && c != '\r') continue;
    if (c == '\n' && skip_lf_ && i == start && line_.empty()) {
      skip_lf_ = false;  // The LF of a CRLF.
      start = i + 1;
      continue;
    }
    line_.append(bytes.substr(start, i - start));
    RETURN_IF_ERROR(ProcessLine(line_, out));
    line_.clear();
    skip_lf_ = c == '\r';
    start = i + 1;
  }
  if (start < bytes.size()) {
    skip_lf_ = false;
    line_.append(bytes.substr(start));
    if (line_.size() > max_event_bytes_) {
      return ResourceExhausted("SSE line longer than " +
                               std::to_string(max_event_bytes_) + " bytes");
    }
  }
  return Status::Ok();
}

Status SseParser::Finish(std::vector<SseEvent>* out) {
  if (at_start_) {
    at_start_ = false;
    std::string pending = std::move(line_);
    line_.clear();
    RETURN_IF_ERROR(Feed(pending, out));
  }
  if (!line_.empty()) {
    RETURN_IF_ERROR(ProcessLine(line_, out));
    line_.clear();
  }
  Dispatch(out);
  return Status::Ok();
}

Status SseParser::ProcessLine(std::string_view line,
                              std::vector<SseEvent>* out) {
  if (line.empty()) {
    Dispatch(out);
    return Status::Ok();
  }
  if (line.front() == ':') return Status::Ok();  // A comment.
  const size_t colon = line.find(':');
  std::string_view field = line.substr(0, colon);
  std::string_view value;
  if (colon != std::string_view::npos) {
    value = line.substr(colon + 1);
    if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
  }
  if (field == "data") {
    if (data_.size() + value.size() + 1 > max_event_bytes_) {
      return ResourceExhausted("SSE event data longer than " +
                               std::to_string(max_event_bytes_) + " bytes");
    }
    if (has_data_) data_ += '\n';
    data_.append(value);
    has_data_ = true;
  } else if (field == "event") {
    event_.assign(value);
  } else if (field == "id") {
    if (value.find('\0') == std::string_view::npos) id_.assign(value);
  }
  return Status::Ok();
}

void SseParser::Dispatch(std::vector<SseEvent>* out) {
  if (has_data_) out->push_back(SseEvent{event_, data_, id_});
  // The id persists across events (last event id); type and data do not.
  event_.clear();
  data_.clear();
  has_data_ = false;
}

}  // namespace trench::agents
