// Literals as they appear in constant(...): scalars (1.5, -inf, nan,
// nan(0x1), true, (1, 2) for complex), nested braces for arrays and
// parenthesised tuples whose elements may carry a shape prefix.
#include <charconv>
#include <cstring>
#include <limits>

#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_parser_internal.h"

namespace trench::hlo_parser_internal {
namespace {

constexpr int64_t kMaxSplatElements = int64_t{1} << 22;

// Float formats by IEEE field widths.
struct FloatFormat {
  int ebits, mbits;
};

FloatFormat FormatOf(PrimitiveType t) {
  return {ExponentBits(t), MantissaBits(t)};
}

// The number-like token at the lexer: [-+]?[0-9A-Za-z.+-]* (stops at
// separators), not consumed.
std::string_view PeekNumber(HloLexer& lex) {
  lex.SkipSpace();
  size_t e = lex.pos();
  const std::string_view t = lex.text();
  while (e < lex.end()) {
    const char c = t[e];
    const bool sign_ok = e == lex.pos() || t[e - 1] == 'e' || t[e - 1] == 'E';
    if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
        (c >= 'A' && c <= 'Z') || c == '.' ||
        ((c == '-' || c == '+') && sign_ok)) {
      ++e;
    } else {
      break;
    }
  }
  return t.substr(lex.pos(), e - lex.pos());
}

// Parses one real floating-point value of format `f` into its bit pattern.
StatusOr<uint64_t> ParseFloatBits(HloLexer& lex, PrimitiveType type) {
  const FloatFormat f = FormatOf(type);
  lex.SkipSpace();
  const size_t start = lex.pos();
  std::string_view tok = PeekNumber(lex);
  const bool neg = tok.starts_with('-');
  std::string_view body = neg ? tok.substr(1) : tok;
  const uint64_t sign = uint64_t{neg} << (f.ebits + f.mbits);
  const uint64_t exp_all = ((uint64_t{1} << f.ebits) - 1) << f.mbits;
  if (body == "inf" || body == "infinity") {
    lex.set_pos(start + tok.size());
    return sign | exp_all;
  }
  if (body == "nan") {
    lex.set_pos(start + tok.size());
    uint64_t payload = uint64_t{1} << (f.mbits - 1);
    if (lex.PeekRaw() == '(') {
      lex.set_pos(lex.pos() + 1);
      const size_t at = lex.pos();
      std::string_view hex = PeekNumber(lex);
      uint64_t p = 0;
      if (!hex.starts_with("0x") ||
          std::from_chars(hex.data() + 2, hex.data() + hex.size(), p, 16).ptr !=
              hex.data() + hex.size() ||
          hex.size() == 2) {
        return lex.Error("NaN payload 0x<hex>");
      }
      if (p == 0 || (f.mbits < 64 && (p >> f.mbits) != 0)) {
        return lex.ErrorAt(at, "NaN payload " + std::string(hex) +
                                   " does not fit a nonzero " +
                                   std::to_string(f.mbits) + "-bit mantissa");
      }
      lex.set_pos(at + hex.size());
      RETURN_IF_ERROR(lex.Expect(')'));
      payload = p;
    }
    return sign | exp_all | payload;
  }
  if (type == PrimitiveType::F32 || type == PrimitiveType::C64) {
    float v = 0;
    auto [ptr, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
    if (tok.empty() || ec == std::errc::invalid_argument ||
        ptr != tok.data() + tok.size()) {
      return lex.Error("floating-point number");
    }
    if (ec == std::errc::result_out_of_range) {
      return lex.ErrorAt(
          start, "value " + std::string(tok) + " is out of range for f32");
    }
    lex.set_pos(start + tok.size());
    uint32_t bits;
    std::memcpy(&bits, &v, 4);
    return bits;
  }
  double v = 0;
  auto [ptr, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), v);
  if (tok.empty() || ec == std::errc::invalid_argument ||
      ptr != tok.data() + tok.size()) {
    return lex.Error("floating-point number");
  }
  if (ec == std::errc::result_out_of_range) {
    return lex.ErrorAt(start, "value " + std::string(tok) + " is out of range");
  }
  lex.set_pos(start + tok.size());
  if (f.ebits == 11) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    return bits;
  }
  return EncodeFloat(v, f.ebits, f.mbits);
}

// Parses an integer of `type` into its two's complement bits.
StatusOr<uint64_t> ParseIntBits(HloLexer& lex, PrimitiveType type) {
  lex.SkipSpace();
  const size_t start = lex.pos();
  std::string_view tok = PeekNumber(lex);
  const int bits = BitWidth(type);
  const char* b = tok.data();
  const char* e = tok.data() + tok.size();
  uint64_t out = 0;
  bool ok = false;
  if (IsUnsigned(type)) {
    uint64_t v = 0;
    auto r = std::from_chars(b, e, v);
    ok = !tok.empty() && r.ec == std::errc() && r.ptr == e &&
         (bits == 64 || v < (uint64_t{1} << bits));
    out = v;
  } else {
    int64_t v = 0;
    auto r = std::from_chars(b, e, v);
    const int64_t lim = bits == 64 ? 0 : int64_t{1} << (bits - 1);
    ok = !tok.empty() && r.ec == std::errc() && r.ptr == e &&
         (bits == 64 || (v >= -lim && v < lim));
    out = static_cast<uint64_t>(v);
  }
  if (!ok) {
    if (tok.empty()) return lex.Error("integer");
    return lex.ErrorAt(start, "expected " +
                                  std::string(PrimitiveTypeName(type)) +
                                  " value, got '" + std::string(tok) + "'");
  }
  lex.set_pos(start + tok.size());
  return out;
}

void StoreBits(Literal* lit, int64_t i, uint64_t bits, int byte_offset = 0) {
  const int w = IsComplex(lit->element_type())
                    ? ByteWidth(lit->element_type()) / 2
                    : ByteWidth(lit->element_type());
  uint8_t* dst = lit->mutable_bytes().data() +
                 i * ByteWidth(lit->element_type()) + byte_offset;
  for (int k = 0; k < w; ++k) dst[k] = static_cast<uint8_t>(bits >> (8 * k));
}

Status ParseElement(HloLexer& lex, Literal* lit, int64_t i) {
  const PrimitiveType t = lit->element_type();
  if (t == PrimitiveType::PRED) {
    if (lex.TryConsumeWord("true") || lex.TryConsumeWord("1")) {
      StoreBits(lit, i, 1);
    } else if (!lex.TryConsumeWord("false") && !lex.TryConsumeWord("0")) {
      return lex.Error("true or false");
    }
    return Status::Ok();
  }
  if (IsInteger(t)) {
    ASSIGN_OR_RETURN(uint64_t bits, ParseIntBits(lex, t));
    StoreBits(lit, i, bits);
    return Status::Ok();
  }
  if (IsComplex(t)) {
    RETURN_IF_ERROR(lex.Expect('('));
    ASSIGN_OR_RETURN(uint64_t re, ParseFloatBits(lex, t));
    RETURN_IF_ERROR(lex.Expect(','));
    ASSIGN_OR_RETURN(uint64_t im, ParseFloatBits(lex, t));
    RETURN_IF_ERROR(lex.Expect(')'));
    StoreBits(lit, i, re);
    StoreBits(lit, i, im, ByteWidth(t) / 2);
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(uint64_t bits, ParseFloatBits(lex, t));
  StoreBits(lit, i, bits);
  return Status::Ok();
}

// Parses the braces of dimension `d` and everything inside.
Status ParseArrayLevel(HloLexer& lex, Literal* lit, int64_t d, int64_t* next,
                       int depth) {
  RETURN_IF_ERROR(CheckDepth(lex, depth));
  const auto& dims = lit->shape().dims();
  RETURN_IF_ERROR(lex.Expect('{'));
  for (int64_t k = 0; k < dims[d]; ++k) {
    if (k > 0 && !lex.TryConsume(',')) {
      return lex.Error("',' (dimension " + std::to_string(d) + " has " +
                       std::to_string(dims[d]) + " elements)");
    }
    if (d + 1 < static_cast<int64_t>(dims.size())) {
      RETURN_IF_ERROR(ParseArrayLevel(lex, lit, d + 1, next, depth + 1));
    } else {
      RETURN_IF_ERROR(ParseElement(lex, lit, (*next)++));
    }
  }
  if (!lex.TryConsume('}')) {
    return lex.Error("'}' (dimension " + std::to_string(d) + " has " +
                     std::to_string(dims[d]) + " elements)");
  }
  return Status::Ok();
}

bool HasUnboundedDim(const Shape& s) {
  if (s.IsTuple()) {
    for (const Shape& e : s.tuple_shapes()) {
      if (HasUnboundedDim(e)) return true;
    }
    return false;
  }
  for (int64_t d : s.dims()) {
    if (d < 0) return true;
  }
  return false;
}

StatusOr<Literal> ParseTupleLiteral(HloLexer& lex, const Shape& shape,
                                    int depth) {
  RETURN_IF_ERROR(lex.Expect('('));
  std::vector<Literal> elements;
  for (int64_t k = 0; k < shape.tuple_size(); ++k) {
    if (k > 0) RETURN_IF_ERROR(lex.Expect(','));
    const Shape& want = shape.tuple_shape(k);
    if (lex.Peek() != '(' && PeekShape(lex)) {
      const size_t at = lex.pos();
      ASSIGN_OR_RETURN(Shape given, ParseShape(lex, depth + 1));
      if (!given.Compatible(want)) {
        return lex.ErrorAt(at, "tuple literal element " + std::to_string(k) +
                                   " has shape " + given.ToString() +
                                   ", expected " + want.ToString());
      }
    }
    ASSIGN_OR_RETURN(Literal e, ParseLiteral(lex, want, depth + 1));
    elements.push_back(std::move(e));
  }
  if (!lex.TryConsume(')')) {
    return lex.Error("')' (the tuple has " +
                     std::to_string(shape.tuple_size()) + " elements)");
  }
  return Literal::Tuple(std::move(elements));
}

}  // namespace

StatusOr<Literal> ParseLiteral(HloLexer& lex, const Shape& shape, int depth) {
  RETURN_IF_ERROR(CheckDepth(lex, depth));
  lex.SkipSpace();
  if (HasUnboundedDim(shape)) {
    return lex.ErrorAt(lex.pos(),
                       "a literal cannot have unbounded (?) "
                       "dimensions: " +
                           shape.ToString());
  }
  if (shape.IsTuple()) return ParseTupleLiteral(lex, shape, depth);
  if (!shape.IsArray()) {
    return lex.ErrorAt(lex.pos(), "no literal of shape " + shape.ToString());
  }
  // Each element takes at least one character: refuse before allocating.
  // A bare scalar for an array (a splat) is capped instead.
  const int64_t n = shape.element_count();
  const bool splat = shape.rank() > 0 && lex.Peek() != '{' && n > 0;
  if (splat && n > kMaxSplatElements) {
    return lex.ErrorAt(lex.pos(), "scalar constant for shape " +
                                      shape.ToString() +
                                      " would fill more "
                                      "than 2^22 elements");
  }
  if (!splat && n > static_cast<int64_t>(lex.end() - lex.pos())) {
    return lex.ErrorAt(lex.pos(), "literal text is too short for shape " +
                                      shape.ToString() + " (" +
                                      std::to_string(n) + " elements)");
  }
  Literal lit(shape);
  if (shape.rank() == 0) {
    RETURN_IF_ERROR(ParseElement(lex, &lit, 0));
  } else if (splat) {
    // XLA accepts a bare scalar for an array constant: every element gets
    // that value.
    RETURN_IF_ERROR(ParseElement(lex, &lit, 0));
    const int64_t w = ByteWidth(shape.element_type());
    auto bytes = lit.mutable_bytes();
    for (int64_t i = 1; i < n; ++i) {
      std::memcpy(bytes.data() + i * w, bytes.data(), w);
    }
  } else {
    int64_t next = 0;
    RETURN_IF_ERROR(ParseArrayLevel(lex, &lit, 0, &next, depth + 1));
  }
  return lit;
}

}  // namespace trench::hlo_parser_internal

namespace trench {

StatusOr<Literal> ParseLiteral(std::string_view text, const Shape& shape) {
  HloLexer lex(text);
  ASSIGN_OR_RETURN(Literal lit,
                   hlo_parser_internal::ParseLiteral(lex, shape, 0));
  if (!lex.AtEnd()) return lex.Error("end of literal");
  return lit;
}

}  // namespace trench
