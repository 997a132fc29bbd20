// `hlo-bisect build`: builds one commit of the target repository with the
// commit builder (commit_builder.h) and prints its BuildResult JSON. The
// daemon runs it in the sandbox, sharing --work and --cache with
// `hlo-bisect commits`, so a commit is built once for both.
//
//   hlo-bisect build REV --repo R [--key K] [--build-cmd CMD]
//       [--flavour NAME] [--cache DIR] [--work DIR] [--out DIR] [--timeout S]
//
// --flavour NAME builds in WORK/build-NAME (commit_builder.h), e.g. the
// target's coverage flavour next to its plain build.
// --key K stores the result under K instead of REV's sha (a patched
// commit: "<base sha>-p<patch hash>"). --out DIR stages the new entry in
// DIR/<key> and leaves the cache alone (it may be read-only): the daemon
// installs the entry (build_cache.h). Exit codes: 0 built (or cached
// built), 1 does not build, 2 usage error or a harness error, 3 the
// machine failed the build (an infrastructure failure, nothing cached:
// build again later).
#pragma once

#include <ostream>

namespace trench {

// Runs `hlo-bisect build` with argv[1..argc-1] (argv[0] is "build").
int RunBuildCli(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace trench
