// `trench triage CASE_DIR`: the one-shot triage of a case, with no daemon
// and no repository: hlo-diff's verdict, hlo-reduce, hlo-bisect's levels,
// all in-process (the tools' Run* entry points), then the triage report
// (orchestrator/pipeline/triage_report.h).
//
// OUT (--out, default a fresh ./trench-triage-XXXXXX) receives
// verdict.json, reduce/ (hlo-reduce's output; reduce/best is the minimized
// case), reduce.json, localization.json, triage.json and report.md.
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/json.h"
#include "orchestrator/cli/cli.h"
#include "orchestrator/pipeline/triage_report.h"
#include "tools/hlo-bisect/hlo_bisect.h"
#include "tools/hlo-diff/hlo_diff.h"
#include "tools/hlo-reduce/hlo_reduce.h"
#include "triage/case/target_flags.h"

namespace trench::cli {
namespace {

namespace fs = std::filesystem;

using ToolMain = int (*)(int, char**, std::ostream&, std::ostream&);

struct ToolRun {
  int code = 0;
  std::string out, err;
};

// Runs a tool's entry point in-process with `args` (argv[0] = name).
ToolRun RunTool(ToolMain tool, const std::string& name,
                const std::vector<std::string>& args) {
  std::vector<std::string> storage = {name};
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::ostringstream out, err;
  ToolRun r;
  r.code = tool(static_cast<int>(storage.size()), argv.data(), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// The last non-empty line of a tool's stderr (its error message).
std::string LastLine(const std::string& text) {
  std::istringstream in(text);
  std::string last;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) last = line;
  }
  return last.empty() ? "no message" : last;
}

Status WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) return IoError("cannot write " + path.string());
  return Status::Ok();
}

// The output directory: `out` (created; must be empty when it exists) or,
// when empty, a fresh ./trench-triage-XXXXXX.
StatusOr<std::string> MakeOutDir(const std::string& out_flag) {
  if (out_flag.empty()) {
    std::string tmpl = "trench-triage-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) {
      return IoError("cannot create a directory trench-triage-* here");
    }
    return fs::absolute(tmpl).string();
  }
  const fs::path out = out_flag;
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_empty(out, ec)) {
    return FailedPrecondition("--out " + out.string() +
                              " exists and is not empty");
  }
  fs::create_directories(out, ec);
  if (ec) return IoError("cannot create " + out.string() + ": " + ec.message());
  return fs::absolute(out).string();
}

StatusOr<Json> ParseToolJson(const ToolRun& r, const std::string& tool) {
  StatusOr<Json> j = ParseJson(r.out);
  if (!j.ok() || !j->is_object()) {
    return Internal(tool + " (exit " + std::to_string(r.code) +
                    "): " + LastLine(r.err));
  }
  return std::move(*j);
}

}  // namespace

int CmdTriage(const Context& ctx) {
  std::string case_dir, out_flag, levels;
  std::vector<std::string> extra;
  int64_t max_tests = -1;
  bool no_reduce = false, json = false;
  hlo_diff::TargetFlags target_flags;
  FlagParser p = CommandParser("triage");
  p.Positional("CASE_DIR", &case_dir, "the failing case");
  p.Rest("", &extra, "");
  p.String("out", "DIR", &out_flag,
           "where the results go (default: a new ./trench-triage-XXXXXX)");
  p.String("levels", "L", &levels, "hlo-bisect's levels");
  p.Number("max-tests", "N", &max_tests, "hlo-reduce's test budget");
  p.Bool("no-reduce", &no_reduce, "localize the case as it is");
  p.Bool("json", &json, "print triage.json instead of the report");
  target_flags.Register(&p);
  if (std::optional<int> exit = ParseArgs(ctx, p)) return *exit;
  if (case_dir.empty() || !extra.empty()) {
    return UsageError(ctx, "triage", "give one CASE_DIR");
  }
  if (Status s = target_flags.Check(); !s.ok()) {
    return UsageError(ctx, "triage", s.message());
  }
  std::error_code ec;
  if (!fs::is_directory(case_dir, ec)) {
    return Fail(ctx, case_dir + " is not a case directory");
  }
  const std::vector<std::string> target = target_flags.ToArgs(p);
  StatusOr<std::string> out = MakeOutDir(out_flag);
  if (!out.ok()) return Fail(ctx, out.status().message());
  const fs::path dir = *out;

  Json triage = Json::MakeObject();
  triage["case"] = case_dir;
  triage["out"] = dir.string();
  Json& notes = triage["notes"] = Json::MakeArray();

  // 1. The verdict.
  *ctx.err << "trench: verdict of " << case_dir << "\n";
  std::vector<std::string> args = {case_dir};
  args.insert(args.end(), target.begin(), target.end());
  ToolRun diff = RunTool(RunHloDiff, "hlo-diff", args);
  StatusOr<Json> verdict = ParseToolJson(diff, "hlo-diff");
  if (!verdict.ok()) return Fail(ctx, verdict.status().message());
  (void)WriteText(dir / "verdict.json", verdict->DumpPretty() + "\n");
  const Json* st = verdict->Find("status");
  const std::string status = st && st->is_string() ? st->string_value() : "";
  triage["verdict"] = *verdict;

  std::string localize_dir = case_dir;
  if (orchestrator::IsFailureVerdict(status)) {
    // 2. Reduction.
    if (no_reduce) {
      notes.push_back("reduction skipped (--no-reduce)");
    } else {
      *ctx.err << "trench: reducing (" << status << ")\n";
      args = {case_dir, "--out", (dir / "reduce").string()};
      if (p.Given("max-tests")) {
        args.push_back("--max-tests=" + std::to_string(max_tests));
      }
      args.insert(args.end(), target.begin(), target.end());
      ToolRun reduce = RunTool(RunHloReduce, "hlo-reduce", args);
      StatusOr<Json> summary = ParseToolJson(reduce, "hlo-reduce");
      if (reduce.code == kHloReduceOk && summary.ok()) {
        (void)WriteText(dir / "reduce.json", summary->DumpPretty() + "\n");
        localize_dir = (dir / "reduce" / "best").string();
        triage["minimization"] = *summary;
        triage["minimized_case"] = localize_dir;
        std::ifstream m(dir / "reduce" / "best" / "module.hlo");
        std::ostringstream text;
        text << m.rdbuf();
        triage["minimized_module"] = text.str();
      } else {
        notes.push_back(
            "hlo-reduce failed (exit " + std::to_string(reduce.code) +
            "): " + LastLine(reduce.err) + "; localized the original case");
      }
    }
    // 3. Localization.
    *ctx.err << "trench: localizing " << localize_dir << "\n";
    args = {localize_dir, "--json"};
    if (p.Given("levels")) args.push_back("--levels=" + levels);
    args.insert(args.end(), target.begin(), target.end());
    ToolRun bisect = RunTool(RunHloBisect, "hlo-bisect", args);
    StatusOr<Json> loc = ParseToolJson(bisect, "hlo-bisect");
    if (bisect.code == 0 && loc.ok()) {
      (void)WriteText(dir / "localization.json", loc->DumpPretty() + "\n");
      triage["localization"] = *loc;
    } else {
      notes.push_back("hlo-bisect failed (exit " + std::to_string(bisect.code) +
                      "): " + LastLine(bisect.err));
    }
  }
  const std::string report = orchestrator::TriageRunText(triage);
  Status w = WriteText(dir / "triage.json", triage.DumpPretty() + "\n");
  if (w.ok()) w = WriteText(dir / "report.md", report);
  if (!w.ok()) return Fail(ctx, w.message());
  *ctx.out << (json ? triage.DumpPretty() + "\n" : report);
  return kExitOk;
}

}  // namespace trench::cli
