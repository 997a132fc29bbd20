// The commit steps: build a landed commit, fuzz it, and check whether it
// fixes open bugs.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/json_nlohmann.h"
#include "base/log_context.h"
#include "git/git_repo.h"
#include "git/mirror.h"
#include "git/patch_apply.h"
#include "orchestrator/pipeline/agent_sessions.h"
#include "orchestrator/pipeline/commit_reach.h"
#include "orchestrator/pipeline/commit_tools.h"
#include "orchestrator/pipeline/step_util.h"

namespace trench::orchestrator {

Status AdvanceBuiltHead(StepContext& ctx, const std::string& sha) {
  static std::mutex mu;  // The check and the write are one step.
  std::lock_guard<std::mutex> lock(mu);
  ASSIGN_OR_RETURN(std::optional<std::string> current,
                   ctx.store->GetMeta("head.built"));
  if (current && !current->empty() && *current != sha) {
    ASSIGN_OR_RETURN(auto mirror, hlo_bisect::GitRepo::Open(ctx.paths->mirror));
    StatusOr<bool> newer = mirror->Contains(sha, *current);
    if (newer.ok() && !*newer) {
      spdlog::info("build_ready: {} stays behind the built head {}",
                   sha.substr(0, 12), current->substr(0, 12));
      return Status::Ok();
    }
  }
  return ctx.store->SetMeta("head.built", sha);
}

StatusOr<Json> RunBuildStep(StepContext& ctx, const Job& job) {
  ASSIGN_OR_RETURN(std::string sha, PayloadString(job, "commit"));
  RETURN_IF_ERROR(SyncMirror(ctx.config->repo, ctx.paths->mirror));
  ASSIGN_OR_RETURN(Json b, BuildCommit(ctx, sha, sha, ""));
  const Json* built = b.Find("built");
  const bool ok = built && built->is_bool() && built->bool_value();
  // Once per commit: a re-run after a crash finds the build cached and the
  // row there.
  Json evidence = Json::MakeObject();
  evidence["built"] = ok;
  if (const Json* reason = b.Find("reason"); reason && !ok) {
    evidence["reason"] = *reason;  // The log's tail is in the builds table.
  }
  RETURN_IF_ERROR(ctx.store
                      ->RecordCommitEvent(sha, CommitEventKind::kBuildReady,
                                          ctx.worker, evidence)
                      .status());
  // The build's own fields on its lines (the job's scope has the commit).
  Json build_fields = Json::MakeObject();
  build_fields["commit"] = sha;
  const Json* seconds = b.Find("seconds");
  build_fields["duration_ms"] = static_cast<int64_t>(
      seconds && seconds->is_number() ? seconds->number_value() * 1000 : 0);
  const Json* cached = b.Find("cached");
  build_fields["cache_hit"] =
      cached && cached->is_bool() && cached->bool_value();
  LogScope build_scope(build_fields);
  if (!ok) {
    spdlog::warn("build_ready: {} does not build", sha.substr(0, 12));
    return b;
  }
  spdlog::info("build_ready: {}", sha.substr(0, 12));
  // What the target says about itself at this commit is stored with the
  // build; the fuzz step aims at what the commit changed through it.
  ASSIGN_OR_RETURN(std::string scratch, ctx.Scratch(job.id, "describe"));
  if (StatusOr<hlo_diff::TargetDescription> target =
          TargetOfBuild(ctx, sha, scratch);
      !target.ok()) {
    spdlog::warn("build_ready: {}: the target's description: {}",
                 sha.substr(0, 12), target.status().message());
  }
  RETURN_IF_ERROR(AdvanceBuiltHead(ctx, sha));
  Json payload = Json::MakeObject();
  payload["commit"] = sha;
  for (const char* kind : {"check_fixes", "fuzz"}) {
    JobOptions o = StepJobOptions();
    o.dedup_key = std::string(kind) + ":" + sha;
    RETURN_IF_ERROR(ctx.queue->Enqueue(kind, payload, o).status());
  }
  return b;
}

namespace {

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

// The first-parent commits from the known-good commit (exclusive) to `head`,
// newest first, at most 16; {head} when there is no range.
std::vector<std::string> RecentCommits(StepContext& ctx,
                                       const hlo_bisect::GitRepo& repo,
                                       const std::string& head) {
  StatusOr<std::string> good = KnownGoodCommit(ctx);
  if (!good.ok() || good->empty()) return {head};
  StatusOr<std::vector<std::string>> range = repo.FirstParentRange(*good, head);
  if (!range.ok() || range->empty()) return {head};
  std::vector<std::string> out(range->rbegin(), range->rend());
  if (out.size() > 16) out.resize(16);
  return out;
}

}  // namespace

StatusOr<Json> RunFuzzStep(StepContext& ctx, const Job& job) {
  ASSIGN_OR_RETURN(std::string sha, PayloadString(job, "commit"));
  ASSIGN_OR_RETURN(std::string bin, BinDirOf(ctx, sha));
  // The budget is shared by campaigns aimed at what this commit changed
  // (the stress-test author's "recently changed passes"; for the code
  // generator, the opcodes of the changed emitters) and an unfocused one.
  // A continuous round (QueueIdleFuzz) of the head aims at what the
  // commits since the known-good base changed.
  // The files map to passes and ops through the target's description of
  // itself; a target that gives none gets the unfocused campaign alone.
  std::vector<std::string> commits = {sha};
  if (auto mirror = hlo_bisect::GitRepo::Open(ctx.paths->mirror);
      mirror.ok() && job.payload.Find("round")) {
    commits = RecentCommits(ctx, **mirror, sha);
  }
  ASSIGN_OR_RETURN(std::string described, ctx.Scratch(job.id, "describe"));
  ChangedArea area;
  if (StatusOr<ChangedArea> changed =
          ChangedAreaOfCommits(ctx, sha, commits, described);
      changed.ok()) {
    area = *std::move(changed);
  } else {
    spdlog::warn("fuzz {}: no focus: {}", sha.substr(0, 12),
                 changed.status().message());
  }
  // The campaigns aimed at the changed area are the stress-test author's
  // (its configured brain: the fuzzer with focus, or an LLM writing HLO);
  // the unfocused one is the fuzzer's alone. They share the budget evenly
  // per area named.
  // A change to large-array code alone (no pass or emitter of its own)
  // still gets an aimed campaign: of large programs.
  size_t aimed = (area.passes.empty() ? 0 : 1) + (area.ops.empty() ? 0 : 1);
  if (aimed == 0 && area.large_elements > 0) aimed = 1;
  const double share = ctx.config->fuzz_budget_seconds / (aimed + 1);
  Json filed = Json::MakeArray();
  Json out = Json::MakeObject();
  int64_t programs = 0;
  double seconds_run = 0;
  // The changed lines: the commit's own, or for a continuous round all
  // that landed since the known-good commit (in head's line numbers). The
  // unfocused campaign measures its reach on them when it runs on the
  // target's coverage flavour (hlo-fuzz --changed-lines; otherwise it only
  // notes that), and the author is told the diff and the lines not
  // reached. Only a commit's own campaign ends early once every line was
  // reached enough (a round keeps fuzzing).
  std::vector<std::string> campaign_flags;
  StatusOr<std::string> text =
      commits.size() == 1 ? CommitDiffText(ctx, sha) : RoundDiffText(ctx, sha);
  std::string diff;
  if (!text.ok()) {
    spdlog::warn("fuzz {}: no changed lines: {}", sha.substr(0, 12),
                 text.status().message());
  } else if (text->size() > kMaxReachDiffBytes) {
    spdlog::warn(
        "fuzz {}: no changed-line reach: the diff has {} bytes "
        "(more than {})",
        sha.substr(0, 12), text->size(), kMaxReachDiffBytes);
    out["reach_skipped"] = "the diff is larger than " +
                           std::to_string(kMaxReachDiffBytes) + " bytes";
  } else {
    diff = *std::move(text);
  }
  if (commits.size() == 1 && !diff.empty() &&
      ctx.config->fuzz_reach_stop_programs > 0) {
    campaign_flags = {"--reach-stop",
                      std::to_string(ctx.config->fuzz_reach_stop_programs)};
  }
  // A change to code that runs only on large arrays: a quarter of the
  // unfocused campaign's programs (half of the author's) are that large,
  // with the group's module attributes (as NAME=VALUE).
  std::vector<std::string> large_attributes;
  for (const auto& [k, v] : area.large_attributes) {
    large_attributes.push_back(k + "=" + v);
  }
  if (area.large_elements > 0) {
    campaign_flags.insert(campaign_flags.end(),
                          {"--large-share", "0.25", "--large-elements",
                           std::to_string(area.large_elements)});
    for (const std::string& a : large_attributes) {
      campaign_flags.insert(campaign_flags.end(), {"--large-attribute", a});
    }
  }
  // The unfocused campaign runs on the coverage flavour when there is one
  // (fuzz.coverage "auto"), else on the plain build (no reach then).
  std::string fuzz_bin = bin;
  if (!diff.empty() && ctx.config->fuzz_coverage == "auto") {
    ASSIGN_OR_RETURN(std::string scratch, ctx.Scratch(job.id, "coverage"));
    Json note;
    StatusOr<std::string> cov = CoverageBinOf(ctx, sha, scratch, &note);
    if (cov.ok()) {
      fuzz_bin = *cov;
    } else {
      spdlog::warn("fuzz {}: on the plain build: {}", sha.substr(0, 12),
                   cov.status().message());
    }
    out["coverage_build"] = std::move(note);
  }
  ASSIGN_OR_RETURN(Json summary, FuzzBuild(ctx, job.id, fuzz_bin, share,
                                           campaign_flags, diff));
  const Json* reach = summary.Find("reach");
  if (reach && reach->is_object()) out["reach"] = BriefReach(*reach);
  if (const Json* findings = summary.Find("findings");
      findings && findings->is_array()) {
    for (const Json& f : findings->array()) {
      // The bug keeps its campaign's reach (the triage report shows it).
      Json finding = f;
      if (reach && reach->is_object() && finding.is_object()) {
        finding["reach"] = BriefReach(*reach);
      }
      ASSIGN_OR_RETURN(Json one, FileFinding(ctx, sha, finding));
      filed.push_back(std::move(one));
    }
  }
  if (const Json* p = summary.Find("programs"); p && p->is_integer()) {
    programs += p->int64_value();
  }
  if (const Json* t = summary.Find("seconds"); t && t->is_number()) {
    seconds_run += t->number_value();
  }
  if (aimed > 0) {
    ASSIGN_OR_RETURN(std::string scratch, ctx.Scratch(job.id, "author"));
    ASSIGN_OR_RETURN(auto tools, agents::SandboxToolBox::Create(
                                     "stress_test_author",
                                     ToolContextFor(ctx, bin, scratch, sha)));
    Json task = Json::MakeObject();
    task["commit"] = sha;
    Json aim = Json::MakeObject();
    if (!area.passes.empty())
      aim["passes"] = Json::MakeStringArray(area.passes);
    if (!area.ops.empty()) aim["ops"] = Json::MakeStringArray(area.ops);
    if (area.large_elements > 0) {
      aim["large_elements"] = area.large_elements;
      if (!large_attributes.empty()) {
        aim["large_attributes"] = Json::MakeStringArray(large_attributes);
      }
    }
    task["area"] = std::move(aim);
    task["seconds"] = std::max<int64_t>(
        1, static_cast<int64_t>(share * static_cast<double>(aimed)));
    task["seed"] = (ctx.config->fuzz_seed + job.id) % 4294967296;
    if (!diff.empty()) {
      task["changed_lines"] =
          ChangedLinesTask(diff, reach && reach->is_object() ? *reach : Json());
    }
    // The author's failure (a broken LLM set-up falls back by itself) must
    // not cost the commit its unfocused campaign.
    StatusOr<Json> raw =
        RunAgent(ctx, "stress_test_author", std::nullopt, task, *tools);
    // A shutdown is not the author's failure: the job is redone later.
    if (!raw.ok() && raw.status().code() == StatusCode::kCancelled) {
      return raw.status();
    }
    StatusOr<agents::StressAuthorClaim> claim =
        raw.ok() ? agents::ParseStressAuthorClaim(ToJsonDoc(*raw))
                 : StatusOr<agents::StressAuthorClaim>(raw.status());
    if (claim.ok()) {
      // A campaign of the author's that failed is the commit's aim missed:
      // said in the log, not only in the job's result.
      if (std::string failed = agents::FailedRoundsLine(*claim);
          !failed.empty()) {
        spdlog::warn("fuzz {}: {}", sha.substr(0, 12), failed);
      }
      ASSIGN_OR_RETURN(Json mine, FileAuthorFindings(ctx, sha, *claim));
      for (const Json& one : mine.array()) filed.push_back(one);
      programs += claim->programs.value_or(0);
      out["author"] = FromJsonDoc(agents::ToJson(*claim));
    } else {
      spdlog::warn("fuzz {}: the stress-test author failed: {}",
                   sha.substr(0, 12), claim.status().message());
      out["author_error"] = claim.status().message();
    }
  }
  out["programs"] = programs;
  out["seconds"] = seconds_run;
  Json focus = Json::MakeObject();
  focus["passes"] = Joined(area.passes);
  focus["ops"] = Joined(area.ops);
  if (area.large_elements > 0) focus["large_elements"] = area.large_elements;
  out["focus"] = std::move(focus);
  out["filed"] = std::move(filed);
  return out;
}

StatusOr<Json> RunCheckFixesStep(StepContext& ctx, const Job& job) {
  ASSIGN_OR_RETURN(std::string sha, PayloadString(job, "commit"));
  ASSIGN_OR_RETURN(std::string bin, BinDirOf(ctx, sha));
  ASSIGN_OR_RETURN(auto repo, hlo_bisect::GitRepo::Open(ctx.paths->mirror));
  Json fixed = Json::MakeArray();
  int64_t after = 0;
  while (true) {
    ASSIGN_OR_RETURN(std::vector<Bug> bugs,
                     ctx.store->ListBugs(std::nullopt, after, 200));
    if (bugs.empty()) break;
    for (const Bug& bug : bugs) {
      after = bug.id;
      if (!CheckTransition(bug.state, BugState::kFixed).ok()) continue;
      // Only commits after the one the bug was seen at can fix it.
      StatusOr<std::string> found = FoundCommitOf(ctx, bug);
      if (!found.ok() || *found == sha) continue;
      StatusOr<bool> after_found = repo->Contains(sha, *found);
      if (!after_found.ok() || !*after_found) continue;
      ASSIGN_OR_RETURN(std::string case_sha, ReproCaseOf(bug, true));
      ASSIGN_OR_RETURN(std::string scratch,
                       ctx.Scratch(job.id, "fix-" + std::to_string(bug.id)));
      ASSIGN_OR_RETURN(hlo_diff::Verdict v,
                       RunVerdict(ctx, case_sha, bin, scratch));
      if (v.status != hlo_diff::VerdictStatus::kPass) continue;
      Json evidence = Json::MakeObject();
      evidence["event"] = "fix_verified";
      evidence["commit"] = sha;
      evidence["verdict"] = v.ToJson();
      TransitionFields f;
      f.fix_commit = sha;
      // Another worker (a check of another commit) may have moved the bug
      // since it was listed: its state now decides.
      ASSIGN_OR_RETURN(Bug now, ctx.store->GetBug(bug.id));
      if (!CheckTransition(now.state, BugState::kFixed).ok()) continue;
      StatusOr<Bug> moved = Advance(ctx, now, BugState::kFixed, evidence, f);
      if (!moved.ok()) {
        ASSIGN_OR_RETURN(Bug again, ctx.store->GetBug(bug.id));
        if (again.state != now.state) continue;  // Moved meanwhile.
        return moved.status();
      }
      spdlog::info("fix_verified: bug {} fixed by {}", moved->id,
                   sha.substr(0, 12));
      fixed.push_back(moved->id);
    }
  }
  Json out = Json::MakeObject();
  out["fixed"] = std::move(fixed);
  return out;
}

}  // namespace trench::orchestrator
