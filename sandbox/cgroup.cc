#include "sandbox/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sandbox/mountinfo.h"

namespace trench::sandbox {
namespace {

std::string ErrnoText(int err) {
  return std::string(strerror(err)) + " (errno " + std::to_string(err) + ")";
}

// Writes `text` to the cgroup file `path` in one write(2), as cgroupfs
// wants. Returns 0 or errno.
int WriteTo(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  ssize_t n = write(fd, text.data(), text.size());
  int err = n == static_cast<ssize_t>(text.size()) ? 0 : (n < 0 ? errno : EIO);
  close(fd);
  return err;
}

Status Write(const std::string& path, const std::string& text) {
  int err = WriteTo(path, text);
  if (err != 0)
    return IoError("cgroup: write '" + text + "' to " + path + ": " +
                   ErrnoText(err));
  return Status::Ok();
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

uint64_t ParseU64(std::string_view s) {
  uint64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// The value of `key` in a "key value" per line file (memory.events,
// memory.oom_control); 0 when absent.
uint64_t KeyedValue(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(key + " ", 0) == 0)
      return ParseU64(std::string_view(line).substr(key.size() + 1));
  }
  return 0;
}

bool HasWord(const std::string& text, const std::string& word, char sep) {
  std::istringstream in(text);
  std::string w;
  while (std::getline(in, w, sep)) {
    while (!w.empty() && (w.back() == '\n' || w.back() == ' ')) w.pop_back();
    if (w == word) return true;
  }
  return false;
}

int MakeDir(const std::string& path) {
  if (mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return 0;
  return errno;
}

std::vector<pid_t> ReadPids(const std::string& file) {
  std::vector<pid_t> pids;
  std::istringstream in(ReadAll(file));
  long pid;
  while (in >> pid) pids.push_back(static_cast<pid_t>(pid));
  return pids;
}

// Kills what is left in `dir` and removes it; bounded (a few seconds).
void KillAndRemove(const std::string& dir, CgroupMode mode) {
  for (int round = 0; round < 3000; ++round) {
    if (rmdir(dir.c_str()) == 0 || errno == ENOENT) return;
    if (errno != EBUSY) return;
    if (mode != CgroupMode::kV2 || WriteTo(dir + "/cgroup.kill", "1") != 0) {
      for (pid_t pid : ReadPids(dir + "/cgroup.procs")) kill(pid, SIGKILL);
    }
    timespec ms = {0, 1000000};
    nanosleep(&ms, nullptr);
  }
}

// Removes the groups "<pid>-<n>" under `parent` whose pid is dead (a
// daemon or test process that crashed). Returns how many.
int Sweep(const std::string& parent, CgroupMode mode) {
  int n = 0;
  DIR* d = opendir(parent.c_str());
  if (d == nullptr) return 0;
  std::vector<std::string> stale;
  while (dirent* e = readdir(d)) {
    std::string_view name = e->d_name;
    size_t dash = name.find('-');
    if (dash == std::string_view::npos || dash == 0) continue;
    pid_t pid = static_cast<pid_t>(ParseU64(name.substr(0, dash)));
    if (pid <= 0 || (kill(pid, 0) != 0 && errno == ESRCH))
      stale.push_back(parent + "/" + std::string(name));
  }
  closedir(d);
  for (const std::string& dir : stale) {
    KillAndRemove(dir, mode);
    ++n;
  }
  return n;
}

struct Mounts {
  std::string v2;                  // The cgroup2 mount point, if any.
  std::string v1_memory, v1_pids;  // The v1 hierarchies, if any.
};

Mounts FindMounts() {
  Mounts m;
  for (const MountEntry& e : ReadMountInfo()) {
    if (e.fstype == "cgroup2" && m.v2.empty()) m.v2 = e.point;
    if (e.fstype != "cgroup") continue;
    if (HasWord(e.options, "memory", ',') && m.v1_memory.empty())
      m.v1_memory = e.point;
    if (HasWord(e.options, "pids", ',') && m.v1_pids.empty())
      m.v1_pids = e.point;
  }
  return m;
}

// Makes <mount>/trench hand memory and pids down (see the header).
Status SetUpV2(const std::string& mount, std::string* parent) {
  const std::string controllers = ReadAll(mount + "/cgroup.controllers");
  if (!HasWord(controllers, "memory", ' ') ||
      !HasWord(controllers, "pids", ' '))
    return FailedPrecondition("cgroup v2 at " + mount +
                              " lacks the memory or pids controller (has: " +
                              controllers.substr(0, controllers.find('\n')) +
                              ")");
  *parent = mount + "/trench";
  if (int err = MakeDir(*parent); err != 0)
    return IoError("cgroup: mkdir " + *parent + ": " + ErrnoText(err));
  const std::string top = mount + "/cgroup.subtree_control";
  int err = WriteTo(top, "+memory +pids");
  if (err == EBUSY) {
    // Our own group is the mount's root and holds processes: move into a
    // leaf first (only ourselves; other processes there keep it busy).
    const std::string leaf = mount + "/trench-daemon";
    if (MakeDir(leaf) == 0 && WriteTo(leaf + "/cgroup.procs", "0") == 0)
      err = WriteTo(top, "+memory +pids");
  }
  if (err != 0)
    return IoError("cgroup: enable memory and pids in " + top + ": " +
                   ErrnoText(err));
  return Write(*parent + "/cgroup.subtree_control", "+memory +pids");
}

// Whether a process can join `group` as every run's init does (cgroup v2's
// rules on moving processes, a delegation that stops short): a forked
// child writes "0" to each procs fd and exits, and the group is removed
// with the probe. Errors: FailedPrecondition naming the errno.
Status ProbeJoin(const RunCgroup& group) {
  const pid_t pid = fork();
  if (pid < 0) return IoError(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    for (int fd : group.procs_fds()) {
      if (write(fd, "0", 1) != 1) _exit(errno == 0 ? 1 : errno);
    }
    _exit(0);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  const int err = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
  return FailedPrecondition(
      std::string("a process cannot join a run's group: ") +
      (err > 1 ? std::strerror(err) : "the probe child failed"));
}

CgroupSupport Detect() {
  CgroupSupport s;
  const Mounts m = FindMounts();
  std::string v2_error;
  if (!m.v2.empty()) {
    Status st = SetUpV2(m.v2, &s.v2_parent);
    if (st.ok()) {
      s.mode = CgroupMode::kV2;
    } else {
      v2_error = st.message();
      s.v2_parent.clear();
    }
  }
  if (s.mode == CgroupMode::kNone && !m.v1_memory.empty() &&
      !m.v1_pids.empty()) {
    s.memory_parent = m.v1_memory + "/trench";
    s.pids_parent = m.v1_pids + "/trench";
    int err = MakeDir(s.memory_parent);
    if (err == 0) err = MakeDir(s.pids_parent);
    if (err == 0) {
      s.mode = CgroupMode::kV1;
      struct stat st;
      s.v1_memsw =
          stat((s.memory_parent + "/memory.memsw.limit_in_bytes").c_str(),
               &st) == 0;
    } else {
      s.error = "cgroup v1: mkdir under " + m.v1_memory + " or " + m.v1_pids +
                ": " + ErrnoText(err);
    }
  }
  if (s.mode == CgroupMode::kNone) {
    if (s.error.empty())
      s.error = m.v2.empty() && m.v1_memory.empty()
                    ? "no cgroup hierarchy with memory and pids is mounted"
                    : "no usable memory and pids controllers";
    if (!v2_error.empty()) s.error = v2_error + "; " + s.error;
    s.memory_parent.clear();
    s.pids_parent.clear();
    return s;
  }
  if (s.mode == CgroupMode::kV2) {
    s.swept = Sweep(s.v2_parent, s.mode);
  } else {
    s.swept = Sweep(s.memory_parent, s.mode) + Sweep(s.pids_parent, s.mode);
  }
  // A probe group with both bounds, as every run gets.
  StatusOr<std::unique_ptr<RunCgroup>> probe =
      RunCgroup::Create(s, 64 << 20, 64);
  Status joined = probe.ok() ? ProbeJoin(**probe) : Status(probe.status());
  if (!joined.ok()) {
    CgroupSupport none;
    none.error = joined.message();
    return none;
  }
  return s;
}

std::atomic<uint64_t> next_group{0};

}  // namespace

const char* CgroupModeName(CgroupMode mode) {
  switch (mode) {
    case CgroupMode::kNone:
      return "none";
    case CgroupMode::kV1:
      return "v1";
    case CgroupMode::kV2:
      return "v2";
  }
  return "?";
}

std::string CgroupSupport::Describe() const {
  const std::string gains =
      ": runs get an aggregate memory bound (OOM kills reported), a process "
      "bound of their own and the memory peak";
  switch (mode) {
    case CgroupMode::kV2:
      return "cgroups: v2 (" + v2_parent + ")" + gains;
    case CgroupMode::kV1:
      return "cgroups: v1 (memory at " + memory_parent +
             (v1_memsw ? "" : " without swap accounting") + ", pids at " +
             pids_parent + ")" + gains;
    case CgroupMode::kNone:
      break;
  }
  return "cgroups: NONE (" + error +
         "); lost: the aggregate memory bound (only RLIMIT_AS per process), "
         "the per-run process bound (only RLIMIT_NPROC per uid) and the "
         "memory peak (only the largest process's max RSS)";
}

const CgroupSupport& DetectCgroups() {
  static const CgroupSupport support = Detect();
  return support;
}

StatusOr<std::unique_ptr<RunCgroup>> RunCgroup::Create(
    const CgroupSupport& support, uint64_t memory_bytes, uint64_t processes) {
  if (support.mode == CgroupMode::kNone)
    return FailedPrecondition("cgroup: none available: " + support.error);
  std::unique_ptr<RunCgroup> g(new RunCgroup());
  g->mode_ = support.mode;
  const std::string name =
      std::to_string(getpid()) + "-" + std::to_string(next_group++);
  std::string pids_dir;
  if (support.mode == CgroupMode::kV2) {
    g->memory_dir_ = pids_dir = support.v2_parent + "/" + name;
    g->dirs_ = {g->memory_dir_};
  } else {
    g->memory_dir_ = support.memory_parent + "/" + name;
    pids_dir = support.pids_parent + "/" + name;
    g->dirs_ = {g->memory_dir_, pids_dir};
  }
  for (const std::string& dir : g->dirs_) {
    if (mkdir(dir.c_str(), 0755) != 0)
      return IoError("cgroup: mkdir " + dir + ": " + ErrnoText(errno));
  }
  const std::string& mem = g->memory_dir_;
  if (memory_bytes > 0) {
    const std::string bytes = std::to_string(memory_bytes);
    if (support.mode == CgroupMode::kV2) {
      RETURN_IF_ERROR(Write(mem + "/memory.max", bytes));
      // Missing without swap accounting: nothing to bound then.
      int err = WriteTo(mem + "/memory.swap.max", "0");
      if (err != 0 && err != ENOENT)
        return IoError("cgroup: memory.swap.max: " + ErrnoText(err));
    } else {
      RETURN_IF_ERROR(Write(mem + "/memory.limit_in_bytes", bytes));
      if (support.v1_memsw)
        RETURN_IF_ERROR(Write(mem + "/memory.memsw.limit_in_bytes", bytes));
    }
  }
  if (processes > 0)
    RETURN_IF_ERROR(Write(pids_dir + "/pids.max", std::to_string(processes)));
  for (const std::string& dir : g->dirs_) {
    int fd = open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0)
      return IoError("cgroup: open " + dir +
                     "/cgroup.procs: " + ErrnoText(errno));
    g->procs_fds_.push_back(fd);
  }
  return g;
}

RunCgroup::~RunCgroup() {
  for (int fd : procs_fds_) close(fd);
  for (const std::string& dir : dirs_) KillAndRemove(dir, mode_);
}

CgroupUsage RunCgroup::Usage() const {
  CgroupUsage u;
  if (mode_ == CgroupMode::kV2) {
    u.memory_peak_bytes = ParseU64(ReadAll(memory_dir_ + "/memory.peak"));
    u.oom_killed =
        KeyedValue(ReadAll(memory_dir_ + "/memory.events"), "oom_kill") > 0;
  } else if (mode_ == CgroupMode::kV1) {
    u.memory_peak_bytes =
        ParseU64(ReadAll(memory_dir_ + "/memory.max_usage_in_bytes"));
    u.oom_killed = KeyedValue(ReadAll(memory_dir_ + "/memory.oom_control"),
                              "oom_kill") > 0;
  }
  return u;
}

std::vector<pid_t> RunCgroup::Members() const {
  std::vector<pid_t> all;
  for (const std::string& dir : dirs_) {
    for (pid_t p : ReadPids(dir + "/cgroup.procs")) all.push_back(p);
  }
  return all;
}

}  // namespace trench::sandbox
