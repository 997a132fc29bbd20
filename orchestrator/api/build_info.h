// What this trench binary is (the trench_build_info metric): its version
// (base/flags.h kTrenchVersion), the git commit of trench it was built
// from (taken when CMake configured the build; "unknown" outside a git
// checkout, and stale until the next configure) and the compiler.
#pragma once

#include <string>

namespace trench::orchestrator {

struct BuildInfo {
  std::string version;
  std::string commit;
  std::string compiler;  // "gcc 12.2.0", "clang 16.0.6".
};

const BuildInfo& TrenchBuildInfo();

}  // namespace trench::orchestrator
