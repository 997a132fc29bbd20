#include "tools/hlo-bisect/hlo_bisect.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "tools/hlo-bisect/build_cli.h"
#include "tools/hlo-bisect/commit_cli.h"
#include "triage/case/case_bundle.h"
#include "triage/case/target_flags.h"
#include "triage/case/target_runner.h"
#include "triage/localize/localization_report.h"
#include "triage/localize/localize.h"

namespace trench {
namespace {

namespace fs = std::filesystem;

struct Args {
  std::string case_dir, levels, out, keep;
  hlo_diff::TargetFlags target;
  bool text = false;
};

void Declare(FlagParser* p, Args* a) {
  p->set_description(
      "Localizes a failing case: the pass, rewrite, instruction, op\n"
      "inside a fused kernel and op inside a called computation (sort\n"
      "comparator, reduce body, ...) where it goes wrong. Prints the\n"
      "localization report (JSON unless --text).\n"
      "Commands: `commits` (commit bisection; hlo-bisect commits --help),\n"
      "`build` (one commit's build; hlo-bisect build --help).");
  p->set_epilog(
      "exit: 0 localized, 1 the case cannot be read or does not fail,\n"
      "2 usage or harness error");
  p->Positional("CASE_DIR", &a->case_dir, "the failing case");
  p->String("levels", "L", &a->levels,
            "the levels to run: pass,rewrite,graph,fusion,callee,branch");
  p->Switch(
      "json", [a] { a->text = false; }, "the report as JSON (default)");
  p->Switch(
      "text", [a] { a->text = true; }, "the report as text");
  p->String("out", "FILE", &a->out, "write the report to FILE");
  p->String("keep", "DIR", &a->keep,
            "run the target in DIR and keep it (default: a\ntemporary "
            "directory)");
  a->target.Register(p);
}

}  // namespace

int RunHloBisect(int argc, char** argv, std::ostream& out, std::ostream& err) {
  if (argc >= 2 && std::string(argv[1]) == "build") {
    return RunBuildCli(argc - 1, argv + 1, out, err);
  }
  if (argc >= 2 && std::string(argv[1]) == "commits") {
    return RunCommitBisectCli(argc - 1, argv + 1, out, err);
  }
  Args a;
  FlagParser p("hlo-bisect",
               "CASE_DIR [--levels=pass,rewrite,graph,fusion,callee,branch] "
               "[--json|--text] "
               "[--out FILE] [--keep DIR] [target flags]\n"
               "commits CASE_DIR --repo R --good REV --bad REV ...\n"
               "build REV --repo R --work DIR ...");
  Declare(&p, &a);
  if (std::optional<int> exit = p.ParseOrExit(argc, argv, out, err)) {
    return *exit;
  }
  if (a.case_dir.empty()) return p.UsageError(err, "missing CASE_DIR");
  if (Status s = a.target.Check(); !s.ok()) {
    return p.UsageError(err, s.message());
  }
  hlo_bisect::LocalizeOptions options;
  if (!a.levels.empty()) {
    if (Status st = hlo_bisect::ParseLevels(a.levels, &options); !st.ok()) {
      err << "hlo-bisect: " << st.message() << "\n";
      return 2;
    }
  }
  std::unique_ptr<HloModule> module;
  StatusOr<hlo_diff::Case> c = hlo_diff::ReadCase(a.case_dir, &module);
  if (!c.ok()) {
    err << "hlo-bisect: " << c.status().message() << "\n";
    return 1;
  }
  if (!a.keep.empty()) {
    std::error_code ec;
    fs::create_directories(a.keep, ec);
    if (ec) {
      err << "hlo-bisect: " << a.keep << ": " << ec.message() << "\n";
      return 2;
    }
  }
  StatusOr<hlo_bisect::Localization> l = hlo_bisect::LocalizeOnTarget(
      *c, std::move(module), a.target.Spec(hlo_diff::TargetMode::kHlocTpusim),
      a.keep, options);
  if (!l.ok()) {
    err << "hlo-bisect: " << l.status().message() << "\n";
    return l.status().code() == StatusCode::kFailedPrecondition ? 1 : 2;
  }
  const std::string report =
      a.text ? hlo_bisect::LocalizationText(*l, a.case_dir)
             : hlo_bisect::LocalizationJson(*l, a.case_dir).DumpPretty() + "\n";
  if (a.out.empty()) {
    out << report;
  } else {
    std::ofstream f(a.out, std::ios::binary | std::ios::trunc);
    f << report;
    if (!f.flush()) {
      err << "hlo-bisect: " << a.out << ": cannot write\n";
      return 2;
    }
  }
  return 0;
}

}  // namespace trench
