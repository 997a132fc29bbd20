// The whole of a file, for tests ("" when it cannot be read).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace trench::orchestrator::testing {

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace trench::orchestrator::testing
