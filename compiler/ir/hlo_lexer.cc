#include "compiler/ir/hlo_lexer.h"

#include <charconv>
#include <vector>

namespace trench {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' ||
         c == '\v';
}

bool IsNameStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

}  // namespace

bool HloLexer::IsNameChar(char c) {
  return IsNameStart(c) || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

HloLexer HloLexer::Sub(size_t begin, size_t end) const {
  HloLexer sub(text_, first_line_);
  sub.pos_ = begin;
  sub.end_ = end;
  return sub;
}

void HloLexer::SkipSpace() {
  while (pos_ < end_) {
    const char c = text_[pos_];
    if (IsSpace(c)) {
      ++pos_;
    } else if (c == '/' && PeekRaw(1) == '/') {
      while (pos_ < end_ && text_[pos_] != '\n') ++pos_;
    } else if (c == '/' && PeekRaw(1) == '*') {
      const size_t close = text_.substr(0, end_).find("*/", pos_ + 2);
      if (close == std::string_view::npos) return;  // Unterminated.
      pos_ = close + 2;
    } else {
      return;
    }
  }
}

char HloLexer::Peek() {
  SkipSpace();
  return pos_ < end_ ? text_[pos_] : '\0';
}

char HloLexer::PeekRaw(size_t k) const {
  return pos_ + k < end_ ? text_[pos_ + k] : '\0';
}

bool HloLexer::AtEnd() {
  SkipSpace();
  return pos_ >= end_;
}

bool HloLexer::TryConsume(char c) {
  if (Peek() != c || pos_ >= end_) return false;
  ++pos_;
  return true;
}

bool HloLexer::TryConsume(std::string_view s) {
  SkipSpace();
  if (text_.substr(0, end_).substr(pos_).starts_with(s)) {
    pos_ += s.size();
    return true;
  }
  return false;
}

bool HloLexer::TryConsumeWord(std::string_view word) {
  SkipSpace();
  if (!text_.substr(0, end_).substr(pos_).starts_with(word)) return false;
  if (IsNameChar(PeekRaw(word.size()))) return false;
  pos_ += word.size();
  return true;
}

Status HloLexer::Expect(char c) {
  if (TryConsume(c)) return Status::Ok();
  return Error(std::string("'") + c + "'");
}

Status HloLexer::Expect(std::string_view s) {
  if (TryConsume(s)) return Status::Ok();
  return Error("'" + std::string(s) + "'");
}

bool HloLexer::PeekName() {
  const char c = Peek();
  if (c == '%') return IsNameChar(PeekRaw(1));
  return IsNameStart(c);
}

std::string_view HloLexer::PeekWord() {
  SkipSpace();
  size_t e = pos_;
  while (e < end_ && IsNameChar(text_[e])) ++e;
  return text_.substr(pos_, e - pos_);
}

std::string_view HloLexer::ConsumeWord() {
  std::string_view w = PeekWord();
  pos_ += w.size();
  return w;
}

StatusOr<std::string> HloLexer::ParseName(std::string_view what) {
  if (!PeekName()) return Error(what);
  if (text_[pos_] == '%') ++pos_;
  return std::string(ConsumeWord());
}

StatusOr<int64_t> HloLexer::ParseInt(std::string_view what) {
  SkipSpace();
  const size_t start = pos_;
  size_t e = pos_;
  if (e < end_ && text_[e] == '-') ++e;
  const size_t digits = e;
  while (e < end_ && text_[e] >= '0' && text_[e] <= '9') ++e;
  if (e == digits) return Error(what);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text_.data() + start, text_.data() + e, v);
  if (ec != std::errc()) {
    return ErrorAt(start, "integer " +
                              std::string(text_.substr(start, e - start)) +
                              " is out of range");
  }
  pos_ = e;
  return v;
}

StatusOr<bool> HloLexer::ParseBool(std::string_view what) {
  if (TryConsumeWord("true")) return true;
  if (TryConsumeWord("false")) return false;
  return Error(what);
}

Status HloLexer::ScanRawValue(size_t* begin, size_t* end) {
  SkipSpace();
  *begin = pos_;
  std::vector<char> closers;
  while (pos_ < end_) {
    const char c = text_[pos_];
    if (c == '"') {
      const size_t open = pos_++;
      while (pos_ < end_ && text_[pos_] != '"') {
        pos_ += text_[pos_] == '\\' ? 2 : 1;
      }
      if (pos_ >= end_) {
        pos_ = open;
        return ErrorAt(open, "unterminated string");
      }
      ++pos_;
      continue;
    }
    if (closers.empty() && (c == ',' || IsSpace(c))) break;
    if (closers.empty() && c == '/' &&
        (PeekRaw(1) == '/' || PeekRaw(1) == '*')) {
      break;
    }
    if (c == '{' || c == '[' || c == '(') {
      closers.push_back(c == '{' ? '}' : c == '[' ? ']' : ')');
    } else if (c == '}' || c == ']' || c == ')') {
      if (closers.empty()) break;
      if (closers.back() != c) {
        return ErrorAt(pos_, std::string("expected '") + closers.back() +
                                 "', got '" + c + "'");
      }
      closers.pop_back();
    }
    ++pos_;
  }
  if (!closers.empty()) {
    return ErrorAt(pos_, std::string("expected '") + closers.back() +
                             "', got end of input");
  }
  *end = pos_;
  if (*begin == *end) return Error("attribute value");
  return Status::Ok();
}

Status HloLexer::Error(std::string_view expected) {
  SkipSpace();
  return ErrorAt(
      pos_, "expected " + std::string(expected) + ", got " + Describe(pos_));
}

Status HloLexer::ErrorAt(size_t p, std::string_view message) const {
  return InvalidArgument(Location(p) + ": " + std::string(message));
}

std::string HloLexer::Location(size_t p) const {
  int line = first_line_;
  size_t line_start = 0;
  for (size_t i = 0; i < p && i < text_.size(); ++i) {
    if (text_[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return std::to_string(line) + ":" + std::to_string(p - line_start + 1);
}

std::string HloLexer::Describe(size_t p) const {
  if (p >= end_) return "end of input";
  const char c = text_[p];
  if (c == '/' && p + 1 < end_ && text_[p + 1] == '*') {
    return "unterminated comment";
  }
  size_t e = p;
  if (c == '%') ++e;
  while (e < end_ && e - p < 40 && IsNameChar(text_[e])) ++e;
  if (e == p || (c == '%' && e == p + 1)) e = p + 1;
  std::string tok(text_.substr(p, e - p));
  for (char& ch : tok) {
    if (static_cast<unsigned char>(ch) < 0x20 ||
        static_cast<unsigned char>(ch) >= 0x7f) {
      ch = '?';
    }
  }
  return "'" + tok + "'";
}

}  // namespace trench
