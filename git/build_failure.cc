#include "git/build_failure.h"

#include <sys/statvfs.h>

#include <algorithm>
#include <csignal>
#include <fstream>

namespace trench::hlo_bisect {

const std::vector<std::string_view>& InfraFailureMarkers() {
  static const std::vector<std::string_view> kMarkers = {
      // fork/vfork/clone failing: EAGAIN (process limits), ENOMEM.
      "Resource temporarily unavailable",
      "Cannot allocate memory",
      "vfork",
      "fork:",
      "cannot fork",
      "Cannot fork",
      // The compiler out of memory, or killed from outside (OOM killer).
      "virtual memory exhausted",
      "out of memory allocating",
      "std::bad_alloc",
      "Killed signal terminated program",
      "internal compiler error: Killed",
      // A compiler or the build tool stopped from outside (a neighbour's
      // kill or pkill, a shutdown): the gcc/clang driver, ninja and make.
      "Terminated signal terminated program",
      "Interrupt signal terminated program",
      "build stopped: interrupted by user",
      "] Terminated",
      "] Interrupt",
      "] Killed",
      "] Hangup",
      // The disk (or its inodes, or a quota) full.
      "No space left on device",
      "Disk quota exceeded",
  };
  return kMarkers;
}

std::string_view FindInfraMarker(std::string_view text) {
  for (std::string_view m : InfraFailureMarkers()) {
    if (text.find(m) != std::string_view::npos) return m;
  }
  return {};
}

std::string_view FindInfraMarkerInFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  size_t longest = 0;
  for (std::string_view m : InfraFailureMarkers()) {
    longest = std::max(longest, m.size());
  }
  // Pieces overlap by the longest marker, so none is cut in two.
  std::string carry, piece(1 << 20, '\0');
  while (in) {
    in.read(piece.data(), static_cast<std::streamsize>(piece.size()));
    const size_t n = static_cast<size_t>(in.gcount());
    if (n == 0) break;
    std::string window = carry + piece.substr(0, n);
    if (std::string_view m = FindInfraMarker(window); !m.empty()) return m;
    carry = window.size() > longest ? window.substr(window.size() - longest)
                                    : window;
  }
  return {};
}

bool ShellReportsKillSignal(int exit_code) {
  return exit_code == 128 + SIGHUP || exit_code == 128 + SIGINT ||
         exit_code == 128 + SIGKILL || exit_code == 128 + SIGTERM;
}

bool FileSystemFull(const std::string& dir) {
  struct statvfs s;
  if (::statvfs(dir.c_str(), &s) != 0) return false;
  return (s.f_blocks > 0 && s.f_bavail * 100 < s.f_blocks) ||
         (s.f_files > 0 && s.f_favail * 100 < s.f_files);
}

}  // namespace trench::hlo_bisect
