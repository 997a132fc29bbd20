#include "orchestrator/store/lifecycle.h"

#include <string>

namespace trench::orchestrator {
namespace {

struct StateInfo {
  BugState state;
  std::string_view name;
  bool open;
  std::string_view description;
};

constexpr StateInfo kStates[] = {
#define TRENCH_BUG_STATE(e, name, open, description) \
  {BugState::e, name, open, description},
#include "orchestrator/store/lifecycle.def"
};

constexpr BugState kStateList[] = {
#define TRENCH_BUG_STATE(e, name, open, description) BugState::e,
#include "orchestrator/store/lifecycle.def"
};

struct Transition {
  BugState from;
  BugState to;
};

constexpr Transition kTransitions[] = {
#define TRENCH_BUG_TRANSITION(from, to) {BugState::from, BugState::to},
#include "orchestrator/store/lifecycle.def"
};

const StateInfo& Info(BugState state) {
  return kStates[static_cast<size_t>(state)];
}

}  // namespace

std::span<const BugState> AllBugStates() { return kStateList; }

std::string_view BugStateName(BugState state) { return Info(state).name; }

std::string_view BugStateDescription(BugState state) {
  return Info(state).description;
}

StatusOr<BugState> ParseBugState(std::string_view name) {
  for (const StateInfo& info : kStates) {
    if (info.name == name) return info.state;
  }
  return InvalidArgument("unknown bug state '" + std::string(name) +
                         "' (valid: " + BugStateNames() + ")");
}

std::string BugStateNames() {
  std::string out;
  for (const StateInfo& info : kStates) {
    if (!out.empty()) out += ", ";
    out += info.name;
  }
  return out;
}

bool IsOpen(BugState state) { return Info(state).open; }

bool IsLegalTransition(BugState from, BugState to) {
  for (const Transition& t : kTransitions) {
    if (t.from == from && t.to == to) return true;
  }
  return false;
}

std::vector<BugState> NextStates(BugState from) {
  std::vector<BugState> next;
  for (BugState to : kStateList) {
    if (IsLegalTransition(from, to)) next.push_back(to);
  }
  return next;
}

Status CheckTransition(BugState from, BugState to) {
  if (IsLegalTransition(from, to)) return Status::Ok();
  std::string legal;
  for (BugState next : NextStates(from)) {
    if (!legal.empty()) legal += ", ";
    legal += BugStateName(next);
  }
  return FailedPrecondition(
      "illegal bug transition " + std::string(BugStateName(from)) + " -> " +
      std::string(BugStateName(to)) + " (from " +
      std::string(BugStateName(from)) + ": " +
      (legal.empty() ? std::string("none") : legal) + ")");
}

}  // namespace trench::orchestrator
