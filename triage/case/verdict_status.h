// Verdict statuses: the enum, names and classes generated from the one
// registry, verdict_status.def. Every "is this status a failure?" question
// in the tree is answered here.
#pragma once

#include <string_view>
#include <vector>

#include "base/status.h"

namespace trench::hlo_diff {

enum class VerdictStatus {
#define VERDICT_STATUS(e, name, failure, judgeable, exit_code) e,
#include "triage/case/verdict_status.def"
#undef VERDICT_STATUS
};

// What kind of failure of the target a status is (see the .def file).
enum class FailureClass { kNone, kValue, kCrash };

// Every status, in registry order.
const std::vector<VerdictStatus>& AllVerdictStatuses();

// The status's name ("nan_mismatch"). Never null.
const char* VerdictStatusName(VerdictStatus s);

// The status named `name`. InvalidArgument("unknown verdict status 'x'
// (pass, mismatch, ...)") for any other string, "" included.
StatusOr<VerdictStatus> ParseVerdictStatus(std::string_view name);

FailureClass FailureClassOf(VerdictStatus s);
// A failure of the target (a bug to triage): a value or crash class.
bool IsFailure(VerdictStatus s);
// mismatch / nan_mismatch.
bool IsValueFailure(VerdictStatus s);
// compile_crash / run_crash / timeout / memory_error.
bool IsCrash(VerdictStatus s);
// Says something about the compiler under test (not invalid_input,
// oracle_unsupported, target_unsupported).
bool IsJudgeable(VerdictStatus s);
// hlo-diff's exit code for a verdict of status `s`.
int HloDiffExitCode(VerdictStatus s);

// The same questions about a status name, for records that carry the name
// (service JSON, tool output). An unknown name ("" included) is neither a
// failure nor judgeable, and NOT unjudgeable either: IsUnjudgeableStatus
// answers true only for a known status that is not judgeable.
bool IsFailureStatus(std::string_view name);
bool IsValueFailureStatus(std::string_view name);
bool IsCrashStatus(std::string_view name);
bool IsUnjudgeableStatus(std::string_view name);

}  // namespace trench::hlo_diff
