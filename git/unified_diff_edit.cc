// Edits of parsed unified diffs (git/unified_diff.h): invert, select
// hunks, renumber, move onto a newer file, apply.
#include <algorithm>
#include <utility>

#include "git/unified_diff.h"

namespace trench::agents {
namespace {

std::string Range(int64_t start, int64_t count) {
  return std::to_string(start) +
         (count == 1 ? "" : "," + std::to_string(count));
}

// Puts the '-' lines of each run of changed lines before its '+' lines.
void NormalizeOrder(Hunk* h) {
  auto it = h->lines.begin();
  while (it != h->lines.end()) {
    if (it->kind == ' ') {
      ++it;
      continue;
    }
    auto end = std::find_if(it, h->lines.end(),
                            [](const DiffLine& l) { return l.kind == ' '; });
    std::stable_partition(it, end,
                          [](const DiffLine& l) { return l.kind == '-'; });
    it = end;
  }
}

bool PreImageAt(const Hunk& h, const std::vector<std::string>& lines,
                size_t pos) {
  for (const DiffLine& l : h.lines) {
    if (l.kind == '+') continue;
    if (pos >= lines.size() || lines[pos] != l.text) return false;
    ++pos;
  }
  return true;
}

}  // namespace

UnifiedDiff InvertDiff(const UnifiedDiff& diff) {
  UnifiedDiff out = diff;
  for (FileDiff& f : out.files) {
    std::swap(f.old_path, f.new_path);
    std::swap(f.is_new, f.is_deleted);
    std::swap(f.old_mode, f.new_mode);
    std::swap(f.index_old, f.index_new);
    for (Hunk& h : f.hunks) {
      std::swap(h.old_start, h.new_start);
      std::swap(h.old_count, h.new_count);
      for (DiffLine& l : h.lines) {
        if (l.kind != ' ') l.kind = l.kind == '+' ? '-' : '+';
      }
      NormalizeOrder(&h);
    }
  }
  return out;
}

UnifiedDiff SelectHunks(const UnifiedDiff& diff,
                        const std::vector<int>& hunks) {
  UnifiedDiff out;
  int index = 0;
  for (const FileDiff& f : diff.files) {
    FileDiff kept = f;
    kept.hunks.clear();
    for (const Hunk& h : f.hunks) {
      if (std::find(hunks.begin(), hunks.end(), index++) != hunks.end()) {
        kept.hunks.push_back(h);
      }
    }
    if (kept.hunks.empty()) continue;
    RenumberNewSide(&kept);
    out.files.push_back(std::move(kept));
  }
  return out;
}

void RenumberNewSide(FileDiff* file) {
  int64_t delta = 0;
  for (Hunk& h : file->hunks) {
    h.old_count = h.new_count = 0;
    for (const DiffLine& l : h.lines) {
      h.old_count += l.kind != '+';
      h.new_count += l.kind != '-';
    }
    if (h.old_count > 0 && h.old_start == 0) h.old_start = 1;
    const int64_t before = h.old_count == 0 ? h.old_start : h.old_start - 1;
    h.new_start = before + delta + (h.new_count == 0 ? 0 : 1);
    delta += h.new_count - h.old_count;
  }
}

FileDiff RelocateHunks(const FileDiff& file,
                       const std::vector<std::string>& lines,
                       std::vector<int>* dropped) {
  FileDiff out = file;
  out.hunks.clear();
  size_t min_pos = 0;  // Hunks may not overlap those placed before them.
  for (size_t k = 0; k < file.hunks.size(); ++k) {
    Hunk h = file.hunks[k];
    const int64_t pre =
        std::count_if(h.lines.begin(), h.lines.end(),
                      [](const DiffLine& l) { return l.kind != '+'; });
    if (pre == 0) {  // A pure insertion without context stays put.
      h.old_start = std::min<int64_t>(std::max<int64_t>(h.old_start, min_pos),
                                      lines.size());
      min_pos = h.old_start;
      out.hunks.push_back(std::move(h));
      continue;
    }
    const int64_t last = static_cast<int64_t>(lines.size()) - pre;
    const int64_t stated =
        std::clamp<int64_t>(h.old_start - 1, 0, std::max<int64_t>(last, 0));
    int64_t found = -1;
    for (int64_t d = 0; found < 0 && (stated - d >= 0 || stated + d <= last);
         ++d) {
      for (int64_t p : {stated - d, stated + d}) {
        if (p >= static_cast<int64_t>(min_pos) && p <= last &&
            PreImageAt(h, lines, p)) {
          found = p;
          break;
        }
      }
    }
    if (found < 0) {
      if (dropped) dropped->push_back(static_cast<int>(k));
      continue;
    }
    h.old_start = found + 1;
    min_pos = found + pre;
    out.hunks.push_back(std::move(h));
  }
  RenumberNewSide(&out);
  return out;
}

StatusOr<std::vector<std::string>> ApplyHunks(
    const FileDiff& file, const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  size_t pos = 0;
  for (size_t k = 0; k < file.hunks.size(); ++k) {
    const Hunk& h = file.hunks[k];
    const int64_t start = h.old_count == 0 ? h.old_start : h.old_start - 1;
    if (start < static_cast<int64_t>(pos) ||
        start > static_cast<int64_t>(lines.size()) ||
        !PreImageAt(h, lines, start)) {
      return FailedPrecondition("hunk " + std::to_string(k + 1) + " (@@ -" +
                                Range(h.old_start, h.old_count) + ") of " +
                                file.path() + " does not match line " +
                                std::to_string(start + 1));
    }
    out.insert(out.end(), lines.begin() + pos, lines.begin() + start);
    pos = start;
    for (const DiffLine& l : h.lines) {
      if (l.kind != '-') out.push_back(l.text);
      if (l.kind != '+') ++pos;
    }
  }
  out.insert(out.end(), lines.begin() + pos, lines.end());
  return out;
}

}  // namespace trench::agents
