#include "orchestrator/pipeline/build_volume.h"

#include <fcntl.h>
#include <linux/loop.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "base/subprocess.h"
#include "sandbox/mountinfo.h"

namespace trench::orchestrator {
namespace {

namespace fs = std::filesystem;

std::string Errno() { return std::strerror(errno); }

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The device mounted at `mount_point` ("" when nothing is).
std::string MountedSource(const std::string& mount_point) {
  std::string source;
  for (const sandbox::MountEntry& m : sandbox::ReadMountInfo()) {
    // The last mount there is the visible one.
    if (m.point == mount_point) source = m.source;
  }
  return source;
}

// The file behind loop device `dev` ("" when it is none).
std::string BackingFile(const std::string& dev) {
  if (dev.rfind("/dev/loop", 0) != 0) return "";
  return ReadLine("/sys/block/" + dev.substr(5) + "/loop/backing_file");
}

// True when a loop device still has `image` attached: a mount of it that
// was detached lazily (busy when it was unmounted) lives on until its last
// user goes.
bool AttachedToALoopDevice(const std::string& image) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/sys/block", ec)) {
    if (e.path().filename().string().rfind("loop", 0) != 0) continue;
    if (ReadLine(e.path().string() + "/loop/backing_file") == image) {
      return true;
    }
  }
  return false;
}

std::string Params(const BuildVolumeOptions& o) {
  return std::to_string(o.bytes) + " " + std::to_string(o.inodes);
}

std::string FindMkfs() {
  for (const char* p : {"/usr/sbin/mkfs.ext4", "/sbin/mkfs.ext4",
                        "/usr/bin/mkfs.ext4", "/bin/mkfs.ext4"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return "";
}

// A fresh sparse image of `o.bytes` with an ext4 file system on it.
Status MakeImage(const BuildVolumeOptions& o, const std::string& mkfs) {
  std::error_code ec;
  fs::remove(o.image + ".params", ec);
  {
    const int fd =
        ::open(o.image.c_str(),
               O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return IoError("cannot create " + o.image + ": " + Errno());
    const int rc = ::ftruncate(fd, static_cast<off_t>(o.bytes));
    const int err = errno;
    ::close(fd);
    if (rc != 0) {
      return IoError("cannot size " + o.image + ": " + std::strerror(err));
    }
  }
  hlo_diff::ProcessSpec spec;
  spec.argv = {
      mkfs, "-q", "-F",           "-N", std::to_string(o.inodes), "-m",
      "0",  "-O", "^has_journal", "-L", "trench-builder",         o.image};
  spec.timeout_seconds = 300;
  ASSIGN_OR_RETURN(hlo_diff::ProcessResult r, hlo_diff::RunProcess(spec));
  if (r.timed_out || r.exit_code != 0) {
    return IoError("mkfs.ext4 " + o.image + " failed: " + r.err_last_line);
  }
  std::ofstream params(o.image + ".params", std::ios::trunc);
  params << Params(o) << "\n";
  params.close();
  if (!params) return IoError("cannot write " + o.image + ".params");
  return Status::Ok();
}

// Attaches `image` to a free loop device that detaches itself once
// unmounted and closed; returns the device's open fd and path.
StatusOr<std::pair<int, std::string>> AttachLoop(const std::string& image) {
  const int ctl = ::open("/dev/loop-control", O_RDWR | O_CLOEXEC);
  if (ctl < 0) {
    return FailedPrecondition("no loop devices (/dev/loop-control: " + Errno() +
                              ")");
  }
  const int file = ::open(image.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (file < 0) {
    ::close(ctl);
    return IoError("cannot open " + image + ": " + Errno());
  }
  Status last = IoError("no free loop device");
  for (int attempt = 0; attempt < 8; ++attempt) {
    const int n = ::ioctl(ctl, LOOP_CTL_GET_FREE);
    if (n < 0) {
      last = IoError("LOOP_CTL_GET_FREE: " + Errno());
      break;
    }
    const std::string dev = "/dev/loop" + std::to_string(n);
    const int loop = ::open(dev.c_str(), O_RDWR | O_CLOEXEC);
    if (loop < 0) {
      last = IoError("cannot open " + dev + ": " + Errno());
      continue;
    }
    loop_config config;
    std::memset(&config, 0, sizeof config);
    config.fd = static_cast<uint32_t>(file);
    config.info.lo_flags = LO_FLAGS_AUTOCLEAR;
    int rc = ::ioctl(loop, LOOP_CONFIGURE, &config);
    if (rc != 0 && (errno == EINVAL || errno == ENOTTY)) {
      // Before Linux 5.8: attach, then set the flags.
      rc = ::ioctl(loop, LOOP_SET_FD, file);
      if (rc == 0) {
        loop_info64 info;
        std::memset(&info, 0, sizeof info);
        info.lo_flags = LO_FLAGS_AUTOCLEAR;
        if (::ioctl(loop, LOOP_SET_STATUS64, &info) != 0) {
          ::ioctl(loop, LOOP_CLR_FD, 0);
          rc = -1;
        }
      }
    }
    if (rc == 0) {
      ::close(file);
      ::close(ctl);
      return std::make_pair(loop, dev);
    }
    last = IoError("cannot attach " + image + " to " + dev + ": " + Errno());
    ::close(loop);
    if (errno != EBUSY) break;  // Taken by someone else meanwhile: again.
  }
  ::close(file);
  ::close(ctl);
  return last;
}

}  // namespace

BuildVolume::BuildVolume(BuildVolume&& o) noexcept
    : mount_point_(std::move(o.mount_point_)) {
  o.mount_point_.clear();
}

BuildVolume& BuildVolume::operator=(BuildVolume&& o) noexcept {
  std::swap(mount_point_, o.mount_point_);
  return *this;
}

BuildVolume::~BuildVolume() { (void)Unmount(); }

StatusOr<BuildVolume> BuildVolume::Mount(const BuildVolumeOptions& options) {
  if (::geteuid() != 0) {
    return FailedPrecondition("not root (mounting needs it)");
  }
  if (options.bytes < (16u << 20) || options.inodes < 1024 ||
      options.inodes > (1ull << 31)) {
    return FailedPrecondition(
        "the image needs at least 16 MiB and between 1024 and 2^31 inodes");
  }
  const std::string mkfs = FindMkfs();
  if (mkfs.empty()) return FailedPrecondition("no mkfs.ext4");
  if (::access("/dev/loop-control", R_OK | W_OK) != 0) {
    return FailedPrecondition("no loop devices (/dev/loop-control)");
  }
  std::error_code ec;
  fs::create_directories(options.mount_point, ec);
  fs::create_directories(fs::path(options.image).parent_path(), ec);
  BuildVolumeOptions o = options;
  o.mount_point = fs::canonical(options.mount_point, ec).string();
  if (ec) return IoError("cannot resolve " + options.mount_point);
  o.image = fs::weakly_canonical(options.image, ec).string();

  const bool matches = ReadLine(o.image + ".params") == Params(o);
  const std::string source = MountedSource(o.mount_point);
  if (!source.empty() && BackingFile(source) == o.image) {
    if (matches) {  // Left by a daemon that died: ours, reuse it.
      BuildVolume v;
      v.mount_point_ = o.mount_point;
      return v;
    }
    if (::umount2(o.mount_point.c_str(), MNT_DETACH) != 0) {
      return IoError("cannot unmount the old image at " + o.mount_point + ": " +
                     Errno());
    }
  }
  // An image still in use by such a detached mount must not be mounted a
  // second time (two ext4 mounts of one image corrupt it): a new image
  // file instead, the old one living on with its last user.
  if (fs::exists(o.image, ec) && AttachedToALoopDevice(o.image)) {
    fs::remove(o.image, ec);
    if (ec) return IoError("cannot replace " + o.image + ": " + ec.message());
  }
  if (!matches || !fs::exists(o.image, ec)) RETURN_IF_ERROR(MakeImage(o, mkfs));
  Status mounted = IoError("not mounted");
  for (int attempt = 0; attempt < 2 && !mounted.ok(); ++attempt) {
    // A second try on a fresh image: the old one may be damaged.
    if (attempt > 0) RETURN_IF_ERROR(MakeImage(o, mkfs));
    ASSIGN_OR_RETURN(auto loop, AttachLoop(o.image));
    if (::mount(loop.second.c_str(), o.mount_point.c_str(), "ext4",
                MS_NOSUID | MS_NODEV, nullptr) == 0) {
      mounted = Status::Ok();
    } else {
      mounted = IoError("cannot mount " + loop.second + " (" + o.image +
                        ") at " + o.mount_point + ": " + Errno());
    }
    ::close(loop.first);  // Autoclear: the device goes with the mount.
  }
  RETURN_IF_ERROR(mounted);
  ::chmod(o.mount_point.c_str(), 0755);
  BuildVolume v;
  v.mount_point_ = o.mount_point;
  return v;
}

Status BuildVolume::Unmount() {
  if (mount_point_.empty()) return Status::Ok();
  const std::string mp = mount_point_;
  mount_point_.clear();
  if (::umount2(mp.c_str(), 0) == 0 || errno == EINVAL || errno == ENOENT) {
    return Status::Ok();
  }
  if (errno == EBUSY && ::umount2(mp.c_str(), MNT_DETACH) == 0) {
    return Status::Ok();
  }
  return IoError("cannot unmount " + mp + ": " + Errno());
}

StatusOr<VolumeSpace> SpaceOf(const std::string& dir) {
  struct statvfs s;
  if (::statvfs(dir.c_str(), &s) != 0) {
    return IoError("statvfs " + dir + ": " + Errno());
  }
  VolumeSpace v;
  if (s.f_blocks > 0) {
    v.bytes_free = static_cast<double>(s.f_bavail) / s.f_blocks;
  }
  if (s.f_files > 0) {
    v.inodes_free = static_cast<double>(s.f_favail) / s.f_files;
  }
  return v;
}

}  // namespace trench::orchestrator
