// Result interpretation: which limit a run hit, and the one-line summary.
#include <signal.h>
#include <string.h>

#include <cstdio>

#include "sandbox/sandbox.h"

namespace trench::sandbox {

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

unsigned ClassifyLimits(const Result& r, const Limits& limits) {
  unsigned hit = 0;
  if (r.timed_out) hit |= kLimitWallTime;
  if (r.signal == SIGXCPU ||
      (r.signal == SIGKILL && !r.timed_out && limits.cpu_seconds > 0 &&
       r.cpu_seconds >= static_cast<double>(limits.cpu_seconds)))
    hit |= kLimitCpu;
  if (r.signal == SIGXFSZ) hit |= kLimitFileSize;
  if (r.signal == SIGSYS) hit |= kLimitSeccomp;
  bool abnormal = !r.exited || r.exit_code != 0;
  if (r.oom_killed ||
      (abnormal && !r.timed_out && limits.address_space_bytes > 0 &&
       r.max_rss_bytes >= limits.address_space_bytes / 2))
    hit |= kLimitMemory;
  if (r.stdout_truncated > 0 || r.stderr_truncated > 0) hit |= kLimitOutput;
  return hit;
}

std::string Result::Summary() const {
  char buf[160];
  std::string s = exited ? "exited " + std::to_string(exit_code)
                         : "killed by " + SignalName(signal);
  if (timed_out) s += " (wall timeout)";
  snprintf(buf, sizeof buf, " in %.2fs (cpu %.2fs, max rss %.1f MiB)",
           wall_seconds, cpu_seconds, max_rss_bytes / 1048576.0);
  s += buf;
  if (memory_peak_bytes > 0) {
    snprintf(buf, sizeof buf, "; run's memory peak %.1f MiB",
             memory_peak_bytes / 1048576.0);
    s += buf;
  }
  if (oom_killed) s += "; OOM kill at the memory bound";
  static const struct {
    unsigned bit;
    const char* name;
  } kNames[] = {{kLimitWallTime, "wall"},      {kLimitCpu, "cpu"},
                {kLimitFileSize, "file size"}, {kLimitMemory, "memory?"},
                {kLimitOutput, "output"},      {kLimitSeccomp, "seccomp"}};
  std::string hit;
  for (const auto& n : kNames) {
    if (!(limits_hit & n.bit)) continue;
    // Certain with the cgroup's OOM kill, a guess otherwise.
    const char* name = n.bit == kLimitMemory && oom_killed ? "memory" : n.name;
    hit += std::string(hit.empty() ? "" : ",") + name;
  }
  if (!hit.empty()) s += "; limits hit: " + hit;
  if (stdout_truncated > 0)
    s += "; stdout truncated by " + std::to_string(stdout_truncated) + " bytes";
  if (stderr_truncated > 0)
    s += "; stderr truncated by " + std::to_string(stderr_truncated) + " bytes";
  if (!namespaced) s += "; no namespaces";
  if (isolation == Isolation::kBwrap) s += "; bwrap";
  return s;
}

}  // namespace trench::sandbox
