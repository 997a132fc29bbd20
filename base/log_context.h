// Fields that every log line of the current thread carries: the job a
// worker runs, its bug, step, attempt, commit, an agent's role. A worker
// opens a LogScope when it starts a job; every line logged on that thread
// until the scope ends (plain spdlog::info calls in the steps included)
// carries the scope's fields (orchestrator/daemon/logging.h prints them as
// JSON members or key=value pairs). Scopes nest: an inner scope adds
// fields, or replaces those of the same name, until it ends.
//
// Nothing here logs: this is the thread's record only, so that every
// library (store, pipeline, agents) can add fields without depending on
// the daemon's logger.
#pragma once

#include "base/json.h"

namespace trench {

class LogScope {
 public:
  // Adds the members of `fields` (a JSON object; anything else is ignored)
  // to the thread's context; a null member removes that field.
  explicit LogScope(const Json& fields);
  // Restores the context as it was before the scope.
  ~LogScope();
  LogScope(const LogScope&) = delete;
  LogScope& operator=(const LogScope&) = delete;

  // Sets one more field for the rest of the scope (restored with it).
  void Set(const std::string& key, const Json& value);

 private:
  Json saved_;
};

// The calling thread's fields now: an object (empty outside every scope).
const Json& CurrentLogFields();

}  // namespace trench
