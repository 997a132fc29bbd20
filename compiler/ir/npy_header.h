// The .npy header: a Python dict literal such as
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// Internal to npy.cc; separate so that the small parser can be tested.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace trench::npy {

struct Header {
  std::string descr;
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// Parses the dict literal (trailing spaces and newline allowed). Accepts
// keys and strings in single or double quotes, True/False, tuples of
// non-negative integers (an optional Python 2 'L' suffix is accepted), a
// trailing comma; the three keys are required and other keys are errors.
// Errors are InvalidArgument("npy header: expected ...") with the offset.
StatusOr<Header> ParseHeader(std::string_view text);

// numpy's form of the dict (without padding).
std::string FormatHeader(const Header& header);

}  // namespace trench::npy
