// Verdicts (DESIGN.md "Data flowing through", point 4): run the oracle and
// the target on a case and say whether they agree.
//
// Verdict JSON:
//   {"status": S, "message": "...", "case": SHA256,
//    "compare": "contract"|"near"|"exact",
//    "outputs": [ComparisonResult outputs (max_abs_error, max_rel_error,
//                max_ulp_error, mismatches, first_mismatch, ...)] | null,
//    "structure_error"?: "...",
//    "oracle": {"status": "ok"|"unsupported"|"invalid_input", "message",
//               "seconds", "undetermined"?: N},
//    "target": TargetResult::ToJson(),
//    "signature": {...}}
// Statuses, first match wins:
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

#include "base/json.h"
#include "base/status.h"
#include "compiler/ir/hlo_module.h"
#include "oracle/evaluator.h"
#include "triage/case/case_bundle.h"
#include "triage/case/target_runner.h"

namespace trench::hlo_diff {

struct VerdictOptions {
  EvaluatorOptions evaluator;
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

// Runs oracle and target (through `runner`, in `work_dir`) on `c` and
// returns the verdict JSON. Problems of the case, the oracle or the target
// become statuses; errors are the harness's own only (the target program
// cannot be executed, the work directory cannot be written).
StatusOr<Json> ComputeVerdict(const Case& c, TargetRunner& runner,
                              const std::string& work_dir,
                              const VerdictOptions& options = {});

// The verdict for a case that could not be read (`message` names the file
// and the problem).
Json InvalidInputVerdict(const std::string& message);

}  // namespace trench::hlo_diff
