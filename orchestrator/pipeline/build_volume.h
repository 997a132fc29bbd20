// The builder's disk bound (issue 18, item 3): the builds' work directory
// (var/builder/work: worktree, build directory, ccache, staged outputs) is
// an ext4 file system of a fixed size and inode count, kept in a sparse
// image file and loop-mounted there by the daemon at start-up. A build
// that fills it gets ENOSPC ("No space left on device", an infrastructure
// failure: build_failure.h) and nothing else of the daemon's fills up.
//
// The image is made with fixed arguments of ours only (mkfs.ext4 -N
// <inodes>, no journal: its content is a cache, and a damaged one is made
// again), mounted nosuid,nodev through a loop device that clears itself
// when unmounted. A mount left by a crashed daemon is reused when it is
// our image; an image whose size or inode count no longer matches the
// configuration is made again (the builds start cold).
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace trench::orchestrator {

struct BuildVolumeOptions {
  std::string image;        // The image file (created; sparse).
  std::string mount_point;  // Created; what it holds is hidden while mounted.
  uint64_t bytes = 0;       // Size of the file system.
  uint64_t inodes = 0;      // Files and directories it can hold.
};

class BuildVolume {
 public:
  BuildVolume() = default;
  BuildVolume(const BuildVolume&) = delete;
  BuildVolume& operator=(const BuildVolume&) = delete;
  BuildVolume(BuildVolume&& o) noexcept;
  BuildVolume& operator=(BuildVolume&& o) noexcept;
  // Unmounts (what Mount mounted or reused).
  ~BuildVolume();

  // Mounts the image at the mount point (making the image first when it is
  // missing or does not match), or reuses our image already mounted there.
  // Errors: kFailedPrecondition when this machine cannot (not root, no
  // loop devices, no mkfs.ext4, bytes or inodes out of range): the caller
  // says so and uses the plain directory; kIoError for a failed step.
  static StatusOr<BuildVolume> Mount(const BuildVolumeOptions& options);

  // Unmounts now (lazily when busy). No-op when not mounted.
  Status Unmount();

  bool mounted() const { return !mount_point_.empty(); }
  const std::string& mount_point() const { return mount_point_; }

 private:
  std::string mount_point_;
};

// Free bytes and inodes of the file system holding `dir`, as fractions of
// its size (0..1). Errors: kIoError when it cannot be asked.
struct VolumeSpace {
  double bytes_free = 1, inodes_free = 1;
};
StatusOr<VolumeSpace> SpaceOf(const std::string& dir);

}  // namespace trench::orchestrator
