// The bug lifecycle: states and legal transitions, generated from the one
// registry in lifecycle.def (DESIGN.md point 6). Pure functions; the store
// (Store::TransitionBug) applies a transition and its event row in one
// transaction.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace trench::orchestrator {

enum class BugState {
#define TRENCH_BUG_STATE(e, name, open, description) e,
#include "orchestrator/store/lifecycle.def"
};

// Every state, in registry order.
std::span<const BugState> AllBugStates();
// A reviewer's verb (lifecycle.def TRENCH_TRIAGE_VERB).
enum class TriageVerb {
#define TRENCH_TRIAGE_VERB(e, name, to, description, ...) e,
#include "orchestrator/store/lifecycle.def"
};

// The stored and printed name ("culprit_found").
std::string_view BugStateName(BugState state);
std::string_view BugStateDescription(BugState state);
// InvalidArgument("unknown bug state 'x' (valid: new, reproduced, ...)")
// for a name not in the registry.
StatusOr<BugState> ParseBugState(std::string_view name);
// Every state's name, in registry order: "new, reproduced, ...".
std::string BugStateNames();
// True when the bug still needs work or a decision (see lifecycle.def).
bool IsOpen(BugState state);

bool IsLegalTransition(BugState from, BugState to);
// OK for a legal move; otherwise FailedPrecondition naming both states and
// the legal next states: "illegal bug transition closed -> new (from
// closed: none)".
Status CheckTransition(BugState from, BugState to);
// The states reachable from `from` in one move, in registry order.
std::vector<BugState> NextStates(BugState from);

// Every verb, in registry order.
std::span<const TriageVerb> AllTriageVerbs();
// "approve", "redraft", ...
std::string_view TriageVerbName(TriageVerb verb);
std::string_view TriageVerbDescription(TriageVerb verb);
// InvalidArgument("unknown verb 'x' (valid: approve, reject, ...)").
StatusOr<TriageVerb> ParseTriageVerb(std::string_view name);
// Every verb's name, in registry order: "approve, reject, ...".
std::string TriageVerbNames();
// The state the verb moves a bug to.
BugState TriageVerbTarget(TriageVerb verb);
// The states the verb applies to, in registry order.
std::span<const BugState> TriageVerbFromStates(TriageVerb verb);
// OK when `verb` applies to a bug in `from`; otherwise FailedPrecondition:
// "cannot redraft a bug in state new (redraft applies to: proposed,
// rejected, patch_verified, patch_drafted)".
Status CheckTriageVerb(TriageVerb verb, BugState from);

}  // namespace trench::orchestrator
