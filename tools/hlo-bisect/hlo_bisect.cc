#include "tools/hlo-bisect/hlo_bisect.h"

#include <filesystem>
#include <fstream>
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

const char* Usage() {
  return "usage: hlo-bisect CASE_DIR [--levels=pass,rewrite,graph,fusion] "
         "[--json|--text]\n"
         "                  [--out FILE] [--keep DIR] [target flags]\n"
         "       hlo-bisect commits ...  (commit bisection; see "
         "`hlo-bisect commits --help`)\n"
         "       hlo-bisect build REV --repo R --work DIR ...  (one commit's "
         "build)\n"
         "target flags: [--hloc P --tpusim P | --hlo-run P [--serve]]\n"
         "              [--bin-dir D] [--timeout S]\n"
         "Prints the localization report (JSON unless --text). Exit: 0 "
         "localized, 1 the case\ncannot be read or does not fail, 2 usage "
         "or harness error.\n";
}

struct Args {
  std::string case_dir, levels, out, keep;
  hlo_diff::TargetFlags target;
  bool text = false, help = false;
};

StatusOr<Args> Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      a.help = true;
      continue;
    }
    if (a.target.ApplySwitch(arg)) continue;
    if (arg == "--json" || arg == "--text") {
      a.text = arg == "--text";
      continue;
    }
    if (arg.rfind("--", 0) == 0) {
      ASSIGN_OR_RETURN(auto flag, hlo_diff::TakeFlag(argc, argv, &i));
      const auto& [name, value] = flag;
      ASSIGN_OR_RETURN(const bool target, a.target.Apply(name, value));
      std::string* slot = name == "levels" ? &a.levels
                          : name == "out"  ? &a.out
                          : name == "keep" ? &a.keep
                                           : nullptr;
      if (slot != nullptr) {
        *slot = value;
      } else if (!target) {
        return InvalidArgument("unknown flag --" + name);
      }
      continue;
    }
    if (!a.case_dir.empty()) return InvalidArgument("more than one case given");
    a.case_dir = arg;
  }
  if (a.help) return a;
  if (a.case_dir.empty()) return InvalidArgument("missing CASE_DIR");
  RETURN_IF_ERROR(a.target.Check());
  return a;
}

}  // namespace

int RunHloBisect(int argc, char** argv, std::ostream& out, std::ostream& err) {
  if (argc >= 2 && std::string(argv[1]) == "build") {
    return RunBuildCli(argc - 1, argv + 1, out, err);
  }
  if (argc >= 2 && std::string(argv[1]) == "commits") {
    return RunCommitBisectCli(argc - 1, argv + 1, out, err);
  }
  StatusOr<Args> args = Parse(argc, argv);
  if (!args.ok()) {
    err << "hlo-bisect: " << args.status().message() << "\n" << Usage();
    return 2;
  }
  if (args->help) {
    out << Usage();
    return 0;
  }
  hlo_bisect::LocalizeOptions options;
  if (!args->levels.empty()) {
    if (Status st = hlo_bisect::ParseLevels(args->levels, &options); !st.ok()) {
      err << "hlo-bisect: " << st.message() << "\n";
      return 2;
    }
  }
  std::unique_ptr<HloModule> module;
  StatusOr<hlo_diff::Case> c = hlo_diff::ReadCase(args->case_dir, &module);
  if (!c.ok()) {
    err << "hlo-bisect: " << c.status().message() << "\n";
    return 1;
  }
  if (!args->keep.empty()) {
    std::error_code ec;
    fs::create_directories(args->keep, ec);
    if (ec) {
      err << "hlo-bisect: " << args->keep << ": " << ec.message() << "\n";
      return 2;
    }
  }
  StatusOr<hlo_bisect::Localization> l = hlo_bisect::LocalizeOnTarget(
      *c, std::move(module),
      args->target.Spec(hlo_diff::TargetMode::kHlocTpusim), args->keep,
      options);
  if (!l.ok()) {
    err << "hlo-bisect: " << l.status().message() << "\n";
    return l.status().code() == StatusCode::kFailedPrecondition ? 1 : 2;
  }
  const std::string report =
      args->text
          ? hlo_bisect::LocalizationText(*l, args->case_dir)
          : hlo_bisect::LocalizationJson(*l, args->case_dir).DumpPretty() +
                "\n";
  if (args->out.empty()) {
    out << report;
  } else {
    std::ofstream f(args->out, std::ios::binary | std::ios::trunc);
    f << report;
    if (!f.flush()) {
      err << "hlo-bisect: " << args->out << ": cannot write\n";
      return 2;
    }
  }
  return 0;
}

}  // namespace trench
