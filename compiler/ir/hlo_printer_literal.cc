// Literal and shape text. Floats use std::to_chars' shortest round-trip
// form; NaN payloads other than the default quiet NaN are spelled out.
#include <charconv>
#include <cstring>

#include "compiler/ir/hlo_printer.h"
#include "compiler/ir/hlo_printer_internal.h"

namespace trench {
namespace {

struct FloatFormat {
  int ebits, mbits;
};

FloatFormat FormatOf(PrimitiveType t) {
  return {ExponentBits(t), MantissaBits(t)};
}

uint64_t LoadBits(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int k = 0; k < bytes; ++k) v |= uint64_t{p[k]} << (8 * k);
  return v;
}

// Appends the float with bit pattern `bits` of `type`'s format.
void AppendFloat(uint64_t bits, PrimitiveType type, std::string* out) {
  const FloatFormat f = FormatOf(type);
  const bool neg = (bits >> (f.ebits + f.mbits)) & 1;
  const uint64_t exp = (bits >> f.mbits) & ((uint64_t{1} << f.ebits) - 1);
  const uint64_t man = bits & ((uint64_t{1} << f.mbits) - 1);
  if (exp == (uint64_t{1} << f.ebits) - 1) {
    if (neg) *out += '-';
    if (man == 0) {
      *out += "inf";
    } else if (man == uint64_t{1} << (f.mbits - 1)) {
      *out += "nan";
    } else {
      char buf[24];
      auto r = std::to_chars(buf, buf + sizeof(buf), man, 16);
      *out += "nan(0x" + std::string(buf, r.ptr) + ")";
    }
    return;
  }
  char buf[64];
  std::to_chars_result r;
  if (f.ebits == 11) {
    double d;
    std::memcpy(&d, &bits, 8);
    r = std::to_chars(buf, buf + sizeof(buf), d);
  } else {
    // f16 and bf16 values are exact floats; the shortest float form reads
    // back to the same 16-bit value.
    float v;
    if (f.mbits == 23) {
      const uint32_t b32 = static_cast<uint32_t>(bits);
      std::memcpy(&v, &b32, 4);
    } else {
      v = static_cast<float>(DecodeFloat(bits, f.ebits, f.mbits));
    }
    r = std::to_chars(buf, buf + sizeof(buf), v);
  }
  out->append(buf, r.ptr);
}

void AppendElement(const Literal& lit, int64_t i, std::string* out) {
  const PrimitiveType t = lit.element_type();
  const int w = ByteWidth(t);
  const uint8_t* p = lit.bytes().data() + i * w;
  if (t == PrimitiveType::PRED) {
    *out += p[0] ? "true" : "false";
  } else if (IsUnsigned(t)) {
    *out += std::to_string(LoadBits(p, w));
  } else if (IsSigned(t)) {
    const uint64_t raw = LoadBits(p, w);
    const int shift = 64 - 8 * w;
    *out += std::to_string(static_cast<int64_t>(raw << shift) >> shift);
  } else if (IsComplex(t)) {
    *out += '(';
    AppendFloat(LoadBits(p, w / 2), t, out);
    *out += ", ";
    AppendFloat(LoadBits(p + w / 2, w / 2), t, out);
    *out += ')';
  } else {
    AppendFloat(LoadBits(p, w), t, out);
  }
}

void AppendArrayLevel(const Literal& lit, int64_t d, int64_t* next,
                      std::string* out) {
  const auto& dims = lit.shape().dims();
  const bool innermost = d + 1 == static_cast<int64_t>(dims.size());
  *out += innermost ? "{" : "{ ";
  for (int64_t k = 0; k < dims[d]; ++k) {
    if (k > 0) *out += ", ";
    if (innermost) {
      AppendElement(lit, (*next)++, out);
    } else {
      AppendArrayLevel(lit, d + 1, next, out);
    }
  }
  *out += innermost ? "}" : " }";
}

void AppendLiteral(const Literal& lit, std::string* out) {
  const Shape& s = lit.shape();
  if (s.IsTuple()) {
    *out += '(';
    for (int64_t k = 0; k < static_cast<int64_t>(lit.tuple_elements().size());
         ++k) {
      if (k > 0) *out += ", ";
      AppendLiteral(lit.tuple_element(k), out);
    }
    *out += ')';
    return;
  }
  if (!s.IsArray()) return;
  if (s.rank() == 0) {
    AppendElement(lit, 0, out);
    return;
  }
  int64_t next = 0;
  AppendArrayLevel(lit, 0, &next, out);
}

}  // namespace

namespace hlo_printer_internal {

void AppendShape(const Shape& s, std::string* out) {
  if (s.IsTuple()) {
    *out += '(';
    for (int64_t k = 0; k < s.tuple_size(); ++k) {
      if (k > 0) *out += ", ";
      AppendShape(s.tuple_shape(k), out);
    }
    *out += ')';
    return;
  }
  *out += PrimitiveTypeName(s.element_type());
  *out += '[';
  for (int64_t i = 0; i < s.rank(); ++i) {
    if (i > 0) *out += ',';
    if (s.is_dynamic_dim(i) && s.dim(i) < 0) {
      *out += '?';
      continue;
    }
    if (s.is_dynamic_dim(i)) *out += "<=";
    *out += std::to_string(s.dim(i));
  }
  *out += ']';
  if (s.layout() && s.IsArray()) *out += s.layout()->ToString();
}

}  // namespace hlo_printer_internal

std::string PrintLiteral(const Literal& literal) {
  std::string out;
  AppendLiteral(literal, &out);
  return out;
}

std::string PrintShape(const Shape& shape) {
  std::string out;
  hlo_printer_internal::AppendShape(shape, &out);
  return out;
}

}  // namespace trench
