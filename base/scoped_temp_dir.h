// A fresh directory (mkdtemp) that is removed, with everything in it, when
// the object goes: per-run scratch for a child process (a tool in the
// sandbox, dot, a Slurm job). Movable; the moved-from object removes
// nothing.
#pragma once

#include <sys/types.h>

#include <string>

#include "base/status.h"

namespace trench {

class ScopedTempDir {
 public:
  // <parent>/<prefix>.XXXXXX with `mode`; `parent` is created when missing.
  // IoError naming `parent` and the system's reason when no directory can
  // be made there.
  static StatusOr<ScopedTempDir> Make(const std::string& parent,
                                      const std::string& prefix, mode_t mode);
  ScopedTempDir(ScopedTempDir&& o) noexcept : path_(std::move(o.path_)) {
    o.path_.clear();
  }
  ScopedTempDir& operator=(ScopedTempDir&&) = delete;
  ScopedTempDir(const ScopedTempDir&) = delete;
  ~ScopedTempDir();

  const std::string& path() const { return path_; }

 private:
  explicit ScopedTempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace trench
