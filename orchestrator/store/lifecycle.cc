#include "orchestrator/store/lifecycle.h"

#include <span>
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

// Each verb's from-states, as an array per verb (kFrom_kApprove, ...).
namespace verb_from {
using enum BugState;
#define TRENCH_TRIAGE_VERB(e, name, to, description, ...) \
  constexpr BugState kFrom_##e[] = {__VA_ARGS__};
#include "orchestrator/store/lifecycle.def"
}  // namespace verb_from

struct VerbInfo {
  TriageVerb verb;
  std::string_view name;
  BugState to;
  std::string_view description;
  std::span<const BugState> from;
};

constexpr VerbInfo kVerbs[] = {
#define TRENCH_TRIAGE_VERB(e, name, to, description, ...) \
  {TriageVerb::e, name, BugState::to, description, verb_from::kFrom_##e},
#include "orchestrator/store/lifecycle.def"
};

constexpr TriageVerb kVerbList[] = {
#define TRENCH_TRIAGE_VERB(e, name, to, description, ...) TriageVerb::e,
#include "orchestrator/store/lifecycle.def"
};

const VerbInfo& Info(TriageVerb verb) {
  return kVerbs[static_cast<size_t>(verb)];
}

// A verb's move is a transition even when no TRENCH_BUG_TRANSITION lists it.
bool IsVerbMove(BugState from, BugState to) {
  for (const VerbInfo& v : kVerbs) {
    if (v.to != to) continue;
    for (BugState f : v.from) {
      if (f == from) return true;
    }
  }
  return false;
}

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
  return IsVerbMove(from, to);
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

std::span<const TriageVerb> AllTriageVerbs() { return kVerbList; }

std::string_view TriageVerbName(TriageVerb verb) { return Info(verb).name; }

std::string_view TriageVerbDescription(TriageVerb verb) {
  return Info(verb).description;
}

StatusOr<TriageVerb> ParseTriageVerb(std::string_view name) {
  for (const VerbInfo& info : kVerbs) {
    if (info.name == name) return info.verb;
  }
  return InvalidArgument("unknown verb '" + std::string(name) +
                         "' (valid: " + TriageVerbNames() + ")");
}

std::string TriageVerbNames() {
  std::string out;
  for (const VerbInfo& info : kVerbs) {
    if (!out.empty()) out += ", ";
    out += info.name;
  }
  return out;
}

BugState TriageVerbTarget(TriageVerb verb) { return Info(verb).to; }

std::span<const BugState> TriageVerbFromStates(TriageVerb verb) {
  return Info(verb).from;
}

Status CheckTriageVerb(TriageVerb verb, BugState from) {
  for (BugState f : Info(verb).from) {
    if (f == from) return Status::Ok();
  }
  std::string legal;
  for (BugState f : Info(verb).from) {
    if (!legal.empty()) legal += ", ";
    legal += BugStateName(f);
  }
  return FailedPrecondition(
      "cannot " + std::string(Info(verb).name) + " a bug in state " +
      std::string(BugStateName(from)) + " (" + std::string(Info(verb).name) +
      " applies to: " + legal + ")");
}

}  // namespace trench::orchestrator
