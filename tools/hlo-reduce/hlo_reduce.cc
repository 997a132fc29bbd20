#include "tools/hlo-reduce/hlo_reduce.h"

#include <stdlib.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "triage/case/case_bundle.h"
#include "triage/case/target_flags.h"
#include "triage/case/target_runner.h"
#include "triage/reduce/reduce_case.h"
#include "triage/reduce/reducer.h"
#include "triage/reduce/reduction_pass.h"

namespace trench {
namespace {

namespace fs = std::filesystem;
using namespace hlo_reduce;  // NOLINT: this file is the tool.

struct Args {
  std::string case_dir, out, passes, test, culprit, work;
  std::vector<std::string> extra;  // Positionals after CASE_DIR: an error.
  hlo_diff::TargetFlags target;
  int jobs = 1, repeats = 1, max_rounds = 50;
  int64_t max_tests = -1;
  double min_rate = 1.0;
  bool resume = false, list = false, dry_run = false, test_module = false;
};

// A setter for an integer flag >= `min`.
template <typename T>
FlagParser::Setter AtLeast(T min, T* out) {
  return [min, out](const std::string& v) -> Status {
    StatusOr<T> n = ParseFlagNumber<T>(v);
    if (!n.ok() || *n < min) {
      return InvalidArgument("expected an integer >= " + std::to_string(min) +
                             ", got '" + v + "'");
    }
    *out = *n;
    return Status::Ok();
  };
}

void Declare(FlagParser* p, Args* a) {
  p->set_description(
      "Minimizes a failing case while it keeps failing the same way.\n"
      "Prints a JSON summary; OUT/best is the reduced case.");
  p->set_epilog(
      "exit: 0 done, 1 unreadable case, 2 usage or harness error, 3 the\n"
      "case is not interesting");
  p->Positional("CASE_DIR", &a->case_dir, "the failing case");
  p->Rest("", &a->extra, "");
  p->String("out", "DIR", &a->out, "OUT/best is the best case so far");
  p->String("passes", "a,b", &a->passes,
            "the reduction passes, in order (--list-passes)");
  p->Custom("jobs", "N", "parallel candidate tests (default 1)",
            AtLeast(1, &a->jobs));
  p->String("test", "CMD", &a->test,
            "interesting iff `sh -c 'CMD CASE'` exits 0\n(default: the same "
            "bug, oracle against target)");
  p->Bool("test-module", &a->test_module,
          "give --test the candidate's module.hlo");
  p->Custom("repeats", "N", "runs per test (default 1)",
            AtLeast(1, &a->repeats));
  p->Custom(
      "min-rate", "R",
      "interesting iff at least ceil(R*N) of N runs\nreproduce "
      "(default 1.0)",
      [a](const std::string& v) -> Status {
        StatusOr<double> r = ParseFlagNumber<double>(v);
        if (!r.ok() || !(*r > 0) || *r > 1) {
          return InvalidArgument("expected a rate in (0, 1], got '" + v + "'");
        }
        a->min_rate = *r;
        return Status::Ok();
      });
  p->String("culprit-pass", "P", &a->culprit,
            "the same bug must keep P as its culprit");
  p->Bool("resume", &a->resume, "continue from OUT/best");
  p->Custom("max-tests", "N", "stop after N tests",
            AtLeast<int64_t>(0, &a->max_tests));
  p->Custom("max-rounds", "N", "stop after N rounds over the passes (50)",
            AtLeast(1, &a->max_rounds));
  p->String("work", "DIR", &a->work,
            "work files (default: a temporary directory)");
  p->Bool("list-passes", &a->list, "list the reduction passes");
  p->Bool("dry-run", &a->dry_run,
          "print each pass's opportunities and worst-case\ntests, without "
          "running anything");
  a->target.Register(p);
}

// The mode's arguments; InvalidArgument naming what is wrong.
Status Check(const Args& a) {
  if (a.list) return Status::Ok();
  if (a.case_dir.empty()) return InvalidArgument("missing CASE_DIR");
  if (!a.extra.empty()) {
    return InvalidArgument("more than one case given ('" + a.case_dir +
                           "' and '" + a.extra[0] + "')");
  }
  if (!a.dry_run && a.out.empty()) return InvalidArgument("missing --out DIR");
  RETURN_IF_ERROR(a.target.Check());
  if (!a.test.empty() && !a.culprit.empty()) {
    return InvalidArgument(
        "--culprit-pass needs the same-bug test (no --test)");
  }
  return Status::Ok();
}

// The run after parsing and loading; returns the exit code.
int Reduce(const Args& a, const hlo_diff::Case& c,
           const std::vector<std::unique_ptr<ReductionPass>>& passes,
           const std::string& work, std::ostream& out, std::ostream& err) {
  ReduceCaseOptions o;
  o.case_name = a.case_dir;
  o.out_dir = a.out;
  o.work_dir = work;
  o.target = a.target.Spec(hlo_diff::TargetMode::kServe);
  o.test_command = a.test;
  o.test_module = a.test_module;
  o.culprit_pass = a.culprit;
  o.jobs = a.jobs;
  o.repeats = a.repeats;
  o.max_rounds = a.max_rounds;
  o.min_rate = a.min_rate;
  o.max_tests = a.max_tests;
  o.resume = a.resume;
  o.on_progress = [&](const Json& p) {
    err << "hlo-reduce: step " << (p.Find("step") ? p.Find("step")->Dump() : "")
        << " " << (p.Find("pass") ? p.Find("pass")->Dump() : "") << " size "
        << (p.Find("size") ? p.Find("size")->Dump() : "") << "\n";
  };
  bool not_interesting = false;
  StatusOr<Json> s = ReduceCase(c, passes, o, &not_interesting);
  if (!s.ok()) {
    err << "hlo-reduce: " << s.status().message() << "\n";
    return not_interesting ? kHloReduceNotInteresting : kHloReduceUsage;
  }
  StatusOr<std::string> text =
      PrintJson(*s, {.indent = 2, .non_finite_as_null = true});
  out << (text.ok() ? *text : s->DumpPretty()) << "\n";
  return kHloReduceOk;
}

}  // namespace

int RunHloReduce(int argc, char** argv, std::ostream& out, std::ostream& err) {
  Args a;
  FlagParser p("hlo-reduce",
               "CASE_DIR --out DIR [--passes=a,b] [--jobs N] [--test CMD "
               "[--test-module]] [--repeats N --min-rate R] [--culprit-pass P] "
               "[--resume] [--max-tests N] [--max-rounds N] [--work DIR] "
               "[target flags]\n"
               "--list-passes\n"
               "CASE_DIR --dry-run [--passes=a,b]");
  Declare(&p, &a);
  if (std::optional<int> exit = p.ParseOrExit(argc, argv, out, err)) {
    return *exit;
  }
  if (Status s = Check(a); !s.ok()) return p.UsageError(err, s.message());
  StatusOr<std::vector<std::unique_ptr<ReductionPass>>> passes =
      ReductionPassesNamed(a.passes);
  if (!passes.ok()) {
    err << "hlo-reduce: --passes: " << passes.status().message() << "\n";
    return kHloReduceUsage;
  }
  if (a.list) {
    for (const auto& p : *passes) {
      out << p->name() << "\t" << p->description() << "\n";
    }
    return kHloReduceOk;
  }
  std::error_code ec;
  if (!fs::is_directory(a.case_dir, ec)) {
    err << "hlo-reduce: " << a.case_dir << ": not a case directory\n";
    return kHloReduceBadCase;
  }
  StatusOr<hlo_diff::Case> c = hlo_diff::ReadCase(a.case_dir);
  if (!c.ok()) {
    err << "hlo-reduce: " << c.status().message() << "\n";
    return kHloReduceBadCase;
  }
  if (a.dry_run) {
    out << DryRun(*c, *passes).DumpPretty() << "\n";
    return kHloReduceOk;
  }
  std::string work = a.work;
  const bool temp_work = work.empty();
  if (temp_work) {
    char tmpl[] = "/tmp/hlo-reduce.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      err << "hlo-reduce: cannot create a temporary directory\n";
      return kHloReduceUsage;
    }
    work = tmpl;
  }
  const int code = Reduce(a, *c, *passes, work, out, err);
  if (temp_work) fs::remove_all(work, ec);
  return code;
}

}  // namespace trench
