// The bug steps before a patch: reproduce, minimize, localize, bisect.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <string_view>

#include "agents/claims.h"
#include "base/json_nlohmann.h"
#include "compiler/ir/literal_json.h"
#include "compiler/ir/random_inputs.h"
#include "orchestrator/pipeline/agent_sessions.h"
#include "orchestrator/pipeline/commit_tools.h"
#include "orchestrator/pipeline/root_cause.h"
#include "orchestrator/pipeline/step_util.h"
#include "orchestrator/pipeline/triage_verbs.h"
#include "triage/case/case_bundle.h"

namespace trench::orchestrator {
namespace fs = std::filesystem;

namespace {

// The report's module made a full case (its inputs, or seeded random
// ones), stored; or nullopt when the report carries no program.
StatusOr<std::optional<std::string>> CaseFromReport(StepContext& ctx,
                                                    const Bug& bug,
                                                    int64_t job_id) {
  const Json* report = bug.details.Find("report");
  const Json* hlo = report ? report->Find("hlo") : nullptr;
  if (!hlo || !hlo->is_string()) return std::optional<std::string>();
  ASSIGN_OR_RETURN(auto module,
                   hlo_diff::ParseCaseModule(hlo->string_value(),
                                             "bug " + std::to_string(bug.id)));
  std::vector<Literal> args;
  if (const Json* in = report->Find("inputs"); in && in->is_array()) {
    for (const Json& j : in->array()) {
      ASSIGN_OR_RETURN(Literal lit, LiteralFromJson(j));
      args.push_back(std::move(lit));
    }
  } else {
    args = RandomArguments(*module->entry_computation(), 1);
  }
  Json origin = Json::MakeObject();
  origin["source"] = "report";
  origin["bug"] = bug.id;
  ASSIGN_OR_RETURN(
      hlo_diff::Case c,
      hlo_diff::MakeCase(hlo->string_value(), hlo_diff::ArgumentLeaves(args),
                         {}, origin));
  ASSIGN_OR_RETURN(std::string scratch, ctx.Scratch(job_id, "report-case"));
  RETURN_IF_ERROR(hlo_diff::WriteCase(scratch + "/case", c));
  ASSIGN_OR_RETURN(std::string sha, ImportCase(ctx, scratch + "/case", origin));
  return std::optional<std::string>(sha);
}

// The stored case a brain's claim names by `id` (claims.h checked it is
// an id, never a path), imported; nullopt, with evidence["refused"] saying
// why, when no well-formed case is stored under that id. Other errors (the
// disk) are the step's, to be retried.
StatusOr<std::optional<std::string>> ClaimedCase(StepContext& ctx,
                                                 std::string_view role,
                                                 const std::string& id,
                                                 Json& evidence) {
  const std::string dir = CaseDir(ctx, id);
  std::error_code ec;
  StatusOr<std::string> sha =
      fs::is_directory(dir, ec)
          ? ImportCase(ctx, dir, Json::MakeObject())
          : StatusOr<std::string>(NotFound("not a case directory"));
  if (sha.ok()) return std::optional<std::string>(*sha);
  const StatusCode code = sha.status().code();
  if (code != StatusCode::kNotFound && code != StatusCode::kInvalidArgument) {
    return sha.status();
  }
  evidence["refused"] = "the " + std::string(role) + "'s case " +
                        id.substr(0, 12) + " is not a stored case (" +
                        sha.status().message() + ")";
  return std::optional<std::string>();
}

}  // namespace

StatusOr<Json> RunReproduceStep(StepContext& ctx, const Job& job) {
  ASSIGN_OR_RETURN(std::optional<Bug> bug,
                   BugForStep(ctx, job, {BugState::kNew}));
  if (!bug) return Json::MakeObject();
  // An older bug that may share this one's root cause is still worked on:
  // this one waits for its verified patch (root_cause.h) instead of
  // starting the whole pipeline; the job's result says why. A job run
  // again after a crash finds the wait already written and does not note
  // it twice. A wait for a bug that already has its patch ends at once.
  if (const Json* w = bug->details.Find("waiting_for"); !w || !w->is_object()) {
    ASSIGN_OR_RETURN(std::optional<Json> wait,
                     RootCauseToWaitFor(ctx, *bug, job.id));
    if (wait) {
      RETURN_IF_ERROR(StartWaiting(ctx, *bug, *wait));
      ASSIGN_OR_RETURN(*bug, ctx.store->GetBug(bug->id));
    }
  }
  if (const Json* w = bug->details.Find("waiting_for"); w && w->is_object()) {
    Json wait = *w;
    ASSIGN_OR_RETURN(bool still, StillWaiting(ctx, *bug));
    if (still) {
      Json out = Json::MakeObject();
      out["waiting_for"] = wait;
      out["note"] = wait["reason"];
      return out;
    }
    ASSIGN_OR_RETURN(*bug, ctx.store->GetBug(bug->id));
  }
  // Released by the older bug's verified patch: that patch may fix it.
  ASSIGN_OR_RETURN(std::optional<Json> merged,
                   MergeIfFixedByPatch(ctx, *bug, job.id));
  if (merged) return *merged;
  ASSIGN_OR_RETURN(*bug, ctx.store->GetBug(bug->id));
  TransitionFields fields;
  std::optional<std::string> case_sha;
  // A fuzz finding comes as a full case; a report as a module (or text).
  if (bug->case_sha256 &&
      hlo_diff::ReadCase(CaseDir(ctx, *bug->case_sha256)).ok()) {
    case_sha = *bug->case_sha256;
  } else {
    ASSIGN_OR_RETURN(case_sha, CaseFromReport(ctx, *bug, job.id));
    fields.case_sha256 = case_sha;
  }
  ASSIGN_OR_RETURN(std::string commit, FoundCommitOf(ctx, *bug));
  ASSIGN_OR_RETURN(std::string bin, BinDirOf(ctx, commit));
  Json evidence = Json::MakeObject();
  evidence["event"] = "reproduced";
  const Json* report = bug->details.Find("report");
  const Json* text = report ? report->Find("text") : nullptr;
  if (!case_sha && text && text->is_string() && !text->string_value().empty()) {
    // Free text only: the reproducer (a brain with write_case / run_case)
    // turns it into a case, which the runs below then check.
    ASSIGN_OR_RETURN(std::string scratch, ctx.Scratch(job.id, "reproducer"));
    ASSIGN_OR_RETURN(
        auto tools,
        agents::SandboxToolBox::Create(
            "reproducer", ToolContextFor(ctx, bin, scratch, commit)));
    Json task = Json::MakeObject();
    task["bug"] = bug->id;
    task["report_text"] = text->string_value();
    task["runs"] = ctx.config->reproduce_runs;
    // A program described in words: a campaign aimed at the ops it names.
    task["fuzz_seconds"] = std::max<int64_t>(
        1, static_cast<int64_t>(ctx.config->fuzz_budget_seconds));
    // Its words are matched against the ops the target says it compiles
    // (without a description: every HLO opcode).
    if (StatusOr<hlo_diff::TargetDescription> target =
            TargetOfBuild(ctx, commit, scratch);
        target.ok() && !target->AllOps().empty()) {
      task["target_ops"] = Json::MakeArray();
      for (const std::string& op : target->AllOps()) {
        task["target_ops"].push_back(op);
      }
    }
    ASSIGN_OR_RETURN(Json raw,
                     RunAgent(ctx, "reproducer", bug->id, task, *tools));
    StatusOr<agents::ReproducerClaim> claim =
        agents::ParseReproducerClaim(ToJsonDoc(raw));
    if (!claim.ok()) {
      evidence["refused"] =
          "the reproducer's claim: " + claim.status().message();
    } else {
      evidence["reproducer"] = FromJsonDoc(agents::ToJson(*claim));
      if (claim->case_id) {  // A case id: never a path (claims.h).
        ASSIGN_OR_RETURN(case_sha, ClaimedCase(ctx, "reproducer",
                                               *claim->case_id, evidence));
        fields.case_sha256 = case_sha;
      }
    }
  }
  if (!case_sha) {
    evidence["reason"] = "no program to run could be made from the report";
    ASSIGN_OR_RETURN(Bug moved, Advance(ctx, *bug, BugState::kNotReproducible,
                                        evidence, fields));
    return evidence;
  }
  std::vector<hlo_diff::Verdict> verdicts;
  for (int i = 0; i < ctx.config->reproduce_runs; ++i) {
    ASSIGN_OR_RETURN(std::string scratch,
                     ctx.Scratch(job.id, "run" + std::to_string(i)));
    ASSIGN_OR_RETURN(hlo_diff::Verdict v,
                     RunVerdict(ctx, *case_sha, bin, scratch));
    verdicts.push_back(std::move(v));
  }
  return JudgeReproduction(ctx, *bug, *case_sha, commit, verdicts,
                           std::move(evidence), std::move(fields));
}

StatusOr<Json> JudgeReproduction(StepContext& ctx, const Bug& bug,
                                 const std::string& case_sha,
                                 const std::string& commit,
                                 const std::vector<hlo_diff::Verdict>& verdicts,
                                 Json evidence, TransitionFields fields) {
  if (verdicts.empty()) return InvalidArgument("a reproduction needs runs");
  Json statuses = Json::MakeArray();
  int failures = 0;
  std::optional<hlo_diff::Verdict> last_failure;
  for (const hlo_diff::Verdict& v : verdicts) {
    statuses.push_back(v.status_name());
    if (hlo_diff::IsFailure(v.status)) {
      ++failures;
      last_failure = v;
    }
    RETURN_IF_ERROR(
        ctx.store->AddRun(case_sha, bug.id, commit, v.ToJson(), 0).status());
  }
  const int runs = static_cast<int>(verdicts.size());
  evidence["event"] = "reproduced";
  evidence["commit"] = commit;
  evidence["runs"] = runs;
  evidence["failures"] = failures;
  evidence["statuses"] = std::move(statuses);
  Json d = DetailsWith(bug, "commit", commit);
  Json reproduction = Json::MakeObject();
  reproduction["case"] = case_sha;
  reproduction["runs"] = runs;
  reproduction["failures"] = failures;
  reproduction["rate"] = static_cast<double>(failures) / runs;
  if (last_failure) {
    // The error maps stay with the runs (a bug's details are read with
    // every bug list page): the details keep the verdict without them.
    hlo_diff::Verdict shown = *last_failure;
    shown.error_maps.clear();
    reproduction["verdict"] = shown.ToJson();
  } else {
    reproduction["verdict"] = Json();
  }
  d["reproduction"] = reproduction;
  if (last_failure) d["status"] = last_failure->status_name();
  fields.details = d;
  BugState to = BugState::kReproduced;
  if (failures == 0) {
    to = BugState::kNotReproducible;
  } else if (failures < runs) {
    to = BugState::kFlaky;
    fields.flaky_rate = static_cast<double>(failures) / runs;
  }
  // A report of a known bug: its failure's signature names that bug. (A
  // fuzz finding was deduplicated when it was filed, by hlo-fuzz's finer
  // signature, which a coarse match must not undo.)
  const Json* source = bug.details.Find("source");
  const bool report =
      !source || !source->is_string() || source->string_value() != "fuzz";
  if (report && last_failure && !last_failure->signature.sig.empty() &&
      !ReopenedFromDuplicate(bug)) {
    ASSIGN_OR_RETURN(
        std::optional<Bug> known,
        KnownBugOfReproduction(ctx, bug, last_failure->signature.sig, commit));
    if (known) {
      to = BugState::kDuplicate;
      fields.flaky_rate.reset();
      fields.duplicate_of = known->id;
      evidence["duplicate_of"] = known->id;
      evidence["signature"] = last_failure->signature.ToJson();
      if (!IsOpen(known->state)) evidence["fixed_later"] = true;
    }
  }
  ASSIGN_OR_RETURN(Bug moved, Advance(ctx, bug, to, evidence, fields));
  if (to == BugState::kDuplicate) {
    spdlog::info("reproduced: bug {} duplicates bug {}", moved.id,
                 *fields.duplicate_of);
  } else {
    spdlog::info("reproduced: bug {} is {} ({}/{} runs fail)", moved.id,
                 BugStateName(to), failures, runs);
  }
  return evidence;
}

StatusOr<Json> RunMinimizeStep(StepContext& ctx, const Job& job) {
  ASSIGN_OR_RETURN(
      std::optional<Bug> bug,
      BugForStep(ctx, job, {BugState::kReproduced, BugState::kFlaky}));
  if (!bug) return Json::MakeObject();
  ASSIGN_OR_RETURN(std::string case_sha, ReproCaseOf(*bug, false));
  ASSIGN_OR_RETURN(std::string commit, FoundCommitOf(ctx, *bug));
  ASSIGN_OR_RETURN(std::string bin, BinDirOf(ctx, commit));
  ASSIGN_OR_RETURN(std::string scratch, ctx.Scratch(job.id, "reduce"));
  // The minimizer (a brain driving hlo-reduce through its tool) proposes;
  // the orchestrator checks the result below.
  ASSIGN_OR_RETURN(auto tools,
                   agents::SandboxToolBox::Create(
                       "minimizer", ToolContextFor(ctx, bin, scratch, commit)));
  Json task = Json::MakeObject();
  task["bug"] = bug->id;
  task["case"] = case_sha;
  task["seconds"] = static_cast<int64_t>(ctx.config->reduce_seconds);
  ASSIGN_OR_RETURN(Json raw, RunAgent(ctx, "minimizer", bug->id, task, *tools));
  StatusOr<agents::MinimizerClaim> claim =
      agents::ParseMinimizerClaim(ToJsonDoc(raw));
  std::string minimized = case_sha;
  // The orchestrator's own check: the minimized case fails the same way.
  // A claim that does not hold is refused; the original case goes on.
  Json evidence = Json::MakeObject();
  if (!claim.ok()) {
    evidence["refused"] = "the minimizer's claim: " + claim.status().message();
  } else if (claim->case_id && *claim->case_id != case_sha) {
    // Recorded in the store (the tool stored it content-addressed).
    ASSIGN_OR_RETURN(std::optional<std::string> claimed,
                     ClaimedCase(ctx, "minimizer", *claim->case_id, evidence));
    if (claimed) minimized = *claimed;
  }
  ASSIGN_OR_RETURN(std::string check, ctx.Scratch(job.id, "check"));
  ASSIGN_OR_RETURN(hlo_diff::Verdict v, RunVerdict(ctx, minimized, bin, check));
  const Json* want = bug->details.Find("status");
  if (minimized != case_sha && (!hlo_diff::IsFailure(v.status) ||
                                (want && want->is_string() &&
                                 v.status_name() != want->string_value()))) {
    evidence["refused"] = "the minimizer's case " + minimized.substr(0, 12) +
                          " does not fail the same way (" + v.status_name() +
                          ")";
    minimized = case_sha;
  }
  evidence["event"] = "minimized";
  evidence["from"] = case_sha;
  evidence["to"] = minimized;
  evidence["check"] = v.status_name();
  Json minimization = Json::MakeObject();
  if (claim.ok()) {
    minimization = FromJsonDoc(agents::ToJson(*claim));
    evidence["claim"] = minimization;
  }
  TransitionFields f;
  f.minimized_sha256 = minimized;
  if (StatusOr<hlo_diff::Case> c = hlo_diff::ReadCase(CaseDir(ctx, minimized));
      c.ok()) {
    minimization["module"] = c->module_text;
  }
  f.details = DetailsWith(*bug, "minimization", minimization);
  ASSIGN_OR_RETURN(Bug moved,
                   Advance(ctx, *bug, BugState::kMinimized, evidence, f));
  spdlog::info("minimized: bug {} -> case {}", moved.id,
               minimized.substr(0, 12));
  return evidence;
}

StatusOr<Json> RunLocalizeStep(StepContext& ctx, const Job& job) {
  ASSIGN_OR_RETURN(std::optional<Bug> bug,
                   BugForStep(ctx, job, {BugState::kMinimized}));
  if (!bug) return Json::MakeObject();
  ASSIGN_OR_RETURN(std::string case_sha, ReproCaseOf(*bug, true));
  ASSIGN_OR_RETURN(std::string commit, FoundCommitOf(ctx, *bug));
  ASSIGN_OR_RETURN(std::string bin, BinDirOf(ctx, commit));
  ASSIGN_OR_RETURN(std::string scratch, ctx.Scratch(job.id, "localize"));
  std::vector<std::string> argv = {"hlo-bisect", CaseDir(ctx, case_sha),
                                   "--json"};
  for (std::string& f : TargetFlagsFor(bin)) argv.push_back(std::move(f));
  ASSIGN_OR_RETURN(
      sandbox::Result r,
      ctx.RunTool(argv, scratch, ctx.config->step_timeout_seconds));
  // The report is kept as the tool printed it (details.localization); the
  // record checks it and gives the refined signature.
  ASSIGN_OR_RETURN(Json report, ToolJson("hlo-bisect", r));
  ASSIGN_OR_RETURN(hlo_bisect::LocalizationReport loc, ToolLocalization(r));
  const Json sig = FromJsonDoc(ToJson(loc.signature));
  const std::string signature = "sig:" + loc.signature.sig;
  Json evidence = Json::MakeObject();
  evidence["event"] = "localized";
  evidence["signature"] = sig;
  // Dedup: an older open bug with the same refined signature has the same
  // cause; this one becomes its duplicate.
  ASSIGN_OR_RETURN(std::optional<Bug> same,
                   ctx.store->FindOpenBugBySignature(signature));
  TransitionFields f;
  f.signature = signature;
  f.details = DetailsWith(*bug, "localization", report);
  if (same && same->id < bug->id && !ReopenedFromDuplicate(*bug)) {
    f.duplicate_of = same->id;
    evidence["duplicate_of"] = same->id;
    ASSIGN_OR_RETURN(Bug moved,
                     Advance(ctx, *bug, BugState::kDuplicate, evidence, f));
    spdlog::info("localized: bug {} duplicates bug {}", moved.id, same->id);
    return evidence;
  }
  ASSIGN_OR_RETURN(Bug moved,
                   Advance(ctx, *bug, BugState::kLocalized, evidence, f));
  // The stress-test author looks for relatives in the bug's area.
  Json payload = Json::MakeObject();
  payload["bug"] = moved.id;
  JobOptions o = StepJobOptions();
  o.dedup_key = BugJobKey(moved.id, "stress");
  o.priority = -1;  // After the bug's own pipeline steps.
  RETURN_IF_ERROR(ctx.queue->Enqueue("stress", payload, o).status());
  spdlog::info("localized: bug {} ({})", moved.id, sig.Dump());
  return evidence;
}

StatusOr<Json> RunBisectStep(StepContext& ctx, const Job& job) {
  ASSIGN_OR_RETURN(std::optional<Bug> bug,
                   BugForStep(ctx, job, {BugState::kLocalized}));
  if (!bug) return Json::MakeObject();
  ASSIGN_OR_RETURN(std::string case_sha, ReproCaseOf(*bug, true));
  ASSIGN_OR_RETURN(std::string bad, FoundCommitOf(ctx, *bug));
  ASSIGN_OR_RETURN(std::string good, KnownGoodCommit(ctx));
  if (good.empty() || good == bad) {
    return FailedPrecondition("bug " + std::to_string(bug->id) +
                              ": no known-good commit before " +
                              bad.substr(0, 12) + " to bisect from");
  }
  std::vector<std::string> argv = {
      ctx.Tool("hlo-bisect"),
      "commits",
      CaseDir(ctx, case_sha),
      "--repo",
      ctx.paths->mirror,
      "--good",
      good,
      "--bad",
      bad,
      "--work",
      ctx.paths->worktree,
      "--cache",
      ctx.paths->build_cache,
      "--out",
      ctx.paths->build_out,
      "--timeout",
      std::to_string(ctx.config->build_timeout_seconds),
      "--json"};
  if (!ctx.config->build_command.empty()) {
    argv.insert(argv.end(), {"--build-cmd", ctx.config->build_command});
  }
  // A bug localized to a pass of the pipeline: commits whose target cannot
  // run the case (an SPMD case before the slice) are judged by that pass's
  // output instead of skipped.
  if (std::optional<std::string> pass = PipelinePassOf(*bug)) {
    argv.insert(argv.end(), {"--pass", *pass});
  }
  // The cache is only read: the bisection's own builds stay staged in the
  // work dir for this run (they share one sandbox, so one of them could
  // write another's entry) and are not installed.
  ASSIGN_OR_RETURN(
      BuilderRun run,
      PrepareBuilderRun(ctx, argv, ctx.config->build_timeout_seconds * 4));
  StatusOr<sandbox::Result> ran = ctx.Run(run.options);
  ReclaimBuilderSpace(ctx);
  ASSIGN_OR_RETURN(sandbox::Result r, std::move(ran));
  ASSIGN_OR_RETURN(Json report, ToolJson("hlo-bisect commits", r));
  return JudgeCulprit(ctx, *bug, report);
}

}  // namespace trench::orchestrator
