// The notifier's loop (notifier.h).
#include "orchestrator/notify/notifier.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "orchestrator/notify/notify_mail.h"
#include "orchestrator/notify/notify_outbox.h"
#include "orchestrator/notify/notify_webhook.h"
#include "orchestrator/store/event_bell.h"

namespace trench::orchestrator {

StatusOr<std::unique_ptr<Notifier>> Notifier::Open(
    const std::string& store_path, NotifierOptions options) {
  StoreOptions so;
  so.clock = options.clock;
  ASSIGN_OR_RETURN(std::unique_ptr<Store> store, Store::Open(store_path, so));
  // Where notifications start is fixed now, before the caller takes
  // requests: an event written after Open is never taken for one from
  // before notifications were configured.
  RETURN_IF_ERROR(DispatchEvents(store.get(), options.setup, options.backfill,
                                 /*batch=*/0)
                      .status());
  return std::unique_ptr<Notifier>(
      new Notifier(std::move(store), std::move(options)));
}

Notifier::Notifier(std::unique_ptr<Store> store, NotifierOptions options)
    : store_(std::move(store)), options_(std::move(options)) {
  bell_ = SubscribeEventBell([this] { Wake(); });
}

Notifier::~Notifier() { UnsubscribeEventBell(bell_); }

void Notifier::Wake() {
  std::lock_guard<std::mutex> lock(mu_);
  rung_ = true;
  cv_.notify_all();
}

void Notifier::Stop() {
  stop_ = true;
  Wake();
}

StatusOr<int> Notifier::RunOnce() {
  while (true) {
    ASSIGN_OR_RETURN(int read,
                     DispatchEvents(store_.get(), options_.setup,
                                    options_.backfill, options_.batch));
    if (read < options_.batch) break;
  }
  int sent = 0;
  std::set<int64_t> tried;  // Each row once a round, even with no backoff.
  bool fresh = true;
  while (!stop_ && fresh) {
    ASSIGN_OR_RETURN(
        std::vector<OutboxRow> rows,
        DueDeliveries(store_.get(), store_->clock()->NowMillis(), 20));
    fresh = false;
    for (const OutboxRow& row : rows) {
      if (stop_) break;
      if (!tried.insert(row.id).second) continue;
      fresh = true;
      const NotifyDestination* d = options_.setup.Find(row.destination);
      SendResult result;
      if (d == nullptr) {
        // The config no longer names it: nowhere to send.
        result = {SendOutcome::kRefused, "destination " + row.destination +
                                             " is no longer configured"};
      } else if (d->channel == NotifyChannel::kWebhook) {
        result = SendWebhook(*d, row.delivery_id, row.kind, row.payload,
                             options_.send_timeout_seconds, &stop_);
      } else {
        result =
            SendMail(*d, row.payload, options_.send_timeout_seconds, &stop_);
      }
      if (stop_ && result.outcome != SendOutcome::kSent) {
        break;  // Stays pending.
      }
      ASSIGN_OR_RETURN(std::string state,
                       RecordAttempt(store_.get(), options_.setup, row, result,
                                     store_->clock()->NowMillis()));
      ++sent;
      const auto level = state == "sent"      ? spdlog::level::info
                         : state == "pending" ? spdlog::level::warn
                                              : spdlog::level::err;
      spdlog::log(level, "notify {} {} ({} of event {}, attempt {}): {}: {}",
                  row.channel, row.delivery_id, row.kind, row.event_id,
                  row.attempts + 1, state, result.detail);
    }
  }
  return sent;
}

void Notifier::Run() {
  while (!stop_) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      rung_ = false;
    }
    auto wait = std::chrono::milliseconds(
        static_cast<int64_t>(options_.poll_seconds * 1000));
    StatusOr<int> done = RunOnce();
    if (!done.ok()) {
      spdlog::error("notifier: {}", done.status().message());
      wait = std::min(wait, std::chrono::milliseconds(1000));
    }
    StatusOr<std::optional<int64_t>> due = NextDueMs(store_.get());
    if (due.ok() && *due) {
      const int64_t in_ms =
          std::max<int64_t>(0, **due - store_->clock()->NowMillis());
      wait = std::min(wait, std::chrono::milliseconds(in_ms));
    }
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, wait, [&] { return rung_ || stop_.load(); });
  }
}

}  // namespace trench::orchestrator
