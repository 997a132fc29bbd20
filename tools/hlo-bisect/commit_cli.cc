#include "tools/hlo-bisect/commit_cli.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>

#include "base/sha256.h"
#include "git/commit_bisect.h"
#include "git/commit_builder.h"
#include "git/git_repo.h"
#include "triage/case/case_bundle.h"
#include "triage/case/target_flags.h"
#include "triage/localize/pass_check.h"

namespace trench {
namespace {

namespace fs = std::filesystem;
using namespace trench::hlo_bisect;

struct Args {
  std::string case_dir, repo, good, bad, build_cmd, cache, work, out, pass;
  std::string mode = "hlo-run";
  double timeout = 3600, run_timeout = 120;
  bool json = false, confirm = true;
};

void Declare(FlagParser* p, Args* a) {
  p->set_description(
      "Builds commits of R (CMD runs via /bin/sh in the worktree with\n"
      "TRENCH_WORKTREE, TRENCH_BUILD_DIR (leave hloc, tpusim, hlo-run "
      "there),\nTRENCH_COMMIT, TRENCH_JOBS; default: CMake, "
      "-DTRENCH_TARGET_ONLY=ON), finds\nthe first commit in good..bad "
      "(first parents) where CASE_DIR fails as at\nbad, skipping commits "
      "that do not build, and confirms it by reverting it\non top of bad.");
  p->set_epilog(
      "exit: 0 found and confirmed, 1 found but not confirmed or\n"
      "ambiguous, 2 usage or the search cannot start");
  p->Positional("CASE_DIR", &a->case_dir, "the failing case");
  p->String("repo", "R", &a->repo, "the target repository");
  p->String("good", "REV", &a->good, "a commit where the case passes");
  p->String("bad", "REV", &a->bad, "a commit where it fails");
  p->String("build-cmd", "CMD", &a->build_cmd, "the build command");
  p->String("cache", "DIR", &a->cache, "built binaries (default WORK/cache)");
  p->String("work", "DIR", &a->work,
            "worktree and build directory (default\n"
            "/tmp/hlo-bisect-<uid>/<hash of R>)");
  p->String("out", "DIR", &a->out,
            "stage new builds in DIR/<key>; the cache is only read");
  p->Custom("timeout", "S", "seconds per build (default 3600)",
            hlo_diff::SecondsFlag("timeout", &a->timeout));
  p->Custom("run-timeout", "S", "seconds per target run (default 120)",
            hlo_diff::SecondsFlag("run-timeout", &a->run_timeout));
  p->Custom("mode", "MODE", "hlo-run (default) or hloc-tpusim",
            [a](const std::string& v) -> Status {
              if (v != "hlo-run" && v != "hloc-tpusim") {
                return InvalidArgument("--mode expects hlo-run or hloc-tpusim");
              }
              a->mode = v;
              return Status::Ok();
            });
  p->Switch(
      "no-confirm", [a] { a->confirm = false; },
      "do not confirm the culprit by its revert");
  p->String("pass", "P", &a->pass,
            "the localized pass: at a commit whose target cannot\n"
            "run the case, compile it there with --dump-dir and judge P's\n"
            "output against its input on the oracle instead of skipping it");
  p->Bool("json", &a->json, "the report as JSON");
}

// InvalidArgument naming a missing argument.
Status Check(const Args& a) {
  if (a.case_dir.empty()) return InvalidArgument("missing CASE_DIR");
  if (a.repo.empty()) return InvalidArgument("missing --repo");
  if (a.good.empty() || a.bad.empty()) {
    return InvalidArgument("missing --good or --bad");
  }
  return Status::Ok();
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
  } else if (const Json* f = r.Find("fails_at_good");
             f && f->is_bool() && f->bool_value()) {
    out << "no first bad commit: the case fails the same way at the good "
           "commit\n";
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
  Args a;
  FlagParser p("hlo-bisect commits",
               "CASE_DIR --repo R --good REV --bad REV [--build-cmd CMD] "
               "[--cache DIR] [--work DIR] [--out DIR] [--timeout S] "
               "[--run-timeout S] "
               "[--mode hlo-run|hloc-tpusim] [--no-confirm] [--json]");
  Declare(&p, &a);
  if (std::optional<int> exit = p.ParseOrExit(argc, argv, out, err)) {
    return *exit;
  }
  if (Status s = Check(a); !s.ok()) return p.UsageError(err, s.message());
  StatusOr<hlo_diff::Case> c = hlo_diff::ReadCase(a.case_dir);
  if (!c.ok()) {
    err << "hlo-bisect commits: " << c.status().message() << "\n";
    return kCommitBisectError;
  }
  StatusOr<std::unique_ptr<GitRepo>> repo = GitRepo::Open(a.repo);
  if (!repo.ok()) {
    err << "hlo-bisect commits: " << repo.status().message() << "\n";
    return kCommitBisectError;
  }
  std::string work = a.work;
  if (work.empty()) {
    std::error_code ec;
    const std::string abs_repo = fs::weakly_canonical(a.repo, ec).string();
    work = "/tmp/hlo-bisect-" + std::to_string(::getuid()) + "/" +
           Sha256Hex(abs_repo).substr(0, 12);
  }
  BuilderOptions bo;
  bo.work_dir = work;
  bo.cache_dir = a.cache.empty() ? work + "/cache" : a.cache;
  bo.output_dir = a.out;
  bo.build_command = a.build_cmd;
  bo.timeout_seconds = a.timeout;
  CommitBuilder builder(repo->get(), bo);

  CommitBisectOptions o;
  o.good = a.good;
  o.bad = a.bad;
  o.mode = a.mode == "hlo-run" ? hlo_diff::TargetMode::kHloRun
                               : hlo_diff::TargetMode::kHlocTpusim;
  o.run_timeout_seconds = a.run_timeout;
  o.work_dir = work;
  o.confirm = a.confirm;
  o.progress = [&err](const std::string& line) {
    err << "hlo-bisect: " << line << "\n" << std::flush;
  };
  if (!a.pass.empty()) {
    const hlo_diff::TargetMode mode = o.mode;
    o.judge_unsupported =
        [&c = *c, pass = a.pass, mode](
            const std::string& bin_dir, const std::string& work,
            std::string* why) -> StatusOr<std::optional<bool>> {
      ASSIGN_OR_RETURN(
          PassCheck check,
          CheckPassWithoutRunning(
              c, hlo_diff::TargetSpec::FromBinaryDir(bin_dir, mode), pass, work,
              NumericsOptions()));
      *why = "without running: " + check.summary;
      return check.changes;
    };
  }
  StatusOr<Json> report = BisectCommits(*c, **repo, builder, o);
  if (!report.ok()) {
    err << "hlo-bisect commits: " << report.status().message() << "\n";
    return kCommitBisectError;
  }
  if (a.json) {
    out << report->DumpPretty() << "\n";
  } else {
    PrintText(*report, out);
  }
  return report->Find("confirmed")->bool_value() ? kCommitBisectConfirmed
                                                 : kCommitBisectUnconfirmed;
}

}  // namespace trench
