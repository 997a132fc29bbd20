// Text that strangers or models wrote (report titles and text, claims,
// tool output), made safe to show: on a terminal, where ESC, BEL, CR and
// friends would drive the terminal (set its title, move the cursor, hide
// lines), and as one-line titles (a commit subject, a table row).
//
// A "control" here is: a C0 control (U+0000..U+001F), DEL (U+007F), a C1
// control (U+0080..U+009F), a line or paragraph separator (U+2028,
// U+2029), a bidirectional override or isolate (U+202A..U+202E,
// U+2066..U+2069), and a byte that is not part of valid UTF-8 (overlong
// forms and surrogates count as invalid).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace trench {

// `text` with every control shown as a visible escape: bytes below 0x80 and
// invalid bytes as "\xNN" (ESC is "\x1b"), other code points as
// "\u{NNNN}". Newline and tab are kept when `keep_newlines` (multi-line
// text), escaped otherwise. Everything else, backslash included, is kept.
std::string EscapeControls(std::string_view text, bool keep_newlines = true);

// `text` as one line: runs of whitespace (newlines and tabs included)
// become one space, other controls are removed, the ends are trimmed, and
// a result longer than `max_bytes` is cut at a character boundary and ends
// in "..." (within `max_bytes`). REQUIRES: max_bytes >= 3.
std::string OneLine(std::string_view text, size_t max_bytes);

}  // namespace trench
