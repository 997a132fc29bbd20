#include "compiler/ir/hlo_text_file.h"

#include "compiler/ir/hlo_lexer.h"

namespace trench {
namespace {

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  return s;
}

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// True when only whitespace and comments remain.
bool IsBlank(const std::string& text) {
  HloLexer lex(text);
  return lex.AtEnd();
}

}  // namespace

std::vector<HloTextPiece> SplitHloTextFile(std::string_view file) {
  std::vector<HloTextPiece> pieces;
  HloTextPiece current;
  int line_no = 1;
  auto flush = [&](int next_first_line) {
    if (!IsBlank(current.text)) pieces.push_back(std::move(current));
    current = HloTextPiece();
    current.first_line = next_first_line;
  };
  size_t pos = 0;
  while (pos < file.size()) {
    size_t nl = file.find('\n', pos);
    const bool last = nl == std::string_view::npos;
    if (last) nl = file.size();
    const std::string_view line = file.substr(pos, nl - pos);
    const std::string_view t = TrimLeft(line);
    if (TrimRight(t) == "// -----") {
      flush(line_no + 1);
    } else {
      if (!t.starts_with("// RUN:") && !t.starts_with("// CHECK")) {
        current.text += line;
      }
      if (!last) current.text += '\n';
    }
    pos = nl + 1;
    ++line_no;
  }
  flush(line_no);
  return pieces;
}

}  // namespace trench
