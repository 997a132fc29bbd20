// Verdicts (DESIGN.md "Data flowing through", point 4): run the oracle and
// the target on a case and say whether they agree. A verdict is a Verdict
// (below); JSON is only its form at the edge of a process (the tools'
// output, case.json), produced and read by Verdict::ToJson / FromJson.
//
// Verdict JSON (members in this order):
//   {"status": S, "message": "...", "case": SHA256,
//    "compare": "contract"|"near"|"exact",
//    "outputs": [ComparisonResult outputs (max_abs_error, max_rel_error,
//                max_ulp_error, mismatches, first_mismatch, ...)] | null,
//    "oracle": {"undetermined"?: N,
//               "status": "ok"|"unsupported"|"invalid_input", "message",
//               "seconds"},
//    "target": TargetResult::ToJson() | null,
//    "structure_error"?: "...",
//    "signature": {...}}
// A case that could not be read gets {"status": "invalid_input", "message",
// "signature"} only (InvalidInputVerdict).
// Statuses (verdict_status.def), first match wins:
//   invalid_input      the case is malformed, the oracle rejects its inputs,
//                      or the target rejected it as bad input;
//   oracle_unsupported (checked before the target runs) the module runs
//                      away in the oracle (while-loop limit): it has no
//                      expected result, so the target is not run;
//   compile_crash, run_crash, timeout, memory_error
//                      the target failed so (a bug whatever the oracle says);
//   oracle_unsupported the oracle cannot evaluate the module (unsupported
//                      op);
//   target_unsupported the target refused cleanly ("cannot compile"): not
//                      a bug, but not a pass either (our addition to the
//                      DESIGN list);
//   mismatch           some output differs beyond the numerics contract (or
//                      has the wrong count/type/dims);
//   nan_mismatch       outputs differ only in NaN/Inf placement;
//   pass               every output within the contract.
//
// Signature (coarse, before localization; used for dedup):
//   mismatch classes: {"status", "dtype" (of the first bad output),
//     "ops": opcodes within 2 producer steps of the instruction producing
//     that output (itself, its operands, their operands; parameters and
//     constants left out; sorted, deduplicated)};
//   compile_crash / run_crash / timeout / memory_error: {"status",
//     "stage", "message" (NormalizeMessage), "pass" (last pass entered, or
//     null)};
//   others: {"status"}.
// Every signature also has "sig": the first 16 hex digits of the SHA-256 of
// the signature's compact JSON without "sig".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "compiler/ir/hlo_module.h"
#include "oracle/comparator.h"
#include "oracle/evaluator.h"
#include "triage/case/case_bundle.h"
#include "triage/case/target_runner.h"
#include "triage/case/verdict_status.h"

namespace trench::hlo_diff {

struct VerdictOptions {
  EvaluatorOptions evaluator;
};

// The oracle's part of a verdict.
struct OracleRun {
  std::string status = "ok";  // "ok" | "unsupported" | "invalid_input".
  std::string message;        // The oracle's error ("" when ok).
  double seconds = 0;
  // Elements whose allowance is unbounded (contract mode, oracle ok only).
  std::optional<int64_t> undetermined;
};

struct Verdict {
  VerdictStatus status = VerdictStatus::kPass;
  std::string message;
  // The case's content address (CaseSha256). Empty for a case that could
  // not be read: then only status, message and signature are meaningful
  // (and the JSON has no other member).
  std::string case_sha;
  CompareKind compare = CompareKind::kContract;
  // Per output leaf: the errors (max abs/rel/ulp, mismatch counts, first
  // mismatch); nullopt when the outputs were not compared.
  std::optional<std::vector<OutputComparison>> outputs;
  OracleRun oracle;
  // The target's run (outputs and stderr_text not kept); nullopt when the
  // target was not run.
  std::optional<TargetResult> target;
  // Why the outputs could not be compared leaf by leaf ("" none).
  std::string structure_error;
  Json signature;  // The signature object (see above), "sig" included.

  const char* status_name() const { return VerdictStatusName(status); }
  // The target's stage and last pass ("" when it did not run).
  std::string stage() const { return target ? target->stage : ""; }
  std::string last_pass() const { return target ? target->last_pass : ""; }

  // The verdict JSON described above.
  Json ToJson() const;
  // Reads ToJson()'s form. InvalidArgument("verdict.<member>: ...") for a
  // missing or ill-typed member or an unknown status.
  static StatusOr<Verdict> FromJson(const Json& j);
};

// Strips what varies between instances of one failure: paths (tokens with
// '/'), hex numbers, quoted names, instruction/computation names
// (%name, name.N), and every other digit run ("N"); collapses whitespace.
std::string NormalizeMessage(std::string_view message);

// Opcodes near the producer of flattened output leaf `leaf` of the entry
// root (through tuple roots), as described above.
Json OpMixNear(const HloModule& module, int64_t leaf, int depth = 2);

// Adds "sig" to `signature` (an object) as described above.
Json WithSignatureHash(Json signature);

// Runs oracle and target (through `runner`, in `work_dir`) on `c`, whose
// module text parses to `module`, and returns the verdict. Problems of the
// case, the oracle or the target become statuses; errors are the
// harness's own only (the target program cannot be executed, the work
// directory cannot be written).
// REQUIRES: `module` is ParseCaseModule(c.module_text) (the caller parsed
// it once, e.g. with ReadCase's `module`).
StatusOr<Verdict> ComputeVerdict(const Case& c, const HloModule& module,
                                 TargetRunner& runner,
                                 const std::string& work_dir,
                                 const VerdictOptions& options = {});

// The same for a case whose module is not parsed yet: parses it (a module
// that does not parse gives an invalid_input verdict).
StatusOr<Verdict> ComputeVerdict(const Case& c, TargetRunner& runner,
                                 const std::string& work_dir,
                                 const VerdictOptions& options = {});

// hlo-diff's verdict of `c` (module as above) on the target `spec`, with
// the runner's work files in `work_dir`, or in a temporary directory
// (removed afterwards) when `work_dir` is empty. Errors as ComputeVerdict,
// and IoError when no temporary directory can be made.
StatusOr<Verdict> Diff(const Case& c, const HloModule& module,
                       const TargetSpec& spec, const std::string& work_dir = "",
                       const VerdictOptions& options = {});

// The verdict for a case that could not be read (`message` names the file
// and the problem).
Verdict InvalidInputVerdict(const std::string& message);

}  // namespace trench::hlo_diff
