// Shapes: f32[2,3]{1,0:T(8,128)}, s32[<=8], f32[?], token[], (a, (b, c)).
#include <limits>

#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_parser_internal.h"

namespace trench::hlo_parser_internal {
namespace {

// The text after ':' in a layout, verbatim up to the closing '}' at depth 0.
Status ParseLayoutTail(HloLexer& lex, std::string* tail) {
  const size_t begin = lex.pos();
  int depth = 0;
  while (true) {
    const char c = lex.PeekRaw();
    if (c == '\0') return lex.Error("'}' closing the layout");
    if (c == '}' && depth == 0) break;
    if (c == '(' || c == '[' || c == '{') ++depth;
    if (c == ')' || c == ']' || c == '}') {
      if (--depth < 0) return lex.Error("'}' closing the layout");
    }
    lex.set_pos(lex.pos() + 1);
  }
  *tail = std::string(lex.text().substr(begin, lex.pos() - begin));
  return Status::Ok();
}

Status ParseLayout(HloLexer& lex, int64_t rank, Layout* layout) {
  const size_t open = lex.pos();
  RETURN_IF_ERROR(lex.Expect('{'));
  std::vector<bool> seen(rank, false);
  if (lex.Peek() != '}' && lex.Peek() != ':') {
    do {
      const size_t at = lex.pos();
      ASSIGN_OR_RETURN(int64_t d, lex.ParseInt("layout dimension"));
      if (d < 0 || d >= rank || seen[d]) {
        return lex.ErrorAt(at, "layout dimension " + std::to_string(d) +
                                   " is out of range or repeated for rank " +
                                   std::to_string(rank));
      }
      seen[d] = true;
      layout->minor_to_major.push_back(d);
    } while (lex.TryConsume(','));
  }
  if (!layout->minor_to_major.empty() &&
      static_cast<int64_t>(layout->minor_to_major.size()) != rank) {
    return lex.ErrorAt(
        open, "layout has " + std::to_string(layout->minor_to_major.size()) +
                  " dimensions, shape has rank " + std::to_string(rank));
  }
  if (lex.TryConsume(':')) RETURN_IF_ERROR(ParseLayoutTail(lex, &layout->tail));
  return lex.Expect('}');
}

// A layout is a '{' right after the ']' whose content starts with a digit,
// ':' or '}' (a computation body's '{' is followed by an instruction).
bool LayoutFollows(HloLexer& lex) {
  if (lex.PeekRaw() != '{') return false;
  const size_t save = lex.pos();
  lex.set_pos(save + 1);
  const char c = lex.Peek();
  lex.set_pos(save);
  return (c >= '0' && c <= '9') || c == ':' || c == '}';
}

StatusOr<Shape> ParseArrayShape(HloLexer& lex) {
  const size_t start = lex.pos();
  std::string_view word = lex.ConsumeWord();
  std::optional<PrimitiveType> type = PrimitiveTypeFromName(word);
  if (!type || *type == PrimitiveType::TUPLE) {
    return lex.ErrorAt(
        start, word.empty()
                   ? "expected shape, got " + lex.Describe(start)
                   : "unknown element type '" + std::string(word) + "'");
  }
  RETURN_IF_ERROR(lex.Expect('['));
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  int64_t elements = 1;
  if (lex.Peek() != ']') {
    do {
      bool is_dynamic = lex.TryConsume("<=");
      int64_t d = -1;
      if (!is_dynamic && lex.TryConsume('?')) {
        is_dynamic = true;  // Unbounded: stored as a dynamic dim of -1.
      } else {
        const size_t at = lex.pos();
        ASSIGN_OR_RETURN(d, lex.ParseInt("dimension size"));
        if (d < 0) return lex.ErrorAt(at, "negative dimension size");
        if (d > 0 && elements > std::numeric_limits<int64_t>::max() / d) {
          return lex.ErrorAt(at, "shape has more than 2^63 elements");
        }
        elements *= d;
      }
      dims.push_back(d);
      dynamic.push_back(is_dynamic);
    } while (lex.TryConsume(','));
  }
  RETURN_IF_ERROR(lex.Expect(']'));
  if (*type == PrimitiveType::TOKEN && !dims.empty()) {
    return lex.ErrorAt(start, "token shapes have no dimensions");
  }
  Shape shape(*type, std::move(dims));
  for (size_t i = 0; i < dynamic.size(); ++i) {
    if (dynamic[i]) shape.set_dynamic_dim(i, true);
  }
  if (LayoutFollows(lex)) {
    if (*type == PrimitiveType::TOKEN) {
      return lex.ErrorAt(lex.pos(), "token shapes have no layout");
    }
    Layout layout;
    RETURN_IF_ERROR(ParseLayout(lex, shape.rank(), &layout));
    shape.set_layout(std::move(layout));
  }
  return shape;
}

}  // namespace

Status CheckDepth(const HloLexer& lex, int depth) {
  if (depth > kMaxNestingDepth) {
    return lex.ErrorAt(
        lex.pos(),
        "nesting deeper than " + std::to_string(kMaxNestingDepth) + " levels");
  }
  return Status::Ok();
}

bool PeekShape(HloLexer& lex) {
  if (lex.Peek() == '(') return true;
  std::string_view word = lex.PeekWord();
  if (word.empty()) return false;
  std::optional<PrimitiveType> t = PrimitiveTypeFromName(word);
  return t && *t != PrimitiveType::TUPLE && lex.PeekRaw(word.size()) == '[';
}

StatusOr<Shape> ParseShape(HloLexer& lex, int depth) {
  RETURN_IF_ERROR(CheckDepth(lex, depth));
  if (!lex.TryConsume('(')) {
    if (lex.PeekWord().empty()) return lex.Error("shape");
    return ParseArrayShape(lex);
  }
  std::vector<Shape> elements;
  if (!lex.TryConsume(')')) {
    do {
      ASSIGN_OR_RETURN(Shape s, ParseShape(lex, depth + 1));
      elements.push_back(std::move(s));
    } while (lex.TryConsume(','));
    RETURN_IF_ERROR(lex.Expect(')'));
  }
  return Shape::Tuple(std::move(elements));
}

}  // namespace trench::hlo_parser_internal

namespace trench {

StatusOr<Shape> ParseShape(std::string_view text) {
  HloLexer lex(text);
  ASSIGN_OR_RETURN(Shape shape, hlo_parser_internal::ParseShape(lex, 0));
  if (!lex.AtEnd()) return lex.Error("end of shape");
  return shape;
}

}  // namespace trench
