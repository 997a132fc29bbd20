// hlo-diff: differential test of one case, target against oracle.
//
//   hlo-diff CASE_DIR [target flags] [--record] [--store ROOT]
//   hlo-diff MODULE.hlo --random-inputs [--seed N] [--write-case DIR]
//            [--store ROOT]
//            [--compare contract|near|exact] [target flags]
//   target flags: [--hloc P --tpusim P | --hlo-run P [--serve]]
//                 [--bin-dir D] [--timeout S] [--keep DIR]
//
// Prints the verdict JSON (verdict.h) on `out`. The target is run through
// its command line (target_runner.h): by default `hloc` + `tpusim` from
// --bin-dir, which defaults to the directory of the hlo-diff executable
// (the binaries of this build). --hlo-run P runs P one-shot per case (with
// --serve: one `P --serve` worker). --timeout S (default 60) bounds the
// target's wall-clock time per case. --keep DIR keeps the work files
// (programs, outputs, reports, pass trace) in DIR instead of a temporary
// directory. --record writes the verdict and signature into CASE_DIR's
// case.json. With MODULE.hlo, the inputs are RandomArguments(entry, N)
// (random_inputs.h, --seed default 0), and --write-case DIR saves the case
// (with its verdict) as a bundle. --store ROOT stores the case (with its
// verdict) content-addressed as ROOT/cases/<sha256>/ (StoreCase) and
// names that directory on `err`.
//
// Exit codes: 0 pass; 1 invalid_input (malformed case: the message names
// the file and the problem); 2 usage, or the harness itself failed (e.g.
// the target program cannot be executed); 10 mismatch or nan_mismatch; 11
// compile_crash, run_crash, timeout or memory_error; 12 oracle_unsupported
// or target_unsupported (the registry's column: verdict_status.def).
#pragma once

#include <ostream>
#include <string>

namespace trench {

inline constexpr int kHloDiffPass = 0;
inline constexpr int kHloDiffInvalidInput = 1;
inline constexpr int kHloDiffUsage = 2;
inline constexpr int kHloDiffMismatch = 10;
inline constexpr int kHloDiffCrash = 11;
inline constexpr int kHloDiffUnsupported = 12;

// Runs hlo-diff with argv[1..argc-1]. Never throws.
int RunHloDiff(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace trench
