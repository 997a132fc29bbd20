// Helpers for the daemon's end-to-end tests: a demo target repository,
// the `trench serve` binary run as a real child process (so that SIGKILL
// is real), and read-only views of its store while it runs.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/json.h"
#include "orchestrator/store/job_queue.h"
#include "orchestrator/store/store.h"
#include "tests/orchestrator/read_all.h"

namespace trench::orchestrator::testing {

namespace fs = std::filesystem;

inline std::string Tail(const std::string& text, size_t n = 4000) {
  return text.size() > n ? "..." + text.substr(text.size() - n) : text;
}

// `trench serve --config CONFIG`, its output appended to LOG.
class DaemonProcess {
 public:
  DaemonProcess(std::string config, std::string log)
      : config_(std::move(config)), log_(std::move(log)) {}
  ~DaemonProcess() {
    if (pid_ > 0) Kill(SIGKILL);
  }

  void Start(const std::vector<std::string>& env = {}) {
    pid_ = ::fork();
    ASSERT_GE(pid_, 0);
    if (pid_ == 0) {
      FILE* out = std::fopen(log_.c_str(), "a");
      if (out) {
        ::dup2(fileno(out), 1);
        ::dup2(fileno(out), 2);
      }
      for (const std::string& e : env) ::putenv(const_cast<char*>(e.c_str()));
      const std::string bin = std::string(TRENCH_BINARY_DIR) + "/trench";
      ::execl(bin.c_str(), bin.c_str(), "serve", "--config", config_.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  // Sends `sig` and waits; returns the wait status.
  int Kill(int sig) {
    if (pid_ <= 0) return -1;
    ::kill(pid_, sig);
    return Wait();
  }
  int Wait() {
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }
  bool Running() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return false;
    }
    return true;
  }
  pid_t pid() const { return pid_; }

 private:
  std::string config_, log_;
  pid_t pid_ = -1;
};

// A fresh connection to the daemon's store (WAL: readers never block it).
inline std::unique_ptr<Store> OpenForReading(const std::string& path) {
  StoreOptions o;
  o.create_if_missing = false;
  StatusOr<std::unique_ptr<Store>> s = Store::Open(path, o);
  return s.ok() ? std::move(*s) : nullptr;
}

inline std::vector<Bug> AllBugs(Store& store) {
  StatusOr<std::vector<Bug>> bugs = store.ListBugs(std::nullopt, 0, 1000);
  return bugs.ok() ? *bugs : std::vector<Bug>();
}

inline int64_t CountJobs(Store& store, JobState state,
                         const std::string& kind) {
  JobQueue q(&store);
  StatusOr<std::vector<Job>> jobs = q.List(state, 10000);
  if (!jobs.ok()) return 0;
  int64_t n = 0;
  for (const Job& j : *jobs) n += kind.empty() || j.kind == kind;
  return n;
}

// Polls `done` every `period` until it holds or `limit` passes (a guard
// against hangs, not a speed assertion). Returns whether it held.
inline bool WaitFor(
    const std::function<bool()>& done, std::chrono::seconds limit,
    std::chrono::milliseconds period = std::chrono::milliseconds(500)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(period);
  }
  return done();
}

// What went on, for a failure message: events, failed jobs, the log.
inline std::string Diagnose(const std::string& store_path,
                            const std::string& log_path) {
  std::ostringstream out;
  std::unique_ptr<Store> store = OpenForReading(store_path);
  if (store) {
    for (const Bug& b : AllBugs(*store)) {
      out << "bug " << b.id << " " << BugStateName(b.state) << " "
          << b.signature << "\n";
    }
    JobQueue q(store.get());
    for (JobState s : {JobState::kFailed, JobState::kParked, JobState::kQueued,
                       JobState::kLeased}) {
      StatusOr<std::vector<Job>> jobs = q.List(s, 100);
      if (!jobs.ok()) continue;
      for (const Job& j : *jobs) {
        out << "job " << j.id << " " << j.kind << " " << JobStateName(s) << " "
            << j.payload.Dump() << " " << j.last_error << "\n";
      }
    }
  }
  out << "log:\n" << Tail(ReadAll(log_path), 6000);
  return out.str();
}

}  // namespace trench::orchestrator::testing
