#include "compiler/ir/literal_json.h"

#include <locale.h>

#include <bit>
#include <cfenv>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace trench {
namespace {

// strtod in the "C" locale (whatever the process locale) under the given
// rounding mode; glibc's strtod honors the current rounding mode.
double StrtodWithRounding(const std::string& s, int mode) {
  static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", nullptr);
  const int saved = std::fegetround();
  std::fesetround(mode);
  const double d = strtod_l(s.c_str(), nullptr, c_locale);
  std::fesetround(saved);
  return d;
}

bool IsJsonNumberText(std::string_view t) {
  size_t i = 0;
  const auto digits = [&] {
    const size_t s = i;
    while (i < t.size() && t[i] >= '0' && t[i] <= '9') ++i;
    return i > s;
  };
  if (i < t.size() && t[i] == '-') ++i;
  if (!digits()) return false;
  if (i < t.size() && t[i] == '.') {
    ++i;
    if (!digits()) return false;
  }
  if (i < t.size() && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < t.size() && (t[i] == '+' || t[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == t.size();
}

std::string Where(const char* field, size_t i) {
  return std::string(field) + "[" + std::to_string(i) + "]: ";
}

template <typename T>
std::string ShortestText(T v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, end);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

Json FloatToJson(double v, const std::string& text) {
  if (std::isnan(v)) return Json("nan");
  if (std::isinf(v)) return Json(v < 0 ? "-inf" : "inf");
  return Json::RawNumber(v, text);
}

StatusOr<uint64_t> FloatBitsFromJson(const Json& j, int ebits, int mbits) {
  if (j.is_string()) {
    const std::string& s = j.string_value();
    const uint64_t sign = uint64_t{1} << (ebits + mbits);
    const uint64_t inf = ((uint64_t{1} << ebits) - 1) << mbits;
    if (s == "inf" || s == "+inf") return inf;
    if (s == "-inf") return sign | inf;
    if (s == "nan") return inf | (uint64_t{1} << (mbits - 1));
    return InvalidArgument(
        "expected a number, \"inf\", \"-inf\" or \"nan\", "
        "got \"" +
        s + "\"");
  }
  if (!j.is_number()) return InvalidArgument("expected a float value");
  return DecimalToFloatBits(j.number_text(), ebits, mbits);
}

template <typename T>
Status SetInteger(const Json& j, Literal& lit, int64_t i) {
  if constexpr (std::is_signed_v<T>) {
    auto v = j.GetInt64();
    if (!v.ok() || *v < std::numeric_limits<T>::min() ||
        *v > std::numeric_limits<T>::max()) {
      return InvalidArgument(
          "expected an integer in " +
          std::string(PrimitiveTypeName(lit.element_type())) + " range, got " +
          j.Dump());
    }
    lit.mutable_data<T>()[i] = static_cast<T>(*v);
  } else {
    auto v = j.GetUint64();
    if (!v.ok() || *v > std::numeric_limits<T>::max()) {
      return InvalidArgument(
          "expected an integer in " +
          std::string(PrimitiveTypeName(lit.element_type())) + " range, got " +
          j.Dump());
    }
    lit.mutable_data<T>()[i] = static_cast<T>(*v);
  }
  return Status();
}

Status SetElement(const Json& j, Literal& lit, int64_t i) {
  const PrimitiveType t = lit.element_type();
  return DispatchArrayType(t, [&]<PrimitiveType T>() -> Status {
    using N = NativeT<T>;
    if constexpr (T == PrimitiveType::PRED) {
      if (!j.is_bool()) return InvalidArgument("expected true or false");
      lit.mutable_data<bool>()[i] = j.bool_value();
    } else if constexpr (std::is_integral_v<N>) {
      return SetInteger<N>(j, lit, i);
    } else if constexpr (T == PrimitiveType::C64 || T == PrimitiveType::C128) {
      using C = typename N::value_type;
      constexpr int eb = std::is_same_v<C, float> ? 8 : 11;
      constexpr int mb = std::is_same_v<C, float> ? 23 : 52;
      if (!j.is_array() || j.array().size() != 2) {
        return InvalidArgument("expected a [re, im] pair");
      }
      ASSIGN_OR_RETURN(uint64_t re, FloatBitsFromJson(j.array()[0], eb, mb));
      ASSIGN_OR_RETURN(uint64_t im, FloatBitsFromJson(j.array()[1], eb, mb));
      if constexpr (std::is_same_v<C, float>) {
        lit.mutable_data<N>()[i] =
            N(std::bit_cast<float>(static_cast<uint32_t>(re)),
              std::bit_cast<float>(static_cast<uint32_t>(im)));
      } else {
        lit.mutable_data<N>()[i] =
            N(std::bit_cast<double>(re), std::bit_cast<double>(im));
      }
    } else {
      ASSIGN_OR_RETURN(uint64_t bits,
                       FloatBitsFromJson(j, ExponentBits(T), MantissaBits(T)));
      if constexpr (T == PrimitiveType::F32) {
        lit.mutable_data<float>()[i] =
            std::bit_cast<float>(static_cast<uint32_t>(bits));
      } else if constexpr (T == PrimitiveType::F64) {
        lit.mutable_data<double>()[i] = std::bit_cast<double>(bits);
      } else {
        lit.mutable_data<N>()[i] = N::FromBits(static_cast<uint16_t>(bits));
      }
    }
    return Status();
  });
}

StatusOr<std::vector<int64_t>> ParseDims(const Json* shape) {
  if (shape == nullptr || !shape->is_array()) {
    return InvalidArgument("expected \"shape\": [d0, d1, ...]");
  }
  std::vector<int64_t> dims;
  for (size_t i = 0; i < shape->array().size(); ++i) {
    auto d = shape->array()[i].GetInt64();
    if (!d.ok() || *d < 0) {
      return InvalidArgument(Where("shape", i) +
                             "expected a non-negative integer");
    }
    dims.push_back(*d);
  }
  return dims;
}

}  // namespace

StatusOr<uint64_t> DecimalToFloatBits(std::string_view text, int ebits,
                                      int mbits) {
  if (!IsJsonNumberText(text)) {
    return InvalidArgument("expected a decimal number, got '" +
                           std::string(text) + "'");
  }
  const std::string s(text);
  const double d = StrtodWithRounding(s, FE_TONEAREST);
  const uint64_t bits = EncodeFloat(d, ebits, mbits);
  if (mbits >= 52 || !std::isfinite(d)) return bits;
  // Double rounding can only go wrong when d is exactly a midpoint of the
  // target format (a value of the format with one more mantissa bit that
  // is not a value of the format itself) and the decimal is not.
  const bool is_midpoint =
      DecodeFloat(EncodeFloat(d, ebits, mbits + 1), ebits, mbits + 1) == d &&
      DecodeFloat(bits, ebits, mbits) != d;
  if (!is_midpoint) return bits;
  const double up = StrtodWithRounding(s, FE_UPWARD);
  const double down = StrtodWithRounding(s, FE_DOWNWARD);
  if (up > d) {
    return EncodeFloat(std::nextafter(d, HUGE_VAL), ebits, mbits);
  }
  if (down < d) {
    return EncodeFloat(std::nextafter(d, -HUGE_VAL), ebits, mbits);
  }
  return bits;  // The decimal is the midpoint itself: ties to even.
}

StatusOr<Literal> LiteralFromJson(const Json& json) {
  if (!json.is_object()) return InvalidArgument("expected a literal object");
  if (const Json* tuple = json.Find("tuple")) {
    if (!tuple->is_array()) return InvalidArgument("expected \"tuple\": [...]");
    std::vector<Literal> elements;
    for (size_t i = 0; i < tuple->array().size(); ++i) {
      auto e = LiteralFromJson(tuple->array()[i]);
      if (!e.ok())
        return e.status().WithContext("tuple[" + std::to_string(i) + "]");
      elements.push_back(std::move(*e));
    }
    return Literal::Tuple(std::move(elements));
  }
  const Json* dtype = json.Find("dtype");
  if (dtype == nullptr || !dtype->is_string()) {
    return InvalidArgument("expected \"dtype\" or \"tuple\"");
  }
  const auto type = PrimitiveTypeFromName(dtype->string_value());
  if (!type || *type == PrimitiveType::TUPLE) {
    return InvalidArgument("unknown dtype \"" + dtype->string_value() + "\"");
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> dims, ParseDims(json.Find("shape")));
  if (*type == PrimitiveType::TOKEN) return Literal(Shape::Token());
  const Json* values = json.Find("values");
  if (values == nullptr || !values->is_array()) {
    return InvalidArgument("expected \"values\": [...]");
  }
  const Shape shape(*type, dims);
  int64_t count = 1;
  for (int64_t d : dims) {
    // Shape::element_count multiplies in order; keep it in range.
    if (__builtin_mul_overflow(count, d, &count)) {
      return InvalidArgument("shape " + shape.ToString() + " is too large");
    }
  }
  if (count != static_cast<int64_t>(values->array().size())) {
    return InvalidArgument("expected " + std::to_string(count) +
                           " values for shape " + shape.ToString() + ", got " +
                           std::to_string(values->array().size()));
  }
  Literal lit(shape);
  for (int64_t i = 0; i < count; ++i) {
    Status s = SetElement(values->array()[i], lit, i);
    if (!s.ok()) return InvalidArgument(Where("values", i) + s.message());
  }
  return lit;
}

Json ElementToJson(const Literal& lit, int64_t i) {
  return DispatchArrayType(lit.element_type(), [&]<PrimitiveType T>() -> Json {
    using N = NativeT<T>;
    const N v = lit.data<N>()[i];
    if constexpr (T == PrimitiveType::PRED) {
      return Json(v);
    } else if constexpr (std::is_integral_v<N>) {
      return Json(v);
    } else if constexpr (T == PrimitiveType::C64 || T == PrimitiveType::C128) {
      Json::Array pair;
      pair.push_back(FloatToJson(v.real(), ShortestText(v.real())));
      pair.push_back(FloatToJson(v.imag(), ShortestText(v.imag())));
      return Json(std::move(pair));
    } else if constexpr (T == PrimitiveType::F16 || T == PrimitiveType::BF16) {
      const float f = static_cast<float>(v);
      return FloatToJson(f, ShortestText(f));
    } else {
      return FloatToJson(v, ShortestText(v));
    }
  });
}

Json LiteralToJson(const Literal& literal) {
  const Shape& shape = literal.shape();
  Json out = Json::MakeObject();
  if (shape.IsTuple()) {
    Json::Array elements;
    for (const Literal& e : literal.tuple_elements()) {
      elements.push_back(LiteralToJson(e));
    }
    out["tuple"] = Json(std::move(elements));
    return out;
  }
  out["dtype"] = Json(std::string(PrimitiveTypeName(shape.element_type())));
  Json::Array dims;
  for (int64_t d : shape.dims()) dims.emplace_back(d);
  out["shape"] = Json(std::move(dims));
  if (shape.IsToken()) return out;
  Json::Array values;
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    values.push_back(ElementToJson(literal, i));
  }
  out["values"] = Json(std::move(values));
  return out;
}

}  // namespace trench
