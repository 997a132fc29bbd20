#include "base/cmake_define.h"

#include <cctype>
#include <string_view>

namespace trench {

bool IsSafeCMakeDefine(const std::string& flag) {
  if (flag.size() > kMaxCMakeDefineBytes || flag.rfind("-D", 0) != 0) {
    return false;
  }
  const size_t eq = flag.find('=');
  if (eq == std::string::npos || eq == 2) return false;
  for (size_t i = 2; i < flag.size(); ++i) {
    const unsigned char c = flag[i];
    const bool word = std::isalnum(c) || c == '_';
    const bool value_char =
        word || std::string_view(".+/:=-").find(c) != std::string_view::npos;
    if (i < eq ? !word : !value_char) return false;
  }
  return true;
}

}  // namespace trench
