#include "triage/fuzz/line_reach.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>

#include "base/subprocess.h"
#include "git/unified_diff.h"

namespace trench::fuzz {
namespace {

bool PathMatches(std::string_view full, const std::string& rel) {
  if (full == rel) return true;
  return full.size() > rel.size() &&
         full.substr(full.size() - rel.size()) == rel &&
         full[full.size() - rel.size() - 1] == '/';
}

// The quoted value of `key = "value"` or `key: "value"` on a line.
std::string Quoted(std::string_view line) {
  const size_t a = line.find('"');
  const size_t b = line.rfind('"');
  if (a == std::string_view::npos || b <= a) return "";
  return std::string(line.substr(a + 1, b - a - 1));
}

// The number in "[  N]" on a line, or -1.
int64_t Bracketed(std::string_view line) {
  const size_t a = line.find('[');
  const size_t b = line.find(']');
  if (a == std::string_view::npos || b == std::string_view::npos || b <= a) {
    return -1;
  }
  return std::strtoll(std::string(line.substr(a + 1, b - a - 1)).c_str(),
                      nullptr, 10);
}

// The first executable `name` in $PATH's directories, or "".
std::string OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    const std::string full = dir + "/" + name;
    if (::access(full.c_str(), X_OK) == 0) return full;
  }
  return "";
}

struct Row {
  uint64_t address = 0;
  uint64_t sequence_start = 0;
  int line_id = -1;  // Into the candidate list.
};

}  // namespace

std::string SourceLine::ToString() const {
  return path + ":" + std::to_string(line);
}

StatusOr<ChangedLines> ChangedLinesOfDiff(std::string_view diff) {
  ASSIGN_OR_RETURN(agents::UnifiedDiff d, agents::ParseUnifiedDiff(diff));
  ChangedLines out;
  for (const agents::FileDiff& f : d.files) {
    if (f.is_deleted || f.new_path.empty()) continue;
    for (const agents::Hunk& h : f.hunks) {
      std::set<int64_t>& lines = out[f.new_path];
      int64_t line = h.new_start;
      // A run of removed lines with no added line marks its site: the
      // new-side line right after it, or before it at the hunk's end.
      bool removed = false, added = false;
      auto flush_removal = [&](int64_t next) {
        if (removed && !added) {
          if (next > 0 && next < h.new_start + h.new_count) {
            lines.insert(next);
          } else if (line - 1 >= h.new_start) {
            lines.insert(line - 1);
          }
        }
        removed = added = false;
      };
      for (const agents::DiffLine& l : h.lines) {
        if (l.kind == '-') {
          removed = true;
          continue;
        }
        if (l.kind == '+') {
          lines.insert(line);
          added = true;
        } else {
          flush_removal(line);
        }
        ++line;
      }
      flush_removal(0);
    }
    if (auto it = out.find(f.new_path); it != out.end() && it->second.empty()) {
      out.erase(it);
    }
  }
  return out;
}

LineCoverageMap LineCoverageMap::FromLineTable(const std::vector<uint64_t>& pcs,
                                               std::string_view debug_line,
                                               const ChangedLines& changed) {
  LineCoverageMap m;
  m.points_ = pcs.size();
  // Every changed line is a candidate; the line table sorts them.
  std::vector<SourceLine> candidates;
  std::map<std::pair<std::string, int64_t>, int> candidate_id;
  for (const auto& [path, lines] : changed) {
    for (int64_t l : lines) {
      candidate_id[{path, l}] = static_cast<int>(candidates.size());
      candidates.push_back({path, l});
    }
  }
  // The table's files that are changed paths: file index -> path.
  std::map<int64_t, std::string> dirs;
  std::map<int64_t, const std::string*> file_path;
  int64_t pending_file = -1;
  std::string pending_name;
  bool in_rows = false;
  bool new_sequence = true;
  uint64_t sequence_start = 0;
  std::vector<Row> rows;
  auto finish_file = [&](int64_t dir) {
    if (pending_file < 0) return;
    std::string full = pending_name;
    if (!full.empty() && full[0] != '/' && dirs.count(dir)) {
      full = dirs[dir] + "/" + full;
    }
    for (const auto& [path, lines] : changed) {
      if (PathMatches(full, path)) file_path[pending_file] = &path;
    }
    pending_file = -1;
  };
  size_t pos = 0;
  while (pos < debug_line.size()) {
    size_t end = debug_line.find('\n', pos);
    if (end == std::string_view::npos) end = debug_line.size();
    std::string_view line = debug_line.substr(pos, end - pos);
    pos = end + 1;
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string_view::npos) continue;
    std::string_view t = line.substr(first);
    if (t.rfind("debug_line[", 0) == 0) {
      dirs.clear();
      file_path.clear();
      pending_file = -1;
      in_rows = false;
      new_sequence = true;
    } else if (t.rfind("include_directories[", 0) == 0) {
      dirs[Bracketed(t)] = Quoted(t);
    } else if (t.rfind("file_names[", 0) == 0) {
      pending_file = Bracketed(t);
      pending_name.clear();
    } else if (t.rfind("name:", 0) == 0 && pending_file >= 0) {
      pending_name = Quoted(t);
    } else if (t.rfind("dir_index:", 0) == 0 && pending_file >= 0) {
      finish_file(std::strtoll(std::string(t.substr(10)).c_str(), nullptr, 10));
    } else if (t.rfind("Address", 0) == 0) {
      in_rows = true;
    } else if (in_rows && t.rfind("0x", 0) == 0) {
      // Address Line Column File ISA Discriminator Flags.
      std::istringstream in{std::string(t)};
      std::string addr;
      int64_t l = 0, column = 0, file = 0;
      in >> addr >> l >> column >> file;
      const uint64_t a = std::strtoull(addr.c_str(), nullptr, 16);
      if (new_sequence) {
        sequence_start = a;
        new_sequence = false;
      }
      const bool end_sequence =
          t.find("end_sequence") != std::string_view::npos;
      if (end_sequence) {
        new_sequence = true;
        continue;
      }
      auto f = file_path.find(file);
      if (f == file_path.end() || l <= 0) continue;
      auto c = candidate_id.find({*f->second, l});
      if (c == candidate_id.end()) continue;
      rows.push_back({a, sequence_start, c->second});
    }
  }
  // Each row's point: the nearest one at or before it in its sequence.
  std::vector<std::pair<uint64_t, size_t>> sorted;
  sorted.reserve(pcs.size());
  for (size_t i = 0; i < pcs.size(); ++i) sorted.emplace_back(pcs[i], i);
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::set<size_t>> points_of(candidates.size());
  std::vector<bool> has_code(candidates.size(), false);
  for (const Row& r : rows) {
    has_code[r.line_id] = true;
    auto it = std::upper_bound(sorted.begin(), sorted.end(),
                               std::make_pair(r.address, SIZE_MAX));
    if (it == sorted.begin()) continue;
    --it;
    if (it->first < r.sequence_start) continue;
    points_of[r.line_id].insert(it->second);
  }
  for (size_t c = 0; c < candidates.size(); ++c) {
    if (!has_code[c]) {
      m.no_code_.push_back(candidates[c]);
    } else if (points_of[c].empty()) {
      m.uninstrumented_.push_back(candidates[c]);
    } else {
      const int id = static_cast<int>(m.lines_.size());
      m.lines_.push_back(candidates[c]);
      for (size_t p : points_of[c]) m.lines_of_point_[p].push_back(id);
    }
  }
  return m;
}

StatusOr<LineCoverageMap> LineCoverageMap::OfBinary(
    const std::string& hlo_run, const ChangedLines& changed) {
  hlo_diff::ProcessSpec pcs_spec;
  pcs_spec.argv = {hlo_run, "--coverage-pcs"};
  pcs_spec.capture_bytes = size_t{1} << 30;
  pcs_spec.timeout_seconds = 120;
  ASSIGN_OR_RETURN(hlo_diff::ProcessResult p, hlo_diff::RunProcess(pcs_spec));
  if (p.exit_code != 0) {
    return Internal(hlo_run + " --coverage-pcs failed (exit " +
                    std::to_string(p.exit_code) + "): " + p.err_last_line);
  }
  StatusOr<Json> j = ParseJson(p.out);
  if (!j.ok()) {
    return Internal(hlo_run + " --coverage-pcs: " + j.status().message());
  }
  std::vector<uint64_t> pcs;
  if (const Json* list = j->Find("pcs"); list && list->is_array()) {
    for (const Json& e : list->array()) {
      if (e.is_integer()) pcs.push_back(e.int64_value());
    }
  }
  if (pcs.empty()) {
    return FailedPrecondition(hlo_run +
                              " is not a coverage build (no coverage points)");
  }
  const char* env = std::getenv("TRENCH_DWARFDUMP");
  const std::string dwarfdump =
      env && *env ? std::string(env) : OnPath("llvm-dwarfdump");
  if (dwarfdump.empty()) {
    return FailedPrecondition(
        "llvm-dwarfdump not found on PATH (set TRENCH_DWARFDUMP)");
  }
  hlo_diff::ProcessSpec dump;
  dump.argv = {dwarfdump, "--debug-line", hlo_run};
  dump.capture_bytes = size_t{1} << 31;
  dump.timeout_seconds = 300;
  ASSIGN_OR_RETURN(hlo_diff::ProcessResult d, hlo_diff::RunProcess(dump));
  if (d.exit_code != 0) {
    return Internal("llvm-dwarfdump --debug-line " + hlo_run +
                    " failed (exit " + std::to_string(d.exit_code) +
                    "): " + d.err_last_line);
  }
  return FromLineTable(pcs, d.out, changed);
}

std::vector<int> LineCoverageMap::Reached(std::string_view hits) const {
  std::vector<int> out;
  for (const auto& [point, ids] : lines_of_point_) {
    const size_t digit = point / 4;
    if (digit >= hits.size()) break;
    const char c = hits[digit];
    const unsigned v = c >= '0' && c <= '9'   ? c - '0'
                       : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                              : 0;
    if (v & (1u << (point % 4))) out.insert(out.end(), ids.begin(), ids.end());
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

LineReach::LineReach(std::shared_ptr<const LineCoverageMap> map)
    : map_(std::move(map)), programs_(map_->lines().size(), 0) {}

int LineReach::Add(const std::vector<int>& ids) {
  std::lock_guard<std::mutex> lock(mu_);
  int fresh = 0;
  for (int id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= programs_.size()) continue;
    if (programs_[id]++ == 0) ++fresh;
  }
  return fresh;
}

int64_t LineReach::reached() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::count_if(programs_.begin(), programs_.end(),
                       [](int64_t n) { return n > 0; });
}

int64_t LineReach::programs(int id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return id >= 0 && static_cast<size_t>(id) < programs_.size() ? programs_[id]
                                                               : 0;
}

bool LineReach::AllReachedAtLeast(int64_t n) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (programs_.empty()) return false;
  return std::all_of(programs_.begin(), programs_.end(),
                     [n](int64_t p) { return p >= n; });
}

std::vector<SourceLine> LineReach::Unreached() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<SourceLine> out;
  for (size_t i = 0; i < programs_.size(); ++i) {
    if (programs_[i] == 0) out.push_back(map_->lines()[i]);
  }
  return out;
}

Json LineReach::ToJson() const {
  Json j = Json::MakeObject();
  j["lines"] = static_cast<int64_t>(lines());
  j["reached"] = reached();
  j["no_code"] = static_cast<int64_t>(map_->no_code().size());
  j["uninstrumented"] = static_cast<int64_t>(map_->uninstrumented().size());
  j["points"] = static_cast<int64_t>(map_->points());
  Json unreached = Json::MakeArray();
  for (const SourceLine& l : Unreached()) {
    if (unreached.array().size() >= 50) break;
    unreached.push_back(l.ToString());
  }
  j["unreached"] = std::move(unreached);
  Json per_line = Json::MakeArray();
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t i = 0; i < programs_.size(); ++i) {
    Json e = Json::MakeObject();
    e["line"] = map_->lines()[i].ToString();
    e["programs"] = programs_[i];
    per_line.push_back(std::move(e));
  }
  j["per_line"] = std::move(per_line);
  return j;
}

}  // namespace trench::fuzz
