// How much of the culprit's change a candidate patch undoes (issue 21 "the
// whole root cause"): a pure judgement over two diffs, whoever wrote the
// candidate (the built-in drafter or a model). The drafter uses it to
// complete a partial revert; the draft step (orchestrator/pipeline/
// draft_coverage.h) to prefer, among the candidates, one that covers the
// localized pass, and to flag one that does not in the bug's details, the
// triage report and the bug page.
//
// The culprit's diff is cut into change blocks (a run of '-'/'+' lines of
// one hunk). The candidate (a diff against the head, hunks anywhere, any
// context) is compared by text, per file, lines trimmed and inner blanks
// collapsed; lines without a letter or digit ("}", "") count only when a
// block has nothing else. A block is
//   reverted  when the candidate removes every line the block added and
//             adds back every line it removed;
//   touched   when it removes one of the block's added lines or adds back
//             one of its removed lines (a fix template, a hand fix);
//   left      otherwise.
// Two blocks change the same rule when their changed lines share most of
// their tokens (identifiers, numbers, literals, operators; Jaccard >= 0.6,
// at least 3 shared) and their edits do too (the tokens only the added or
// only the removed lines hold; Jaccard >= 0.5): the same comparison
// changed in a pass and in the code generator's copy of it. (Copies are
// looked for in culprits of up to 2000 blocks.)
//
// A candidate is flagged `partial` when it
//   - changes no localized file although the culprit changed one (its
//     blocks there are "left_localized"), or
//   - leaves a block that changes the same rule as one it reverted or
//     touched ("left_copies").
// Rank: 0 for a candidate that is not flagged, 1 for one that is (or whose
// diff does not parse); the draft step prefers the lowest rank, then the
// smallest diff.
#pragma once

#include <string>
#include <vector>

#include "base/json.h"
#include "git/unified_diff.h"

namespace trench::agents {

// Where the localization put the bug, as a drafter's task says it (the
// localize step's record, or the partial one a test or a model wrote:
// read leniently, "findings" first, then "signature", then the top level).
struct LocalizedScope {
  std::string pass;    // "cse", "codegen", ...; "" when none.
  std::string site;    // The rewrite decision's site; "" when none.
  std::string opcode;  // The fused op's opcode, else the instruction's.
  // The target's source globs of the pass (task "culprit_sources").
  std::vector<std::string> sources;
};
LocalizedScope ScopeOfTask(const Json& task);

// The culprit's files of the localized pass (FilesOfPass). For "codegen"
// without globs, the files under a "codegen" directory; then, for
// "codegen" with an opcode, those whose name holds the opcode ('-' as
// '_'), when any does.
std::vector<std::string> LocalizedFiles(const LocalizedScope& scope,
                                        const std::vector<std::string>& files);

enum class BlockFate { kLeft, kTouched, kReverted };

struct BlockCoverage {
  std::string file;
  int64_t line = 0;  // New-side line of the block in the culprit (1-based).
  int hunk = 0;      // Global hunk index in the culprit (SelectHunks').
  bool localized = false;
  BlockFate fate = BlockFate::kLeft;
  std::string Where() const { return file + ":" + std::to_string(line); }
};

struct PatchCoverage {
  bool parsed = true;  // False: the candidate's diff does not parse.
  std::string error;   // Why, when !parsed.
  std::string pass;
  std::vector<BlockCoverage> blocks;
  std::vector<std::string> localized_files;  // Culprit files of the pass.
  bool touches_localized = false;  // The candidate changes one of them.
  std::vector<std::string> left_localized;  // "file:line" of left blocks.
  std::vector<std::string> left_copies;     // Likewise.

  int Count(BlockFate fate) const;
  bool partial() const {
    return !left_localized.empty() || !left_copies.empty();
  }
  int rank() const { return parsed && !partial() ? 0 : 1; }
  // The global culprit hunks of the blocks it reverted or touched, plus
  // those of the blocks it was flagged for leaving, sorted: what a
  // complete revert of the same rule reverts.
  std::vector<int> CompletingHunks() const;
  // "reverts 1, changes 0 and leaves 1 of the culprit's 2 change blocks;
  // changes compiler/passes/cse.cc, the localized pass 'cse'".
  std::string Summary() const;
  // "" when not partial, else "partial revert: it leaves the culprit's
  // change at compiler/passes/cse.cc:12 (the localized pass 'cse') in
  // place; the same rule is still changed at ...".
  std::string Reason() const;
  // {"parsed", "error"?, "culprit_changes", "reverted", "touched", "left",
  //  "localized_files", "touches_localized", "partial", "left_localized",
  //  "left_copies", "summary", "reason"?}
  Json ToJson() const;
};

// The judgement described above. `localized_files` are the culprit's
// files of the localized pass (LocalizedFiles; may be empty).
PatchCoverage JudgeCoverage(const UnifiedDiff& culprit,
                            const UnifiedDiff& candidate,
                            const std::vector<std::string>& localized_files,
                            const std::string& pass = "");
// The same for a candidate's text; a diff that does not parse gives
// parsed false (rank 1) with the parser's message.
PatchCoverage JudgeCoverageText(const UnifiedDiff& culprit,
                                const std::string& candidate,
                                const std::vector<std::string>& localized_files,
                                const std::string& pass = "");

}  // namespace trench::agents
