#include "orchestrator/pipeline/root_cause.h"

#include <spdlog/spdlog.h>

#include <sstream>
#include <vector>

#include "orchestrator/pipeline/commit_tools.h"
#include "orchestrator/pipeline/step_util.h"
#include "orchestrator/pipeline/triage_verbs.h"

namespace trench::orchestrator {
namespace {

std::string StrOf(const Json* j, std::string_view key) {
  const Json* v = j ? j->Find(key) : nullptr;
  return v && v->is_string() ? v->string_value() : std::string();
}

std::string Short(const std::string& sha) { return sha.substr(0, 12); }

// The other open bugs whose culprit is `culprit`, oldest first: the older
// ones, then the younger ones that got theirs first (a bug has
// culprit_commit once its own culprit was judged). The bisect step keeps the
// culprit's report (holding its sha) in the details, which lets SQLite pick
// the candidates.
StatusOr<std::vector<Bug>> OpenWithCulprit(StepContext& ctx, const Bug& bug,
                                           const std::string& culprit) {
  std::vector<Bug> out;
  if (culprit.empty() || ReopenedFromDuplicate(bug)) return out;
  ASSIGN_OR_RETURN(std::vector<Bug> bugs, ctx.store->ListBugsMentioning(
                                              "culprit:" + culprit, culprit));
  for (Bug& b : bugs) {
    if (b.id == bug.id || !IsOpen(b.state)) continue;
    if (!b.culprit_commit || *b.culprit_commit != culprit) continue;
    out.push_back(std::move(b));
  }
  return out;
}

std::string Relation(const Bug& bug, const Bug& other) {
  return other.id < bug.id
             ? "bug " + std::to_string(other.id)
             : "bug " + std::to_string(other.id) + " (younger, further along)";
}

// The lines a diff adds or removes, with the file each belongs to.
std::vector<std::string> ChangedLines(const std::string& diff) {
  std::vector<std::string> out;
  std::istringstream in(diff);
  std::string file;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.rfind("+++ ", 0) == 0 || line.rfind("--- ", 0) == 0) {
      if (line.rfind("+++ ", 0) == 0) file = line.substr(4);
      continue;
    }
    if (line.empty() || (line[0] != '+' && line[0] != '-')) continue;
    out.push_back(file + "\n" + line);
  }
  return out;
}

// The patch `older` drafted that matches, or nullptr.
const Patch* MatchingPatch(const std::vector<Patch>& patches,
                           const std::string& diff) {
  for (const Patch& p : patches) {
    if (p.verification.Find("rejected")) continue;
    if (SameChange(p.diff, diff)) return &p;
  }
  return nullptr;
}

}  // namespace

std::unique_lock<std::mutex> HoldRootCauseJudgement() {
  static std::mutex* judging = new std::mutex();
  return std::unique_lock<std::mutex>(*judging);
}

std::string RootCauseSite::Text() const {
  std::string t = "pass " + pass;
  if (!site.empty()) return t + ", site " + site;
  if (!opcode.empty()) return t + ", op " + opcode;
  return t;
}

Json RootCauseSite::ToJson() const {
  Json j = Json::MakeObject();
  j["pass"] = pass;
  j["site"] = site.empty() ? Json() : Json(site);
  j["opcode"] = opcode.empty() ? Json() : Json(opcode);
  return j;
}

bool RootCauseSite::Same(const RootCauseSite& o) const {
  if (pass != o.pass || site != o.site) return false;
  return !site.empty() || opcode == o.opcode;
}

std::optional<RootCauseSite> SiteOfBug(const Bug& bug) {
  const Json* loc = bug.details.Find("localization");
  const Json* sig = loc ? loc->Find("signature") : nullptr;
  RootCauseSite s;
  s.pass = StrOf(sig, "pass");
  if (s.pass.empty()) return std::nullopt;
  s.site = StrOf(sig, "site");
  s.opcode = StrOf(sig, "opcode");
  return s;
}

bool SameChange(const std::string& a, const std::string& b) {
  const std::vector<std::string> la = ChangedLines(a);
  return !la.empty() && la == ChangedLines(b);
}

StatusOr<std::optional<SameRootCause>> SameCulpritAndSite(
    StepContext& ctx, const Bug& bug, const std::string& culprit) {
  const std::optional<RootCauseSite> site = SiteOfBug(bug);
  if (!site) return std::optional<SameRootCause>();
  ASSIGN_OR_RETURN(std::vector<Bug> others, OpenWithCulprit(ctx, bug, culprit));
  for (Bug& o : others) {
    const std::optional<RootCauseSite> other = SiteOfBug(o);
    if (!other || !other->Same(*site)) continue;
    SameRootCause same;
    same.evidence = Json::MakeObject();
    same.evidence["duplicate_of"] = o.id;
    same.evidence["reason"] = "same culprit " + Short(culprit) +
                              " and localized site (" + site->Text() + ") as " +
                              Relation(bug, o);
    same.evidence["culprit"] = culprit;
    same.evidence["site"] = site->ToJson();
    same.kept = std::move(o);
    return std::optional<SameRootCause>(std::move(same));
  }
  return std::optional<SameRootCause>();
}

StatusOr<std::optional<SameRootCause>> SameCulpritAndDraft(
    StepContext& ctx, const Bug& bug, const std::string& diff,
    const std::string& strategy) {
  ASSIGN_OR_RETURN(std::vector<Bug> others,
                   OpenWithCulprit(ctx, bug, bug.culprit_commit.value_or("")));
  for (Bug& o : others) {
    ASSIGN_OR_RETURN(std::vector<Patch> patches, ctx.store->ListPatches(o.id));
    const Patch* match = MatchingPatch(patches, diff);
    std::string why;
    if (match) {
      why = "its drafted patch changes the same lines";
    } else if (strategy == "revert_commit" &&
               StrOf(o.details.Find("draft"), "strategy") == "revert_commit") {
      why = "both drafted the revert of the whole culprit";
      const Json* d = o.details.Find("draft");
      const Json* id = d ? d->Find("patch") : nullptr;
      for (const Patch& p : patches) {
        if (id && id->is_integer() && p.id == id->int64_value()) match = &p;
      }
    } else {
      continue;
    }
    SameRootCause same;
    same.evidence = Json::MakeObject();
    same.evidence["duplicate_of"] = o.id;
    same.evidence["reason"] = "same culprit " + Short(*bug.culprit_commit) +
                              " as " + Relation(bug, o) + ", and " + why;
    same.evidence["culprit"] = *bug.culprit_commit;
    same.evidence["strategy"] = strategy;
    if (match) same.evidence["older_patch"] = match->id;
    if (const std::optional<RootCauseSite> s = SiteOfBug(bug)) {
      same.evidence["site"] = s->ToJson();
    }
    same.kept = std::move(o);
    return std::optional<SameRootCause>(std::move(same));
  }
  return std::optional<SameRootCause>();
}

StatusOr<Json> MarkDuplicate(StepContext& ctx, const Bug& bug,
                             const SameRootCause& same, Json evidence,
                             TransitionFields fields) {
  for (const auto& [k, v] : same.evidence.object()) evidence[k] = v;
  fields.duplicate_of = same.kept.id;
  Json d = fields.details ? *fields.details : bug.details;
  d["duplicate"] = same.evidence;
  fields.details = std::move(d);
  ASSIGN_OR_RETURN(Bug moved,
                   Advance(ctx, bug, BugState::kDuplicate, evidence, fields));
  spdlog::info("bug {} duplicates bug {}: {}", moved.id, same.kept.id,
               StrOf(&same.evidence, "reason"));
  return evidence;
}

StatusOr<Json> JudgeCulprit(StepContext& ctx, const Bug& bug,
                            const Json& report) {
  const Json* culprit = report.Find("culprit");
  const Json* sha = culprit ? culprit->Find("sha") : nullptr;
  if (!sha || !sha->is_string() || sha->string_value().empty()) {
    // A final answer, not retried: why there is no culprit comes with it.
    std::string why;
    if (const Json* c = report.Find("confirmation")) {
      if (const Json* r = c->Find("reason"); r && r->is_string()) {
        why = ": " + r->string_value();
      }
    }
    return FailedPrecondition("bug " + std::to_string(bug.id) +
                              ": commit bisection found no single culprit" +
                              why);
  }
  Json evidence = Json::MakeObject();
  evidence["event"] = "culprit_found";
  evidence["culprit"] = *culprit;
  if (const Json* c = report.Find("confirmed")) evidence["confirmed"] = *c;
  TransitionFields f;
  f.culprit_commit = sha->string_value();
  f.details = DetailsWith(bug, "culprit", report);
  const std::unique_lock<std::mutex> judging = HoldRootCauseJudgement();
  ASSIGN_OR_RETURN(std::optional<SameRootCause> same,
                   SameCulpritAndSite(ctx, bug, sha->string_value()));
  if (same) {
    return MarkDuplicate(ctx, bug, *same, std::move(evidence), std::move(f));
  }
  ASSIGN_OR_RETURN(Bug moved,
                   Advance(ctx, bug, BugState::kCulpritFound, evidence, f));
  spdlog::info("culprit_found: bug {} introduced by {}", moved.id,
               Short(sha->string_value()));
  return evidence;
}

}  // namespace trench::orchestrator
