// The built-in patch drafter: SapFix-style strategies over the culprit
// commit (agents/patch_strategies.h), in order:
//   1. revert_file     the culprit's hunks in the localized pass's files;
//   2. revert_commit   the whole culprit (only when 1 did not pass);
//   3. partial_revert  ddmin over the passing revert's hunks (when it has
//                      two or more);
//   4. fix_template    mutations of the lines the culprit changed, nearest
//                      to the localized rewrite site first (only when no
//                      revert passed, or when the task says `exhaustive`);
//   5. partial_revert  completed: a passing revert that leaves the
//                      localized pass's change or a copy of the rule it
//                      undoes (agents/patch_coverage.h), with those hunks
//                      reverted too.
// Reverts are moved onto the head's version of each file first (later
// commits may have shifted the lines). Every candidate is checked in
// memory against the head's files, then with try_patch (a build of head +
// patch and the repro); those that build and pass are submit_patch'ed.
// The claim lists them by coverage (unflagged first; each carries its
// "coverage", PatchCoverage::ToJson), then smallest diff first. Budget:
// `max_tries` try_patch calls (default 16) and `seconds` of their
// reported time (0: no limit).
//
// A reviewer's hints (task "hints": strings, from a redraft or a
// rejection's comment) steer the round: a strategy the hints name (e.g.
// "try fix_template", "revert_commit") goes first (fix_template then runs
// exhaustively), and culprit files a hint names (path or file name) are
// the files the file-level strategies work on. The claim records the
// hints and what they changed ("hints": {"seen", "applied"}).
#include <algorithm>
#include <map>
#include <optional>

#include "agents/builtin_brains.h"
#include "agents/patch_coverage.h"
#include "agents/patch_strategies.h"
#include "base/json_nlohmann.h"
#include "git/unified_diff.h"

namespace trench::agents {
namespace {

constexpr size_t kMaxDiffChars = 200000;  // try_patch's schema.
constexpr int64_t kPageLines = 400;       // read_source's limit per call.

const Json* Path(const Json* j, std::initializer_list<const char*> keys) {
  for (const char* k : keys) {
    if (j == nullptr || !j->is_object()) return nullptr;
    j = j->Find(k);
  }
  return j;
}

std::string PathString(const Json& j, std::initializer_list<const char*> keys) {
  const Json* v = Path(&j, keys);
  return v && v->is_string() ? v->string_value() : "";
}

// What a reviewer's hints ask of the round.
struct HintGuide {
  std::vector<std::string> hints;
  std::string strategy;            // A strategy the hints name, or "".
  std::vector<std::string> files;  // Culprit files the hints name.
};

constexpr const char* kStrategies[] = {"revert_file", "revert_commit",
                                       "partial_revert", "fix_template"};

HintGuide ReadHints(const Json& task, const std::vector<std::string>& files) {
  HintGuide g;
  const Json* hints = task.Find("hints");
  if (hints == nullptr || !hints->is_array()) return g;
  for (const Json& h : hints->array()) {
    if (h.is_string()) g.hints.push_back(h.string_value());
  }
  // The newest hint wins for the strategy.
  for (auto it = g.hints.rbegin(); it != g.hints.rend() && g.strategy.empty();
       ++it) {
    for (const char* s : kStrategies) {
      if (it->find(s) != std::string::npos) g.strategy = s;
    }
  }
  for (const std::string& f : files) {
    const size_t slash = f.rfind('/');
    const std::string base =
        slash == std::string::npos ? f : f.substr(slash + 1);
    for (const std::string& h : g.hints) {
      if (h.find(f) != std::string::npos || h.find(base) != std::string::npos) {
        g.files.push_back(f);
        break;
      }
    }
  }
  return g;
}

struct Candidate {
  Json id;
  std::string strategy, diff, rationale, detail;
  int changed = 0;
};

// One drafting run (the brain makes a fresh one per task).
class DraftSession {
 public:
  StatusOr<Json> Run(const Json& task, ToolBox& tools);

 private:
  StatusOr<std::optional<UnifiedDiff>> CulpritDiff(const std::string& path);
  StatusOr<const std::vector<std::string>*> HeadFile(const std::string& path);
  StatusOr<UnifiedDiff> RevertOnHead(const UnifiedDiff& forward);
  StatusOr<bool> Verify(const UnifiedDiff& diff, const std::string& label);
  Status Submit(const std::string& strategy, const UnifiedDiff& diff,
                const std::string& rationale, const std::string& detail);
  // The strategies (the file comment says when each runs). The reverts
  // return the revert when it passed (and was submitted).
  StatusOr<std::optional<UnifiedDiff>> RevertFiles(
      const UnifiedDiff& full, const std::vector<std::string>& localized,
      const std::string& pass, std::string* tried);
  StatusOr<std::optional<UnifiedDiff>> RevertCommit(
      const UnifiedDiff& full, const std::string& file_revert);
  Status PartialRevert(const UnifiedDiff& passing);
  // For each passing revert that patch_coverage.h flags as partial (it
  // leaves the localized pass's change, or a copy of the rule it undoes):
  // the revert of its culprit hunks plus the ones it left, tried and
  // submitted as another partial_revert.
  Status CompleteReverts(const std::string& pass);
  PatchCoverage CoverageOf(const Candidate& c, const std::string& pass) const;
  Json Claim(const std::string& pass);
  Status TryTemplates(const UnifiedDiff& full,
                      const std::vector<std::string>& files,
                      const std::string& site, bool exhaustive);
  void Note(std::string s) { notes_.push_back(std::move(s)); }
  std::string Culprit() const {
    return sha_.substr(0, 12) +
           (summary_.empty() ? "" : " (\"" + summary_ + "\")");
  }

  ToolBox* tools_ = nullptr;
  std::string sha_, summary_, head_;
  int64_t max_tries_ = 16, tries_ = 0;
  double budget_ = 0, used_ = 0;
  bool budget_noted_ = false;
  std::map<std::string, std::optional<std::vector<std::string>>> head_files_;
  std::map<std::string, bool> verified_;
  std::vector<Candidate> candidates_;
  UnifiedDiff full_;                         // The culprit's diff.
  std::vector<std::string> coverage_files_;  // LocalizedFiles'.
  Json notes_ = Json::MakeArray();
  Json tried_ = Json::MakeArray();
};

StatusOr<Json> DraftSession::Run(const Json& task, ToolBox& tools) {
  RETURN_IF_ERROR(CheckTaskObject(task));
  tools_ = &tools;
  sha_ = PathString(task, {"culprit", "sha"});
  if (sha_.empty()) return InvalidArgument("task: culprit.sha: required");
  summary_ = PathString(task, {"culprit", "summary"});
  ASSIGN_OR_RETURN(std::optional<std::string> head, TaskString(task, "head"));
  head_ = head ? *head : sha_;
  ASSIGN_OR_RETURN(max_tries_, TaskInt(task, "max_tries", 16));
  ASSIGN_OR_RETURN(int64_t seconds, TaskInt(task, "seconds", 0));
  budget_ = static_cast<double>(seconds);
  const Json* ex = task.Find("exhaustive");
  const bool exhaustive = ex && ex->is_bool() && ex->bool_value();
  // The localize step's report, or a partial one from an LLM or a test
  // (patch_coverage.h reads either).
  const LocalizedScope scope = ScopeOfTask(task);
  const std::string& pass = scope.pass;
  const std::string& site = scope.site;

  ASSIGN_OR_RETURN(std::optional<UnifiedDiff> full, CulpritDiff(""));
  std::vector<std::string> files;
  if (full) {
    for (const FileDiff& f : full->files) files.push_back(f.path());
  }
  // The target's own globs for the culprit (the daemon read them from the
  // target's description); without them, files named after the pass.
  std::vector<std::string> localized = FilesOfPass(pass, files, scope.sources);
  coverage_files_ = LocalizedFiles(scope, files);
  const HintGuide guide = ReadHints(task, files);
  Json applied = Json::MakeArray();
  for (const std::string& h : guide.hints) Note("reviewer's hint: " + h);
  if (!guide.files.empty()) {
    localized = coverage_files_ = guide.files;
    std::string names;
    for (const std::string& f : guide.files) {
      names += (names.empty() ? "" : ", ") + f;
    }
    applied.push_back("files: " + names);
  }
  if (!guide.strategy.empty()) applied.push_back("first: " + guide.strategy);
  if (full && localized.empty()) {
    Note("no file of the localized pass '" + pass +
         "' among the culprit's files");
  }
  const std::vector<std::string>& template_files =
      localized.empty() ? files : localized;
  if (full && guide.strategy == "fix_template") {
    RETURN_IF_ERROR(TryTemplates(*full, template_files, site, true));
  }
  std::optional<UnifiedDiff> passing;
  std::string file_revert;  // Strategy 1's diff, not to be tried twice.
  const bool skip_file = guide.strategy == "revert_commit";
  if (full && !localized.empty() && !skip_file) {
    ASSIGN_OR_RETURN(passing,
                     RevertFiles(*full, localized, pass, &file_revert));
  }
  if (full && !passing) {
    ASSIGN_OR_RETURN(passing, RevertCommit(*full, file_revert));
  }
  if (full && !passing && skip_file && !localized.empty()) {
    ASSIGN_OR_RETURN(passing,
                     RevertFiles(*full, localized, pass, &file_revert));
  }
  if (passing && passing->HunkCount() >= 2) {
    RETURN_IF_ERROR(PartialRevert(*passing));
  }
  if (full && guide.strategy != "fix_template" &&
      (candidates_.empty() || exhaustive)) {
    RETURN_IF_ERROR(TryTemplates(*full, template_files, site, exhaustive));
  }
  if (full) {
    full_ = *full;
    RETURN_IF_ERROR(CompleteReverts(pass));
  }
  Json claim = Claim(pass);
  if (!guide.hints.empty()) {
    Json h = Json::MakeObject();
    Json seen = Json::MakeArray();
    for (const std::string& t : guide.hints) seen.push_back(t);
    h["seen"] = std::move(seen);
    h["applied"] = std::move(applied);
    claim["hints"] = std::move(h);
  }
  return claim;
}

StatusOr<std::optional<UnifiedDiff>> DraftSession::RevertFiles(
    const UnifiedDiff& full, const std::vector<std::string>& localized,
    const std::string& pass, std::string* tried) {
  UnifiedDiff forward;
  for (const std::string& path : localized) {
    ASSIGN_OR_RETURN(std::optional<UnifiedDiff> d, CulpritDiff(path));
    for (const FileDiff& f : (d ? *d : full).files) {
      if (f.path() == path) forward.files.push_back(f);
    }
  }
  ASSIGN_OR_RETURN(UnifiedDiff revert, RevertOnHead(forward));
  *tried = RenderUnifiedDiff(revert);
  ASSIGN_OR_RETURN(bool ok, Verify(revert, "revert_file"));
  if (!ok) return std::optional<UnifiedDiff>();
  std::string names;
  for (const std::string& p : localized) {
    names += (names.empty() ? "" : ", ") + p;
  }
  RETURN_IF_ERROR(Submit("revert_file", revert,
                         "Reverts the culprit " + Culprit() + " in " + names +
                             ", the code of the localized pass '" + pass + "'.",
                         names));
  return std::optional<UnifiedDiff>(std::move(revert));
}

StatusOr<std::optional<UnifiedDiff>> DraftSession::RevertCommit(
    const UnifiedDiff& full, const std::string& file_revert) {
  ASSIGN_OR_RETURN(UnifiedDiff revert, RevertOnHead(full));
  if (RenderUnifiedDiff(revert) == file_revert) {
    return std::optional<UnifiedDiff>();  // Strategy 1 tried it already.
  }
  ASSIGN_OR_RETURN(bool ok, Verify(revert, "revert_commit"));
  if (!ok) return std::optional<UnifiedDiff>();
  RETURN_IF_ERROR(Submit("revert_commit", revert,
                         "Reverts the whole culprit commit " + Culprit() + ".",
                         ""));
  return std::optional<UnifiedDiff>(std::move(revert));
}

Status DraftSession::PartialRevert(const UnifiedDiff& passing) {
  std::vector<int> all(passing.HunkCount());
  for (int i = 0; i < passing.HunkCount(); ++i) all[i] = i;
  Status error;
  const std::vector<int> best =
      MinimizeSubset(all, [&](const std::vector<int>& subset) {
        StatusOr<bool> ok =
            Verify(SelectHunks(passing, subset), "partial_revert");
        if (!ok.ok() && error.ok()) error = ok.status();
        return ok.ok() && *ok;
      });
  RETURN_IF_ERROR(error);
  if (best.size() == all.size()) return Status::Ok();
  const UnifiedDiff partial = SelectHunks(passing, best);
  std::string where;
  for (const FileDiff& f : partial.files) {
    for (const Hunk& h : f.hunks) {
      where += (where.empty() ? "" : ", ") + f.path() + ":" +
               std::to_string(h.old_start);
    }
  }
  return Submit("partial_revert", partial,
                "Reverts " + std::to_string(best.size()) + " of the " +
                    std::to_string(all.size()) + " hunks of the culprit " +
                    Culprit() + " (" + where +
                    "): delta debugging over the hunks found these enough "
                    "for the repro to pass.",
                where);
}

PatchCoverage DraftSession::CoverageOf(const Candidate& c,
                                       const std::string& pass) const {
  return JudgeCoverageText(full_, c.diff, coverage_files_, pass);
}

Status DraftSession::CompleteReverts(const std::string& pass) {
  const std::vector<Candidate> submitted = candidates_;
  for (const Candidate& c : submitted) {
    if (c.strategy == "fix_template") continue;
    const PatchCoverage cov = CoverageOf(c, pass);
    if (!cov.parsed || !cov.partial()) continue;
    ASSIGN_OR_RETURN(UnifiedDiff revert,
                     RevertOnHead(SelectHunks(full_, cov.CompletingHunks())));
    const std::string text = RenderUnifiedDiff(revert);
    if (std::any_of(candidates_.begin(), candidates_.end(),
                    [&](const Candidate& o) { return o.diff == text; })) {
      continue;  // Already a candidate (often the whole revert).
    }
    Note(c.strategy + ": " + cov.Reason() + "; trying it completed");
    ASSIGN_OR_RETURN(bool ok, Verify(revert, "partial_revert"));
    if (!ok) continue;
    std::string left = cov.left_localized.empty()
                           ? ""
                           : "the localized "
                             "pass's change at " +
                                 cov.left_localized.front();
    if (!cov.left_copies.empty()) {
      left += (left.empty() ? "" : " and ") + std::string("the same rule at ") +
              cov.left_copies.front();
    }
    RETURN_IF_ERROR(Submit("partial_revert", revert,
                           "Reverts the culprit " + Culprit() + " where the " +
                               c.strategy + " candidate does and also " + left +
                               ", which that candidate leaves in place.",
                           "completed: " + left));
  }
  return Status::Ok();
}

Json DraftSession::Claim(const std::string& pass) {
  // The candidates that cover the localized pass first (patch_coverage.h),
  // then the smallest diff.
  std::vector<std::pair<PatchCoverage, Candidate>> ranked;
  for (Candidate& c : candidates_) {
    ranked.emplace_back(CoverageOf(c, pass), std::move(c));
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) {
                     return std::pair(a.first.rank(), a.second.changed) <
                            std::pair(b.first.rank(), b.second.changed);
                   });
  Json list = Json::MakeArray();
  for (const auto& [cov, c] : ranked) {
    Json j = Json::MakeObject();
    j["coverage"] = cov.ToJson();
    j["candidate"] = c.id;
    j["strategy"] = c.strategy;
    j["diff"] = c.diff;
    j["changed_lines"] = c.changed;
    j["rationale"] = c.rationale;
    if (!c.detail.empty()) j["detail"] = c.detail;
    list.push_back(std::move(j));
  }
  Json claim = Json::MakeObject();
  claim["candidates"] = std::move(list);
  claim["tries"] = std::move(tried_);
  if (!pass.empty()) claim["pass"] = pass;
  if (ranked.empty()) {
    claim["reason"] =
        tries_ == 0
            ? "no candidate could be made for head " + head_.substr(0, 12)
            : "none of " + std::to_string(tries_) +
                  " candidates built and made the repro pass";
  }
  claim["notes"] = std::move(notes_);
  return claim;
}

StatusOr<std::optional<UnifiedDiff>> DraftSession::CulpritDiff(
    const std::string& path) {
  Json args = Json::MakeObject();
  args["commit"] = sha_;
  if (!path.empty()) args["path"] = path;
  ASSIGN_OR_RETURN(ToolResult r, tools_->Call("culprit_diff", args));
  const std::string what = "culprit_diff" + (path.empty() ? "" : " " + path);
  if (!r.ok) {
    Note(what + " failed: " + r.error);
    return std::optional<UnifiedDiff>();
  }
  const std::string text = OutString(r.output, "diff");
  if (text.empty()) {
    Note(what + ": empty diff");
    return std::optional<UnifiedDiff>();
  }
  StatusOr<UnifiedDiff> d = ParseUnifiedDiff(text);
  if (!d.ok()) {
    Note(what + ": the diff does not parse: " + d.status().message());
    return std::optional<UnifiedDiff>();
  }
  return std::optional<UnifiedDiff>(std::move(*d));
}

StatusOr<const std::vector<std::string>*> DraftSession::HeadFile(
    const std::string& path) {
  auto it = head_files_.find(path);
  if (it != head_files_.end()) return it->second ? &*it->second : nullptr;
  std::vector<std::string> lines;
  bool readable = true;
  for (int64_t start = 1; start < (int64_t{1} << 24); start += kPageLines) {
    Json args = Json::MakeObject();
    args["commit"] = head_;
    args["path"] = path;
    args["start"] = start;
    args["end"] = start + kPageLines - 1;
    ASSIGN_OR_RETURN(ToolResult r, tools_->Call("read_source", args));
    if (!r.ok) {
      readable = start > 1;  // A page past the end is just the end.
      if (!readable) Note("read_source " + path + " failed: " + r.error);
      break;
    }
    const std::string text = OutString(r.output, "text");
    const int64_t total = OutInt(r.output, "lines", -1);
    std::vector<std::string> page = SplitLines(text);
    // A page joined with '\n' loses a trailing empty line; the count says.
    const int64_t want = std::min(start + kPageLines - 1, total) - start + 1;
    if (total >= 0 && static_cast<int64_t>(page.size()) + 1 == want &&
        !text.empty() && text.back() == '\n') {
      page.emplace_back();
    }
    lines.insert(lines.end(), page.begin(), page.end());
    if (total < 0 || page.empty() || start + kPageLines > total) break;
  }
  auto& slot = head_files_[path];
  if (readable) slot = std::move(lines);
  return slot ? &*slot : nullptr;
}

StatusOr<UnifiedDiff> DraftSession::RevertOnHead(const UnifiedDiff& forward) {
  UnifiedDiff out;
  for (const FileDiff& f : InvertDiff(forward).files) {
    if (f.binary) {
      Note("revert: " + f.path() + " is binary; left out");
      continue;
    }
    if (f.is_new) {  // The culprit deleted it: the revert brings it back.
      out.files.push_back(f);
      continue;
    }
    ASSIGN_OR_RETURN(const std::vector<std::string>* head, HeadFile(f.path()));
    if (head == nullptr) continue;
    std::vector<int> dropped;
    FileDiff moved = RelocateHunks(f, *head, &dropped);
    if (!dropped.empty()) {
      Note("revert: " + std::to_string(dropped.size()) + " hunk(s) of " +
           f.path() + " no longer match the head; left out");
    }
    if (!moved.hunks.empty()) out.files.push_back(std::move(moved));
  }
  return out;
}

StatusOr<bool> DraftSession::Verify(const UnifiedDiff& diff,
                                    const std::string& label) {
  if (diff.HunkCount() == 0) return false;
  const std::string text = RenderUnifiedDiff(diff);
  if (auto it = verified_.find(text); it != verified_.end()) return it->second;
  for (const FileDiff& f : diff.files) {
    if (f.is_new) continue;
    ASSIGN_OR_RETURN(const std::vector<std::string>* head, HeadFile(f.path()));
    if (head == nullptr || !ApplyHunks(f, *head).ok()) {
      Note(label + ": does not apply to the head's " + f.path());
      return verified_[text] = false;
    }
  }
  if (text.size() > kMaxDiffChars) {
    Note(label + ": diff too large for try_patch");
    return verified_[text] = false;
  }
  if (tries_ >= max_tries_ || (budget_ > 0 && used_ >= budget_)) {
    if (!budget_noted_)
      Note("budget spent: stopped after " + std::to_string(tries_) +
           " try_patch calls");
    budget_noted_ = true;
    return false;
  }
  Json args = Json::MakeObject();
  args["diff"] = text;
  ASSIGN_OR_RETURN(ToolResult r, tools_->Call("try_patch", args));
  ++tries_;
  used_ += r.seconds;
  const Json* built = r.output.Find("built");
  const Json* applies = r.output.Find("applies");
  const bool ok = r.ok && applies && applies->is_bool() &&
                  applies->bool_value() && built && built->is_bool() &&
                  built->bool_value() &&
                  OutString(r.output, "repro_status") == "pass";
  Json t = Json::MakeObject();
  t["strategy"] = label;
  t["changed_lines"] = diff.ChangedLines();
  t["passed"] = ok;
  t["result"] =
      r.ok ? OutString(r.output, "repro_status", OutString(r.output, "message"))
           : r.error;
  tried_.push_back(std::move(t));
  return verified_[text] = ok;
}

Status DraftSession::Submit(const std::string& strategy,
                            const UnifiedDiff& diff,
                            const std::string& rationale,
                            const std::string& detail) {
  const std::string text = RenderUnifiedDiff(diff);
  Json args = Json::MakeObject();
  args["diff"] = text;
  args["rationale"] = rationale.substr(0, 4000);
  args["strategy"] = strategy;
  ASSIGN_OR_RETURN(ToolResult r, tools_->Call("submit_patch", args));
  if (!r.ok) {
    Note("submit_patch (" + strategy + ") failed: " + r.error);
    return Status::Ok();
  }
  const Json* id = r.output.Find("candidate");
  candidates_.push_back({id ? *id : Json(), strategy, text, rationale, detail,
                         diff.ChangedLines()});
  return Status::Ok();
}

Status DraftSession::TryTemplates(const UnifiedDiff& full,
                                  const std::vector<std::string>& files,
                                  const std::string& site, bool exhaustive) {
  for (const FileDiff& f : full.files) {
    if (std::find(files.begin(), files.end(), f.path()) == files.end() ||
        f.new_path.empty() || f.binary) {
      continue;
    }
    ASSIGN_OR_RETURN(const std::vector<std::string>* head, HeadFile(f.path()));
    if (head == nullptr) continue;
    for (const TemplateFix& fix : FixTemplates(f, *head, site)) {
      ASSIGN_OR_RETURN(bool ok, Verify(fix.diff, "fix_template"));
      if (!ok) continue;
      RETURN_IF_ERROR(Submit(
          "fix_template", fix.diff,
          "Fix template " + fix.name + " at " + fix.detail +
              ", a line the culprit " + Culprit() + " changed" +
              (site.empty() ? "" : ", near the rewrite site '" + site + "'") +
              ".",
          fix.name + ": " + fix.detail));
      if (!exhaustive) return Status::Ok();
    }
  }
  return Status::Ok();
}

class Drafter : public Brain {
 public:
  StatusOr<Json> Run(const Json& task, ToolBox& tools) override {
    return DraftSession().Run(task, tools);
  }
};

}  // namespace

std::unique_ptr<Brain> MakeBuiltinDrafter() {
  return std::make_unique<Drafter>();
}

}  // namespace trench::agents
