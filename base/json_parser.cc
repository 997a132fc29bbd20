// The JSON parser: recursive descent over RFC 8259 with positions in every
// error and limits on size and depth.
#include <charconv>
#include <clocale>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <unordered_set>

#include "base/json.h"

namespace trench {
namespace {

class Parser {
 public:
  Parser(std::string_view text, const JsonParseOptions& opts)
      : s_(text), opts_(opts) {}

  StatusOr<Json> ParseDocument() {
    if (s_.size() > opts_.max_bytes) {
      return InvalidArgument("1:1: input of " + std::to_string(s_.size()) +
                             " bytes exceeds the limit of " +
                             std::to_string(opts_.max_bytes));
    }
    SkipSpace();
    ASSIGN_OR_RETURN(Json v, ParseValue(0));
    SkipSpace();
    if (pos_ != s_.size()) return Error("expected end of input");
    return v;
  }

 private:
  Status Error(const std::string& what) const { return ErrorAt(pos_, what); }

  Status ErrorAt(size_t at, const std::string& what) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < at && i < s_.size(); ++i) {
      if (s_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return InvalidArgument(std::to_string(line) + ":" + std::to_string(col) +
                           ": " + what);
  }

  bool AtEnd() const { return pos_ >= s_.size(); }
  char Peek() const { return AtEnd() ? '\0' : s_[pos_]; }

  void SkipSpace() {
    while (!AtEnd()) {
      const char c = s_[pos_];
      if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
      ++pos_;
    }
  }

  bool ConsumeWord(std::string_view w) {
    if (s_.substr(pos_, w.size()) != w) return false;
    pos_ += w.size();
    return true;
  }

  StatusOr<Json> ParseValue(size_t depth) {
    if (AtEnd()) return Error("expected a value, got end of input");
    switch (Peek()) {
      case '{':
        return ParseObject(depth);
      case '[':
        return ParseArray(depth);
      case '"': {
        ASSIGN_OR_RETURN(std::string str, ParseString());
        return Json(std::move(str));
      }
      case 't':
        if (ConsumeWord("true")) return Json(true);
        break;
      case 'f':
        if (ConsumeWord("false")) return Json(false);
        break;
      case 'n':
        if (ConsumeWord("null")) return Json();
        break;
      default:
        if (Peek() == '-' || (Peek() >= '0' && Peek() <= '9')) {
          return ParseNumber();
        }
    }
    return Error("expected a value");
  }

  Status CheckDepth(size_t depth) const {
    if (depth >= opts_.max_depth) {
      return Error("expected at most " + std::to_string(opts_.max_depth) +
                   " levels of nesting");
    }
    return Status();
  }

  StatusOr<Json> ParseArray(size_t depth) {
    RETURN_IF_ERROR(CheckDepth(depth));
    ++pos_;  // '['
    Json::Array arr;
    SkipSpace();
    if (Peek() == ']') {
      ++pos_;
      return Json(std::move(arr));
    }
    while (true) {
      SkipSpace();
      ASSIGN_OR_RETURN(Json v, ParseValue(depth + 1));
      arr.push_back(std::move(v));
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() == ']') {
        ++pos_;
        return Json(std::move(arr));
      }
      return Error("expected ',' or ']'");
    }
  }

  StatusOr<Json> ParseObject(size_t depth) {
    RETURN_IF_ERROR(CheckDepth(depth));
    ++pos_;  // '{'
    Json::Object obj;
    std::unordered_set<std::string> keys;
    SkipSpace();
    if (Peek() == '}') {
      ++pos_;
      return Json(std::move(obj));
    }
    while (true) {
      SkipSpace();
      if (Peek() != '"') return Error("expected a string key");
      const size_t key_pos = pos_;
      ASSIGN_OR_RETURN(std::string key, ParseString());
      if (!keys.insert(key).second) {
        return ErrorAt(key_pos,
                       "expected a unique key, \"" + key + "\" appears twice");
      }
      SkipSpace();
      if (Peek() != ':') return Error("expected ':'");
      ++pos_;
      SkipSpace();
      ASSIGN_OR_RETURN(Json v, ParseValue(depth + 1));
      obj.emplace_back(std::move(key), std::move(v));
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() == '}') {
        ++pos_;
        return Json(std::move(obj));
      }
      return Error("expected ',' or '}'");
    }
  }

  StatusOr<uint32_t> ParseHex4() {
    if (pos_ + 4 > s_.size()) return Error("expected 4 hex digits");
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = s_[pos_ + i];
      int d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        d = c - 'A' + 10;
      } else {
        return ErrorAt(pos_ + i, "expected a hex digit");
      }
      v = v * 16 + d;
    }
    pos_ += 4;
    return v;
  }

  static void AppendUtf8(uint32_t cp, std::string& out) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }

  // After a backslash: one escape, appended to out.
  Status ParseEscape(std::string& out) {
    const size_t at = pos_ - 1;
    if (AtEnd()) return Error("expected an escape character");
    const char c = s_[pos_++];
    switch (c) {
      case '"':
        out += '"';
        return Status();
      case '\\':
        out += '\\';
        return Status();
      case '/':
        out += '/';
        return Status();
      case 'b':
        out += '\b';
        return Status();
      case 'f':
        out += '\f';
        return Status();
      case 'n':
        out += '\n';
        return Status();
      case 'r':
        out += '\r';
        return Status();
      case 't':
        out += '\t';
        return Status();
      case 'u':
        break;
      default:
        return ErrorAt(at, "expected a valid escape sequence");
    }
    ASSIGN_OR_RETURN(uint32_t cp, ParseHex4());
    if (cp >= 0xdc00 && cp <= 0xdfff) {
      return ErrorAt(at, "expected a high surrogate before a low one");
    }
    if (cp >= 0xd800 && cp <= 0xdbff) {
      if (!ConsumeWord("\\u")) {
        return ErrorAt(at, "expected a low surrogate after a high one");
      }
      ASSIGN_OR_RETURN(uint32_t lo, ParseHex4());
      if (lo < 0xdc00 || lo > 0xdfff) {
        return ErrorAt(at, "expected a low surrogate after a high one");
      }
      cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    AppendUtf8(cp, out);
    return Status();
  }

  // A UTF-8 sequence starting at pos_ (lead byte >= 0x80), copied to out.
  Status ParseUtf8(std::string& out) {
    const auto b = [&](size_t k) { return static_cast<uint8_t>(s_[k]); };
    const uint8_t c = b(pos_);
    size_t n;
    uint32_t cp;
    if ((c & 0xe0) == 0xc0) {
      n = 2, cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      n = 3, cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      n = 4, cp = c & 0x07;
    } else {
      return Error("expected valid UTF-8");
    }
    if (pos_ + n > s_.size()) return Error("expected valid UTF-8");
    for (size_t k = 1; k < n; ++k) {
      if ((b(pos_ + k) & 0xc0) != 0x80) return Error("expected valid UTF-8");
      cp = (cp << 6) | (b(pos_ + k) & 0x3f);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
      return Error("expected valid UTF-8 (overlong, surrogate or > U+10FFFF)");
    }
    out.append(s_.substr(pos_, n));
    pos_ += n;
    return Status();
  }

  StatusOr<std::string> ParseString() {
    ++pos_;  // '"'
    std::string out;
    while (true) {
      if (AtEnd()) return Error("expected '\"' before end of input");
      const unsigned char c = s_[pos_];
      if (c == '"') {
        ++pos_;
        return out;
      }
      if (c == '\\') {
        ++pos_;
        RETURN_IF_ERROR(ParseEscape(out));
      } else if (c < 0x20) {
        return Error("expected an escaped control character in a string");
      } else if (c >= 0x80) {
        RETURN_IF_ERROR(ParseUtf8(out));
      } else {
        out += static_cast<char>(c);
        ++pos_;
      }
    }
  }

  size_t SkipDigits() {
    const size_t start = pos_;
    while (!AtEnd() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    return pos_ - start;
  }

  StatusOr<Json> ParseNumber() {
    const size_t start = pos_;
    if (Peek() == '-') ++pos_;
    if (Peek() == '0') {
      ++pos_;
    } else if (SkipDigits() == 0) {
      return Error("expected a digit");
    }
    bool integral = true;
    if (Peek() == '.') {
      ++pos_;
      integral = false;
      if (SkipDigits() == 0) return Error("expected a digit after '.'");
    }
    if (Peek() == 'e' || Peek() == 'E') {
      ++pos_;
      integral = false;
      if (Peek() == '+' || Peek() == '-') ++pos_;
      if (SkipDigits() == 0) return Error("expected a digit in the exponent");
    }
    const std::string_view text = s_.substr(start, pos_ - start);
    const char* b = text.data();
    const char* e = b + text.size();
    if (integral) {
      int64_t i;
      if (std::from_chars(b, e, i).ec == std::errc()) return Json(i);
      uint64_t u;
      if (text[0] != '-' && std::from_chars(b, e, u).ec == std::errc()) {
        return Json(u);
      }
    }
    double d = 0;
    const auto r = std::from_chars(b, e, d);
    if (r.ec == std::errc::result_out_of_range) {
      // from_chars reports underflow as out of range too; those values
      // round to zero or a subnormal, which strtod gives us.
      std::string copy(text);
      d = std::strtod(copy.c_str(), nullptr);
      if (std::isinf(d)) {
        return ErrorAt(start, "expected a number within double range");
      }
    } else if (r.ec != std::errc() || r.ptr != e) {
      return ErrorAt(start, "expected a number");
    }
    return Json::RawNumber(d, std::string(text));
  }

  std::string_view s_;
  const JsonParseOptions& opts_;
  size_t pos_ = 0;
};

}  // namespace

StatusOr<Json> ParseJson(std::string_view text,
                         const JsonParseOptions& options) {
  return Parser(text, options).ParseDocument();
}

}  // namespace trench
