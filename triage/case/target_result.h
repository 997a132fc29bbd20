// A target run's result (TargetRunner's, triage/case/target_runner.h, whose
// header comment describes the status classes), kept apart so that the
// verdict record (verdict_record.h) can hold one without the runner.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "compiler/ir/literal.h"

namespace trench::hlo_diff {

enum class TargetStatus {
  kOk,
  kCompileError,
  kCompileCrash,
  kRunCrash,
  kMemoryError,
  kTimeout,
  kBadInput
};
const char* TargetStatusName(TargetStatus s);
// The status named `name` (TargetStatusName's inverse); InvalidArgument for
// an unknown name.
StatusOr<TargetStatus> ParseTargetStatus(std::string_view name);

struct TargetResult {
  TargetStatus status = TargetStatus::kOk;
  std::string stage;   // "compile" or "run": where it stopped or ended.
  int exit_code = -1;  // -1 when a signal or our timeout ended it.
  int signal = 0;      // The terminating signal, if any.
  // The tool's error message, or the crash site in stderr (the failing
  // check and the top frames, crash_site.h CrashSiteLine), or stderr's
  // last line; after a signal "killed by SIGX: " before it.
  std::string message;
  std::string last_pass;    // Last "enter" line of the pass trace ("" none).
  std::string stderr_text;  // Bounded.
  // {"compile": hloc's report, "run": tpusim's report.json} (hloc+tpusim)
  // or hlo-run's report.json; null parts when not produced.
  Json report;
  std::vector<Literal> outputs;  // Output array leaves (when ok).
  std::string output_error;      // Why outputs stopped short ("" if not).
  // A coverage build's points this run hit (hlo-run --serve's answer
  // "coverage"."hit": compiler/driver/coverage.h's hex bitmap); "" for a
  // target without the coverage flavour. Not in ToJson (it is large).
  std::string coverage_hits;
  double seconds = 0;

  Json ToJson() const;  // Everything but outputs and stderr_text.
  // Reads ToJson()'s form (outputs and stderr_text stay empty).
  // InvalidArgument("target.<member>: ...") for an ill-typed member.
  static StatusOr<TargetResult> FromJson(const Json& j);
};

}  // namespace trench::hlo_diff
