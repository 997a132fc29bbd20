#include "tools/hlo-diff/hlo_diff.h"

#include <stdlib.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/random_inputs.h"
#include "tools/hlo-diff/case_bundle.h"
#include "tools/hlo-diff/target_runner.h"
#include "tools/hlo-diff/verdict.h"

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
  std::string hloc, tpusim, hlo_run, bin_dir, keep, write_case, compare, store;
  bool serve = false, random = false, record = false, help = false;
  uint64_t seed = 0;
  double timeout = 60;
};

StatusOr<Args> Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      a.help = true;
      continue;
    }
    if (arg == "--serve" || arg == "--random-inputs" || arg == "--record") {
      (arg == "--serve"    ? a.serve
       : arg == "--record" ? a.record
                           : a.random) = true;
      continue;
    }
    if (arg.rfind("--", 0) == 0) {
      std::string name = arg.substr(2), value;
      const size_t eq = name.find('=');
      if (eq != std::string::npos) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        return InvalidArgument("--" + name + " needs a value");
      }
      if (name == "hloc") {
        a.hloc = value;
      } else if (name == "tpusim") {
        a.tpusim = value;
      } else if (name == "hlo-run") {
        a.hlo_run = value;
      } else if (name == "bin-dir") {
        a.bin_dir = value;
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
      } else if (name == "timeout") {
        char* end = nullptr;
        a.timeout = std::strtod(value.c_str(), &end);
        if (end == value.c_str() || *end != '\0' || !(a.timeout > 0)) {
          return InvalidArgument("--timeout expects seconds > 0");
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
  if (!a.hlo_run.empty() && (!a.hloc.empty() || !a.tpusim.empty())) {
    return InvalidArgument("--hlo-run excludes --hloc/--tpusim");
  }
  return a;
}

std::string SelfDir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

hlo_diff::TargetSpec MakeSpec(const Args& a) {
  const std::string dir = a.bin_dir.empty() ? SelfDir() : a.bin_dir;
  const bool run_mode = !a.hlo_run.empty() || a.serve;
  hlo_diff::TargetSpec s = hlo_diff::TargetSpec::FromBinaryDir(
      dir, !run_mode ? hlo_diff::TargetMode::kHlocTpusim
           : a.serve ? hlo_diff::TargetMode::kServe
                     : hlo_diff::TargetMode::kHloRun);
  if (!a.hloc.empty()) s.hloc = a.hloc;
  if (!a.tpusim.empty()) s.tpusim = a.tpusim;
  if (!a.hlo_run.empty()) s.hlo_run = a.hlo_run;
  s.timeout_seconds = a.timeout;
  return s;
}

// Loads the case (a bundle, or a module with random inputs).
StatusOr<Case> LoadCase(const Args& a) {
  std::error_code ec;
  if (fs::is_directory(a.input, ec)) {
    if (a.random) return InvalidArgument("--random-inputs needs MODULE.hlo");
    return hlo_diff::ReadCase(a.input);
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
  ASSIGN_OR_RETURN(auto module, hlo_diff::ParseCaseModule(text.str(), a.input));
  std::vector<Literal> inputs = hlo_diff::ArgumentLeaves(
      RandomArguments(*module->entry_computation(), a.seed));
  Json origin = Json::MakeObject();
  origin["kind"] = "random_inputs";
  origin["module"] = a.input;
  origin["seed"] = a.seed;
  return hlo_diff::MakeCase(text.str(), std::move(inputs), {},
                            std::move(origin));
}

}  // namespace

int HloDiffExitCode(const std::string& status) {
  if (status == "pass") return kHloDiffPass;
  if (status == "invalid_input") return kHloDiffInvalidInput;
  if (status == "mismatch" || status == "nan_mismatch") return kHloDiffMismatch;
  if (status == "compile_crash" || status == "run_crash" ||
      status == "timeout" || status == "memory_error") {
    return kHloDiffCrash;
  }
  if (status == "oracle_unsupported" || status == "target_unsupported") {
    return kHloDiffUnsupported;
  }
  return kHloDiffUsage;
}

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
  StatusOr<Case> c = LoadCase(*args);
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
    out << hlo_diff::InvalidInputVerdict(c.status().message()).DumpPretty()
        << "\n";
    return kHloDiffInvalidInput;
  }
  std::string work = args->keep;
  bool temp_work = false;
  if (work.empty()) {
    char tmpl[] = "/tmp/hlo-diff.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      err << "hlo-diff: cannot create a temporary directory\n";
      return kHloDiffUsage;
    }
    work = tmpl;
    temp_work = true;
  }
  StatusOr<Json> verdict = [&]() -> StatusOr<Json> {
    hlo_diff::TargetRunner runner(MakeSpec(*args));
    return hlo_diff::ComputeVerdict(*c, runner, work);
  }();
  std::error_code ec;
  if (temp_work) fs::remove_all(work, ec);
  if (!verdict.ok()) {
    err << "hlo-diff: " << verdict.status().message() << "\n";
    return kHloDiffUsage;
  }
  c->verdict = *verdict;
  if (const Json* sig = verdict->Find("signature")) c->signature = *sig;
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
      PrintJson(*verdict, {.indent = 2, .non_finite_as_null = true});
  out << (text.ok() ? *text : verdict->DumpPretty()) << "\n";
  const Json* status = verdict->Find("status");
  return HloDiffExitCode(status && status->is_string() ? status->string_value()
                                                       : "");
}

}  // namespace trench
