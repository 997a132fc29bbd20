#include "tools/hlo-bisect/commit_cli.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "base/sha256.h"
#include "git/commit_bisect.h"
#include "git/commit_builder.h"
#include "git/git_repo.h"
#include "triage/case/case_bundle.h"
#include "triage/case/target_flags.h"

namespace trench {
namespace {

namespace fs = std::filesystem;
using namespace trench::hlo_bisect;

const char* Usage() {
  return "usage: hlo-bisect commits CASE_DIR --repo R --good REV --bad REV\n"
         "         [--build-cmd CMD] [--cache DIR] [--work DIR] "
         "[--timeout S]\n"
         "         [--run-timeout S] [--mode hlo-run|hloc-tpusim] "
         "[--no-confirm] [--json]\n"
         "Builds commits of R (CMD runs via /bin/sh in the worktree with\n"
         "TRENCH_WORKTREE, TRENCH_BUILD_DIR (leave hloc, tpusim, hlo-run "
         "there),\nTRENCH_COMMIT, TRENCH_JOBS; default: CMake, "
         "-DTRENCH_TARGET_ONLY=ON), finds\nthe first commit in good..bad "
         "(first parents) where CASE_DIR fails as at\nbad, skipping commits "
         "that do not build, and confirms it by reverting it\non top of bad. "
         "Exit: 0 found and confirmed, 1 found but not confirmed or\n"
         "ambiguous, 2 usage or the search cannot start.\n";
}

struct Args {
  std::string case_dir, repo, good, bad, build_cmd, cache, work;
  std::string mode = "hlo-run";
  double timeout = 3600, run_timeout = 120;
  bool json = false, confirm = true, help = false;
};

StatusOr<Args> Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      a.help = true;
    } else if (arg == "--json") {
      a.json = true;
    } else if (arg == "--no-confirm") {
      a.confirm = false;
    } else if (arg.rfind("--", 0) == 0) {
      ASSIGN_OR_RETURN(auto flag, hlo_diff::TakeFlag(argc, argv, &i));
      const auto& [name, value] = flag;
      if (name == "repo") {
        a.repo = value;
      } else if (name == "good") {
        a.good = value;
      } else if (name == "bad") {
        a.bad = value;
      } else if (name == "build-cmd") {
        a.build_cmd = value;
      } else if (name == "cache") {
        a.cache = value;
      } else if (name == "work") {
        a.work = value;
      } else if (name == "mode") {
        if (value != "hlo-run" && value != "hloc-tpusim") {
          return InvalidArgument("--mode expects hlo-run or hloc-tpusim");
        }
        a.mode = value;
      } else if (name == "timeout") {
        ASSIGN_OR_RETURN(a.timeout, hlo_diff::ParseSeconds(name, value));
      } else if (name == "run-timeout") {
        ASSIGN_OR_RETURN(a.run_timeout, hlo_diff::ParseSeconds(name, value));
      } else {
        return InvalidArgument("unknown flag --" + name);
      }
    } else if (a.case_dir.empty()) {
      a.case_dir = arg;
    } else {
      return InvalidArgument("more than one case given");
    }
  }
  if (a.help) return a;
  if (a.case_dir.empty()) return InvalidArgument("missing CASE_DIR");
  if (a.repo.empty()) return InvalidArgument("missing --repo");
  if (a.good.empty() || a.bad.empty()) {
    return InvalidArgument("missing --good or --bad");
  }
  return a;
}

void PrintText(const Json& r, std::ostream& out) {
  auto str = [](const Json& j, const char* k) {
    const Json* v = j.Find(k);
    return v && v->is_string() ? v->string_value() : std::string();
  };
  out << "commits: " << r.Find("commits")->number_text() << " in "
      << str(*r.Find("good"), "short") << ".." << str(*r.Find("bad"), "short")
      << "; failure at bad: " << str(*r.Find("bad_verdict"), "status") << "\n";
  for (const Json& s : r.Find("steps")->array()) {
    const Json* status = s.Find("status");
    out << "  " << str(s, "commit").substr(0, 12) << " " << str(s, "role")
        << ": "
        << (s.Find("built")->bool_value() ? status->string_value()
                                          : "does not build")
        << " -> " << str(s, "outcome")
        << (s.Find("cached")->bool_value() ? " (cached build)" : "") << "  "
        << str(s, "summary") << "\n";
  }
  const Json& culprit = *r.Find("culprit");
  if (culprit.is_object()) {
    out << "first bad commit: " << str(culprit, "sha") << " "
        << str(culprit, "summary") << " (" << str(culprit, "author") << ")\n";
  } else {
    out << "only skipped commits left; the first bad commit is one of:\n";
    for (const Json& c : r.Find("candidates")->array()) {
      out << "  " << str(c, "sha") << " " << str(c, "summary") << "\n";
    }
  }
  const Json& conf = *r.Find("confirmation");
  out << "confirmed by revert: "
      << (r.Find("confirmed")->bool_value() ? "yes" : "no");
  if (const Json* why = conf.Find("reason"))
    out << " (" << why->string_value() << ")";
  out << "\nbuilds: " << r.Find("builds")->number_text()
      << ", cache hits: " << r.Find("cache_hits")->number_text()
      << ", seconds: " << r.Find("seconds")->number_text() << "\n";
}

}  // namespace

int RunCommitBisectCli(int argc, char** argv, std::ostream& out,
                       std::ostream& err) {
  StatusOr<Args> args = Parse(argc, argv);
  if (!args.ok()) {
    err << "hlo-bisect commits: " << args.status().message() << "\n" << Usage();
    return kCommitBisectError;
  }
  if (args->help) {
    out << Usage();
    return kCommitBisectConfirmed;
  }
  StatusOr<hlo_diff::Case> c = hlo_diff::ReadCase(args->case_dir);
  if (!c.ok()) {
    err << "hlo-bisect commits: " << c.status().message() << "\n";
    return kCommitBisectError;
  }
  StatusOr<std::unique_ptr<GitRepo>> repo = GitRepo::Open(args->repo);
  if (!repo.ok()) {
    err << "hlo-bisect commits: " << repo.status().message() << "\n";
    return kCommitBisectError;
  }
  std::string work = args->work;
  if (work.empty()) {
    std::error_code ec;
    const std::string abs_repo = fs::weakly_canonical(args->repo, ec).string();
    work = "/tmp/hlo-bisect-" + std::to_string(::getuid()) + "/" +
           Sha256Hex(abs_repo).substr(0, 12);
  }
  BuilderOptions bo;
  bo.work_dir = work;
  bo.cache_dir = args->cache.empty() ? work + "/cache" : args->cache;
  bo.build_command = args->build_cmd;
  bo.timeout_seconds = args->timeout;
  CommitBuilder builder(repo->get(), bo);

  CommitBisectOptions o;
  o.good = args->good;
  o.bad = args->bad;
  o.mode = args->mode == "hlo-run" ? hlo_diff::TargetMode::kHloRun
                                   : hlo_diff::TargetMode::kHlocTpusim;
  o.run_timeout_seconds = args->run_timeout;
  o.work_dir = work;
  o.confirm = args->confirm;
  o.progress = [&err](const std::string& line) {
    err << "hlo-bisect: " << line << "\n" << std::flush;
  };
  StatusOr<Json> report = BisectCommits(*c, **repo, builder, o);
  if (!report.ok()) {
    err << "hlo-bisect commits: " << report.status().message() << "\n";
    return kCommitBisectError;
  }
  if (args->json) {
    out << report->DumpPretty() << "\n";
  } else {
    PrintText(*report, out);
  }
  return report->Find("confirmed")->bool_value() ? kCommitBisectConfirmed
                                                 : kCommitBisectUnconfirmed;
}

}  // namespace trench
