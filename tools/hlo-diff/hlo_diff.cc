#include "tools/hlo-diff/hlo_diff.h"

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/random_inputs.h"
#include "triage/case/case_bundle.h"
#include "triage/case/target_flags.h"
#include "triage/case/target_runner.h"
#include "triage/case/verdict.h"

namespace trench {
namespace {

namespace fs = std::filesystem;
using hlo_diff::Case;

const char* Usage() {
  return "usage: hlo-diff CASE_DIR [target flags] [--record] [--store ROOT]\n"
         "       hlo-diff MODULE.hlo --random-inputs [--seed N] "
         "[--write-case DIR] [--store ROOT]\n"
         "                [--compare contract|near|exact] [target flags]\n"
         "target flags: [--hloc P --tpusim P | --hlo-run P [--serve]]\n"
         "              [--bin-dir D] [--timeout S] [--keep DIR]\n"
         "Prints the verdict JSON. Exit: 0 pass, 1 invalid_input, 2 usage "
         "or harness error,\n10 mismatch/nan_mismatch, 11 "
         "compile_crash/run_crash/timeout/memory_error,\n12 "
         "oracle_unsupported/target_unsupported.\n";
}

struct Args {
  std::string input;
  std::string keep, write_case, compare, store;
  hlo_diff::TargetFlags target;
  bool random = false, record = false, help = false;
  uint64_t seed = 0;
};

StatusOr<Args> Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      a.help = true;
      continue;
    }
    if (a.target.ApplySwitch(arg)) continue;
    if (arg == "--random-inputs" || arg == "--record") {
      (arg == "--record" ? a.record : a.random) = true;
      continue;
    }
    if (arg.rfind("--", 0) == 0) {
      ASSIGN_OR_RETURN(auto flag, hlo_diff::TakeFlag(argc, argv, &i));
      const auto& [name, value] = flag;
      ASSIGN_OR_RETURN(const bool target, a.target.Apply(name, value));
      if (target) {
      } else if (name == "keep") {
        a.keep = value;
      } else if (name == "write-case") {
        a.write_case = value;
      } else if (name == "store") {
        a.store = value;
      } else if (name == "compare") {
        a.compare = value;
      } else if (name == "seed") {
        auto [p, ec] =
            std::from_chars(value.data(), value.data() + value.size(), a.seed);
        if (ec != std::errc() || p != value.data() + value.size()) {
          return InvalidArgument("--seed expects a non-negative integer");
        }
      } else {
        return InvalidArgument("unknown flag --" + name);
      }
      continue;
    }
    if (!a.input.empty()) return InvalidArgument("more than one case given");
    a.input = arg;
  }
  if (a.help) return a;
  if (a.input.empty()) return InvalidArgument("missing CASE_DIR or MODULE.hlo");
  RETURN_IF_ERROR(a.target.Check());
  return a;
}

// Loads the case (a bundle, or a module with random inputs) and its parsed
// module (*module).
StatusOr<Case> LoadCase(const Args& a, std::unique_ptr<HloModule>* module) {
  std::error_code ec;
  if (fs::is_directory(a.input, ec)) {
    if (a.random) return InvalidArgument("--random-inputs needs MODULE.hlo");
    return hlo_diff::ReadCase(a.input, module);
  }
  if (!a.random) {
    return InvalidArgument(a.input +
                           ": not a case directory (for a module file, "
                           "pass --random-inputs)");
  }
  std::ifstream in(a.input, std::ios::binary);
  if (!in) return IoError(a.input + ": cannot read");
  std::ostringstream text;
  text << in.rdbuf();
  ASSIGN_OR_RETURN(*module, hlo_diff::ParseCaseModule(text.str(), a.input));
  // The inputs fit the module by construction (no MakeCase: it would parse
  // the module again).
  Case c;
  c.module_text = text.str();
  c.inputs = hlo_diff::ArgumentLeaves(
      RandomArguments(*(*module)->entry_computation(), a.seed));
  c.origin["kind"] = "random_inputs";
  c.origin["module"] = a.input;
  c.origin["seed"] = a.seed;
  return c;
}

}  // namespace

int RunHloDiff(int argc, char** argv, std::ostream& out, std::ostream& err) {
  StatusOr<Args> args = Parse(argc, argv);
  if (!args.ok()) {
    err << "hlo-diff: " << args.status().message() << "\n" << Usage();
    return kHloDiffUsage;
  }
  if (args->help) {
    out << Usage();
    return kHloDiffPass;
  }
  std::unique_ptr<HloModule> module;
  StatusOr<Case> c = LoadCase(*args, &module);
  if (c.ok() && !args->compare.empty()) {
    Json o = c->options.ToJson();
    o["compare"] = args->compare;
    StatusOr<hlo_diff::CaseOptions> opts = hlo_diff::CaseOptions::FromJson(o);
    if (!opts.ok()) {
      err << "hlo-diff: --compare: " << opts.status().message() << "\n";
      return kHloDiffUsage;
    }
    c->options = *opts;
  }
  if (!c.ok()) {
    err << "hlo-diff: " << c.status().message() << "\n";
    out << hlo_diff::InvalidInputVerdict(c.status().message())
               .ToJson()
               .DumpPretty()
        << "\n";
    return kHloDiffInvalidInput;
  }
  StatusOr<hlo_diff::Verdict> verdict = hlo_diff::Diff(
      *c, *module, args->target.Spec(hlo_diff::TargetMode::kHlocTpusim),
      args->keep);
  if (!verdict.ok()) {
    err << "hlo-diff: " << verdict.status().message() << "\n";
    return kHloDiffUsage;
  }
  const Json json = verdict->ToJson();
  c->verdict = json;
  c->signature = verdict->signature;
  Status saved;
  if (!args->write_case.empty()) {
    saved = hlo_diff::WriteCase(args->write_case, *c);
  } else if (args->record) {
    saved = hlo_diff::UpdateCaseJson(args->input, *c);
  }
  if (saved.ok() && !args->store.empty()) {
    StatusOr<std::string> dir = hlo_diff::StoreCase(args->store, *c);
    saved = dir.ok() ? hlo_diff::UpdateCaseJson(*dir, *c) : dir.status();
    if (dir.ok()) err << "hlo-diff: stored " << *dir << "\n";
  }
  if (!saved.ok()) {
    err << "hlo-diff: " << saved.message() << "\n";
    return kHloDiffUsage;
  }
  StatusOr<std::string> text =
      PrintJson(json, {.indent = 2, .non_finite_as_null = true});
  out << (text.ok() ? *text : json.DumpPretty()) << "\n";
  return hlo_diff::HloDiffExitCode(verdict->status);
}

}  // namespace trench
