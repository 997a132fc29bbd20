#include "orchestrator/store/event_bell.h"

#include <map>
#include <mutex>

namespace trench::orchestrator {
namespace {

struct Bell {
  std::mutex mu;
  uint64_t last_id = 0;                                 // GUARDED_BY(mu)
  std::map<uint64_t, std::function<void()>> listeners;  // GUARDED_BY(mu)
};

Bell& TheBell() {
  static Bell* bell = new Bell();  // Never destroyed: rung until exit.
  return *bell;
}

}  // namespace

void RingEventBell() {
  Bell& b = TheBell();
  std::lock_guard<std::mutex> lock(b.mu);
  for (auto& [id, listener] : b.listeners) listener();
}

uint64_t SubscribeEventBell(std::function<void()> listener) {
  Bell& b = TheBell();
  std::lock_guard<std::mutex> lock(b.mu);
  b.listeners[++b.last_id] = std::move(listener);
  return b.last_id;
}

void UnsubscribeEventBell(uint64_t id) {
  Bell& b = TheBell();
  std::lock_guard<std::mutex> lock(b.mu);
  b.listeners.erase(id);
}

}  // namespace trench::orchestrator
