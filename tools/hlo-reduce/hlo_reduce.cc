#include "tools/hlo-reduce/hlo_reduce.h"

#include <stdlib.h>

#include <charconv>
#include <filesystem>
#include <string>

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

const char* Usage() {
  return "usage: hlo-reduce CASE_DIR --out DIR [--passes=a,b] [--jobs N]\n"
         "         [--test CMD [--test-module]] [--repeats N --min-rate R]\n"
         "         [--culprit-pass P] [--resume] [--timeout S] [--max-tests "
         "N]\n"
         "         [--max-rounds N] [--work DIR]\n"
         "         [--bin-dir D | --hlo-run P | --hloc P --tpusim P]\n"
         "         [--target serve|hlo-run|hloc-tpusim]\n"
         "       hlo-reduce --list-passes\n"
         "       hlo-reduce CASE_DIR --dry-run [--passes=a,b]\n"
         "Prints a JSON summary; OUT/best is the reduced case. Exit: 0 done, "
         "1 unreadable case,\n2 usage or harness error, 3 the case is not "
         "interesting.\n";
}

struct Args {
  std::string case_dir, out, passes, test, culprit, work;
  hlo_diff::TargetFlags target;
  int jobs = 1, repeats = 1, max_rounds = 50;
  int64_t max_tests = -1;
  double min_rate = 1.0;
  bool resume = false, list = false, dry_run = false, help = false,
       test_module = false;
};

template <typename T>
Status ParseInt(const std::string& flag, const std::string& v, T min, T* out) {
  auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), *out);
  if (ec != std::errc() || p != v.data() + v.size() || *out < min) {
    return InvalidArgument("--" + flag + " expects an integer >= " +
                           std::to_string(min) + ", got '" + v + "'");
  }
  return Status();
}

Status ParseDouble(const std::string& flag, const std::string& v, double* out) {
  char* end = nullptr;
  *out = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !(*out > 0)) {
    return InvalidArgument("--" + flag + " expects a number > 0, got '" + v +
                           "'");
  }
  return Status();
}

StatusOr<Args> Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      a.help = true;
    } else if (arg == "--resume") {
      a.resume = true;
    } else if (arg == "--list-passes") {
      a.list = true;
    } else if (arg == "--dry-run") {
      a.dry_run = true;
    } else if (arg == "--test-module") {
      a.test_module = true;
    } else if (a.target.ApplySwitch(arg)) {
    } else if (arg.rfind("--", 0) == 0) {
      ASSIGN_OR_RETURN(auto flag, hlo_diff::TakeFlag(argc, argv, &i));
      const auto& [name, value] = flag;
      ASSIGN_OR_RETURN(const bool target, a.target.Apply(name, value));
      if (target) {
      } else if (name == "out") {
        a.out = value;
      } else if (name == "passes") {
        a.passes = value;
      } else if (name == "test") {
        a.test = value;
      } else if (name == "culprit-pass") {
        a.culprit = value;
      } else if (name == "work") {
        a.work = value;
      } else if (name == "jobs") {
        RETURN_IF_ERROR(ParseInt(name, value, 1, &a.jobs));
      } else if (name == "repeats") {
        RETURN_IF_ERROR(ParseInt(name, value, 1, &a.repeats));
      } else if (name == "max-rounds") {
        RETURN_IF_ERROR(ParseInt(name, value, 1, &a.max_rounds));
      } else if (name == "max-tests") {
        RETURN_IF_ERROR(ParseInt<int64_t>(name, value, 0, &a.max_tests));
      } else if (name == "min-rate") {
        RETURN_IF_ERROR(ParseDouble(name, value, &a.min_rate));
        if (a.min_rate > 1) {
          return InvalidArgument("--min-rate expects a rate in (0, 1], got '" +
                                 value + "'");
        }
      } else {
        return InvalidArgument("unknown flag --" + name);
      }
    } else if (a.case_dir.empty()) {
      a.case_dir = arg;
    } else {
      return InvalidArgument("more than one case given ('" + a.case_dir +
                             "' and '" + arg + "')");
    }
  }
  if (a.help || a.list) return a;
  if (a.case_dir.empty()) return InvalidArgument("missing CASE_DIR");
  if (!a.dry_run && a.out.empty()) return InvalidArgument("missing --out DIR");
  RETURN_IF_ERROR(a.target.Check());
  if (!a.test.empty() && !a.culprit.empty()) {
    return InvalidArgument(
        "--culprit-pass needs the same-bug test (no --test)");
  }
  return a;
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
  StatusOr<Args> args = Parse(argc, argv);
  if (!args.ok()) {
    err << "hlo-reduce: " << args.status().message() << "\n" << Usage();
    return kHloReduceUsage;
  }
  const Args& a = *args;
  if (a.help) {
    out << Usage();
    return kHloReduceOk;
  }
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
