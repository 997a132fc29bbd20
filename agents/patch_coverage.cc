#include "agents/patch_coverage.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "agents/patch_strategies.h"

namespace trench::agents {
namespace {

// Copies are looked for pairwise; a larger culprit is judged without.
constexpr size_t kMaxBlocksForCopies = 2000;

// ---- Reading the task leniently.

const Json* Member(const Json* j, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    if (j == nullptr || !j->is_object()) return nullptr;
    j = j->Find(k);
  }
  return j;
}

std::string FirstString(
    const Json* loc,
    std::initializer_list<std::initializer_list<const char*>> paths) {
  for (const auto& keys : paths) {
    const Json* v = Member(loc, keys);
    if (v && v->is_string() && !v->string_value().empty()) {
      return v->string_value();
    }
  }
  return "";
}

// ---- Lines and tokens.

bool HasAlnum(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c));
  });
}

std::string Normalize(const std::string& s) {
  std::string out;
  bool blank = false;
  for (char c : s) {
    if (c == ' ' || c == '\t' || c == '\r') {
      blank = !out.empty();
      continue;
    }
    if (blank) out += ' ';
    blank = false;
    out += c;
  }
  return out;
}

bool IsIdent(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Identifiers, numbers, string literals and operators of `s`; brackets,
// commas and semicolons are left out.
std::set<std::string> Tokens(const std::string& s) {
  static const char* kOps[] = {"<=", ">=", "==", "!=", "&&", "||", "<<",
                               ">>", "->", "+=", "-=", "*=", "/=", "::"};
  std::set<std::string> out;
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (IsIdent(c)) {
      size_t e = i;
      while (e < s.size() && (IsIdent(s[e]) || s[e] == '.')) ++e;
      out.insert(s.substr(i, e - i));
      i = e;
    } else if (c == '"' || c == '\'') {
      size_t e = i + 1;
      while (e < s.size() && s[e] != c) e += s[e] == '\\' ? 2 : 1;
      e = std::min(e + 1, s.size());
      out.insert(s.substr(i, e - i));
      i = e;
    } else if (std::string("+-*/%<>!&|^=?~").find(c) != std::string::npos) {
      std::string op(1, c);
      for (const char* o : kOps) {
        if (s.compare(i, 2, o) == 0) op = o;
      }
      out.insert(op);
      i += op.size();
    } else {
      ++i;
    }
  }
  return out;
}

double Jaccard(const std::set<std::string>& a, const std::set<std::string>& b,
               size_t* shared) {
  size_t n = 0;
  for (const std::string& t : a) n += b.count(t);
  if (shared) *shared = n;
  const size_t all = a.size() + b.size() - n;
  return all == 0 ? 0 : static_cast<double>(n) / static_cast<double>(all);
}

// One run of changed lines of the culprit.
struct Block {
  BlockCoverage at;
  std::vector<std::string> removed, added;  // Normalized.
  std::set<std::string> tokens, edit;       // For SameRule.
};

// The lines that count: those with a letter or digit, else all.
std::vector<std::string> Significant(const std::vector<std::string>& lines) {
  std::vector<std::string> out;
  for (const std::string& l : lines) {
    if (HasAlnum(l)) out.push_back(l);
  }
  return out.empty() ? lines : out;
}

void Tokenize(Block* b) {
  std::set<std::string> plus, minus;
  for (const std::string& l : b->added) plus.merge(Tokens(l));
  for (const std::string& l : b->removed) minus.merge(Tokens(l));
  b->tokens = plus;
  b->tokens.insert(minus.begin(), minus.end());
  for (const std::string& t : plus) {
    if (!minus.count(t)) b->edit.insert("+" + t);
  }
  for (const std::string& t : minus) {
    if (!plus.count(t)) b->edit.insert("-" + t);
  }
}

bool SameRule(const Block& a, const Block& b) {
  size_t shared = 0;
  return Jaccard(a.tokens, b.tokens, &shared) >= 0.6 && shared >= 3 &&
         Jaccard(a.edit, b.edit, nullptr) >= 0.5;
}

std::vector<Block> BlocksOf(const UnifiedDiff& culprit,
                            const std::vector<std::string>& localized) {
  std::vector<Block> out;
  int hunk = 0;
  for (const FileDiff& f : culprit.files) {
    const bool loc = std::find(localized.begin(), localized.end(), f.path()) !=
                     localized.end();
    for (const Hunk& h : f.hunks) {
      int64_t next_new = h.new_start;
      for (size_t i = 0; i < h.lines.size();) {
        if (h.lines[i].kind == ' ') {
          ++next_new;
          ++i;
          continue;
        }
        Block b;
        b.at = {f.path(), next_new, hunk, loc, BlockFate::kLeft};
        for (; i < h.lines.size() && h.lines[i].kind != ' '; ++i) {
          const std::string text = Normalize(h.lines[i].text);
          if (h.lines[i].kind == '-') {
            b.removed.push_back(text);
          } else {
            b.added.push_back(text);
            ++next_new;
          }
        }
        Tokenize(&b);
        out.push_back(std::move(b));
      }
      ++hunk;
    }
  }
  return out;
}

// What the candidate removes and adds in one file (normalized lines).
struct Edits {
  std::multiset<std::string> removed, added;
};

std::map<std::string, Edits> EditsOf(const UnifiedDiff& candidate) {
  std::map<std::string, Edits> out;
  for (const FileDiff& f : candidate.files) {
    Edits& e = out[f.path()];
    for (const Hunk& h : f.hunks) {
      for (const DiffLine& l : h.lines) {
        if (l.kind == '-') e.removed.insert(Normalize(l.text));
        if (l.kind == '+') e.added.insert(Normalize(l.text));
      }
    }
  }
  return out;
}

// Whether `have` holds every line of `need` (with multiplicity).
bool Holds(const std::multiset<std::string>& have,
           const std::vector<std::string>& need) {
  std::map<std::string, size_t> want;
  for (const std::string& l : need) ++want[l];
  for (const auto& [l, n] : want) {
    if (have.count(l) < n) return false;
  }
  return true;
}

bool HoldsAny(const std::multiset<std::string>& have,
              const std::vector<std::string>& lines) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& l) { return have.count(l) > 0; });
}

BlockFate FateOf(const Block& b, const Edits& e) {
  const std::vector<std::string> added = Significant(b.added);
  const std::vector<std::string> removed = Significant(b.removed);
  if (Holds(e.removed, added) && Holds(e.added, removed)) {
    return BlockFate::kReverted;
  }
  if (HoldsAny(e.removed, added) || HoldsAny(e.added, removed)) {
    return BlockFate::kTouched;
  }
  return BlockFate::kLeft;
}

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

LocalizedScope ScopeOfTask(const Json& task) {
  LocalizedScope s;
  const Json* loc = task.Find("localization");
  s.pass =
      FirstString(loc, {{"findings", "pass"}, {"signature", "pass"}, {"pass"}});
  s.site = FirstString(
      loc, {{"findings", "rewrite", "site"}, {"signature", "site"}, {"site"}});
  s.opcode = FirstString(loc, {{"findings", "fused_opcode"},
                               {"findings", "opcode"},
                               {"signature", "opcode"},
                               {"opcode"}});
  if (const Json* g = task.Find("culprit_sources"); g && g->is_array()) {
    for (const Json& e : g->array()) {
      if (e.is_string()) s.sources.push_back(e.string_value());
    }
  }
  return s;
}

std::vector<std::string> LocalizedFiles(const LocalizedScope& scope,
                                        const std::vector<std::string>& files) {
  std::vector<std::string> out = FilesOfPass(scope.pass, files, scope.sources);
  if (scope.pass != "codegen") return out;
  if (scope.sources.empty()) {
    out.clear();
    for (const std::string& f : files) {
      if (("/" + f).find("/codegen/") != std::string::npos) out.push_back(f);
    }
  }
  if (scope.opcode.empty()) return out;
  std::string op = scope.opcode;
  std::replace(op.begin(), op.end(), '-', '_');
  std::vector<std::string> of_op;
  for (const std::string& f : out) {
    if (f.substr(f.rfind('/') + 1).find(op) != std::string::npos) {
      of_op.push_back(f);
    }
  }
  return of_op.empty() ? out : of_op;
}

int PatchCoverage::Count(BlockFate fate) const {
  return static_cast<int>(
      std::count_if(blocks.begin(), blocks.end(),
                    [&](const BlockCoverage& b) { return b.fate == fate; }));
}

std::vector<int> PatchCoverage::CompletingHunks() const {
  std::set<int> hunks;
  for (const BlockCoverage& b : blocks) {
    const std::string w = b.Where();
    const bool flagged =
        std::count(left_localized.begin(), left_localized.end(), w) ||
        std::count(left_copies.begin(), left_copies.end(), w);
    if (b.fate != BlockFate::kLeft || flagged) hunks.insert(b.hunk);
  }
  return {hunks.begin(), hunks.end()};
}

std::string PatchCoverage::Summary() const {
  if (!parsed) return "the diff does not parse: " + error;
  std::string s = "reverts " + std::to_string(Count(BlockFate::kReverted)) +
                  ", changes " + std::to_string(Count(BlockFate::kTouched)) +
                  " and leaves " + std::to_string(Count(BlockFate::kLeft)) +
                  " of the culprit's " + std::to_string(blocks.size()) +
                  " change blocks";
  if (localized_files.empty()) return s;
  const std::string what =
      Join(localized_files) +
      (pass.empty() ? "" : ", the localized pass '" + pass + "'");
  return s + (touches_localized ? "; changes " : "; does not change ") + what;
}

std::string PatchCoverage::Reason() const {
  if (!partial()) return "";
  std::string s = "partial revert: it";
  if (!left_localized.empty()) {
    s += " leaves the culprit's change at " + Join(left_localized) + " (" +
         (pass.empty() ? "the localized pass"
                       : "the localized pass '" + pass + "'") +
         ") in place";
  }
  if (!left_copies.empty()) {
    s += std::string(left_localized.empty() ? "" : ";") +
         " leaves the same rule changed at " + Join(left_copies);
  }
  return s;
}

Json PatchCoverage::ToJson() const {
  Json j = Json::MakeObject();
  j["parsed"] = parsed;
  if (!parsed) j["error"] = error;
  j["culprit_changes"] = static_cast<int64_t>(blocks.size());
  j["reverted"] = Count(BlockFate::kReverted);
  j["touched"] = Count(BlockFate::kTouched);
  j["left"] = Count(BlockFate::kLeft);
  j["localized_files"] = Json::MakeStringArray(localized_files);
  j["touches_localized"] = touches_localized;
  j["partial"] = partial();
  j["left_localized"] = Json::MakeStringArray(left_localized);
  j["left_copies"] = Json::MakeStringArray(left_copies);
  j["summary"] = Summary();
  if (partial()) j["reason"] = Reason();
  return j;
}

PatchCoverage JudgeCoverage(const UnifiedDiff& culprit,
                            const UnifiedDiff& candidate,
                            const std::vector<std::string>& localized_files,
                            const std::string& pass) {
  PatchCoverage c;
  c.pass = pass;
  std::vector<Block> blocks = BlocksOf(culprit, localized_files);
  const std::map<std::string, Edits> edits = EditsOf(candidate);
  for (const FileDiff& f : culprit.files) {
    if (std::count(localized_files.begin(), localized_files.end(), f.path()) &&
        !std::count(c.localized_files.begin(), c.localized_files.end(),
                    f.path())) {
      c.localized_files.push_back(f.path());
    }
  }
  for (const std::string& f : c.localized_files) {
    c.touches_localized |= edits.count(f) > 0;
  }
  for (Block& b : blocks) {
    auto e = edits.find(b.at.file);
    if (e != edits.end()) b.at.fate = FateOf(b, e->second);
  }
  for (const Block& b : blocks) {
    if (b.at.fate != BlockFate::kLeft) continue;
    if (b.at.localized && !c.touches_localized) {
      c.left_localized.push_back(b.at.Where());
    }
    if (blocks.size() <= kMaxBlocksForCopies &&
        std::any_of(blocks.begin(), blocks.end(), [&](const Block& o) {
          return o.at.fate != BlockFate::kLeft && SameRule(b, o);
        })) {
      c.left_copies.push_back(b.at.Where());
    }
  }
  for (Block& b : blocks) c.blocks.push_back(std::move(b.at));
  return c;
}

PatchCoverage JudgeCoverageText(const UnifiedDiff& culprit,
                                const std::string& candidate,
                                const std::vector<std::string>& localized_files,
                                const std::string& pass) {
  StatusOr<UnifiedDiff> d = ParseUnifiedDiff(candidate);
  if (d.ok()) return JudgeCoverage(culprit, *d, localized_files, pass);
  PatchCoverage c =
      JudgeCoverage(culprit, UnifiedDiff(), localized_files, pass);
  c.parsed = false;
  c.error = d.status().message();
  return c;
}

}  // namespace trench::agents
