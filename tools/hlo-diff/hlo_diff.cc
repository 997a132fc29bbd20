#include "tools/hlo-diff/hlo_diff.h"

#include <filesystem>
#include <fstream>
#include <optional>
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

struct Args {
  std::string input;
  std::string keep, write_case, compare, store;
  hlo_diff::TargetFlags target;
  bool random = false, record = false;
  uint64_t seed = 0;
};

void Declare(FlagParser* p, Args* a) {
  p->set_description("Prints the verdict JSON: the target against the oracle.");
  p->set_epilog(
      "exit: 0 pass, 1 invalid_input, 2 usage or harness error,\n"
      "10 mismatch/nan_mismatch, 11 compile_crash/run_crash/timeout/"
      "memory_error,\n12 oracle_unsupported/target_unsupported");
  p->Positional("CASE_DIR|MODULE.hlo", &a->input,
                "a case directory, or a module with --random-inputs");
  p->Bool("random-inputs", &a->random,
          "MODULE.hlo's inputs: RandomArguments(entry, --seed)");
  p->Number("seed", "N", &a->seed, "seed for --random-inputs (default 0)");
  p->String("write-case", "DIR", &a->write_case,
            "save the case (with its verdict) as a bundle");
  p->Bool("record", &a->record,
          "write the verdict and signature into CASE_DIR/case.json");
  p->String("store", "ROOT", &a->store,
            "store the case content-addressed as ROOT/cases/<sha256>/");
  p->String("compare", "MODE", &a->compare, "contract, near or exact");
  p->String("keep", "DIR", &a->keep,
            "keep the work files in DIR (default: a temporary directory)");
  a->target.Register(p);
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
  Args a;
  FlagParser p("hlo-diff",
               "CASE_DIR [target flags] [--record] [--store ROOT]\n"
               "MODULE.hlo --random-inputs [--seed N] [--write-case DIR] "
               "[--store ROOT] [--compare contract|near|exact] "
               "[target flags]");
  Declare(&p, &a);
  if (std::optional<int> exit = p.ParseOrExit(argc, argv, out, err)) {
    return *exit;
  }
  if (a.input.empty()) {
    return p.UsageError(err, "missing CASE_DIR or MODULE.hlo");
  }
  if (Status s = a.target.Check(); !s.ok()) {
    return p.UsageError(err, s.message());
  }
  std::unique_ptr<HloModule> module;
  StatusOr<Case> c = LoadCase(a, &module);
  if (c.ok() && !a.compare.empty()) {
    Json o = c->options.ToJson();
    o["compare"] = a.compare;
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
      *c, *module, a.target.Spec(hlo_diff::TargetMode::kHlocTpusim), a.keep);
  if (!verdict.ok()) {
    err << "hlo-diff: " << verdict.status().message() << "\n";
    return kHloDiffUsage;
  }
  const Json json = verdict->ToJson();
  c->verdict = *verdict;
  c->signature = verdict->signature.ToJson();
  Status saved;
  if (!a.write_case.empty()) {
    saved = hlo_diff::WriteCase(a.write_case, *c);
  } else if (a.record) {
    saved = hlo_diff::UpdateCaseJson(a.input, *c);
  }
  if (saved.ok() && !a.store.empty()) {
    StatusOr<std::string> dir = hlo_diff::StoreCase(a.store, *c);
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
