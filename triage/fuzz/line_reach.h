// Changed-line reach: which of a commit's changed lines the programs of a
// campaign executed, measured on the target's coverage build flavour
// (DESIGN.md "Target contract"; compiler/driver/coverage.h for the
// embedded target).
//
// Changed lines are the new side's added lines ('+') of the commit's
// unified diff, per repository-relative path; a run of removed lines with
// no added line among them stands for its site, the new-side line right
// after it (before it when the run ends the hunk). A coverage build has one
// coverage point per basic block (SanitizerCoverage with no-prune, PC table
// in point order; hlo-run --coverage-pcs prints it). The binary's DWARF
// line table (llvm-dwarfdump --debug-line; -gline-tables-only is enough)
// gives the addresses of each line's code; an address belongs to the
// nearest point at or before it in the same line-table sequence (its basic
// block). A changed line is reached by a program when the program hit any
// point that holds code of the line.
//
// Lines are sorted into three groups:
//   lines          executable changed lines: code of the line sits in an
//                  instrumented block; reach counts only these;
//   no_code        the line table has no address for it (a comment, a
//                  blank line, a declaration, code the optimizer removed);
//   uninstrumented code exists but outside any instrumented block (a
//                  library the flavour does not instrument).
// Reach = lines reached by at least one program / lines.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace trench::fuzz {

// Repository-relative path -> new-side line numbers (1-based).
using ChangedLines = std::map<std::string, std::set<int64_t>>;

// The changed lines of unified diff `diff` (above; git show / git diff
// output; git/unified_diff.h's parser and its errors). Deleted files add
// nothing.
StatusOr<ChangedLines> ChangedLinesOfDiff(std::string_view diff);

struct SourceLine {
  std::string path;
  int64_t line = 0;
  std::string ToString() const;  // "path:line".
};

class LineCoverageMap {
 public:
  // From a coverage build's point addresses (PcOffsets order) and the text
  // of `llvm-dwarfdump --debug-line` of the same binary. A line-table file
  // matches a changed path when its full name is that path or ends with
  // "/" + path.
  static LineCoverageMap FromLineTable(const std::vector<uint64_t>& pcs,
                                       std::string_view debug_line,
                                       const ChangedLines& changed);
  // Runs `hlo_run --coverage-pcs` and `llvm-dwarfdump --debug-line hlo_run`
  // (the dwarfdump named by $TRENCH_DWARFDUMP, else llvm-dwarfdump on
  // PATH). FailedPrecondition when the binary is not a coverage build
  // (no points); Internal when a tool fails, naming it.
  static StatusOr<LineCoverageMap> OfBinary(const std::string& hlo_run,
                                            const ChangedLines& changed);

  const std::vector<SourceLine>& lines() const { return lines_; }
  const std::vector<SourceLine>& no_code() const { return no_code_; }
  const std::vector<SourceLine>& uninstrumented() const {
    return uninstrumented_;
  }
  size_t points() const { return points_; }
  // The ids (indexes into lines()) of the lines whose points the hex
  // bitmap `hits` (coverage.h HitsHex) sets; sorted, each once.
  std::vector<int> Reached(std::string_view hits) const;

 private:
  size_t points_ = 0;
  std::vector<SourceLine> lines_, no_code_, uninstrumented_;
  // Point index -> ids of the lines with code in its block.
  std::map<size_t, std::vector<int>> lines_of_point_;
};

// A campaign's reach: how many programs reached each line. Thread safe.
class LineReach {
 public:
  explicit LineReach(std::shared_ptr<const LineCoverageMap> map);

  const LineCoverageMap& map() const { return *map_; }
  // Records one program that reached `ids` (LineCoverageMap::Reached);
  // returns how many of them no program had reached before.
  int Add(const std::vector<int>& ids);
  int64_t reached() const;         // Lines reached by >= 1 program.
  int64_t programs(int id) const;  // Programs that reached line `id`.
  size_t lines() const { return map_->lines().size(); }
  // Whether every line was reached by at least `n` programs (false when
  // there is no line).
  bool AllReachedAtLeast(int64_t n) const;
  std::vector<SourceLine> Unreached() const;
  // {"lines", "reached", "no_code", "uninstrumented", "points",
  //  "unreached": ["path:line", ... at most 50],
  //  "per_line": [{"line": "path:line", "programs": n}, ...]}.
  Json ToJson() const;

 private:
  std::shared_ptr<const LineCoverageMap> map_;
  mutable std::mutex mu_;
  std::vector<int64_t> programs_;  // Per line id.
};

}  // namespace trench::fuzz
