// The patch drafter's built-in strategies (DESIGN.md "Agents"; as SapFix
// does): pure functions over diffs and file lines. The drafter
// (builtin_drafter.cc) feeds them the culprit's diff and the head's files
// and checks every candidate with try_patch; nothing here runs a tool.
//
//   revert_file     the culprit's hunks in the files of the localized pass
//                   (FilesOfPass), reverted
//   revert_commit   the whole culprit commit reverted
//   partial_revert  the smallest subset of a passing revert's hunks that
//                   still passes (MinimizeSubset: ddmin)
//   fix_template    mutations of the lines the culprit changed
//                   (FixTemplates)
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "git/unified_diff.h"

namespace trench::agents {

// The files among `changed_files` (repository-relative) that implement the
// localized culprit `pass`: with `sources` (the target's own globs for it,
// TargetDescription::SourcesOf), the files they match; without (a target
// that does not describe itself), the files whose base name starts with
// the pass name with '-' as '_' ("cse" -> cse.cc, "algsimp" ->
// algsimp_arith.cc). Empty when none matches or `pass` is empty.
std::vector<std::string> FilesOfPass(
    std::string_view pass, const std::vector<std::string>& files,
    const std::vector<std::string>& sources = {});

// Delta debugging (Zeller's ddmin) over `items`: the smallest subset found
// for which `passes` holds, 1-minimal unless `passes` stops early (it may
// return false once its own budget is spent; the smallest passing subset
// seen is returned then). Each distinct subset is tested at most once.
// REQUIRES: passes(items) holds (it is not called on `items` itself).
std::vector<int> MinimizeSubset(
    const std::vector<int>& items,
    const std::function<bool(const std::vector<int>&)>& passes);

// One fix template applied at one place.
struct TemplateFix {
  std::string name;    // "revert_block", "flip_comparison", ...
  std::string detail;  // "line 42: '<' -> '<='": for the rationale.
  UnifiedDiff diff;    // Against `head` (one file, one hunk).
};

// Fix templates at the lines the culprit changed in one file. `culprit` is
// the culprit commit's (forward) diff of the file, `head` the file's lines
// at the head commit; the culprit's changed lines are looked up in `head`
// by their text, nearest to where the culprit put them. Per change block
// (a run of removed and added lines), nearest to the line naming the
// rewrite `site` (a string literal "site") first: revert_block (the
// removed lines instead of the added ones), restore_removed (the removed
// lines back, the added ones kept); then per added line: flip_comparison
// (< <= > >= == !=), off_by_one (an integer literal +-1, a "+ 1"/"- 1"
// dropped), swap_min_max, swap_and_or, drop_line (a one-line guard or
// continue/break removed). Duplicates (same diff) are left out.
std::vector<TemplateFix> FixTemplates(const FileDiff& culprit,
                                      const std::vector<std::string>& head,
                                      std::string_view site);

// A one-hunk diff of `path` replacing head[start, start+count) by
// `replacement`, with up to 3 lines of context.
// REQUIRES: start + count <= head.size().
UnifiedDiff ReplaceLines(const std::string& path,
                         const std::vector<std::string>& head, size_t start,
                         size_t count,
                         const std::vector<std::string>& replacement);

// The variants of one source line under the per-line templates above, as
// (template name, detail, new line) in template order.
struct LineMutation {
  std::string name;
  std::string detail;
  std::string line;
};
std::vector<LineMutation> MutateLine(const std::string& line);

}  // namespace trench::agents
