// Verdicts (DESIGN.md "Data flowing through", point 4): run the oracle and
// the target on a case and say whether they agree. A verdict is a Verdict
// (triage/case/verdict_record.h, which also describes its JSON and the
// coarse signature's).
//
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
#include "triage/case/verdict_record.h"
#include "triage/case/verdict_status.h"

namespace trench::hlo_diff {

struct VerdictOptions {
  EvaluatorOptions evaluator;
};

// Strips what varies between instances of one failure: paths (tokens with
// '/'), hex numbers, quoted names, instruction/computation names
// (%name, name.N), array shapes ("<shape>"), a "line:col:" location, and
// every other digit run ("N"); collapses whitespace.
std::string NormalizeMessage(std::string_view message);

// Opcodes near the producer of flattened output leaf `leaf` of the entry
// root (through tuple roots), as the signature's "ops" (verdict_record.h).
std::vector<std::string> OpMixNear(const HloModule& module, int64_t leaf,
                                   int depth = 2);

// Adds "sig" to `signature` (an object; a "sig" there is replaced) by the
// rule of SignatureHash: the first 16 hex digits of the SHA-256 of the
// compact JSON without "sig". For signature JSON of other layouts (the
// refined signature, triage/localize/localization_report.h; a campaign's
// refusal signature); the coarse signature is a Signature.
Json WithSignatureHash(Json signature);

// Runs oracle and target (through `runner`, in `work_dir`) on `c`, whose
// module text parses to `module`, and returns the verdict. Problems of the
// case, the oracle or the target become statuses; errors are the
// harness's own only (the target program cannot be executed, the work
// directory cannot be written). An SPMD case (a mesh of more than one
// device) is target_unsupported without a target run: the target runs
// one device (its inputs are still checked, per device).
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
