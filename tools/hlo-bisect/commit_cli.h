// `hlo-bisect commits`: the commit level of localization (commit_bisect.h)
// on the command line.
//
//   hlo-bisect commits CASE_DIR --repo R --good REV --bad REV
//       [--build-cmd CMD] [--cache DIR] [--work DIR] [--out DIR] [--timeout S]
//       [--run-timeout S] [--mode hlo-run|hloc-tpusim] [--no-confirm]
//       [--json]
//
// Builds commits of the target repository R (commit_builder.h: CMD runs
// through /bin/sh in the worktree; default: DefaultBuildCommand(), our
// target side with CMake), finds the first commit between good and bad on
// which CASE_DIR fails as it does at bad, skipping commits that do not
// build, and confirms it by reverting it on top of bad. --work DIR (default
// /tmp/hlo-bisect-<uid>/<hash of R>) holds the worktree and the build
// directory, reused across runs so builds stay incremental; --cache DIR
// (default WORK/cache) the built binaries by commit; with --out DIR new
// builds are staged in DIR/<key> and the cache is only read (the daemon's
// sandboxed bisection: build_cache.h). --timeout S bounds each
// build (default 3600), --run-timeout S each target run (default 120).
// Progress goes to `err`; the result to `out`: a readable summary, or the
// report JSON (commit_bisect.h) with --json.
//
// Exit codes: 0 culprit found and confirmed by its revert; 1 culprit found
// but not confirmed, or only skipped commits left (ambiguous); 2 usage
// error, or the search cannot start (bad does not fail, good does not pass,
// good or bad does not build, the repository or case is unreadable, or the
// machine failed a build: build_failure.h).
#pragma once

#include <ostream>

namespace trench {

inline constexpr int kCommitBisectConfirmed = 0;
inline constexpr int kCommitBisectUnconfirmed = 1;
inline constexpr int kCommitBisectError = 2;

// Runs `hlo-bisect commits` with argv[1..argc-1] (argv[0] is the subcommand
// name, e.g. "commits": call it with (argc - 1, argv + 1) from hlo-bisect's
// own argv). Never throws.
int RunCommitBisectCli(int argc, char** argv, std::ostream& out,
                       std::ostream& err);

}  // namespace trench
