#include "orchestrator/pipeline/draft_coverage.h"

#include <algorithm>
#include <numeric>

#include "git/patch_apply.h"
#include "git/unified_diff.h"

namespace trench::orchestrator {
namespace {

size_t SmallestFirst(const std::vector<DraftCandidate>& candidates,
                     const std::vector<agents::PatchCoverage>& coverage) {
  std::vector<size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), 0);
  auto rank = [&](size_t i) {
    return coverage.empty() ? 0 : coverage[i].rank();
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::pair(rank(a), candidates[a].diff.size()) <
           std::pair(rank(b), candidates[b].diff.size());
  });
  return order.front();
}

}  // namespace

Json DraftChoice::DetailsJson(
    const std::vector<DraftCandidate>& candidates) const {
  Json out = Json::MakeObject();
  if (coverage.empty()) {
    Json c = Json::MakeObject();
    c["unknown"] = unknown;
    out["coverage"] = std::move(c);
    out["passed_over"] = Json::MakeArray();
    return out;
  }
  out["coverage"] = coverage[best].ToJson();
  Json passed = Json::MakeArray();
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (i == best || coverage[i].rank() == 0) continue;
    Json p = Json::MakeObject();
    p["candidate"] = candidates[i].candidate;
    p["strategy"] = candidates[i].strategy;
    StatusOr<agents::UnifiedDiff> d =
        agents::ParseUnifiedDiff(candidates[i].diff);
    p["changed_lines"] = d.ok() ? d->ChangedLines() : 0;
    p["reason"] =
        coverage[i].parsed ? coverage[i].Reason() : coverage[i].Summary();
    passed.push_back(std::move(p));
  }
  out["passed_over"] = std::move(passed);
  return out;
}

DraftChoice ChooseDraft(const hlo_bisect::GitRepo& mirror,
                        const std::string& culprit_sha, const Json& task,
                        const std::vector<DraftCandidate>& candidates) {
  DraftChoice choice;
  StatusOr<std::string> text =
      culprit_sha.empty() ? StatusOr<std::string>(NotFound("no culprit"))
                          : agents::DiffOfCommit(mirror, culprit_sha);
  StatusOr<agents::UnifiedDiff> culprit =
      text.ok() ? agents::ParseUnifiedDiff(*text)
                : StatusOr<agents::UnifiedDiff>(text.status());
  if (!culprit.ok()) {
    choice.unknown = "the culprit's diff: " + culprit.status().message();
    choice.best = SmallestFirst(candidates, {});
    return choice;
  }
  std::vector<std::string> files;
  for (const agents::FileDiff& f : culprit->files) files.push_back(f.path());
  const agents::LocalizedScope scope = agents::ScopeOfTask(task);
  const std::vector<std::string> localized =
      agents::LocalizedFiles(scope, files);
  for (const DraftCandidate& c : candidates) {
    choice.coverage.push_back(
        agents::JudgeCoverageText(*culprit, c.diff, localized, scope.pass));
  }
  choice.best = SmallestFirst(candidates, choice.coverage);
  return choice;
}

}  // namespace trench::orchestrator
