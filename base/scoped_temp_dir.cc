// Scoped temporary directories (scoped_temp_dir.h).
#include "base/scoped_temp_dir.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace trench {

StatusOr<ScopedTempDir> ScopedTempDir::Make(const std::string& parent,
                                            const std::string& prefix,
                                            mode_t mode) {
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  std::string path = parent + "/" + prefix + ".XXXXXX";
  if (::mkdtemp(path.data()) == nullptr) {
    return IoError("cannot create a directory under " + parent + ": " +
                   std::strerror(errno));
  }
  ::chmod(path.c_str(), mode);
  return ScopedTempDir(std::move(path));
}

ScopedTempDir::~ScopedTempDir() {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

}  // namespace trench
