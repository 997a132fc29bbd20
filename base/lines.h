// Splitting text into lines: the one implementation for every room
// (patch text, a crashed process's stderr, ...).
#pragma once

#include <string_view>
#include <vector>

namespace trench {

// The lines of `text` without their '\n' (a final line without '\n'
// counts as a line; "" gives no lines), as views into `text`, which must
// outlive them.
std::vector<std::string_view> SplitLineViews(std::string_view text);

}  // namespace trench
