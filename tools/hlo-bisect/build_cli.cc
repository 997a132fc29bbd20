#include "tools/hlo-bisect/build_cli.h"

#include <string>

#include "git/commit_builder.h"
#include "git/git_repo.h"
#include "triage/case/target_flags.h"

namespace trench {
namespace {

using namespace trench::hlo_bisect;

const char* Usage() {
  return "usage: hlo-bisect build REV --repo R [--key K] [--build-cmd CMD]\n"
         "         [--cache DIR] [--work DIR] [--timeout S]\n"
         "Builds commit REV of R (cached by its sha, or by K) and prints the\n"
         "build result as JSON. Exit: 0 built, 1 does not build, 2 usage or\n"
         "harness error.\n";
}

struct Args {
  std::string rev, repo, key, build_cmd, cache, work;
  double timeout = 3600;
};

StatusOr<Args> Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) == 0) {
      ASSIGN_OR_RETURN(auto flag, hlo_diff::TakeFlag(argc, argv, &i));
      const auto& [name, value] = flag;
      if (name == "repo") {
        a.repo = value;
      } else if (name == "key") {
        a.key = value;
      } else if (name == "build-cmd") {
        a.build_cmd = value;
      } else if (name == "cache") {
        a.cache = value;
      } else if (name == "work") {
        a.work = value;
      } else if (name == "timeout") {
        ASSIGN_OR_RETURN(a.timeout, hlo_diff::ParseSeconds(name, value));
      } else {
        return InvalidArgument("unknown flag --" + name);
      }
    } else if (a.rev.empty()) {
      a.rev = arg;
    } else {
      return InvalidArgument("more than one revision given");
    }
  }
  if (a.rev.empty()) return InvalidArgument("missing REV");
  if (a.repo.empty()) return InvalidArgument("missing --repo");
  if (a.work.empty()) return InvalidArgument("missing --work");
  return a;
}

}  // namespace

int RunBuildCli(int argc, char** argv, std::ostream& out, std::ostream& err) {
  StatusOr<Args> args = Parse(argc, argv);
  if (!args.ok()) {
    err << "hlo-bisect build: " << args.status().message() << "\n" << Usage();
    return 2;
  }
  StatusOr<std::unique_ptr<GitRepo>> repo = GitRepo::Open(args->repo);
  if (!repo.ok()) {
    err << "hlo-bisect build: " << repo.status().message() << "\n";
    return 2;
  }
  BuilderOptions bo;
  bo.work_dir = args->work;
  bo.cache_dir = args->cache.empty() ? args->work + "/cache" : args->cache;
  bo.build_command = args->build_cmd;
  bo.timeout_seconds = args->timeout;
  CommitBuilder builder(repo->get(), bo);
  StatusOr<BuildResult> r = args->key.empty()
                                ? builder.Build(args->rev)
                                : builder.BuildAs(args->rev, args->key);
  if (!r.ok()) {
    err << "hlo-bisect build: " << r.status().message() << "\n";
    return 2;
  }
  out << r->ToJson().DumpPretty() << "\n";
  return r->built ? 0 : 1;
}

}  // namespace trench
