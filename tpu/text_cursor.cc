#include "tpu/text_cursor.h"

#include <cctype>
#include <vector>

namespace trench::tpu {
namespace {

// ASCII only (the grammar's), without the C locale's per-call lookups.
bool IdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IdentChar(char c) {
  return IdentStart(c) || (c >= '0' && c <= '9') || c == '.';
}

}  // namespace

void TextCursor::SkipSpace() {
  while (pos_ < s_.size() &&
         (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\r')) {
    ++pos_;
  }
  if (pos_ < s_.size() && (s_[pos_] == ';' || s_.substr(pos_, 2) == "//")) {
    pos_ = s_.size();
  }
}

bool TextCursor::AtEnd() {
  SkipSpace();
  return pos_ >= s_.size();
}

char TextCursor::Peek() {
  SkipSpace();
  return pos_ < s_.size() ? s_[pos_] : '\0';
}

bool TextCursor::Consume(char c) {
  if (Peek() != c) return false;
  ++pos_;
  return true;
}

bool TextCursor::ConsumeWord(std::string_view word) {
  SkipSpace();
  if (s_.substr(pos_, word.size()) != word) return false;
  size_t end = pos_ + word.size();
  if (end < s_.size() && IdentChar(s_[end])) return false;
  pos_ = end;
  return true;
}

Status TextCursor::Error(const std::string& message) const {
  return InvalidArgument(std::to_string(line_) + ":" +
                         std::to_string(pos_ + 1) + ": " + message);
}

Status TextCursor::ErrorAt(int column, const std::string& message) const {
  return InvalidArgument(std::to_string(line_) + ":" + std::to_string(column) +
                         ": " + message);
}

Status TextCursor::Expect(char c) {
  if (Consume(c)) return Status::Ok();
  return Error(std::string("expected '") + c + "'");
}

StatusOr<std::string_view> TextCursor::IdentView() {
  SkipSpace();
  if (pos_ >= s_.size() || !IdentStart(s_[pos_])) {
    return Error("expected an identifier");
  }
  size_t start = pos_;
  while (pos_ < s_.size() && IdentChar(s_[pos_])) ++pos_;
  return s_.substr(start, pos_ - start);
}

StatusOr<std::string> TextCursor::Ident() {
  ASSIGN_OR_RETURN(std::string_view id, IdentView());
  return std::string(id);
}

StatusOr<int64_t> TextCursor::Int() {
  SkipSpace();
  size_t start = pos_;
  bool neg = false;
  if (pos_ < s_.size() && (s_[pos_] == '-' || s_[pos_] == '+')) {
    neg = s_[pos_] == '-';
    ++pos_;
  }
  int base = 10;
  if (s_.substr(pos_, 2) == "0x" || s_.substr(pos_, 2) == "0X") {
    base = 16;
    pos_ += 2;
  }
  uint64_t v = 0;
  size_t digits = 0;
  while (pos_ < s_.size()) {
    char c = s_[pos_];
    int d;
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (base == 16 && std::isxdigit(static_cast<unsigned char>(c))) {
      d = std::tolower(c) - 'a' + 10;
    } else {
      break;
    }
    if (v > (UINT64_MAX - d) / base) {
      pos_ = start;
      return Error("integer out of range");
    }
    v = v * base + d;
    ++pos_;
    ++digits;
  }
  if (digits == 0 || (pos_ < s_.size() && IdentChar(s_[pos_]))) {
    pos_ = start;
    return Error("expected an integer");
  }
  // Hex is taken as a bit pattern (may set the sign bit); decimal must fit.
  if (base == 10 && v > (neg ? uint64_t{1} << 63 : uint64_t{INT64_MAX})) {
    pos_ = start;
    return Error("integer out of range");
  }
  return neg ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
}

StatusOr<std::string> TextCursor::NumberText() {
  SkipSpace();
  size_t start = pos_;
  if (pos_ < s_.size() && (s_[pos_] == '-' || s_[pos_] == '+')) ++pos_;
  while (pos_ < s_.size()) {
    char c = s_[pos_];
    bool exp_sign = (c == '-' || c == '+') && pos_ > start &&
                    (s_[pos_ - 1] == 'e' || s_[pos_ - 1] == 'E') &&
                    s_.substr(start, 2) != "0x" && s_.substr(start, 3) != "-0x";
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || exp_sign) {
      ++pos_;
    } else {
      break;
    }
  }
  if (pos_ == start) return Error("expected a number");
  return std::string(s_.substr(start, pos_ - start));
}

StatusOr<std::string> TextCursor::Quoted() {
  RETURN_IF_ERROR(Expect('"'));
  std::string out;
  while (pos_ < s_.size() && s_[pos_] != '"') {
    char c = s_[pos_++];
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (pos_ >= s_.size()) break;
    char e = s_[pos_++];
    if (e == 'n') {
      out.push_back('\n');
    } else if (e == 't') {
      out.push_back('\t');
    } else if (e == 'x' && pos_ + 2 <= s_.size() &&
               std::isxdigit(static_cast<unsigned char>(s_[pos_])) &&
               std::isxdigit(static_cast<unsigned char>(s_[pos_ + 1]))) {
      out.push_back(static_cast<char>(
          std::stoi(std::string(s_.substr(pos_, 2)), nullptr, 16)));
      pos_ += 2;
    } else if (e == '"' || e == '\\') {
      out.push_back(e);
    } else {
      return Error("bad escape in string");
    }
  }
  if (pos_ >= s_.size()) return Error("unterminated string");
  ++pos_;
  return out;
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string_view::npos) {
      if (start < text.size()) lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  return lines;
}

}  // namespace trench::tpu
