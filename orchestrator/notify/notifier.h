// The notifier: a loop, on a thread of its own with its own store
// connection, that moves new bug events into the durable outbox and sends
// the deliveries that are due (notify_outbox.h), by webhook
// (notify_webhook.h) and e-mail (notify_mail.h).
//
// It wakes on the store's event bell (event_bell.h: writes of this
// process), when the next retry is due, and every `poll_seconds` (writes
// of other processes). Each send and each outcome is logged (spdlog):
// info when sent, warn for a retry, error when failed or dead. Stop()
// makes Run() return soon, aborting a send in flight (its row stays
// pending and is sent again later, with the same delivery id).
//
// Thread-safety: Run() on one thread; Stop() from any.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "base/status.h"
#include "orchestrator/notify/notify_setup.h"
#include "orchestrator/store/store.h"

namespace trench::orchestrator {

struct NotifierOptions {
  NotifySetup setup;
  bool backfill = false;  // See notify_outbox.h.
  int batch = 100;        // Events per dispatch transaction.
  double poll_seconds = 5;
  double send_timeout_seconds = 20;
  Clock* clock = SystemClock::Get();  // Not owned (tests: a FakeClock).
};

class Notifier {
 public:
  // Opens its own connection to the store at `store_path`, and fixes
  // where notifications start (notify_outbox.h: a store without a cursor
  // starts at its newest event) before returning, so that every event
  // written after Open is notified, whenever Run() starts.
  static StatusOr<std::unique_ptr<Notifier>> Open(const std::string& store_path,
                                                  NotifierOptions options);
  ~Notifier();
  Notifier(const Notifier&) = delete;
  Notifier& operator=(const Notifier&) = delete;

  // One round: dispatches every new event, then sends the due deliveries.
  // Returns the number of sends attempted.
  StatusOr<int> RunOnce();
  // Rounds until Stop(); errors are logged and retried.
  void Run();
  void Stop();

 private:
  Notifier(std::unique_ptr<Store> store, NotifierOptions options);
  void Wake();

  std::unique_ptr<Store> store_;
  NotifierOptions options_;
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  bool rung_ = false;  // GUARDED_BY(mu_)
  uint64_t bell_ = 0;
};

}  // namespace trench::orchestrator
