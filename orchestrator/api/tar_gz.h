// A gzip-compressed ustar archive of a directory, in memory: the bug
// page's case downloads (web_data.h). Only regular files and directories
// are archived (symbolic links and special files are left out, never
// followed), under `root_name`/ with their paths relative to the directory,
// in name order, mode 0644 (0755 for directories and executables), owner
// 0/0 and the files' mtimes. gzip through zlib.
//
// Errors: kNotFound when `dir` is not a directory; kIoError when a file
// cannot be read; kResourceExhausted when the files exceed `max_bytes`
// together; kInvalidArgument for a path too long for ustar (100 bytes of
// name, 155 of prefix) or a root name that is not one plain component.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace trench::orchestrator {

StatusOr<std::string> TarGzDirectory(const std::string& dir,
                                     const std::string& root_name,
                                     uint64_t max_bytes);

// `data` compressed as one gzip member (zlib). kInternal when zlib fails.
StatusOr<std::string> Gzip(const std::string& data);

}  // namespace trench::orchestrator
