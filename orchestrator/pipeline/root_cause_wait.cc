// Waiting for an older bug of the same root cause, and the patch check
// that ends a wait (root_cause.h).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "git/git_repo.h"
#include "orchestrator/pipeline/commit_tools.h"
#include "orchestrator/pipeline/root_cause.h"
#include "orchestrator/pipeline/step_util.h"
#include "triage/case/verdict_status.h"

namespace trench::orchestrator {
namespace {

// How far a duplicate_of chain is followed, and how many earlier commits'
// builds one finding's case runs on to see whether its failure predates
// its commit.
constexpr int kMaxDuplicateLinks = 8;
constexpr int kMaxPredatesRuns = 3;

std::string StrOf(const Json* j, std::string_view key) {
  const Json* v = j ? j->Find(key) : nullptr;
  return v && v->is_string() ? v->string_value() : std::string();
}

std::string Short(const std::string& sha) { return sha.substr(0, 12); }
std::string Name(int64_t id) { return "bug " + std::to_string(id); }

bool Waits(const Bug& b) {
  const Json* w = b.details.Find("waiting_for");
  return w && w->is_object();
}

// The bug `b` stands for: itself, or the open bug its duplicate_of chain
// ends at. A chain that ends at a closed bug, or loops, ends at the last
// bug read.
StatusOr<Bug> RootOf(StepContext& ctx, Bug b) {
  for (int i = 0; i < kMaxDuplicateLinks && b.state == BugState::kDuplicate &&
                  b.duplicate_of && *b.duplicate_of != b.id;
       ++i) {
    StatusOr<Bug> next = ctx.store->GetBug(*b.duplicate_of);
    if (!next.ok()) {
      if (next.status().code() == StatusCode::kNotFound) break;
      return next.status();
    }
    b = std::move(*next);
  }
  return b;
}

// The verified patch of `b`, when its state says it has one.
StatusOr<std::optional<Patch>> VerifiedPatchOf(StepContext& ctx, const Bug& b) {
  if (b.state != BugState::kPatchVerified && b.state != BugState::kProposed &&
      b.state != BugState::kApproved && b.state != BugState::kFixed) {
    return std::optional<Patch>();
  }
  ASSIGN_OR_RETURN(std::vector<Patch> patches, ctx.store->ListPatches(b.id));
  for (auto p = patches.rbegin(); p != patches.rend(); ++p) {
    if (p->verified && !StrOf(&p->verification, "base").empty()) {
      return std::optional<Patch>(*p);
    }
  }
  return std::optional<Patch>();
}

// Where a wait for `waited` stands: `why` is "" while it goes on.
struct WaitEnd {
  std::string why;
  Bug root;                    // `waited`, or the bug it duplicates.
  std::optional<Patch> patch;  // Set when the root's verified patch ends it.
};

StatusOr<WaitEnd> WaitEndOf(StepContext& ctx, const Bug& waited) {
  WaitEnd end;
  ASSIGN_OR_RETURN(end.root, RootOf(ctx, waited));
  const Bug& root = end.root;
  std::string name = Name(root.id);
  if (root.id != waited.id) {
    name += " (which " + Name(waited.id) + " duplicates)";
  }
  ASSIGN_OR_RETURN(end.patch, VerifiedPatchOf(ctx, root));
  if (end.patch) {
    end.why = name + " has a verified patch " + std::to_string(end.patch->id);
    return end;
  }
  if (!IsOpen(root.state)) {
    end.why = name + " is " + std::string(BugStateName(root.state));
    return end;
  }
  if (const Json* h = root.details.Find("needs_human");
      h && h->is_bool() && h->bool_value()) {
    end.why = name + " waits for a human";
    return end;
  }
  for (const StepKind& s : Steps()) {
    if (!s.state || *s.state != root.state) continue;
    ASSIGN_OR_RETURN(std::optional<Job> last,
                     ctx.queue->Latest(BugJobKey(root.id, s.kind)));
    if (last &&
        (last->state == JobState::kFailed ||
         last->state == JobState::kParked) &&
        last->updated_ms >= root.updated_ms) {
      end.why = name + "'s " + s.kind + " step " +
                std::string(JobStateName(last->state));
    }
    break;
  }
  return end;
}

// Open bugs older than `bug`, oldest first.
StatusOr<std::vector<Bug>> OlderOpenBugs(StepContext& ctx, const Bug& bug) {
  std::vector<Bug> out;
  for (BugState s : AllBugStates()) {
    if (!IsOpen(s)) continue;
    int64_t after = 0;
    for (;;) {
      ASSIGN_OR_RETURN(std::vector<Bug> page,
                       ctx.store->ListBugs(s, after, 500));
      for (Bug& b : page) {
        after = b.id;
        if (b.id < bug.id) out.push_back(std::move(b));
      }
      if (page.size() < 500 || after >= bug.id) break;
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Bug& a, const Bug& b) { return a.id < b.id; });
  return out;
}

// The first of `coarse` that `older` carries, or "".
std::string SharedCoarse(const Json* coarse, const Bug& older) {
  if (!coarse || !coarse->is_array()) return "";
  for (const Json& c : coarse->array()) {
    if (c.is_string() && !c.string_value().empty() &&
        CarriesSignature(older, c.string_value())) {
      return c.string_value();
    }
  }
  return "";
}

}  // namespace

StatusOr<std::optional<Json>> RootCauseToWaitFor(StepContext& ctx,
                                                 const Bug& bug,
                                                 int64_t job_id) {
  if (bug.state != BugState::kNew || bug.details.Find("released") ||
      bug.details.Find("reopened") || StrOf(&bug.details, "source") != "fuzz") {
    return std::optional<Json>();
  }
  const std::string commit = StrOf(&bug.details, "commit");
  if (commit.empty()) return std::optional<Json>();
  const Json* finding = bug.details.Find("finding");
  const Json* coarse = finding ? finding->Find("coarse_signatures") : nullptr;
  ASSIGN_OR_RETURN(std::vector<Bug> older, OlderOpenBugs(ctx, bug));
  std::unique_ptr<hlo_bisect::GitRepo> repo;
  int predates_runs = 0;
  for (const Bug& o : older) {
    if (Waits(o)) continue;
    const std::string theirs = StrOf(&o.details, "commit");
    if (theirs.empty()) continue;
    const bool same = theirs == commit;
    // Whether the finding's commit holds theirs (found earlier in the
    // history), or else theirs holds the finding's (found later in the
    // history: commits that land together are fuzzed newest first).
    bool later = false;
    if (!same) {
      if (!repo) {
        ASSIGN_OR_RETURN(repo, hlo_bisect::GitRepo::Open(ctx.paths->mirror));
      }
      StatusOr<bool> holds = repo->Contains(commit, theirs);
      if (!holds.ok()) continue;
      if (!*holds) {
        StatusOr<bool> held = repo->Contains(theirs, commit);
        if (!held.ok() || !*held) continue;  // Another line.
        later = true;
      }
    }
    ASSIGN_OR_RETURN(WaitEnd end, WaitEndOf(ctx, o));
    if (!end.why.empty() && !end.patch) continue;  // Nobody works on it.
    const std::string sig = SharedCoarse(coarse, o);
    Json w = Json::MakeObject();
    std::string why;
    if (later) {
      // Found on a later commit: the finding's commit may hold its cause.
      // Not when the older bug was bisected to a culprit the finding's
      // commit lacks; else with a shared coarse signature, or when the
      // finding's commit holds that culprit, it waits.
      const std::string culprit = o.culprit_commit.value_or("");
      bool has_culprit = false;
      if (!culprit.empty()) {
        StatusOr<bool> held = repo->Contains(commit, culprit);
        if (!held.ok() || !*held) continue;
        has_culprit = true;
      }
      if (!sig.empty()) {
        w["rule"] = "coarse";
        w["coarse_signature"] = sig;
        why = "same coarse signature " + sig + ", found on " + Short(theirs) +
              ", which holds its commit " + Short(commit);
      } else if (has_culprit) {
        w["rule"] = "culprit";
        why = "found on " + Short(commit) + ", which holds " + Short(culprit) +
              ", the culprit of " + Name(o.id);
      } else {
        continue;
      }
    } else if (!sig.empty()) {
      w["rule"] = "coarse";
      w["coarse_signature"] = sig;
      why = "same coarse signature " + sig + ", found " +
            (same ? "on the same commit " + Short(commit)
                  : "on " + Short(commit) + ", which holds its commit " +
                        Short(theirs));
    } else if (same) {
      w["rule"] = "campaign";
      why = "found on the same commit " + Short(commit) +
            " under another signature";
    } else {
      // The finding's failure predates its commit: it fails on the older
      // bug's commit too.
      if (predates_runs >= kMaxPredatesRuns || !bug.case_sha256) continue;
      StatusOr<std::string> bin = BinDirOf(ctx, theirs);
      if (!bin.ok()) continue;  // That commit has no build to run on.
      ++predates_runs;
      ASSIGN_OR_RETURN(std::string scratch,
                       ctx.Scratch(job_id, "predates-" + std::to_string(o.id)));
      ASSIGN_OR_RETURN(hlo_diff::Verdict v,
                       RunVerdict(ctx, *bug.case_sha256, *bin, scratch));
      if (!hlo_diff::IsFailure(v.status)) continue;
      w["rule"] = "predates";
      why = "its case fails (" + std::string(v.status_name()) + ") on " +
            Short(theirs) + ", where " + Name(o.id) + " was found, too";
    }
    w["bug"] = o.id;
    w["reason"] = "waiting for " + Name(o.id) + " (" + why +
                  ") to have a verified patch to check it against";
    w["since_ms"] = ctx.store->clock()->NowMillis();
    return std::optional<Json>(std::move(w));
  }
  return std::optional<Json>();
}

Status StartWaiting(StepContext& ctx, const Bug& bug, const Json& waiting_for) {
  Json evidence = waiting_for;
  evidence["event"] = "waiting";
  RETURN_IF_ERROR(ctx.store->NoteBug(
      bug.id, ctx.worker.empty() ? "orchestrator" : ctx.worker, evidence,
      DetailsWith(bug, "waiting_for", waiting_for)));
  spdlog::info("bug {}: {}", bug.id, StrOf(&waiting_for, "reason"));
  return Status::Ok();
}

StatusOr<bool> StillWaiting(StepContext& ctx, const Bug& bug) {
  const Json* w = bug.details.Find("waiting_for");
  const Json* id = w && w->is_object() ? w->Find("bug") : nullptr;
  if (!id) return false;
  Json released = Json::MakeObject();
  std::string why;
  if (!id->is_integer()) {
    why = "the bug waited for is not named";
  } else if (StatusOr<Bug> older = ctx.store->GetBug(id->int64_value());
             !older.ok()) {
    if (older.status().code() != StatusCode::kNotFound) return older.status();
    why = Name(id->int64_value()) + " is gone";
  } else {
    ASSIGN_OR_RETURN(WaitEnd end, WaitEndOf(ctx, *older));
    why = end.why;
    if (end.patch) {
      released["patch"] = end.patch->id;
      released["patch_of"] = end.root.id;
    }
  }
  if (why.empty()) return true;
  released["bug"] = *id;
  released["reason"] = why;
  released["at_ms"] = ctx.store->clock()->NowMillis();
  Json d = DetailsWith(bug, "released", released);
  d["waiting_for"] = Json();
  Json evidence = released;
  evidence["event"] = "released";
  RETURN_IF_ERROR(ctx.store->NoteBug(
      bug.id, ctx.worker.empty() ? "orchestrator" : ctx.worker, evidence, d));
  spdlog::info("bug {}: released from its wait ({})", bug.id, why);
  return false;
}

StatusOr<std::optional<Json>> MergeIfFixedByPatch(StepContext& ctx,
                                                  const Bug& bug,
                                                  int64_t job_id) {
  const Json* r = bug.details.Find("released");
  const Json* patch_id = r ? r->Find("patch") : nullptr;
  const Json* of = r ? r->Find("patch_of") : nullptr;
  if (bug.state != BugState::kNew || !patch_id || !patch_id->is_integer() ||
      !of || !of->is_integer() || bug.details.Find("patch_check") ||
      !bug.case_sha256) {
    return std::optional<Json>();
  }
  Json check = Json::MakeObject();
  check["bug"] = *of;
  check["patch"] = *patch_id;
  check["fixed"] = false;
  // Records a check that makes no duplicate; the pipeline goes on.
  auto kept = [&](const std::string& why) -> StatusOr<std::optional<Json>> {
    check["why"] = why;
    Json evidence = check;
    evidence["event"] = "patch_check";
    RETURN_IF_ERROR(ctx.store->NoteBug(
        bug.id, ctx.worker.empty() ? "orchestrator" : ctx.worker, evidence,
        DetailsWith(bug, "patch_check", check)));
    spdlog::info("bug {}: not merged into {} by its patch: {}", bug.id,
                 Name(of->int64_value()), why);
    return std::optional<Json>();
  };
  StatusOr<Bug> older = ctx.store->GetBug(of->int64_value());
  if (!older.ok()) {
    if (older.status().code() != StatusCode::kNotFound) return older.status();
    return kept(Name(of->int64_value()) + " is gone");
  }
  ASSIGN_OR_RETURN(std::vector<Patch> patches,
                   ctx.store->ListPatches(older->id));
  const Patch* patch = nullptr;
  for (const Patch& p : patches) {
    if (p.id == patch_id->int64_value() && p.verified) patch = &p;
  }
  if (!patch) return kept("the verified patch is no longer there");
  const std::string base = StrOf(&patch->verification, "base");
  check["base"] = base;
  StatusOr<std::string> without = BinDirOf(ctx, base);
  StatusOr<std::string> with = BinDirOf(ctx, base, PatchHash(patch->diff));
  if (!without.ok() || !with.ok()) {
    return kept("no build of " + Short(base) +
                (without.ok() ? " with the patch" : ""));
  }
  // Run `run` of the check on `bin`, in a scratch of its own.
  auto run_on = [&](const std::string& bin,
                    int run) -> StatusOr<hlo_diff::Verdict> {
    ASSIGN_OR_RETURN(std::string scratch,
                     ctx.Scratch(job_id, "patch-check-" + std::to_string(run)));
    return RunVerdict(ctx, *bug.case_sha256, bin, scratch);
  };
  ASSIGN_OR_RETURN(hlo_diff::Verdict v0, run_on(*without, 0));
  check["without"] = std::string(v0.status_name());
  if (!hlo_diff::IsFailure(v0.status)) {
    return kept("its case passes on " + Short(base) + " without the patch");
  }
  // Twice with the patch: a flaky pass must not merge it.
  check["with"] = Json::MakeArray();
  for (int run = 1; run <= 2; ++run) {
    ASSIGN_OR_RETURN(hlo_diff::Verdict v, run_on(*with, run));
    check["with"].push_back(std::string(v.status_name()));
    if (v.status != hlo_diff::VerdictStatus::kPass) {
      return kept(std::string("its case still fails with the patch: ") +
                  std::string(v.status_name()));
    }
  }
  check["fixed"] = true;
  check["why"] = "fails (" + std::string(v0.status_name()) + ") on " +
                 Short(base) + " without the patch and passes with it (2 runs)";
  SameRootCause same;
  same.kept = std::move(*older);
  same.evidence = Json::MakeObject();
  same.evidence["duplicate_of"] = same.kept.id;
  same.evidence["reason"] = "fixed by " + Name(same.kept.id) +
                            "'s verified patch " + std::to_string(patch->id) +
                            ": it " + StrOf(&check, "why");
  same.evidence["patch"] = patch->id;
  if (same.kept.culprit_commit) {
    same.evidence["culprit"] = *same.kept.culprit_commit;
  }
  Json evidence = Json::MakeObject();
  evidence["event"] = "patch_check";
  TransitionFields f;
  f.details = DetailsWith(bug, "patch_check", check);
  ASSIGN_OR_RETURN(Json out, MarkDuplicate(ctx, bug, same, std::move(evidence),
                                           std::move(f)));
  return std::optional<Json>(std::move(out));
}

}  // namespace trench::orchestrator
