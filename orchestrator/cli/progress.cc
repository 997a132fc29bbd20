#include "orchestrator/cli/progress.h"

#include <unistd.h>

#include "base/display_text.h"

namespace trench::cli {

bool IsTerminal(int fd) { return ::isatty(fd) == 1; }

void Progress::Update(std::string_view status) {
  if (!terminal_) return;
  std::lock_guard<std::mutex> lock(mu_);
  status_ = EscapeControls(status, false);
  DrawLocked();
}

void Progress::Print(std::ostream& stream, std::string_view text) {
  std::lock_guard<std::mutex> lock(mu_);
  EraseLocked();
  stream << text << std::flush;
  DrawLocked();
}

void Progress::Finish() {
  if (!terminal_) return;
  std::lock_guard<std::mutex> lock(mu_);
  EraseLocked();
  status_.clear();
}

void Progress::EraseLocked() {
  if (!terminal_ || status_.empty()) return;
  *out_ << "\r\x1b[K" << std::flush;
}

void Progress::DrawLocked() {
  if (!terminal_ || status_.empty()) return;
  *out_ << "\r" << status_ << "\x1b[K" << std::flush;
}

ProgressTicker::ProgressTicker(Progress* progress,
                               std::function<std::string()> status,
                               std::chrono::milliseconds period) {
  if (!progress->enabled()) return;
  progress->Update(status());  // At once, whatever the thread's timing.
  thread_ = std::thread([this, progress, status = std::move(status), period] {
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, period, [this] { return stop_; })) {
      lock.unlock();
      progress->Update(status());
      lock.lock();
    }
  });
}

ProgressTicker::~ProgressTicker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

}  // namespace trench::cli
