// Child processes for the target runner: fork/exec with pipes, a
// wall-clock timeout that kills the whole process group, and bounded
// capture of stdout/stderr.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace trench::hlo_diff {

// Keeps the first and the last `limit / 2` bytes of a stream; the middle is
// replaced by a "[... N bytes dropped ...]" line.
class BoundedCapture {
 public:
  explicit BoundedCapture(size_t limit) : limit_(limit) {}
  void Append(const char* data, size_t size);
  std::string str() const;
  // The captured text's last non-empty line (after the tail).
  std::string LastLine() const;

 private:
  size_t limit_;
  std::string head_, tail_;
  size_t dropped_ = 0;
};

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is the program path.
  // Added to (or replacing in) the parent's environment.
  std::vector<std::pair<std::string, std::string>> env;
  double timeout_seconds = 60;  // <= 0: no timeout.
  size_t capture_bytes = 64 << 10;
};

// Timeouts count the time a process could run: the wall time minus what
// it spent runnable but waiting for a CPU (sampled from /proc/PID/stat and
// /proc/PID/schedstat; the process itself, not its children), so that a
// machine busy with other work does not turn a slow run into a timeout. A
// run is killed when that time passes the timeout, or in any case at
// kMaxTimeoutStretch times the timeout; killed there with less than the
// timeout of run time, it was starved (ProcessResult::starved), which is
// the machine's state, not a verdict on the program.
inline constexpr double kMaxTimeoutStretch = 10;

struct ProcessResult {
  bool timed_out = false;  // Killed (with its process group) at the timeout.
  bool starved = false;    // Timed out while mostly waiting for a CPU.
  int exit_code = -1;      // When it exited normally.
  int signal = 0;          // When a signal ended it.
  std::string out, err;    // Captured (bounded).
  std::string err_last_line;
  double seconds = 0;
};

// Runs the process to completion (stdin is /dev/null). The child is the
// leader of a new process group; at the timeout the group gets SIGKILL.
// Errors: Internal when pipes or fork fail. A program that cannot be
// executed exits with 127 and says so on stderr.
StatusOr<ProcessResult> RunProcess(const ProcessSpec& spec);

// The executable `name` looked up in PATH (or `name` itself when it holds
// a '/'), or "" when there is none.
std::string FindProgram(const std::string& name);

// A long-running child talking on stdin/stdout in lines (`hlo-run
// --serve`). Its stderr is drained into a bounded capture.
class LineProcess {
 public:
  LineProcess() = default;
  ~LineProcess();
  LineProcess(const LineProcess&) = delete;
  LineProcess& operator=(const LineProcess&) = delete;

  // Starts the child. Internal when pipes or fork fail.
  Status Start(const ProcessSpec& spec);
  bool running() const { return pid_ > 0; }
  // Whether the child is still running; a child that ended is reaped
  // (last_exit() says how).
  bool Alive();
  // Writes `line` + "\n" and reads one answer line within timeout_seconds
  // (<= 0: no limit). Errors: DeadlineExceeded (the child is killed);
  // IoError when the child closed its stdout or died (it
  // is reaped; see last_exit()). After an error the process is gone.
  StatusOr<std::string> Request(const std::string& line,
                                double timeout_seconds);
  // Kills the process group and reaps the child.
  void Kill();
  // How the last child ended (after an error or Kill).
  const ProcessResult& last_exit() const { return last_exit_; }
  std::string stderr_text() const { return err_.str(); }

 private:
  void Reap(bool timed_out, bool starved = false);

  pid_t pid_ = -1;
  int in_fd_ = -1, out_fd_ = -1, err_fd_ = -1;
  std::string pending_;  // Bytes read past the last answer line.
  BoundedCapture err_{64 << 10};
  ProcessResult last_exit_;
};

}  // namespace trench::hlo_diff
