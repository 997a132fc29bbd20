// Which of a drafting round's candidates the draft step proposes (issue 21
// "the whole root cause"): each candidate's coverage of the culprit commit
// (agents/patch_coverage.h, judged on its diff, whoever drafted it), then
// the one that is not flagged as a partial revert first, the smallest
// diff among equals. What was judged goes into the bug's details.draft,
// the patch_drafted event (the bug page shows it next to the patch) and
// the triage report:
//   "coverage":    the chosen candidate's PatchCoverage::ToJson;
//   "passed_over": [{"candidate", "strategy", "changed_lines", "reason"}]
//                  the flagged candidates not chosen, each with its reason.
// Without the culprit's diff (no culprit, a mirror that lacks it) nothing
// is judged: the smallest diff is chosen and "coverage" is
// {"unknown": why}.
#pragma once

#include <string>
#include <vector>

#include "agents/patch_coverage.h"
#include "base/json.h"
#include "git/git_repo.h"

namespace trench::orchestrator {

struct DraftCandidate {
  int64_t candidate = 0;  // submit_patch's number.
  std::string strategy;
  std::string diff;
};

struct DraftChoice {
  size_t best = 0;  // Index into the candidates.
  // Per candidate, in their order; empty when nothing was judged.
  std::vector<agents::PatchCoverage> coverage;
  std::string unknown;  // Why nothing was judged ("" when judged).

  // {"coverage", "passed_over"} as in the file comment.
  Json DetailsJson(const std::vector<DraftCandidate>& candidates) const;
};

// The choice among `candidates` (REQUIRES: non-empty) for a bug whose
// culprit is `culprit_sha` in `mirror`, localized as the drafter's `task`
// says (agents::ScopeOfTask: its localization and culprit_sources). Never
// fails: a culprit diff that cannot be read leaves `unknown` set.
DraftChoice ChooseDraft(const hlo_bisect::GitRepo& mirror,
                        const std::string& culprit_sha, const Json& task,
                        const std::vector<DraftCandidate>& candidates);

}  // namespace trench::orchestrator
