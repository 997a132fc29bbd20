#include "git/commit_bisect.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>

#include "triage/case/verdict.h"

namespace trench::hlo_bisect {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string Fixed1(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", s);
  return buf;
}

// One tested commit.
struct Tested {
  bool built = false;
  std::string status;  // Verdict status ("" when not built).
  std::optional<hlo_diff::Verdict> verdict;  // When built.
  // Why `status` was judged rather than run (judge_unsupported), or "".
  std::string judged;
  Json step;
};

class Bisector {
 public:
  Bisector(const hlo_diff::Case& c, GitRepo& repo, CommitBuilder& builder,
           const CommitBisectOptions& options)
      : case_(c), repo_(repo), builder_(builder), options_(options) {
    // Parsed once for every commit's run (a module that does not parse is
    // judged invalid_input by each run instead).
    auto m = hlo_diff::ParseCaseModule(c.module_text, "module.hlo");
    if (m.ok()) module_ = std::move(m).value();
  }

  StatusOr<Json> Run();

 private:
  void Progress(const std::string& line) {
    if (options_.progress) options_.progress(line);
  }
  // Builds `rev` (under `key`, "" for its sha) and runs the case on it.
  StatusOr<Tested> Test(const std::string& rev, const std::string& key,
                        const std::string& role);
  Outcome Classify(const Tested& t, std::string* reason) const;
  // The report's fields before the search's (good, bad, commits,
  // bad_verdict), and after it (steps, confirmation, build counts, time).
  Json ReportHead(const CommitInfo& good, const CommitInfo& bad, size_t commits,
                  const Tested& at_bad) const;
  Json ReportTail(Json report, bool confirmed, Json confirmation,
                  Clock::time_point start) const;

  const hlo_diff::Case& case_;
  std::unique_ptr<HloModule> module_;  // Null: does not parse.
  GitRepo& repo_;
  CommitBuilder& builder_;
  const CommitBisectOptions& options_;
  std::string bad_status_;
  Json steps_ = Json::MakeArray();
};

StatusOr<Tested> Bisector::Test(const std::string& rev, const std::string& key,
                                const std::string& role) {
  const auto start = Clock::now();
  ASSIGN_OR_RETURN(CommitInfo info, repo_.Describe(rev));
  ASSIGN_OR_RETURN(BuildResult b, key.empty()
                                      ? builder_.Build(info.sha)
                                      : builder_.BuildAs(info.sha, key));
  // The machine failed the build: no verdict on the commit, so none on the
  // bisection either; the caller runs it again later.
  if (b.infra) {
    return ResourceExhausted("build " + info.ShortSha() + ": " + b.reason +
                             "\n" + b.log_tail);
  }
  Tested t;
  t.built = b.built;
  Progress("build " + info.ShortSha() + " " + info.summary + ": " +
           (b.built ? "ok" : "does not build (" + b.reason + ")") +
           (b.cached ? " [cached]" : " (" + Fixed1(b.seconds) + " s)"));
  if (b.built) {
    hlo_diff::TargetSpec spec =
        hlo_diff::TargetSpec::FromBinaryDir(b.bin_dir, options_.mode);
    spec.timeout_seconds = options_.run_timeout_seconds;
    hlo_diff::TargetRunner runner(spec);
    const std::string work =
        (fs::path(options_.work_dir) / "runs" / b.key).string();
    ASSIGN_OR_RETURN(
        t.verdict, module_
                       ? hlo_diff::ComputeVerdict(case_, *module_, runner, work)
                       : hlo_diff::ComputeVerdict(case_, runner, work));
    t.status = t.verdict->status_name();
    Progress("test  " + info.ShortSha() + ": " + t.status);
    if (t.status == "target_unsupported" && options_.judge_unsupported) {
      std::string why;
      ASSIGN_OR_RETURN(
          std::optional<bool> failing,
          options_.judge_unsupported(
              b.bin_dir,
              (fs::path(options_.work_dir) / "judged" / b.key).string(), &why));
      Progress("judge " + info.ShortSha() + ": " + why);
      if (failing.has_value()) {
        t.judged = why;
        t.status = *failing ? bad_status_ : std::string("pass");
      }
    }
  }
  Json step = Json::MakeObject();
  step["commit"] = info.sha;
  step["summary"] = info.summary;
  step["role"] = role;
  step["built"] = b.built;
  step["cached"] = b.cached;
  step["build_seconds"] = b.seconds;
  step["status"] = b.built ? Json(t.status) : Json();
  step["sig"] = t.verdict ? Json(t.verdict->signature.sig) : Json();
  if (!t.judged.empty()) {
    step["run_status"] = "target_unsupported";
    step["judged"] = t.judged;
  }
  if (!b.built) {
    step["reason"] = b.reason;
    step["log_tail"] = b.log_tail;
  }
  step["seconds"] = SecondsSince(start);
  t.step = std::move(step);
  return t;
}

Outcome Bisector::Classify(const Tested& t, std::string* reason) const {
  if (!t.built) {
    *reason = "does not build";
    return Outcome::kSkip;
  }
  if (t.status == "pass") return Outcome::kGood;
  if (t.status == bad_status_) return Outcome::kBad;
  *reason = t.status == "target_unsupported"
                ? "its target cannot run the case"
                : "fails differently (" + t.status + ")";
  return Outcome::kSkip;
}

StatusOr<Json> Bisector::Run() {
  const auto start = Clock::now();
  ASSIGN_OR_RETURN(CommitInfo good, repo_.Describe(options_.good));
  ASSIGN_OR_RETURN(CommitInfo bad, repo_.Describe(options_.bad));
  ASSIGN_OR_RETURN(std::vector<std::string> range,
                   repo_.FirstParentRange(good.sha, bad.sha));
  Progress(std::to_string(range.size()) + " commits in " + good.ShortSha() +
           ".." + bad.ShortSha());

  // 1. bad fails, good passes.
  ASSIGN_OR_RETURN(Tested at_bad, Test(bad.sha, "", "bad"));
  if (!at_bad.built) {
    return FailedPrecondition(
        "bad commit " + bad.ShortSha() +
        " does not build: " + at_bad.step.Find("reason")->string_value());
  }
  if (!hlo_diff::IsFailureStatus(at_bad.status)) {
    return FailedPrecondition("the case does not fail at bad commit " +
                              bad.ShortSha() + ": " + at_bad.status);
  }
  bad_status_ = at_bad.status;
  at_bad.step["outcome"] = OutcomeName(Outcome::kBad);
  steps_.push_back(at_bad.step);
  ASSIGN_OR_RETURN(Tested at_good, Test(good.sha, "", "good"));
  if (!at_good.built) {
    return FailedPrecondition(
        "good commit " + good.ShortSha() +
        " does not build: " + at_good.step.Find("reason")->string_value());
  }
  // The same failure at good: the bug predates the range, no commit in it
  // brought it. A final answer, reported like a search that found no
  // culprit; a timeout may be the machine's load, so it stays an error.
  if (at_good.status == bad_status_ && bad_status_ != "timeout") {
    at_good.step["outcome"] = OutcomeName(Outcome::kBad);
    steps_.push_back(at_good.step);
    Json report = ReportHead(good, bad, range.size(), at_bad);
    report["fails_at_good"] = true;
    report["culprit"] = Json();
    report["candidates"] = Json::MakeArray();
    Json confirmation = Json::MakeObject();
    confirmation["revert"] = Json();
    confirmation["built"] = false;
    confirmation["status"] = Json();
    confirmation["reason"] = "the case fails the same way (" + bad_status_ +
                             ") at good commit " + good.ShortSha() +
                             ": the failure predates the range";
    return ReportTail(std::move(report), false, std::move(confirmation), start);
  }
  // An older target that cannot run the case (no collectives, a smaller
  // slice) says nothing about the bug: the search finds the last commit
  // that passes among the later ones.
  const bool good_unsupported = at_good.status == "target_unsupported";
  if (at_good.status != "pass" && !good_unsupported) {
    return FailedPrecondition("the case does not pass at good commit " +
                              good.ShortSha() + ": " + at_good.status);
  }
  at_good.step["outcome"] =
      OutcomeName(good_unsupported ? Outcome::kSkip : Outcome::kGood);
  if (good_unsupported) {
    at_good.step["reason"] =
        "its target cannot run the case: the last commit that passes "
        "bounds the search";
  }
  steps_.push_back(at_good.step);

  // 2. The search over range[0..n-1]; search index i is range[i - 1].
  BisectSearch search(range.size());
  while (std::optional<size_t> i = search.Next()) {
    ASSIGN_OR_RETURN(Tested t, Test(range[*i - 1], "", "search"));
    std::string reason;
    const Outcome o = Classify(t, &reason);
    t.step["outcome"] = OutcomeName(o);
    if (!reason.empty() && !t.step.Find("reason")) t.step["reason"] = reason;
    steps_.push_back(t.step);
    search.Mark(*i, o);
  }
  Json candidates = Json::MakeArray();
  for (size_t i : search.Candidates()) {
    ASSIGN_OR_RETURN(CommitInfo info, repo_.Describe(range[i - 1]));
    candidates.push_back(info.ToJson());
  }

  Json report = ReportHead(good, bad, range.size(), at_bad);
  report["fails_at_good"] = false;
  const bool found = candidates.size() == 1;
  report["culprit"] = found ? candidates.array()[0] : Json();
  report["candidates"] = candidates;

  // 3. Confirmation by revert.
  Json confirmation = Json::MakeObject();
  confirmation["revert"] = Json();
  confirmation["built"] = false;
  confirmation["status"] = Json();
  bool confirmed = false;
  if (!found) {
    confirmation["reason"] =
        "only skipped commits are left: the first bad commit is one of " +
        std::to_string(candidates.size());
  } else if (!options_.confirm) {
    confirmation["reason"] = "not asked for";
  } else {
    const std::string culprit =
        candidates.array()[0].Find("sha")->string_value();
    StatusOr<RevertResult> rev = repo_.RevertOnto(culprit, bad.sha);
    if (!rev.ok()) {
      confirmation["reason"] = rev.status().message();
      Progress("revert: " + rev.status().message());
    } else {
      confirmation["revert"] = rev->sha;
      confirmation["branch"] = rev->branch;
      ASSIGN_OR_RETURN(
          Tested t, Test(rev->sha, bad.sha + "-p" + rev->patch_hash, "revert"));
      confirmation["built"] = t.built;
      confirmation["status"] = t.built ? Json(t.status) : Json();
      confirmed = t.built && t.status == "pass";
      if (!t.built) {
        confirmation["reason"] = "the revert does not build: " +
                                 t.step.Find("reason")->string_value();
      } else if (!confirmed) {
        confirmation["reason"] =
            "the case does not pass with the culprit reverted: " + t.status;
      }
      std::string ignored;
      t.step["outcome"] = OutcomeName(Classify(t, &ignored));
      steps_.push_back(t.step);
    }
  }
  return ReportTail(std::move(report), confirmed, std::move(confirmation),
                    start);
}

Json Bisector::ReportHead(const CommitInfo& good, const CommitInfo& bad,
                          size_t commits, const Tested& at_bad) const {
  Json report = Json::MakeObject();
  report["good"] = good.ToJson();
  report["bad"] = bad.ToJson();
  report["commits"] = commits;
  Json bv = Json::MakeObject();
  bv["status"] = bad_status_;
  bv["signature"] =
      at_bad.verdict ? at_bad.verdict->signature.ToJson() : Json();
  report["bad_verdict"] = bv;
  return report;
}

Json Bisector::ReportTail(Json report, bool confirmed, Json confirmation,
                          Clock::time_point start) const {
  report["steps"] = steps_;
  report["confirmed"] = confirmed;
  report["confirmation"] = std::move(confirmation);
  report["builds"] = builder_.builds();
  report["cache_hits"] = builder_.cache_hits();
  report["seconds"] = SecondsSince(start);
  return report;
}

}  // namespace

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kGood:
      return "good";
    case Outcome::kBad:
      return "bad";
    case Outcome::kSkip:
      return "skip";
  }
  return "?";
}

BisectSearch::BisectSearch(size_t n) : lo_(0), hi_(n), skipped_(n + 1) {}

std::optional<size_t> BisectSearch::Next() const {
  if (hi_ <= lo_ + 1) return std::nullopt;
  const size_t mid = lo_ + (hi_ - lo_) / 2;
  for (size_t d = 0; d < hi_ - lo_; ++d) {
    // mid, mid + 1, mid - 1, mid + 2, ... within (lo_, hi_).
    if (mid + d < hi_ && !skipped_[mid + d]) return mid + d;
    if (d > 0 && mid >= lo_ + 1 + d && !skipped_[mid - d]) return mid - d;
  }
  return std::nullopt;
}

void BisectSearch::Mark(size_t i, Outcome outcome) {
  if (i <= lo_ || i >= hi_) return;  // Already decided.
  switch (outcome) {
    case Outcome::kGood:
      lo_ = i;
      break;
    case Outcome::kBad:
      hi_ = i;
      break;
    case Outcome::kSkip:
      skipped_[i] = true;
      break;
  }
}

std::vector<size_t> BisectSearch::Candidates() const {
  std::vector<size_t> out;
  for (size_t i = lo_ + 1; i <= hi_; ++i) out.push_back(i);
  return out;
}

StatusOr<Json> BisectCommits(const hlo_diff::Case& c, GitRepo& repo,
                             CommitBuilder& builder,
                             const CommitBisectOptions& options) {
  Bisector b(c, repo, builder, options);
  return b.Run();
}

}  // namespace trench::hlo_bisect
