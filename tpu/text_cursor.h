// A cursor over one line of text for the assembler and the .tpux reader.
// Every error it produces carries "line:column" (1-based).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace trench::tpu {

class TextCursor {
 public:
  // `line` must outlive the cursor. `line_number` is used in errors.
  TextCursor(std::string_view line, int line_number)
      : s_(line), line_(line_number) {}

  // Skips blanks; a ';' or "//" comment ends the line.
  void SkipSpace();
  // True when only blanks or a comment remain.
  bool AtEnd();
  // Consumes `c` after blanks when it is next; returns whether it did.
  bool Consume(char c);
  // Consumes a keyword followed by a non-identifier character.
  bool ConsumeWord(std::string_view word);
  char Peek();
  // Identifier: [A-Za-z_][A-Za-z0-9_.]*
  StatusOr<std::string> Ident();
  // The same identifier as a view into the line (no copy).
  StatusOr<std::string_view> IdentView();
  // Decimal or 0x-hex integer with optional sign; errors on overflow.
  StatusOr<int64_t> Int();
  // A number token (decimal/float/hex/inf/nan with sign) as raw text.
  StatusOr<std::string> NumberText();
  // A double-quoted string with \" \\ \n \t and \xHH escapes.
  StatusOr<std::string> Quoted();
  Status Expect(char c);
  // The rest of the line, unparsed.
  std::string_view Rest() const { return s_.substr(pos_); }
  // An InvalidArgument "L:C: message" at the current position.
  Status Error(const std::string& message) const;
  // As Error, at a given 1-based column.
  Status ErrorAt(int column, const std::string& message) const;
  int column() const { return static_cast<int>(pos_) + 1; }

 private:
  std::string_view s_;
  size_t pos_ = 0;
  int line_;
};

// Splits text into lines (without the newline); keeps empty lines.
std::vector<std::string_view> SplitLines(std::string_view text);

}  // namespace trench::tpu
