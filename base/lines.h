// Splitting text into lines, and trimming it: the one implementation for
// every room (patch text, a crashed process's stderr, a command's output).
#pragma once

#include <string_view>
#include <vector>

namespace trench {

// The lines of `text` without their '\n' (a final line without '\n'
// counts as a line; "" gives no lines), as views into `text`, which must
// outlive them.
std::vector<std::string_view> SplitLineViews(std::string_view text);

// `text` without the whitespace (std::isspace) at both ends.
std::string_view TrimWhitespace(std::string_view text);

}  // namespace trench
