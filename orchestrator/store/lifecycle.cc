#include "orchestrator/store/lifecycle.h"

#include <span>
#include <string>

namespace trench::orchestrator {
namespace {

struct StateInfo {
  BugState value;
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
  TriageVerb value;
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

// "a, b, c": the names of a registry table, in order.
template <typename Entry, size_t N>
std::string NamesOf(const Entry (&table)[N]) {
  std::string out;
  for (const Entry& e : table) {
    if (!out.empty()) out += ", ";
    out += e.name;
  }
  return out;
}

// The entry of `table` named `name`, else InvalidArgument("unknown <what>
// 'x' (valid: ...)").
template <typename Entry, size_t N>
StatusOr<decltype(Entry::value)> ParseName(const Entry (&table)[N],
                                           std::string_view name,
                                           std::string_view what) {
  for (const Entry& e : table) {
    if (e.name == name) return e.value;
  }
  return InvalidArgument("unknown " + std::string(what) + " '" +
                         std::string(name) + "' (valid: " + NamesOf(table) +
                         ")");
}

// "a, b, c": the states' names.
std::string StateList(std::span<const BugState> states) {
  std::string out;
  for (BugState s : states) {
    if (!out.empty()) out += ", ";
    out += BugStateName(s);
  }
  return out;
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
  return ParseName(kStates, name, "bug state");
}

std::string BugStateNames() { return NamesOf(kStates); }

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
  const std::string legal = StateList(NextStates(from));
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
  return ParseName(kVerbs, name, "verb");
}

std::string TriageVerbNames() { return NamesOf(kVerbs); }

BugState TriageVerbTarget(TriageVerb verb) { return Info(verb).to; }

std::span<const BugState> TriageVerbFromStates(TriageVerb verb) {
  return Info(verb).from;
}

Status CheckTriageVerb(TriageVerb verb, BugState from) {
  const VerbInfo& v = Info(verb);
  for (BugState f : v.from) {
    if (f == from) return Status::Ok();
  }
  return FailedPrecondition(
      "cannot " + std::string(v.name) + " a bug in state " +
      std::string(BugStateName(from)) + " (" + std::string(v.name) +
      " applies to: " + StateList(v.from) + ")");
}

}  // namespace trench::orchestrator
