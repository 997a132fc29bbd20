// The patch steps: draft (the patch drafter's brain proposes candidates,
// each tried on a build), verify (the orchestrator's own checks), propose
// (the branch trench/bug-<id> in the target repository).
#include <spdlog/spdlog.h>

#include <filesystem>

#include "agents/claims.h"
#include "agents/sandbox_toolbox.h"
#include "base/json_nlohmann.h"
#include "git/patch_apply.h"
#include "orchestrator/pipeline/agent_sessions.h"
#include "orchestrator/pipeline/commit_tools.h"
#include "orchestrator/pipeline/draft_coverage.h"
#include "orchestrator/pipeline/root_cause.h"
#include "orchestrator/pipeline/step_util.h"
#include "orchestrator/pipeline/triage_report.h"
#include "orchestrator/pipeline/triage_verbs.h"
#include "orchestrator/store/records_json.h"
#include "triage/localize/localization_report.h"

namespace trench::orchestrator {
namespace fs = std::filesystem;

namespace {

int64_t IntOr(const Json& j, const char* key, int64_t fallback) {
  const Json* v = j.Find(key);
  return v && v->is_integer() ? v->int64_value() : fallback;
}

std::string StringOr(const Json& j, const char* key) {
  const Json* v = j.Find(key);
  return v && v->is_string() ? v->string_value() : std::string();
}

// Builds `base` + `diff` (a candidate commit in the mirror) and returns
// its bin dir, or the reason it does not apply or build.
struct PatchedBuild {
  bool applies = false, built = false;
  std::string bin_dir, message;
};

StatusOr<PatchedBuild> BuildPatched(StepContext& ctx, int64_t bug_id,
                                    const std::string& base,
                                    const std::string& diff) {
  PatchedBuild pb;
  const std::string hash = PatchHash(diff);
  if (StatusOr<std::string> bin = BinDirOf(ctx, base, hash); bin.ok()) {
    pb.applies = pb.built = true;
    pb.bin_dir = *bin;
    return pb;
  }
  ASSIGN_OR_RETURN(auto mirror, hlo_bisect::GitRepo::Open(ctx.paths->mirror));
  StatusOr<std::string> commit = agents::ApplyPatchOnto(
      *mirror, base, diff,
      "trench: candidate patch for bug " + std::to_string(bug_id),
      "refs/heads/trench/candidate-" + std::to_string(bug_id) + "-" + hash);
  if (!commit.ok()) {
    pb.message = commit.status().message();
    return pb;
  }
  pb.applies = true;
  ASSIGN_OR_RETURN(Json b, BuildCommit(ctx, *commit, base, hash));
  const Json* built = b.Find("built");
  pb.built = built && built->is_bool() && built->bool_value();
  if (!pb.built) {
    pb.message = "does not build: " + StringOr(b, "reason") + "\n" +
                 StringOr(b, "log_tail");
    return pb;
  }
  ASSIGN_OR_RETURN(pb.bin_dir, BinDirOf(ctx, base, hash));
  return pb;
}

// try_patch for the drafter: apply on head, build, re-run the repro.
StatusOr<Json> TryPatch(StepContext& ctx, const Bug& bug,
                        const std::string& head, int64_t job_id,
                        const Json& args) {
  const std::string diff = StringOr(args, "diff");
  ASSIGN_OR_RETURN(PatchedBuild pb, BuildPatched(ctx, bug.id, head, diff));
  Json out = Json::MakeObject();
  out["applies"] = pb.applies;
  out["built"] = pb.built;
  out["repro_status"] = nullptr;
  out["message"] = pb.message;
  if (!pb.built) return out;
  ASSIGN_OR_RETURN(std::string case_sha, ReproCaseOf(bug, true));
  ASSIGN_OR_RETURN(std::string scratch, ctx.Scratch(job_id, "try"));
  ASSIGN_OR_RETURN(hlo_diff::Verdict v,
                   RunVerdict(ctx, case_sha, pb.bin_dir, scratch));
  out["repro_status"] = v.status_name();
  out["message"] =
      v.status == hlo_diff::VerdictStatus::kPass
          ? "the repro passes with this patch"
          : std::string("the repro still fails: ") + v.status_name();
  return out;
}

// Records the end of a drafting round that gave nothing: after
// max_draft_rounds the bug waits for a human.
Status GiveUpRound(StepContext& ctx, const Bug& bug, const std::string& why) {
  Json d = bug.details;
  const int64_t rounds = IntOr(d, "draft_rounds", 0) + 1;
  d["draft_rounds"] = rounds;
  d["last_draft_failure"] = why;
  if (rounds >= ctx.config->max_draft_rounds) d["needs_human"] = true;
  return ctx.store->SetBugDetails(bug.id, d);
}

}  // namespace

StatusOr<Json> DrafterTask(StepContext& ctx, const Bug& bug,
                           const std::string& head, const std::string& found_at,
                           const std::string& scratch) {
  Json task = Json::MakeObject();
  task["bug"] = bug.id;
  ASSIGN_OR_RETURN(task["case"], ReproCaseOf(bug, true));
  if (const Json* l = bug.details.Find("localization")) {
    task["localization"] = *l;
  }
  // The culprit's files, as the target describes them at the commit the
  // bug was found on (without a description: none, and the drafter goes by
  // file names).
  if (const std::optional<hlo_bisect::LocalizationReport> loc =
          BugLocalization(bug);
      loc && loc->signature.pass) {
    StatusOr<hlo_diff::TargetDescription> target =
        TargetOfBuild(ctx, found_at, scratch);
    if (!target.ok()) return target.status();
    const std::vector<std::string> sources =
        target->SourcesOf(*loc->signature.pass);
    if (!sources.empty()) {
      task["culprit_sources"] = Json::MakeArray();
      for (const std::string& g : sources) task["culprit_sources"].push_back(g);
    }
  }
  Json culprit = Json::MakeObject();
  culprit["sha"] = bug.culprit_commit.value_or("");
  if (const Json* b = bug.details.Find("culprit")) {
    if (const Json* c = b->Find("culprit"))
      culprit["summary"] = StringOr(*c, "summary");
  }
  task["culprit"] = culprit;
  task["head"] = head;
  // The reviewers' guidance for this round (triage_verbs.h): every hint
  // of a redraft or a rejection, oldest first.
  if (const std::vector<std::string> hints = DraftHintsOf(bug);
      !hints.empty()) {
    task["hints"] = Json::MakeArray();
    for (const std::string& h : hints) task["hints"].push_back(h);
  }
  return task;
}

StatusOr<Json> RunDraftStep(StepContext& ctx, const Job& job) {
  ASSIGN_OR_RETURN(
      std::optional<Bug> found,
      BugForStep(ctx, job, {BugState::kCulpritFound, BugState::kRejected}));
  if (!found) return Json::MakeObject();
  Bug bug = *found;
  if (bug.state == BugState::kRejected) {
    Json evidence = Json::MakeObject();
    evidence["event"] = "reviewed";
    evidence["reason"] = "the proposed patch was rejected: drafting again";
    ASSIGN_OR_RETURN(bug,
                     ctx.store->TransitionBug(bug.id, BugState::kCulpritFound,
                                              ctx.worker, evidence));
  }
  ASSIGN_OR_RETURN(std::optional<std::string> head,
                   ctx.store->GetMeta("head.built"));
  if (!head) return FailedPrecondition("no built head to patch");
  ASSIGN_OR_RETURN(std::string found_at, FoundCommitOf(ctx, bug));
  ASSIGN_OR_RETURN(std::string bin, BinDirOf(ctx, found_at));
  ASSIGN_OR_RETURN(std::string scratch, ctx.Scratch(job.id, "draft"));
  ASSIGN_OR_RETURN(std::vector<Patch> earlier, ctx.store->ListPatches(bug.id));

  // What submit_patch accepted (the tool's arguments, schema-checked).
  std::vector<agents::DrafterClaim::Candidate> candidates;
  ASSIGN_OR_RETURN(Json task, DrafterTask(ctx, bug, *head, found_at, scratch));
  ASSIGN_OR_RETURN(auto mirror, hlo_bisect::GitRepo::Open(ctx.paths->mirror));
  const std::string culprit = bug.culprit_commit.value_or("");
  agents::ToolContext tc = ToolContextFor(ctx, bin, scratch, *head);
  tc.try_patch = [&](const Json& args) {
    return TryPatch(ctx, bug, *head, job.id, args);
  };
  tc.submit_patch = [&](const Json& args) -> StatusOr<Json> {
    const std::string diff = StringOr(args, "diff");
    for (const Patch& p : earlier) {
      if (p.diff == diff && p.verification.Find("rejected")) {
        return FailedPrecondition("this patch was rejected by a reviewer");
      }
    }
    agents::DrafterClaim::Candidate c;
    c.candidate = static_cast<int64_t>(candidates.size()) + 1;
    c.strategy = StringOr(args, "strategy");
    c.diff = diff;
    c.rationale = StringOr(args, "rationale");
    // The drafter hears at once when its candidate is a partial revert
    // (draft_coverage.h), so that it may submit one that covers more.
    const DraftChoice judged =
        ChooseDraft(*mirror, culprit, task, {{c.candidate, c.strategy, diff}});
    candidates.push_back(std::move(c));
    Json out = Json::MakeObject();
    out["candidate"] = static_cast<int64_t>(candidates.size());
    if (!judged.coverage.empty() && judged.coverage[0].partial()) {
      out["warning"] = judged.coverage[0].Reason() +
                       "; a candidate that also covers the localized pass is "
                       "preferred";
    }
    return out;
  };
  ASSIGN_OR_RETURN(auto tools,
                   agents::SandboxToolBox::Create("patch_drafter", tc));
  const std::vector<std::string> hints = DraftHintsOf(bug);
  ASSIGN_OR_RETURN(Json raw,
                   RunAgent(ctx, "patch_drafter", bug.id, task, *tools));
  if (candidates.empty()) {
    // Only the claim's reason is read: the candidates are what
    // submit_patch accepted, not what the claim lists.
    StatusOr<agents::DrafterClaim> claim =
        agents::ParseDrafterClaim(ToJsonDoc(raw));
    const std::string why =
        "the drafter found no patch that makes the "
        "repro pass: " +
        (claim.ok()
             ? claim->reason.value_or("")
             : "(its claim is refused: " + claim.status().message() + ")");
    RETURN_IF_ERROR(GiveUpRound(ctx, bug, why));
    // A finished round (the reconciler starts the next one, up to
    // max_draft_rounds), not a failed job.
    Json out = Json::MakeObject();
    out["candidates"] = 0;
    out["reason"] = why;
    spdlog::warn("patch_drafter: bug {}: {}", bug.id, why);
    return out;
  }
  // The candidate that covers the localized pass, the smallest diff among
  // equals (draft_coverage.h).
  std::vector<DraftCandidate> drafted;
  for (const agents::DrafterClaim::Candidate& c : candidates) {
    drafted.push_back({c.candidate, c.strategy, c.diff});
  }
  const DraftChoice choice = ChooseDraft(*mirror, culprit, task, drafted);
  const Json coverage = choice.DetailsJson(drafted);
  const agents::DrafterClaim::Candidate& best = candidates[choice.best];
  const std::string& diff = best.diff;
  const std::string branch = "trench/bug-" + std::to_string(bug.id);
  int64_t patch_id = 0;
  for (const Patch& p : earlier) {  // A re-run after a crash.
    if (p.diff == diff && !p.verification.Find("rejected")) patch_id = p.id;
  }
  if (patch_id == 0) {
    ASSIGN_OR_RETURN(patch_id, ctx.store->AddPatch(bug.id, branch, diff));
  }
  // The same fix for the same culprit as another open bug: one root
  // cause, so this bug is that one's duplicate (root_cause.h). Held to the
  // move, so that a bug drafting now sees this one's outcome.
  const std::unique_lock<std::mutex> judging = HoldRootCauseJudgement();
  ASSIGN_OR_RETURN(std::optional<SameRootCause> same,
                   SameCulpritAndDraft(ctx, bug, diff, best.strategy));
  if (same) {
    Json evidence = Json::MakeObject();
    evidence["event"] = "patch_drafted";
    evidence["patch"] = patch_id;
    return MarkDuplicate(ctx, bug, *same, std::move(evidence), {});
  }
  Json evidence = Json::MakeObject();
  evidence["event"] = "patch_drafted";
  evidence["patch"] = patch_id;
  evidence["strategy"] = best.strategy;
  evidence["candidates"] = static_cast<int64_t>(candidates.size());
  evidence["coverage"] = *coverage.Find("coverage");
  // The drafting round it came from (1 for the first), for the bug page.
  evidence["round"] = IntOr(bug.details, "draft_rounds", 0) + 1;
  Json draft = Json::MakeObject();
  draft["base"] = *head;
  draft["patch"] = patch_id;
  draft["strategy"] = best.strategy;
  draft["rationale"] = best.rationale.value_or("");
  draft["hints"] = static_cast<int64_t>(hints.size());
  draft["coverage"] = *coverage.Find("coverage");
  draft["passed_over"] = *coverage.Find("passed_over");
  TransitionFields f;
  f.details = DetailsWith(bug, "draft", draft);
  ASSIGN_OR_RETURN(Bug moved,
                   Advance(ctx, bug, BugState::kPatchDrafted, evidence, f));
  spdlog::info("patch_drafted: bug {} patch {} ({})", moved.id, patch_id,
               best.strategy);
  if (!choice.coverage.empty() && choice.coverage[choice.best].partial()) {
    spdlog::warn("patch_drafted: bug {} patch {}: {}", moved.id, patch_id,
                 choice.coverage[choice.best].Reason());
  }
  return evidence;
}

namespace {

// The case directories under `dir`: itself, its children, or its
// grandchildren (e.g. tests/bugzoo/<bug>/witness).
std::vector<std::string> RegressionCases(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (fs::exists(fs::path(dir) / "case.json", ec)) return {dir};
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_directory()) continue;
    if (fs::exists(e.path() / "case.json", ec)) {
      out.push_back(e.path().string());
      continue;
    }
    for (const auto& g : fs::directory_iterator(e.path(), ec)) {
      if (g.is_directory() && fs::exists(g.path() / "case.json", ec)) {
        out.push_back(g.path().string());
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The orchestrator's checks of a drafted patch; fills `report`, returns
// whether every check passed.
StatusOr<bool> CheckPatch(StepContext& ctx, const Job& job, const Bug& bug,
                          const Patch& patch, const std::string& base,
                          Json& report) {
  ASSIGN_OR_RETURN(PatchedBuild pb,
                   BuildPatched(ctx, bug.id, base, patch.diff));
  report["base"] = base;
  report["applies"] = pb.applies;
  report["built"] = pb.built;
  if (!pb.built) {
    report["reason"] = pb.message;
    return false;
  }
  ASSIGN_OR_RETURN(std::string case_sha, ReproCaseOf(bug, true));
  ASSIGN_OR_RETURN(std::string scratch, ctx.Scratch(job.id, "repro"));
  ASSIGN_OR_RETURN(hlo_diff::Verdict v,
                   RunVerdict(ctx, case_sha, pb.bin_dir, scratch));
  report["repro"] = v.status_name();
  if (v.status != hlo_diff::VerdictStatus::kPass) {
    report["reason"] = std::string("the repro still fails: ") + v.status_name();
    return false;
  }
  Json regressions = Json::MakeArray();
  Json gated_by = Json::MakeArray();  // Every case checked, for reviewers.
  int n = 0;
  for (const std::string& dir : ctx.config->regression) {
    for (const std::string& c : RegressionCases(dir)) {
      gated_by.push_back(c);
      ASSIGN_OR_RETURN(std::string s,
                       ctx.Scratch(job.id, "reg" + std::to_string(n++)));
      std::vector<std::string> argv = {"hlo-diff", c};
      for (std::string& f : TargetFlagsFor(pb.bin_dir)) argv.push_back(f);
      ASSIGN_OR_RETURN(sandbox::Result r,
                       ctx.RunTool(argv, s, ctx.config->step_timeout_seconds));
      ASSIGN_OR_RETURN(hlo_diff::Verdict rv, ToolVerdict(r));
      if (hlo_diff::IsFailure(rv.status)) {
        Json bad = Json::MakeObject();
        bad["case"] = c;
        bad["status"] = rv.status_name();
        regressions.push_back(bad);
      }
    }
  }
  report["regression_cases"] = n;
  report["regression_set"] = gated_by;
  report["regressions"] = regressions;
  if (regressions.size() > 0) {
    report["reason"] = "regression cases fail with the patch";
    return false;
  }
  // A short fuzz run of the patched build, focused on the culprit pass.
  std::vector<std::string> focus;
  const std::optional<hlo_bisect::LocalizationReport> loc =
      BugLocalization(bug);
  const std::string pass =
      loc ? loc->signature.pass.value_or("") : std::string();
  if (hlo_bisect::IsPassCulprit(pass)) focus = {"--focus", "passes:" + pass};
  StatusOr<Json> fuzz = FuzzBuild(ctx, job.id, pb.bin_dir,
                                  ctx.config->verify_fuzz_seconds, focus);
  if (!fuzz.ok() && !focus.empty()) {
    fuzz =
        FuzzBuild(ctx, job.id, pb.bin_dir, ctx.config->verify_fuzz_seconds, {});
  }
  if (!fuzz.ok()) return fuzz.status();
  Json fresh = Json::MakeArray();
  if (const Json* fs_ = fuzz->Find("findings"); fs_ && fs_->is_array()) {
    for (const Json& f : fs_->array()) {
      const std::string s = "sig:" + StringOr(f, "sig");
      ASSIGN_OR_RETURN(std::optional<Bug> known,
                       ctx.store->FindOpenBugBySignature(s));
      if (!known) fresh.push_back(f);
    }
  }
  report["fuzz_programs"] =
      fuzz->Find("programs") ? *fuzz->Find("programs") : Json(0);
  report["fuzz_focus"] = pass;
  report["new_findings"] = fresh;
  if (fresh.size() > 0) {
    report["reason"] = "focused fuzzing of the patched build finds new bugs";
    return false;
  }
  return true;
}

StatusOr<Patch> LatestPatch(StepContext& ctx, const Bug& bug) {
  ASSIGN_OR_RETURN(std::vector<Patch> patches, ctx.store->ListPatches(bug.id));
  const Json* draft = bug.details.Find("draft");
  const int64_t id = draft ? IntOr(*draft, "patch", 0) : 0;
  for (const Patch& p : patches) {
    if (p.id == id) return p;
  }
  return FailedPrecondition("bug " + std::to_string(bug.id) +
                            ": its drafted patch is not stored");
}

}  // namespace

StatusOr<Json> RunVerifyStep(StepContext& ctx, const Job& job) {
  ASSIGN_OR_RETURN(std::optional<Bug> bug,
                   BugForStep(ctx, job, {BugState::kPatchDrafted}));
  if (!bug) return Json::MakeObject();
  ASSIGN_OR_RETURN(Patch patch, LatestPatch(ctx, *bug));
  const std::string base = StringOr(*bug->details.Find("draft"), "base");
  Json report = Json::MakeObject();
  ASSIGN_OR_RETURN(bool ok, CheckPatch(ctx, job, *bug, patch, base, report));
  RETURN_IF_ERROR(ctx.store->SetPatchVerified(patch.id, ok, report));
  Json evidence = report;
  evidence["event"] = "patch_verified";
  evidence["patch"] = patch.id;
  evidence["verified"] = ok;
  if (ok) {
    ASSIGN_OR_RETURN(
        Bug moved, Advance(ctx, *bug, BugState::kPatchVerified, evidence, {}));
    spdlog::info("patch_verified: bug {} patch {}", moved.id, patch.id);
    return evidence;
  }
  // Back to the drafter, with the reason in the event row.
  TransitionFields f;
  Json d = bug->details;
  const int64_t rounds = IntOr(d, "draft_rounds", 0) + 1;
  d["draft_rounds"] = rounds;
  d["last_draft_failure"] = StringOr(report, "reason");
  if (rounds >= ctx.config->max_draft_rounds) d["needs_human"] = true;
  f.details = d;
  ASSIGN_OR_RETURN(Bug moved,
                   Advance(ctx, *bug, BugState::kCulpritFound, evidence, f));
  spdlog::warn("patch_verified: bug {} patch {} fails: {}", moved.id, patch.id,
               StringOr(report, "reason"));
  return evidence;
}

StatusOr<Json> RunProposeStep(StepContext& ctx, const Job& job) {
  ASSIGN_OR_RETURN(std::optional<Bug> bug,
                   BugForStep(ctx, job, {BugState::kPatchVerified}));
  if (!bug) return Json::MakeObject();
  ASSIGN_OR_RETURN(Patch patch, LatestPatch(ctx, *bug));
  const std::string base = StringOr(*bug->details.Find("draft"), "base");
  // The commit message is the triage report.
  Json full = Json::MakeObject();
  full["bug"] = BugToJson(*bug);
  Json events = Json::MakeArray();
  ASSIGN_OR_RETURN(std::vector<Event> rows,
                   ctx.store->ListEvents(bug->id, 0, 1000));
  for (const Event& e : rows) events.push_back(EventToJson(e));
  full["events"] = events;
  Json patches = Json::MakeArray();
  patches.push_back(PatchToJson(patch));
  full["patches"] = patches;
  ASSIGN_OR_RETURN(std::string report, BugReportText(full));
  const std::string message =
      ProposalCommitMessage(bug->id, bug->title, report);
  ASSIGN_OR_RETURN(auto repo, hlo_bisect::GitRepo::Open(ctx.config->repo));
  const std::string ref = "refs/heads/" + patch.branch;
  ASSIGN_OR_RETURN(std::string commit,
                   agents::ApplyPatchOnto(*repo, base, patch.diff, message, ref,
                                          "refs/heads/" + ctx.config->branch));
  Json evidence = Json::MakeObject();
  evidence["event"] = "proposed";
  evidence["branch"] = patch.branch;
  evidence["commit"] = commit;
  TransitionFields f;
  f.details = DetailsWith(*bug, "proposal", evidence);
  ASSIGN_OR_RETURN(Bug moved,
                   Advance(ctx, *bug, BugState::kProposed, evidence, f));
  spdlog::info("proposed: bug {} on branch {} ({})", moved.id, patch.branch,
               commit.substr(0, 12));
  return evidence;
}

}  // namespace trench::orchestrator
