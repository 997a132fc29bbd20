// The store's notion of time, injectable so that tests never sleep.
//
// Every timestamp the store writes (created/updated times, event times,
// lease expiries, retry delays) comes from a Clock, as whole milliseconds
// since the Unix epoch.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace trench::orchestrator {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since the Unix epoch. Thread-safe.
  virtual int64_t NowMillis() const = 0;
};

// Wall-clock time (std::chrono::system_clock).
class SystemClock final : public Clock {
 public:
  int64_t NowMillis() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  // A process-wide instance (the default of StoreOptions).
  static SystemClock* Get() {
    static SystemClock clock;
    return &clock;
  }
};

// A clock that only moves when told to. Thread-safe.
class FakeClock final : public Clock {
 public:
  explicit FakeClock(int64_t now_ms = 1'700'000'000'000) : now_(now_ms) {}
  int64_t NowMillis() const override { return now_.load(); }
  void Set(int64_t now_ms) { now_.store(now_ms); }
  void Advance(int64_t delta_ms) { now_.fetch_add(delta_ms); }

 private:
  std::atomic<int64_t> now_;
};

}  // namespace trench::orchestrator
