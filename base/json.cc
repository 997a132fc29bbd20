// Json value methods and the printer. The parser is in json_parser.cc.
#include "base/json.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace trench {
namespace {

std::string ShortestDouble(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), d);
  std::string s(buf, end);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

const char* TypeName(Json::Type t) {
  switch (t) {
    case Json::Type::kNull:
      return "null";
    case Json::Type::kBool:
      return "a boolean";
    case Json::Type::kInt64:
    case Json::Type::kUint64:
      return "an integer";
    case Json::Type::kDouble:
      return "a number";
    case Json::Type::kString:
      return "a string";
    case Json::Type::kArray:
      return "an array";
    case Json::Type::kObject:
      return "an object";
  }
  return "?";
}

Status TypeError(const char* want, const Json& got) {
  return InvalidArgument(std::string("expected ") + want + ", got " +
                         TypeName(got.type()));
}

}  // namespace

Json Json::RawNumber(double value, std::string text) {
  Json j;
  j.v_ = Double{value, std::move(text)};
  return j;
}

double Json::number_value() const {
  switch (type()) {
    case Type::kInt64:
      return static_cast<double>(int64_value());
    case Type::kUint64:
      return static_cast<double>(uint64_value());
    default:
      return std::get<Double>(v_).value;
  }
}

std::string Json::number_text() const {
  switch (type()) {
    case Type::kInt64:
      return std::to_string(int64_value());
    case Type::kUint64:
      return std::to_string(uint64_value());
    default: {
      const Double& d = std::get<Double>(v_);
      return d.text.empty() ? ShortestDouble(d.value) : d.text;
    }
  }
}

StatusOr<bool> Json::GetBool() const {
  if (!is_bool()) return TypeError("a boolean", *this);
  return bool_value();
}

StatusOr<int64_t> Json::GetInt64() const {
  if (type() == Type::kInt64) return int64_value();
  if (type() == Type::kUint64) {
    return InvalidArgument("integer " + number_text() + " exceeds int64");
  }
  return TypeError("an integer", *this);
}

StatusOr<uint64_t> Json::GetUint64() const {
  if (type() == Type::kUint64) return uint64_value();
  if (type() == Type::kInt64) {
    if (int64_value() < 0) {
      return InvalidArgument("expected a non-negative integer, got " +
                             number_text());
    }
    return static_cast<uint64_t>(int64_value());
  }
  return TypeError("an integer", *this);
}

StatusOr<double> Json::GetDouble() const {
  if (!is_number()) return TypeError("a number", *this);
  return number_value();
}

StatusOr<std::string> Json::GetString() const {
  if (!is_string()) return TypeError("a string", *this);
  return string_value();
}

const Json* Json::Find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const auto& [k, v] : object()) {
    if (k == key) return &v;
  }
  return nullptr;
}

Json& Json::operator[](std::string_view key) {
  if (is_null()) v_ = Object{};
  Object& obj = mutable_object();
  for (auto& [k, v] : obj) {
    if (k == key) return v;
  }
  obj.emplace_back(std::string(key), Json());
  return obj.back().second;
}

Json Json::MakeStringArray(const std::vector<std::string>& items) {
  Array a;
  a.reserve(items.size());
  for (const std::string& s : items) a.emplace_back(s);
  return Json(std::move(a));
}

void Json::push_back(Json v) {
  if (is_null()) v_ = Array{};
  mutable_array().push_back(std::move(v));
}

size_t Json::size() const {
  if (is_array()) return array().size();
  if (is_object()) return object().size();
  return 0;
}

bool Json::operator==(const Json& o) const {
  if (type() != o.type()) return false;
  switch (type()) {
    case Type::kNull:
      return true;
    case Type::kBool:
      return bool_value() == o.bool_value();
    case Type::kInt64:
      return int64_value() == o.int64_value();
    case Type::kUint64:
      return uint64_value() == o.uint64_value();
    case Type::kDouble: {
      const double a = number_value(), b = o.number_value();
      return a == b || (std::isnan(a) && std::isnan(b));
    }
    case Type::kString:
      return string_value() == o.string_value();
    case Type::kArray:
      return array() == o.array();
    case Type::kObject:
      return object() == o.object();
  }
  return false;
}

std::string Json::Dump() const {
  JsonPrintOptions opts;
  opts.non_finite_as_null = true;
  return *PrintJson(*this, opts);
}

std::string Json::DumpPretty() const {
  JsonPrintOptions opts;
  opts.indent = 2;
  opts.non_finite_as_null = true;
  return *PrintJson(*this, opts);
}

namespace {

// Length of the valid UTF-8 sequence at s[i], or 0 if invalid.
size_t Utf8SequenceLength(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  const uint8_t c = b(i);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if ((c & 0xe0) == 0xc0) {
    n = 2, cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3, cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4, cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b(i + k) & 0x3f);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
    return 0;
  }
  return n;
}

class Printer {
 public:
  explicit Printer(const JsonPrintOptions& o) : opts_(o) {}

  Status Print(const Json& v, std::string& path) {
    switch (v.type()) {
      case Json::Type::kNull:
        out_ += "null";
        return Status();
      case Json::Type::kBool:
        out_ += v.bool_value() ? "true" : "false";
        return Status();
      case Json::Type::kInt64:
      case Json::Type::kUint64:
        out_ += v.number_text();
        return Status();
      case Json::Type::kDouble:
        return PrintDouble(v, path);
      case Json::Type::kString:
        PrintString(v.string_value());
        return Status();
      case Json::Type::kArray:
        return PrintArray(v.array(), path);
      case Json::Type::kObject:
        return PrintObject(v.object(), path);
    }
    return Status();
  }

  std::string Take() { return std::move(out_); }

 private:
  Status PrintDouble(const Json& v, const std::string& path) {
    if (!std::isfinite(v.number_value())) {
      if (!opts_.non_finite_as_null) {
        return InvalidArgument("non-finite number " + v.number_text() + " at " +
                               path + " is not JSON");
      }
      out_ += "null";
      return Status();
    }
    out_ += v.number_text();
    return Status();
  }

  void PrintString(std::string_view s) {
    out_ += '"';
    for (size_t i = 0; i < s.size();) {
      const unsigned char c = s[i];
      if (c >= 0x80) {
        const size_t n = Utf8SequenceLength(s, i);
        if (n == 0) {
          out_ += "\xef\xbf\xbd";  // U+FFFD
          ++i;
        } else {
          out_.append(s.substr(i, n));
          i += n;
        }
        continue;
      }
      ++i;
      switch (c) {
        case '"':
          out_ += "\\\"";
          break;
        case '\\':
          out_ += "\\\\";
          break;
        case '\n':
          out_ += "\\n";
          break;
        case '\t':
          out_ += "\\t";
          break;
        case '\r':
          out_ += "\\r";
          break;
        case '\b':
          out_ += "\\b";
          break;
        case '\f':
          out_ += "\\f";
          break;
        default:
          if (c < 0x20) {
            static constexpr char kHex[] = "0123456789abcdef";
            out_ += "\\u00";
            out_ += kHex[c >> 4];
            out_ += kHex[c & 15];
          } else {
            out_ += static_cast<char>(c);
          }
      }
    }
    out_ += '"';
  }

  void NewLine() {
    if (opts_.indent < 0) return;
    out_ += '\n';
    out_.append(static_cast<size_t>(depth_ * opts_.indent), ' ');
  }

  Status PrintArray(const Json::Array& a, std::string& path) {
    out_ += '[';
    ++depth_;
    for (size_t i = 0; i < a.size(); ++i) {
      if (i) out_ += ',';
      NewLine();
      const size_t len = path.size();
      path += "[" + std::to_string(i) + "]";
      RETURN_IF_ERROR(Print(a[i], path));
      path.resize(len);
    }
    --depth_;
    if (!a.empty()) NewLine();
    out_ += ']';
    return Status();
  }

  Status PrintObject(const Json::Object& o, std::string& path) {
    out_ += '{';
    ++depth_;
    for (size_t i = 0; i < o.size(); ++i) {
      if (i) out_ += ',';
      NewLine();
      PrintString(o[i].first);
      out_ += opts_.indent < 0 ? ":" : ": ";
      const size_t len = path.size();
      path += "." + o[i].first;
      RETURN_IF_ERROR(Print(o[i].second, path));
      path.resize(len);
    }
    --depth_;
    if (!o.empty()) NewLine();
    out_ += '}';
    return Status();
  }

  const JsonPrintOptions& opts_;
  std::string out_;
  int depth_ = 0;
};

}  // namespace

StatusOr<std::string> PrintJson(const Json& value,
                                const JsonPrintOptions& options) {
  Printer p(options);
  std::string path = "$";
  RETURN_IF_ERROR(p.Print(value, path));
  return p.Take();
}

}  // namespace trench
