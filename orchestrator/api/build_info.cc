#include "orchestrator/api/build_info.h"

#include "base/flags.h"

// CMake defines it for this file only (CMakeLists.txt).
#ifndef TRENCH_GIT_COMMIT
#define TRENCH_GIT_COMMIT "unknown"
#endif

namespace trench::orchestrator {

const BuildInfo& TrenchBuildInfo() {
  static const BuildInfo info = {
    kTrenchVersion,
    TRENCH_GIT_COMMIT,
#if defined(__clang__)
    "clang " __clang_version__,
#elif defined(__GNUC__)
    "gcc " __VERSION__,
#else
    "unknown",
#endif
  };
  return info;
}

}  // namespace trench::orchestrator
