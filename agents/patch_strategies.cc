#include "agents/patch_strategies.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <utility>

#include "triage/case/target_description.h"

namespace trench::agents {
namespace {

bool StartsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

bool IsIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

std::string BaseStem(const std::string& path) {
  std::string base = path.substr(path.rfind('/') + 1);
  return base.substr(0, base.find('.'));
}

// Which characters of `s` are code: not inside a string or character
// literal, and before a "//" comment.
std::vector<bool> CodeMask(const std::string& s) {
  std::vector<bool> code(s.size(), false);
  char quote = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (quote) {
      if (s[i] == '\\') {
        ++i;
      } else if (s[i] == quote) {
        quote = 0;
      }
      continue;
    }
    if (s[i] == '"' || s[i] == '\'') {
      quote = s[i];
      continue;
    }
    if (s.compare(i, 2, "//") == 0) break;
    code[i] = true;
  }
  return code;
}

std::string Replace(const std::string& s, size_t pos, size_t len,
                    const std::string& with) {
  return s.substr(0, pos) + with + s.substr(pos + len);
}

void FlipComparisons(const std::string& s, const std::vector<bool>& code,
                     std::vector<LineMutation>* out) {
  static const std::vector<std::pair<std::string, std::vector<std::string>>>
      kFlips = {{"<=", {"<", ">="}}, {">=", {">", "<="}}, {"==", {"!="}},
                {"!=", {"=="}},      {"<", {"<=", ">"}},  {">", {">=", "<"}}};
  for (size_t i = 1; i + 1 < s.size(); ++i) {
    if (!code[i]) continue;
    for (const auto& [op, alternatives] : kFlips) {
      if (s.compare(i, op.size(), op) != 0) continue;
      const size_t end = i + op.size();
      // Binary comparisons are spaced (clang-format); this leaves out
      // templates (a<b>), shifts, arrows and <=>.
      if (s[i - 1] != ' ' || end >= s.size() || s[end] != ' ') break;
      for (const std::string& alt : alternatives) {
        out->push_back({"flip_comparison", "'" + op + "' -> '" + alt + "'",
                        Replace(s, i, op.size(), alt)});
      }
      i = end - 1;
      break;
    }
  }
}

void OffByOne(const std::string& s, const std::vector<bool>& code,
              std::vector<LineMutation>* out) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (!code[i] || !std::isdigit(static_cast<unsigned char>(s[i]))) continue;
    if (i > 0 && (IsIdentChar(s[i - 1]) || s[i - 1] == '.')) {
      while (i < s.size() && IsIdentChar(s[i])) ++i;
      continue;
    }
    size_t end = i;
    while (end < s.size() && std::isdigit(static_cast<unsigned char>(s[end])))
      ++end;
    const bool plain =
        end - i <= 9 &&
        (end == s.size() || (s[end] != '.' && !IsIdentChar(s[end])));
    if (plain && !(s[i] == '0' && end - i > 1)) {  // Not octal/hex.
      const long v = std::strtol(s.substr(i, end - i).c_str(), nullptr, 10);
      const std::string lit = s.substr(i, end - i);
      out->push_back({"off_by_one", lit + " -> " + std::to_string(v + 1),
                      Replace(s, i, end - i, std::to_string(v + 1))});
      if (v > 0) {
        out->push_back({"off_by_one", lit + " -> " + std::to_string(v - 1),
                        Replace(s, i, end - i, std::to_string(v - 1))});
      }
    }
    i = end;
  }
  for (const std::string op : {" + 1", " - 1"}) {
    for (size_t p = s.find(op); p != std::string::npos; p = s.find(op, p + 1)) {
      const size_t end = p + op.size();
      if (!code[p + 1] || (end < s.size() && IsIdentChar(s[end]))) continue;
      out->push_back({"off_by_one", "'" + op.substr(1) + "' dropped",
                      Replace(s, p, op.size(), "")});
    }
  }
}

// Swaps whole words `a` <-> `b` (one occurrence per variant).
void SwapWords(const std::string& s, const std::vector<bool>& code,
               const std::string& name, const std::string& a,
               const std::string& b, std::vector<LineMutation>* out) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (!code[i] || (i > 0 && IsIdentChar(s[i - 1]))) continue;
    for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
      const size_t end = i + from.size();
      if (s.compare(i, from.size(), from) == 0 &&
          (end == s.size() || !IsIdentChar(s[end]))) {
        out->push_back({name, "'" + from + "' -> '" + to + "'",
                        Replace(s, i, from.size(), to)});
      }
    }
  }
}

bool BracesBalanced(const std::vector<std::string>& lines) {
  int depth = 0;
  for (const std::string& l : lines) {
    const std::vector<bool> code = CodeMask(l);
    for (size_t i = 0; i < l.size(); ++i) {
      if (!code[i]) continue;
      depth += l[i] == '{' ? 1 : l[i] == '}' ? -1 : 0;
      if (depth < 0) return false;
    }
  }
  return depth == 0;
}

// The index of `seq` in `lines` nearest to `expected`, or -1.
int64_t FindNearest(const std::vector<std::string>& lines,
                    const std::vector<std::string>& seq, int64_t expected) {
  const int64_t last =
      static_cast<int64_t>(lines.size()) - static_cast<int64_t>(seq.size());
  auto at = [&](int64_t p) {
    if (p < 0 || p > last) return false;
    return std::equal(seq.begin(), seq.end(), lines.begin() + p);
  };
  expected = std::clamp<int64_t>(expected, 0, std::max<int64_t>(last, 0));
  for (int64_t d = 0; expected - d >= 0 || expected + d <= last; ++d) {
    if (at(expected - d)) return expected - d;
    if (at(expected + d)) return expected + d;
  }
  return -1;
}

// A run of changed lines of the culprit, placed in the head's file.
struct Block {
  std::vector<std::string> removed, added;
  int64_t new_index = 0;  // 0-based new-side index of the first added line.
  std::string anchor;     // The new-side line before the block, if any.
  bool has_anchor = false;
  int64_t pos = -1;  // Where `added` starts in the head's lines.
};

std::vector<Block> BlocksOf(const FileDiff& culprit) {
  std::vector<Block> blocks;
  for (const Hunk& h : culprit.hunks) {
    int64_t next_new = h.new_count == 0 ? h.new_start : h.new_start - 1;
    std::string prev;
    bool has_prev = false;
    for (size_t i = 0; i < h.lines.size();) {
      if (h.lines[i].kind == ' ') {
        prev = h.lines[i++].text;
        has_prev = true;
        ++next_new;
        continue;
      }
      Block b;
      b.new_index = next_new;
      b.anchor = prev;
      b.has_anchor = has_prev;
      for (; i < h.lines.size() && h.lines[i].kind != ' '; ++i) {
        if (h.lines[i].kind == '-') {
          b.removed.push_back(h.lines[i].text);
        } else {
          b.added.push_back(h.lines[i].text);
          prev = h.lines[i].text;
          has_prev = true;
          ++next_new;
        }
      }
      blocks.push_back(std::move(b));
    }
  }
  return blocks;
}

void Place(const std::vector<std::string>& head, Block* b) {
  if (!b->added.empty()) {
    b->pos = FindNearest(head, b->added, b->new_index);
  } else if (b->has_anchor) {
    const int64_t q = FindNearest(head, {b->anchor}, b->new_index - 1);
    b->pos = q < 0 ? -1 : q + 1;
  } else {
    b->pos = b->new_index == 0 ? 0 : -1;
  }
}

int64_t SiteLine(const std::vector<std::string>& head, std::string_view site) {
  if (site.empty()) return -1;
  const std::string quoted = "\"" + std::string(site) + "\"";
  for (size_t i = 0; i < head.size(); ++i) {
    if (head[i].find(quoted) != std::string::npos) return i;
  }
  return -1;
}

}  // namespace

std::vector<std::string> FilesOfPass(std::string_view pass,
                                     const std::vector<std::string>& files,
                                     const std::vector<std::string>& sources) {
  std::vector<std::string> out;
  if (pass.empty()) return out;
  if (!sources.empty()) {
    for (const std::string& f : files) {
      if (std::any_of(sources.begin(), sources.end(),
                      [&](const std::string& g) {
                        return hlo_diff::SourceGlobMatches(g, f);
                      })) {
        out.push_back(f);
      }
    }
    return out;
  }
  std::string stem(pass);
  std::replace(stem.begin(), stem.end(), '-', '_');
  for (const std::string& f : files) {
    if (StartsWith(BaseStem(f), stem)) out.push_back(f);
  }
  return out;
}

std::vector<int> MinimizeSubset(
    const std::vector<int>& items,
    const std::function<bool(const std::vector<int>&)>& passes) {
  std::set<std::vector<int>> tested;
  auto test = [&](std::vector<int> s) {
    std::sort(s.begin(), s.end());
    return tested.insert(s).second && passes(s);
  };
  std::vector<int> c = items;
  size_t n = 2;
  while (c.size() >= 2) {
    n = std::min(n, c.size());
    std::vector<std::vector<int>> chunks(n);
    for (size_t i = 0; i < c.size(); ++i)
      chunks[i * n / c.size()].push_back(c[i]);
    bool reduced = false;
    for (const std::vector<int>& chunk : chunks) {
      if (test(chunk)) {
        c = chunk;
        n = 2;
        reduced = true;
        break;
      }
    }
    for (size_t k = 0; !reduced && n > 2 && k < n; ++k) {
      std::vector<int> rest;
      for (size_t j = 0; j < n; ++j) {
        if (j != k) rest.insert(rest.end(), chunks[j].begin(), chunks[j].end());
      }
      if (test(rest)) {
        c = rest;
        n = std::max<size_t>(n - 1, 2);
        reduced = true;
      }
    }
    if (!reduced) {
      if (n >= c.size()) break;
      n = std::min(2 * n, c.size());
    }
  }
  return c;
}

std::vector<LineMutation> MutateLine(const std::string& line) {
  std::vector<LineMutation> out;
  const std::vector<bool> code = CodeMask(line);
  FlipComparisons(line, code, &out);
  OffByOne(line, code, &out);
  SwapWords(line, code, "swap_min_max", "min", "max", &out);
  SwapWords(line, code, "swap_and_or", "&&", "||", &out);
  std::string trimmed =
      line.substr(line.find_first_not_of(" \t") == std::string::npos
                      ? line.size()
                      : line.find_first_not_of(" \t"));
  const bool guard = StartsWith(trimmed, "if (") && !trimmed.empty() &&
                     trimmed.back() == ';' && BracesBalanced({trimmed});
  if (guard || trimmed == "continue;" || trimmed == "break;") {
    out.push_back({"drop_line", "line dropped", ""});
  }
  return out;
}

UnifiedDiff ReplaceLines(const std::string& path,
                         const std::vector<std::string>& head, size_t start,
                         size_t count,
                         const std::vector<std::string>& replacement) {
  const size_t begin = start >= 3 ? start - 3 : 0;
  const size_t end = std::min(head.size(), start + count + 3);
  Hunk h;
  for (size_t i = begin; i < start; ++i) h.lines.push_back({' ', head[i]});
  for (size_t i = start; i < start + count; ++i) {
    h.lines.push_back({'-', head[i]});
  }
  for (const std::string& l : replacement) h.lines.push_back({'+', l});
  for (size_t i = start + count; i < end; ++i)
    h.lines.push_back({' ', head[i]});
  h.old_start = end > begin ? begin + 1 : begin;
  FileDiff f;
  f.old_path = f.new_path = path;
  f.hunks.push_back(std::move(h));
  RenumberNewSide(&f);
  UnifiedDiff d;
  d.files.push_back(std::move(f));
  return d;
}

std::vector<TemplateFix> FixTemplates(const FileDiff& culprit,
                                      const std::vector<std::string>& head,
                                      std::string_view site) {
  std::vector<TemplateFix> out;
  if (culprit.new_path.empty()) return out;  // Deleted by the culprit.
  const std::string& path = culprit.new_path;
  std::vector<Block> blocks = BlocksOf(culprit);
  for (Block& b : blocks) Place(head, &b);
  std::erase_if(blocks, [](const Block& b) { return b.pos < 0; });
  const int64_t site_line = SiteLine(head, site);
  if (site_line >= 0) {
    std::stable_sort(
        blocks.begin(), blocks.end(), [&](const Block& x, const Block& y) {
          return std::abs(x.pos - site_line) < std::abs(y.pos - site_line);
        });
  }
  std::set<std::string> seen;
  auto add = [&](std::string name, std::string detail, UnifiedDiff diff) {
    if (seen.insert(RenderUnifiedDiff(diff)).second) {
      out.push_back({std::move(name), std::move(detail), std::move(diff)});
    }
  };
  for (const Block& b : blocks) {
    const std::string where = path + ":" + std::to_string(b.pos + 1);
    if (!b.removed.empty() || BracesBalanced(b.added)) {
      add("revert_block", where + ": the culprit's change undone",
          ReplaceLines(path, head, b.pos, b.added.size(), b.removed));
    }
    if (!b.removed.empty() && !b.added.empty()) {
      add("restore_removed", where + ": the culprit's removed lines restored",
          ReplaceLines(path, head, b.pos, 0, b.removed));
    }
    for (size_t j = 0; j < b.added.size(); ++j) {
      for (LineMutation& m : MutateLine(b.added[j])) {
        std::vector<std::string> with;
        if (m.name != "drop_line") with.push_back(std::move(m.line));
        add(m.name,
            path + ":" + std::to_string(b.pos + j + 1) + ": " + m.detail,
            ReplaceLines(path, head, b.pos + j, 1, with));
      }
    }
  }
  return out;
}

}  // namespace trench::agents
