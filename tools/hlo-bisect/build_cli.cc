#include "tools/hlo-bisect/build_cli.h"

#include <optional>
#include <string>

#include "git/commit_builder.h"
#include "git/git_repo.h"
#include "triage/case/target_flags.h"

namespace trench {
namespace {

using namespace trench::hlo_bisect;

struct Args {
  std::string rev, repo, key, build_cmd, flavour, cache, work, out;
  double timeout = 3600;
};

void Declare(FlagParser* p, Args* a) {
  p->set_description(
      "Builds commit REV of R (cached by its sha, or by K) and prints the\n"
      "build result as JSON.");
  p->set_epilog(
      "exit: 0 built, 1 does not build, 2 usage or harness error,\n"
      "3 infrastructure failure (build again later)");
  p->Positional("REV", &a->rev, "the commit");
  p->String("repo", "R", &a->repo, "the target repository");
  p->String("key", "K", &a->key,
            "store the result under K instead of REV's sha");
  p->String("build-cmd", "CMD", &a->build_cmd,
            "the build command (default: CMake, target side)");
  p->String("flavour", "NAME", &a->flavour,
            "a build flavour ([a-z0-9]): built in WORK/build-NAME");
  p->String("cache", "DIR", &a->cache, "built binaries (default WORK/cache)");
  p->String("work", "DIR", &a->work, "worktree and build directory");
  p->String("out", "DIR", &a->out,
            "stage the new entry in DIR/<key>; the cache is only read");
  p->Custom("timeout", "S", "seconds per build (default 3600)",
            hlo_diff::SecondsFlag("timeout", &a->timeout));
}

}  // namespace

int RunBuildCli(int argc, char** argv, std::ostream& out, std::ostream& err) {
  Args a;
  FlagParser p("hlo-bisect build",
               "REV --repo R --work DIR [--key K] [--build-cmd CMD] "
               "[--flavour NAME] [--cache DIR] [--out DIR] [--timeout S]");
  Declare(&p, &a);
  if (std::optional<int> exit = p.ParseOrExit(argc, argv, out, err)) {
    return *exit;
  }
  const char* missing = a.rev.empty()    ? "missing REV"
                        : a.repo.empty() ? "missing --repo"
                        : a.work.empty() ? "missing --work"
                                         : nullptr;
  if (missing != nullptr) return p.UsageError(err, missing);
  if (!a.flavour.empty() && !IsValidFlavour(a.flavour)) {
    return p.UsageError(
        err, "--flavour: '" + a.flavour + "' is not 1 to 32 of [a-z0-9]");
  }
  StatusOr<std::unique_ptr<GitRepo>> repo = GitRepo::Open(a.repo);
  if (!repo.ok()) {
    err << "hlo-bisect build: " << repo.status().message() << "\n";
    return 2;
  }
  BuilderOptions bo;
  bo.work_dir = a.work;
  bo.cache_dir = a.cache.empty() ? a.work + "/cache" : a.cache;
  bo.output_dir = a.out;
  bo.build_command = a.build_cmd;
  bo.flavour = a.flavour;
  bo.timeout_seconds = a.timeout;
  CommitBuilder builder(repo->get(), bo);
  StatusOr<BuildResult> r =
      a.key.empty() ? builder.Build(a.rev) : builder.BuildAs(a.rev, a.key);
  if (!r.ok()) {
    err << "hlo-bisect build: " << r.status().message() << "\n";
    return 2;
  }
  out << r->ToJson().DumpPretty() << "\n";
  return r->built ? 0 : r->infra ? 3 : 1;
}

}  // namespace trench
