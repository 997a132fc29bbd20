// A fresh directory (mkdtemp) that is removed, with everything in it, when
// the object goes: per-run scratch for a child process (dot, a Slurm job).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "base/status.h"

namespace trench {

class ScopedTempDir {
 public:
  // <parent>/<prefix>.XXXXXX with `mode`; `parent` is created when missing.
  // IoError naming `parent` when no directory can be made there.
  static StatusOr<std::unique_ptr<ScopedTempDir>> Make(
      const std::string& parent, const std::string& prefix, mode_t mode);
  ~ScopedTempDir();
  ScopedTempDir(const ScopedTempDir&) = delete;
  ScopedTempDir& operator=(const ScopedTempDir&) = delete;

  const std::string& path() const { return path_; }

 private:
  explicit ScopedTempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

}  // namespace trench
