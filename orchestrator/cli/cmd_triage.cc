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

#include <charconv>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "base/json.h"
#include "orchestrator/cli/cli.h"
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

const std::vector<std::string> kTargetValued = {
    "bin-dir", "hlo-run", "hloc", "tpusim", "target", "timeout"};

Status WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.flush()) return IoError("cannot write " + path.string());
  return Status::Ok();
}

// The output directory: --out (created; must be empty when it exists) or
// a fresh ./trench-triage-XXXXXX.
StatusOr<std::string> MakeOutDir(const Flags& flags) {
  if (!flags.Has("out")) {
    std::string tmpl = "trench-triage-XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) {
      return IoError("cannot create a directory trench-triage-* here");
    }
    return fs::absolute(tmpl).string();
  }
  const fs::path out = flags.Get("out");
  std::error_code ec;
  if (fs::exists(out, ec) && !fs::is_empty(out, ec)) {
    return FailedPrecondition("--out " + out.string() +
                              " exists and is not empty");
  }
  fs::create_directories(out, ec);
  if (ec) return IoError("cannot create " + out.string() + ": " + ec.message());
  return fs::absolute(out).string();
}

// The target flags among `flags` (hlo-diff's: target_flags.h).
StatusOr<hlo_diff::TargetFlags> TargetFlagsOf(const Flags& flags) {
  hlo_diff::TargetFlags t;
  for (const std::string& name : kTargetValued) {
    if (flags.Has(name))
      RETURN_IF_ERROR(t.Apply(name, flags.Get(name)).status());
  }
  if (flags.Has("serve")) t.ApplySwitch("--serve");
  RETURN_IF_ERROR(t.Check());
  return t;
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
  std::vector<std::string> valued = kTargetValued;
  valued.insert(valued.end(), {"out", "levels", "max-tests"});
  StatusOr<Flags> flags =
      ParseFlags(ctx.args, valued, {"serve", "no-reduce", "json"});
  if (!flags.ok()) return UsageError(ctx, "triage", flags.status().message());
  if (flags->positional.size() != 1) {
    return UsageError(ctx, "triage", "give one CASE_DIR");
  }
  StatusOr<hlo_diff::TargetFlags> target = TargetFlagsOf(*flags);
  if (!target.ok()) {
    return UsageError(ctx, "triage", target.status().message());
  }
  hlo_bisect::LocalizeOptions levels;
  if (flags->Has("levels")) {
    Status st = hlo_bisect::ParseLevels(flags->Get("levels"), &levels);
    if (!st.ok()) return UsageError(ctx, "triage", st.message());
  }
  int64_t max_tests = -1;
  if (flags->Has("max-tests")) {
    const std::string v = flags->Get("max-tests");
    auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), max_tests);
    if (ec != std::errc() || p != v.data() + v.size() || max_tests < 0) {
      return UsageError(ctx, "triage",
                        "--max-tests expects an integer >= 0, got '" + v + "'");
    }
  }
  const std::string case_dir = flags->positional[0];
  std::error_code ec;
  if (!fs::is_directory(case_dir, ec)) {
    return Fail(ctx, case_dir + " is not a case directory");
  }
  StatusOr<std::string> out = MakeOutDir(*flags);
  if (!out.ok()) return Fail(ctx, out.status().message());
  const fs::path dir = *out;

  Json triage = Json::MakeObject();
  triage["case"] = case_dir;
  triage["out"] = dir.string();
  Json& notes = triage["notes"] = Json::MakeArray();

  // 1. The verdict (a case that cannot be read is judged invalid_input).
  *ctx.err << "trench: verdict of " << case_dir << "\n";
  std::unique_ptr<HloModule> module;
  StatusOr<hlo_diff::Case> c = hlo_diff::ReadCase(case_dir, &module);
  StatusOr<hlo_diff::Verdict> verdict =
      c.ok() ? hlo_diff::Diff(*c, *module,
                              target->Spec(hlo_diff::TargetMode::kHlocTpusim))
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
    if (flags->Has("no-reduce")) {
      notes.push_back("reduction skipped (--no-reduce)");
    } else {
      *ctx.err << "trench: reducing (" << verdict->status_name() << ")\n";
      StatusOr<Json> summary =
          ReduceStep(*c, case_dir, dir,
                     target->Spec(hlo_diff::TargetMode::kServe), max_tests);
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
    *ctx.err << "trench: localizing " << localize_dir << "\n";
    StatusOr<hlo_bisect::Localization> loc = hlo_bisect::LocalizeOnTarget(
        *c, std::move(module), target->Spec(hlo_diff::TargetMode::kHlocTpusim),
        "", levels);
    if (loc.ok()) {
      const Json report = hlo_bisect::LocalizationJson(*loc, localize_dir);
      (void)WriteText(dir / "localization.json", report.DumpPretty() + "\n");
      triage["localization"] = report;
    } else {
      notes.push_back("hlo-bisect failed: " + loc.status().message());
    }
  }
  const std::string report = orchestrator::TriageRunText(triage);
  Status w = WriteText(dir / "triage.json", triage.DumpPretty() + "\n");
  if (w.ok()) w = WriteText(dir / "report.md", report);
  if (!w.ok()) return Fail(ctx, w.message());
  *ctx.out << (flags->Has("json") ? triage.DumpPretty() + "\n" : report);
  return kExitOk;
}

}  // namespace trench::cli
