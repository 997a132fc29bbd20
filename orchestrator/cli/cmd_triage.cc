// `trench triage CASE_DIR`: the one-shot triage of a case, with no daemon
// and no repository: the verdict (hlo_diff::Diff), the reduction
// (hlo_reduce::ReduceCase), the localization (hlo_bisect::LocalizeOnTarget),
// all in-process through the libraries' typed entry points, then the
// triage report (orchestrator/pipeline/triage_report.h). Each step's JSON
// is what the matching tool (hlo-diff, hlo-reduce, hlo-bisect) prints.
//
// OUT (--out, default a fresh ./trench-triage-XXXXXX) receives
// verdict.json, reduce/ (the reduction's output; reduce/best is the
// minimized case), reduce.json, localization.json, triage.json and
// report.md.
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>

#include "base/json.h"
#include "orchestrator/cli/cli.h"
#include "orchestrator/cli/progress.h"
#include "orchestrator/pipeline/triage_report.h"
#include "triage/case/case_bundle.h"
#include "triage/case/target_flags.h"
#include "triage/case/verdict.h"
#include "triage/localize/localization_report.h"
#include "triage/localize/localize.h"
#include "triage/reduce/reduce_case.h"
#include "triage/reduce/reduction_pass.h"

namespace trench::cli {
namespace {

namespace fs = std::filesystem;

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

// The reduction step: hlo-reduce's run on `c` into OUT/reduce, with its
// work files in a temporary directory. Returns the summary.
StatusOr<Json> ReduceStep(const hlo_diff::Case& c, const std::string& case_dir,
                          const fs::path& dir,
                          const hlo_diff::TargetSpec& target,
                          int64_t max_tests) {
  const auto passes = hlo_reduce::AllReductionPasses();
  char tmpl[] = "/tmp/hlo-reduce.XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) {
    return IoError("cannot create a temporary directory");
  }
  hlo_reduce::ReduceCaseOptions o;
  o.case_name = case_dir;
  o.out_dir = (dir / "reduce").string();
  o.work_dir = tmpl;
  o.target = target;
  o.max_tests = max_tests;
  bool not_interesting = false;
  StatusOr<Json> summary =
      hlo_reduce::ReduceCase(c, passes, o, &not_interesting);
  std::error_code ec;
  fs::remove_all(tmpl, ec);
  return summary;
}

}  // namespace

int CmdTriage(const Context& ctx) {
  std::string case_dir, out_flag, levels_flag;
  std::vector<std::string> extra;
  int64_t max_tests = -1;
  bool no_reduce = false, json = false;
  hlo_diff::TargetFlags target_flags;
  FlagParser p = CommandParser("triage");
  p.Positional("CASE_DIR", &case_dir, "the failing case");
  p.Rest("", &extra, "");
  p.String("out", "DIR", &out_flag,
           "where the results go (default: a new ./trench-triage-XXXXXX)");
  p.String("levels", "L", &levels_flag,
           "the localization levels: pass,rewrite,graph,fusion,callee,branch");
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
  if (p.Given("max-tests") && max_tests < 0) {
    return UsageError(ctx, "triage", "--max-tests expects an integer >= 0");
  }
  hlo_bisect::LocalizeOptions levels;
  if (p.Given("levels")) {
    Status st = hlo_bisect::ParseLevels(levels_flag, &levels);
    if (!st.ok()) return UsageError(ctx, "triage", st.message());
  }
  std::error_code ec;
  if (!fs::is_directory(case_dir, ec)) {
    return Fail(ctx, case_dir + " is not a case directory");
  }
  StatusOr<std::string> out = MakeOutDir(out_flag);
  if (!out.ok()) return Fail(ctx, out.status().message());
  const fs::path dir = *out;

  Json triage = Json::MakeObject();
  triage["case"] = case_dir;
  triage["out"] = dir.string();
  Json& notes = triage["notes"] = Json::MakeArray();

  // On a terminal: "triage: reducing (wrong_result), 12 s"; else quiet.
  Progress progress(ctx.err, ctx.err_is_terminal);
  std::mutex phase_mu;
  std::string phase;  // GUARDED_BY(phase_mu)
  auto set_phase = [&](std::string p) {
    std::lock_guard<std::mutex> lock(phase_mu);
    phase = std::move(p);
  };
  const auto start = std::chrono::steady_clock::now();
  set_phase("verdict of " + case_dir);
  std::optional<ProgressTicker> ticker;
  ticker.emplace(&progress, [&] {
    const auto s = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::steady_clock::now() - start)
                       .count();
    std::lock_guard<std::mutex> lock(phase_mu);
    return "triage: " + phase + ", " + std::to_string(s) + " s";
  });

  // 1. The verdict (a case that cannot be read is judged invalid_input).
  std::unique_ptr<HloModule> module;
  StatusOr<hlo_diff::Case> c = hlo_diff::ReadCase(case_dir, &module);
  StatusOr<hlo_diff::Verdict> verdict =
      c.ok()
          ? hlo_diff::Diff(*c, *module,
                           target_flags.Spec(hlo_diff::TargetMode::kHlocTpusim))
          : StatusOr<hlo_diff::Verdict>(
                hlo_diff::InvalidInputVerdict(c.status().message()));
  if (!verdict.ok())
    return Fail(ctx, "hlo-diff: " + verdict.status().message());
  const Json verdict_json = verdict->ToJson();
  (void)WriteText(dir / "verdict.json", verdict_json.DumpPretty() + "\n");
  triage["verdict"] = verdict_json;

  if (hlo_diff::IsFailure(verdict->status)) {
    std::string localize_dir = case_dir;
    // 2. Reduction.
    if (no_reduce) {
      notes.push_back("reduction skipped (--no-reduce)");
    } else {
      set_phase("reducing (" + std::string(verdict->status_name()) + ")");
      StatusOr<Json> summary = ReduceStep(
          *c, case_dir, dir, target_flags.Spec(hlo_diff::TargetMode::kServe),
          max_tests);
      StatusOr<hlo_diff::Case> best =
          summary.ok()
              ? hlo_diff::ReadCase((dir / "reduce" / "best").string(), &module)
              : StatusOr<hlo_diff::Case>(summary.status());
      if (best.ok()) {
        (void)WriteText(dir / "reduce.json", summary->DumpPretty() + "\n");
        localize_dir = (dir / "reduce" / "best").string();
        triage["minimization"] = *summary;
        triage["minimized_case"] = localize_dir;
        triage["minimized_module"] = best->module_text;
        *c = std::move(best).value();
      } else {
        notes.push_back("hlo-reduce failed: " + best.status().message() +
                        "; localized the original case");
      }
    }
    // 3. Localization (of the minimized case when there is one).
    set_phase("localizing " + localize_dir);
    StatusOr<hlo_bisect::Localization> loc = hlo_bisect::LocalizeOnTarget(
        *c, std::move(module),
        target_flags.Spec(hlo_diff::TargetMode::kHlocTpusim), "", levels);
    if (loc.ok()) {
      const Json report = hlo_bisect::LocalizationJson(*loc, localize_dir);
      (void)WriteText(dir / "localization.json", report.DumpPretty() + "\n");
      triage["localization"] = report;
    } else {
      notes.push_back("hlo-bisect failed: " + loc.status().message());
    }
  }
  ticker.reset();
  progress.Finish();
  const std::string report = orchestrator::TriageRunText(triage);
  Status w = WriteText(dir / "triage.json", triage.DumpPretty() + "\n");
  if (w.ok()) w = WriteText(dir / "report.md", report);
  if (!w.ok()) return Fail(ctx, w.message());
  *ctx.out << (json ? triage.DumpPretty() + "\n" : report);
  return kExitOk;
}

}  // namespace trench::cli
