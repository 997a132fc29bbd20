// A pass judged without running the target: at a commit whose target
// cannot run the case (an SPMD case before the slice existed), the
// commit bisection asks whether the localized pass, at that commit,
// changes the case's result. The case's module is compiled for one device
// with --dump-dir (the run itself may be refused: the pass dumps come
// first), and the module after the pass's first execution is compared
// with the module before it on the oracle (the SPMD oracle for an SPMD
// case, every device), under the numerics contract.
#pragma once

#include <optional>
#include <string>

#include "base/json.h"
#include "base/status.h"
#include "oracle/numerics_contract.h"
#include "triage/case/case_bundle.h"
#include "triage/case/target_runner.h"

namespace trench::hlo_bisect {

struct PassCheck {
  // true: the pass changes the result; false: it does not, or it does not
  // run at this commit; nullopt: cannot tell (no dumps, a dump that does
  // not parse, an oracle error).
  std::optional<bool> changes;
  std::string summary;  // One line for the bisection's step.
};

// Compiles `c`'s module with `spec`'s hloc/hlo-run in `work_dir` and
// judges pass `pass` (see the file comment). Errors: only the harness's
// own (IoError for the work directory).
StatusOr<PassCheck> CheckPassWithoutRunning(const hlo_diff::Case& c,
                                            const hlo_diff::TargetSpec& spec,
                                            const std::string& pass,
                                            const std::string& work_dir,
                                            const NumericsOptions& numerics);

}  // namespace trench::hlo_bisect
