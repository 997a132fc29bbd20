// hlo-reduce: minimizes a failing case while it keeps failing the same way.
//
//   hlo-reduce CASE_DIR --out DIR [--passes=a,b] [--jobs N]
//              [--test CMD [--test-module]] [--repeats N --min-rate R]
//              [--culprit-pass P] [--resume] [--timeout S]
//              [--max-tests N] [--max-rounds N] [--work DIR]
//              [target flags: --bin-dir D | --hlo-run P | --hloc P --tpusim P,
//               --target serve|hlo-run|hloc-tpusim]
//   hlo-reduce --list-passes
//   hlo-reduce CASE_DIR --dry-run [--passes=a,b]
//
// The interestingness test (interestingness.h) is "the same bug" by
// default: the case's verdict (oracle vs target) must keep the reference
// case's status, dtype or crash stage/message, and, with a culprit pass
// (--culprit-pass P, or the "pass" of a refined signature in case.json),
// its culprit check. The target runs through hlo-diff's runner: by default
// one `hlo-run --serve` worker per job from --bin-dir (default: the
// directory of this executable); --target hlo-run runs one process per
// case, --target hloc-tpusim (or --hloc/--tpusim) the two-step pipeline.
// --test CMD instead runs `sh -c 'CMD PATH'` on every candidate written as
// a case directory (with --test-module: its module.hlo), exit 0 meaning
// interesting. --timeout S (default 60) bounds each target run or command.
// --repeats N --min-rate R (defaults 1 and 1.0): a candidate is interesting
// iff at least ceil(R*N) of N runs reproduce; the initial case's
// reproduction rate is measured over N runs and reported.
//
// The passes (reduction_passes.def; --passes= selects and orders them,
// --list-passes lists them) run over the ddmin engine (ddmin.h) to a
// fixpoint with --jobs N parallel candidate tests (default 1; the result
// does not depend on N). OUT/best always holds the best case so far (a case
// directory; OUT/progress.json says how far the run got); --resume
// continues from it. --dry-run prints each pass's opportunity count and
// worst-case test count on the case, without running anything.
// --max-tests N stops after N tests, --max-rounds N (default 50) after N
// rounds over the passes. Work files go to --work DIR (default: a fresh
// temporary directory, removed at the end).
//
// Prints a JSON summary on `out`: {"case", "out", "best", "test",
// "initial_rate", "repeats", "min_rate", "jobs", "target_runs",
// "before"/"after" sizes {instructions, elements, text_bytes}, "stats"
// {candidates, tests, interesting, invalid, cache_hits, ...}, "passes"
// [per pass], "rounds", "steps", "seconds", ...}.
//
// Exit codes: 0 done (OUT/best is the reduced case); 1 the case cannot be
// read (the message names the file and the problem); 2 usage, or the
// harness failed (target not executable, OUT not writable, OUT/best exists
// without --resume); 3 the initial case is not interesting (passes, fails
// differently from its culprit, or reproduces below --min-rate).
#pragma once

#include <ostream>

namespace trench {

inline constexpr int kHloReduceOk = 0;
inline constexpr int kHloReduceBadCase = 1;
inline constexpr int kHloReduceUsage = 2;
inline constexpr int kHloReduceNotInteresting = 3;

// Runs hlo-reduce with argv[1..argc-1]. Never throws.
int RunHloReduce(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace trench
