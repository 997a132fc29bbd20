#include "compiler/ir/npy_header.h"

#include <limits>
#include <optional>

namespace trench::npy {
namespace {

class HeaderParser {
 public:
  explicit HeaderParser(std::string_view s) : s_(s) {}

  StatusOr<Header> Parse() {
    Header h;
    bool have_descr = false, have_order = false, have_shape = false;
    SkipSpace();
    RETURN_IF_ERROR(Expect('{', "'{'"));
    while (true) {
      SkipSpace();
      if (Peek() == '}') break;
      const size_t key_pos = pos_;
      ASSIGN_OR_RETURN(std::string key, ParseString("a key"));
      SkipSpace();
      RETURN_IF_ERROR(Expect(':', "':'"));
      SkipSpace();
      if ((key == "descr" && have_descr) ||
          (key == "fortran_order" && have_order) ||
          (key == "shape" && have_shape)) {
        pos_ = key_pos;
        return Error("each key once, '" + key + "' appears twice");
      }
      if (key == "descr") {
        if (Peek() == '[') {
          return Error(
              "a simple descr string (structured dtypes are not "
              "supported)");
        }
        ASSIGN_OR_RETURN(h.descr, ParseString("a descr string"));
        have_descr = true;
      } else if (key == "fortran_order") {
        ASSIGN_OR_RETURN(h.fortran_order, ParseBool());
        have_order = true;
      } else if (key == "shape") {
        ASSIGN_OR_RETURN(h.shape, ParseTuple());
        have_shape = true;
      } else {
        pos_ = key_pos;
        return Error("'descr', 'fortran_order' or 'shape', got '" + key + "'");
      }
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() != '}') return Error("',' or '}'");
    }
    ++pos_;
    SkipSpace();
    if (pos_ != s_.size()) return Error("end of header after '}'");
    if (!have_descr) return Error("'descr'");
    if (!have_order) return Error("'fortran_order'");
    if (!have_shape) return Error("'shape'");
    return h;
  }

 private:
  Status Error(const std::string& what) const {
    return InvalidArgument("npy header: expected " + what + " at offset " +
                           std::to_string(pos_));
  }
  char Peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void SkipSpace() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\n' ||
                                s_[pos_] == '\t' || s_[pos_] == '\r')) {
      ++pos_;
    }
  }
  Status Expect(char c, const char* what) {
    if (Peek() != c) return Error(what);
    ++pos_;
    return Status();
  }

  StatusOr<std::string> ParseString(const char* what) {
    const char q = Peek();
    if (q != '\'' && q != '"') return Error(what);
    const size_t end = s_.find(q, pos_ + 1);
    if (end == std::string_view::npos) return Error("a closing quote");
    std::string out(s_.substr(pos_ + 1, end - pos_ - 1));
    if (out.find('\\') != std::string::npos) {
      return Error("a string without escapes");
    }
    pos_ = end + 1;
    return out;
  }

  StatusOr<bool> ParseBool() {
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    return Error("True or False");
  }

  StatusOr<int64_t> ParseInt() {
    const size_t start = pos_;
    int64_t v = 0;
    while (Peek() >= '0' && Peek() <= '9') {
      const int d = Peek() - '0';
      if (v > (std::numeric_limits<int64_t>::max() - d) / 10) {
        pos_ = start;
        return Error("a dimension that fits in int64");
      }
      v = v * 10 + d;
      ++pos_;
    }
    if (pos_ == start) return Error("a non-negative integer");
    if (Peek() == 'L') ++pos_;
    return v;
  }

  StatusOr<std::vector<int64_t>> ParseTuple() {
    RETURN_IF_ERROR(Expect('(', "'(' starting the shape tuple"));
    std::vector<int64_t> dims;
    while (true) {
      SkipSpace();
      if (Peek() == ')') break;
      ASSIGN_OR_RETURN(int64_t d, ParseInt());
      dims.push_back(d);
      SkipSpace();
      if (Peek() == ',') {
        ++pos_;
        continue;
      }
      if (Peek() != ')') return Error("',' or ')' in the shape tuple");
    }
    ++pos_;
    return dims;
  }

  std::string_view s_;
  size_t pos_ = 0;
};

}  // namespace

StatusOr<Header> ParseHeader(std::string_view text) {
  return HeaderParser(text).Parse();
}

std::string FormatHeader(const Header& header) {
  std::string s = "{'descr': '" + header.descr + "', 'fortran_order': ";
  s += header.fortran_order ? "True" : "False";
  s += ", 'shape': (";
  for (size_t i = 0; i < header.shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(header.shape[i]);
  }
  if (header.shape.size() == 1) s += ",";
  s += "), }";
  return s;
}

}  // namespace trench::npy
