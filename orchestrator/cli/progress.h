// The progress of a long command (`trench triage`, `fuzz`, `demo`): one
// status line on a terminal, rewritten in place ("\r<text>\x1b[K"), and
// nothing at all when the stream is not a terminal (a pipe, a file, a
// test's capture), so that logs and scripts see only the real output.
//
//   Progress progress(ctx.err, ctx.err_is_terminal);
//   progress.Update("fuzz: 1234 programs, 2 findings, 12 s left");
//   progress.Print(*ctx.out, "a line of output\n");  // The line survives.
//   progress.Finish();  // Erases the status line (also on destruction).
//
// Thread-safe: a ticker thread may Update while the command Prints.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <thread>

namespace trench::cli {

// True when `fd` is a terminal (isatty).
bool IsTerminal(int fd);

class Progress {
 public:
  // `out` (not owned) gets the status line when `terminal`; else the
  // reporter writes nothing to it.
  Progress(std::ostream* out, bool terminal) : out_(out), terminal_(terminal) {}
  ~Progress() { Finish(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool enabled() const { return terminal_; }
  // Shows `status` (one line: control characters are escaped) in place of
  // the previous one.
  void Update(std::string_view status);
  // Writes `text` to `stream` with the status line out of its way: erased
  // first, shown again after. For output that shares the terminal.
  void Print(std::ostream& stream, std::string_view text);
  // Erases the status line; a later Update shows a new one.
  void Finish();

 private:
  // REQUIRES: mu_ held.
  void EraseLocked();
  void DrawLocked();

  std::mutex mu_;
  std::ostream* out_;
  const bool terminal_;
  std::string status_;  // GUARDED_BY(mu_); "" when none is shown.
};

// Shows what `status` says (e.g. a phase and the seconds elapsed) on a
// Progress at once, then again every `period` until destroyed; does
// nothing (no thread) when the progress is not enabled. `status` runs on
// the constructing thread first, then on the ticker's thread.
class ProgressTicker {
 public:
  ProgressTicker(Progress* progress, std::function<std::string()> status,
                 std::chrono::milliseconds period = std::chrono::seconds(1));
  ~ProgressTicker();  // Stops the thread; the line stays until Finish.

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;  // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace trench::cli
