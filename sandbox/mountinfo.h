// The mounts this process sees, from /proc/self/mountinfo (cgroup.h finds
// its hierarchies there, limited_dir.h its tmpfs mounts, the daemon's
// build volume its loop device).
#pragma once

#include <string>
#include <vector>

namespace trench::sandbox {

struct MountEntry {
  std::string point;    // Mount point, unescaped (\040 is a space).
  std::string fstype;   // "tmpfs", "cgroup", "cgroup2", ...
  std::string source;   // The mounted device or name, unescaped.
  std::string options;  // The superblock options: "rw,memory", ...
};

// Every mount, in mount order (empty when the file cannot be read).
std::vector<MountEntry> ReadMountInfo();

}  // namespace trench::sandbox
