#include "sandbox/limited_dir.h"

#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "sandbox/mountinfo.h"

namespace trench::sandbox {
namespace {

namespace fs = std::filesystem;

std::string ErrnoText(int err) {
  return std::string(strerror(err)) + " (errno " + std::to_string(err) + ")";
}

// The mount points of every tmpfs, in mount order.
std::vector<std::string> TmpfsMounts() {
  std::vector<std::string> points;
  for (const MountEntry& m : ReadMountInfo()) {
    if (m.fstype == "tmpfs") points.push_back(m.point);
  }
  return points;
}

std::string Canonical(const std::string& dir) {
  std::error_code ec;
  std::string c = fs::weakly_canonical(dir, ec).string();
  return ec ? dir : c;
}

std::string Probe() {
  char dir[] = "/tmp/trench-limited-probe-XXXXXX";
  if (mkdtemp(dir) == nullptr)
    return std::string("mkdtemp: ") + strerror(errno);
  std::string error;
  if (mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV,
            "size=64k,nr_inodes=16,mode=0755") != 0) {
    error = std::string("mount tmpfs: ") + strerror(errno);
  } else {
    umount2(dir, MNT_DETACH);
  }
  rmdir(dir);
  return error;
}

}  // namespace

const std::string& LimitedDirError() {
  static const std::string error = Probe();
  return error;
}

StatusOr<bool> MountLimitedDir(const std::string& dir, uint64_t bytes,
                               uint64_t inodes) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return IoError("cannot create " + dir + ": " + ec.message());
  if (!LimitedDirError().empty()) return false;
  const std::string options = "size=" + std::to_string(bytes) +
                              ",nr_inodes=" + std::to_string(inodes) +
                              ",mode=0755";
  if (mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV,
            options.c_str()) != 0)
    return IoError("cannot mount a tmpfs (" + options + ") on " + dir + ": " +
                   ErrnoText(errno));
  return true;
}

Status UnmountLimitedDir(const std::string& dir) {
  const std::string target = Canonical(dir);
  for (const std::string& point : TmpfsMounts()) {
    if (point != target) continue;
    // Stacked mounts: each umount2 takes the top one.
    if (umount2(target.c_str(), MNT_DETACH) != 0 && errno != EINVAL)
      return IoError("cannot unmount " + target + ": " + ErrnoText(errno));
  }
  return Status::Ok();
}

int SweepLimitedDirs(const std::string& root) {
  const std::string prefix = Canonical(root) + "/";
  std::vector<std::string> below;
  for (const std::string& point : TmpfsMounts()) {
    if (point.rfind(prefix, 0) == 0) below.push_back(point);
  }
  // Deepest (and, for stacked mounts, latest) first.
  std::reverse(below.begin(), below.end());
  std::stable_sort(below.begin(), below.end(),
                   [](const std::string& a, const std::string& b) {
                     return a.size() > b.size();
                   });
  int n = 0;
  for (const std::string& point : below) {
    if (umount2(point.c_str(), MNT_DETACH) == 0) ++n;
  }
  return n;
}

}  // namespace trench::sandbox
