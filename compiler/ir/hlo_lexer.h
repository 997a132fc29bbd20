// HloLexer: a character-level cursor over HLO text, shared by the module,
// shape, literal and attribute parsers.
//
// Whitespace and comments (`// ...` to end of line, `/* ... */` anywhere,
// including XLA's `/*index=N*/`) are skipped before every token. Errors are
// InvalidArgument statuses whose message starts with "line:column: " of the
// offending position, in the style "expected X, got Y".
//
// A lexer can be narrowed to a sub-range of the text (Sub) so that an
// attribute value can be parsed on its own while positions still point into
// the whole input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace trench {

class HloLexer {
 public:
  // `first_line` is the line number of text[0] in the caller's file.
  explicit HloLexer(std::string_view text, int first_line = 1)
      : text_(text), end_(text.size()), first_line_(first_line) {}

  // A lexer over text[begin, end) of the same input. REQUIRES: begin <= end
  // <= this->end().
  HloLexer Sub(size_t begin, size_t end) const;

  size_t pos() const { return pos_; }
  void set_pos(size_t p) { pos_ = p; }
  size_t end() const { return end_; }
  std::string_view text() const { return text_; }

  // Skips whitespace and comments. Stops in front of an unterminated `/*`.
  void SkipSpace();
  // The next significant character (after SkipSpace), or '\0' at the end.
  char Peek();
  // The character `k` positions after pos() (no skipping), or '\0'.
  char PeekRaw(size_t k = 0) const;
  bool AtEnd();
  // Consumes `c` / the exact characters `s` when they come next.
  bool TryConsume(char c);
  bool TryConsume(std::string_view s);
  // Consumes the identifier `word` when it comes next and is not followed
  // by another name character.
  bool TryConsumeWord(std::string_view word);
  // As TryConsume, or an "expected ..." error.
  Status Expect(char c);
  Status Expect(std::string_view s);

  // A name: `%` followed by [A-Za-z0-9_.-]+, or [A-Za-z_][A-Za-z0-9_.-]*.
  // Returns it without the `%`. `what` names the expectation in errors.
  StatusOr<std::string> ParseName(std::string_view what);
  // True if a name (with or without `%`) starts at the next position.
  bool PeekName();
  // The run of word characters [A-Za-z0-9_.-] at the next position, not
  // consumed (empty if none).
  std::string_view PeekWord();
  // Consumes and returns PeekWord().
  std::string_view ConsumeWord();
  // A decimal integer with optional '-', that fits int64.
  StatusOr<int64_t> ParseInt(std::string_view what);
  // `true` or `false`.
  StatusOr<bool> ParseBool(std::string_view what);

  // Scans an attribute value starting at the next position: everything up
  // to a ',' or whitespace or unmatched closer at nesting depth 0, with
  // (), [], {} balanced and "strings" (with \ escapes) atomic. Returns the
  // value's [begin, end) range; fails on an empty value, unbalanced
  // brackets or an unterminated string.
  Status ScanRawValue(size_t* begin, size_t* end);

  // "expected <expected>, got <description of the next token>" at pos().
  Status Error(std::string_view expected);
  // "<line>:<col>: <message>" for position `p`.
  Status ErrorAt(size_t p, std::string_view message) const;
  // "line:col" of position `p`.
  std::string Location(size_t p) const;
  // The token at `p` for messages: 'foo', ')', end of input, ...
  std::string Describe(size_t p) const;

  static bool IsNameChar(char c);

 private:
  std::string_view text_;
  size_t pos_ = 0;
  size_t end_;
  int first_line_;
};

}  // namespace trench
