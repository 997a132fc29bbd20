#include "triage/reduce/reducer.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

namespace trench::hlo_reduce {
namespace {

namespace fs = std::filesystem;
using hlo_diff::Case;
using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

Json StatsJson(const ddmin::Stats& s) {
  Json j = Json::MakeObject();
  j["candidates"] = s.candidates;
  j["tests"] = s.tests;
  j["interesting"] = s.interesting;
  j["invalid"] = s.invalid;
  j["cache_hits"] = s.cache_hits;
  j["speculative_dropped"] = s.speculative_dropped;
  j["ahead"] = s.ahead;
  j["accepted"] = s.accepted;
  return j;
}

// The share of test runs that were interesting (0.25 before any ran).
double InterestingRate(const ddmin::Stats& s) {
  return s.tests > 0 ? double(s.interesting) / double(s.tests) : 0.25;
}

// The set of cases the reduction has had as its best (content addresses).
class SeenCases {
 public:
  bool Contains(const std::string& sha) const {
    std::lock_guard<std::mutex> l(mu_);
    return seen_.count(sha) > 0;
  }
  void Add(const std::string& sha) {
    std::lock_guard<std::mutex> l(mu_);
    seen_.insert(sha);
  }

 private:
  mutable std::mutex mu_;
  std::set<std::string> seen_;
};

// One pass's opportunities on one base case, as an engine client.
class PassSubsetTest : public ddmin::SubsetTest {
 public:
  PassSubsetTest(const ReductionPass& pass, const Case& base,
                 Interestingness& test, const SeenCases& seen, int jobs)
      : pass_(pass), base_(base), test_(test), seen_(seen), slots_(jobs) {}

  Validation Validate(std::span<const int64_t> chosen, int w) override {
    Validation v;
    StatusOr<Case> c = pass_.Apply(base_, chosen);
    if (!c.ok()) {
      v.why = c.status().message();
      return v;
    }
    if (Status st = ValidateCandidate(*c); !st.ok()) {
      v.why = st.message();
      return v;
    }
    v.key = hlo_diff::CaseSha256(*c);
    if (seen_.Contains(v.key)) {  // No change, or back to an earlier best.
      v.why = "not new";
      v.key.clear();
      return v;
    }
    v.valid = true;
    slots_[w] = std::move(c).value();
    return v;
  }

  StatusOr<ddmin::Outcome> Test(std::span<const int64_t>, int w) override {
    ASSIGN_OR_RETURN(bool yes, test_.IsInteresting(*slots_[w], w));
    return yes ? ddmin::Outcome::kInteresting : ddmin::Outcome::kNotInteresting;
  }

 private:
  const ReductionPass& pass_;
  const Case& base_;
  Interestingness& test_;
  const SeenCases& seen_;
  std::vector<std::optional<Case>> slots_;
};

Status WriteFileAtomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.good()) return IoError(tmp.string() + ": cannot write");
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return IoError(path.string() + ": cannot replace: " + ec.message());
  return Status();
}

// The on-disk state: OUT/best -> best.<step>, OUT/progress.json.
class BestOnDisk {
 public:
  explicit BestOnDisk(std::string out) : out_(std::move(out)) {}

  Status Start(bool resume, Case* best, Json* progress) {
    std::error_code ec;
    const fs::path link = out_ / "best";
    const bool exists = fs::exists(link, ec);
    if (!resume && exists) {
      return FailedPrecondition(link.string() +
                                " exists: pass --resume to continue that "
                                "run, or choose another --out");
    }
    if (resume) {
      if (!exists) {
        return FailedPrecondition("--resume: " + link.string() +
                                  " does not exist");
      }
      ASSIGN_OR_RETURN(*best, hlo_diff::ReadCase(link.string()));
      std::ifstream in(out_ / "progress.json");
      std::stringstream text;
      text << in.rdbuf();
      if (StatusOr<Json> p = ParseJson(text.str()); p.ok() && p->is_object()) {
        *progress = *p;
        if (const Json* s = p->Find("step"); s && s->is_integer()) {
          step_ = s->int64_value();
        }
      }
      current_ = fs::read_symlink(link, ec).string();
      return Status();
    }
    fs::create_directories(out_, ec);
    if (ec) return IoError(out_.string() + ": cannot create: " + ec.message());
    return Status();
  }

  // Writes `c` as the new best and `progress` (+ "step", "best").
  Status Save(const Case& c, Json progress) {
    ++step_;
    const std::string name = "best." + std::to_string(step_);
    std::error_code ec;
    fs::remove_all(out_ / name, ec);  // A leftover of an interrupted run.
    RETURN_IF_ERROR(hlo_diff::WriteCase((out_ / name).string(), c));
    const fs::path tmp = out_ / ".best.tmp";
    fs::remove(tmp, ec);
    fs::create_directory_symlink(name, tmp, ec);
    if (ec) return IoError(tmp.string() + ": cannot link: " + ec.message());
    fs::rename(tmp, out_ / "best", ec);
    if (ec) return IoError((out_ / "best").string() + ": " + ec.message());
    if (!current_.empty() && current_ != name)
      fs::remove_all(out_ / current_, ec);
    current_ = name;
    progress["step"] = step_;
    progress["best"] = name;
    return WriteFileAtomically(out_ / "progress.json", progress.DumpPretty());
  }

  // Replaces progress.json (the best stays).
  Status WriteProgress(Json progress) {
    progress["step"] = step_;
    progress["best"] = current_;
    return WriteFileAtomically(out_ / "progress.json", progress.DumpPretty());
  }

  int64_t step() const { return step_; }

 private:
  fs::path out_;
  int64_t step_ = -1;
  std::string current_;
};

int64_t JsonInt(const Json& j, std::string_view key) {
  const Json* v = j.Find(key);
  return v && v->is_integer() ? v->int64_value() : 0;
}

CaseSize SizeFromJson(const Json* j, const CaseSize& fallback) {
  if (j == nullptr || !j->is_object()) return fallback;
  return {JsonInt(*j, "instructions"), JsonInt(*j, "elements"),
          JsonInt(*j, "text_bytes")};
}

// The best case as written (OUT/best read back) must still be interesting:
// the reduction tested cases in memory, and a difference between a case
// and its saved form (a layout a saved .npy cannot carry, say) would leave
// a "best" that does not fail. Two tries, for flaky bugs.
Status ReplayBest(const std::string& out_dir, Interestingness& test,
                  ReduceResult* r) {
  const std::string best = (fs::path(out_dir) / "best").string();
  ASSIGN_OR_RETURN(Case written, hlo_diff::ReadCase(best));
  for (int attempt = 0; attempt < 2; ++attempt) {
    ASSIGN_OR_RETURN(bool yes, test.IsInteresting(written, 0));
    if (yes) {
      r->replayed = true;
      return Status();
    }
  }
  return Internal(best + " (step " + std::to_string(r->steps) +
                  ") does not fail when read back from disk, though the "
                  "reduction tested it as failing: the reduced case cannot "
                  "be trusted");
}

}  // namespace

Json SizeJson(const CaseSize& s) {
  Json j = Json::MakeObject();
  j["instructions"] = s.instructions;
  j["elements"] = s.elements;
  j["text_bytes"] = s.text_bytes;
  return j;
}

Json ReduceResult::ToJson() const {
  Json j = Json::MakeObject();
  j["before"] = SizeJson(before);
  j["after"] = SizeJson(after);
  j["stats"] = StatsJson(stats);
  Json ps = Json::MakeArray();
  for (const PassStats& p : passes) {
    Json pj = Json::MakeObject();
    pj["pass"] = p.name;
    pj["runs"] = p.runs;
    pj["steps"] = p.steps;
    pj["stats"] = StatsJson(p.stats);
    pj["seconds"] = p.seconds;
    ps.push_back(std::move(pj));
  }
  j["passes"] = std::move(ps);
  j["rounds"] = rounds;
  j["steps"] = steps;
  j["budget_exhausted"] = budget_exhausted;
  j["replayed"] = replayed;
  j["seconds"] = seconds;
  return j;
}

Json DryRun(const Case& c,
            const std::vector<std::unique_ptr<ReductionPass>>& passes) {
  Json j = Json::MakeObject();
  Json list = Json::MakeArray();
  int64_t total = 0;
  for (const auto& p : passes) {
    const int64_t n = p->Count(c);
    const int64_t tests = ddmin::DryRunTests(n);
    total += tests;
    Json pj = Json::MakeObject();
    pj["pass"] = std::string(p->name());
    pj["opportunities"] = n;
    pj["max_tests"] = tests;
    list.push_back(std::move(pj));
  }
  j["passes"] = std::move(list);
  j["max_tests_first_round"] = total;
  j["size"] = SizeJson(MeasureCase(c));
  return j;
}

StatusOr<ReduceResult> Reduce(
    const Case& initial,
    const std::vector<std::unique_ptr<ReductionPass>>& passes,
    Interestingness& test, const ReduceOptions& options) {
  if (options.out_dir.empty()) return InvalidArgument("--out DIR is required");
  if (options.jobs < 1) return InvalidArgument("--jobs expects N >= 1");
  const auto start = Clock::now();
  BestOnDisk disk(options.out_dir);
  ReduceResult r;
  r.best = initial;
  Json progress = Json::MakeObject();
  RETURN_IF_ERROR(disk.Start(options.resume, &r.best, &progress));
  r.before = SizeFromJson(progress.Find("initial_size"), MeasureCase(r.best));
  const int64_t tests_before = JsonInt(progress, "tests");
  SeenCases seen;
  seen.Add(hlo_diff::CaseSha256(r.best));
  ddmin::OutcomeCache cache;

  std::string pass_name = "initial";
  auto progress_json = [&](const Case& c) {
    Json p = Json::MakeObject();
    p["pass"] = pass_name;
    p["round"] = r.rounds;
    p["size"] = SizeJson(MeasureCase(c));
    p["initial_size"] = SizeJson(r.before);
    p["tests"] = tests_before + r.stats.tests;
    p["seconds"] = SecondsSince(start);
    return p;
  };
  auto save = [&](const Case& c) -> Status {
    Json p = progress_json(c);
    RETURN_IF_ERROR(disk.Save(c, p));
    p["step"] = disk.step();
    if (options.on_progress) options.on_progress(p);
    return Status();
  };
  if (!options.resume) RETURN_IF_ERROR(save(r.best));

  for (const auto& p : passes) {
    PassStats stats;
    stats.name = std::string(p->name());
    r.passes.push_back(std::move(stats));
  }
  bool stop = false;
  while (!stop && r.rounds < options.max_rounds) {
    ++r.rounds;
    bool changed = false;
    bool sideways = false;
    for (size_t pi = 0; pi < passes.size() && !stop && !sideways; ++pi) {
      const ReductionPass& pass = *passes[pi];
      PassStats& ps = r.passes[pi];
      pass_name = ps.name;
      const auto pass_start = Clock::now();
      const CaseSize size_before = MeasureCase(r.best);
      bool pass_changed = false;
      while (!stop) {
        const int64_t n = pass.Count(r.best);
        if (n == 0) break;
        const Case base = r.best;
        PassSubsetTest client(pass, base, test, seen, options.jobs);
        ddmin::Options eo;
        eo.jobs = options.jobs;
        eo.cache = &cache;
        eo.prior_rate =
            InterestingRate(ps.stats.tests > 0 ? ps.stats : r.stats);
        if (options.max_tests >= 0) {
          eo.max_tests =
              std::max<int64_t>(0, options.max_tests - r.stats.tests);
        }
        eo.on_accept = [&](std::span<const int64_t> accepted) -> Status {
          ASSIGN_OR_RETURN(Case next, pass.Apply(base, accepted));
          seen.Add(hlo_diff::CaseSha256(next));
          r.best = std::move(next);
          ++r.steps;
          ++ps.steps;
          return save(r.best);
        };
        StatusOr<ddmin::Result> er = ddmin::Minimize(n, client, eo);
        if (!er.ok()) return er.status();
        ++ps.runs;
        ps.stats += er->stats;
        r.stats += er->stats;
        if (er->budget_exhausted) {
          r.budget_exhausted = true;
          stop = true;
        }
        if (er->accepted.empty()) break;
        changed = pass_changed = true;
      }
      ps.seconds += SecondsSince(pass_start);
      const CaseSize size_after = MeasureCase(r.best);
      sideways = pass_changed && pi > 0 &&
                 size_after.instructions == size_before.instructions &&
                 size_after.elements == size_before.elements &&
                 size_after.text_bytes >= size_before.text_bytes;
    }
    if (!changed) break;
  }
  r.steps = disk.step();
  if (r.steps > 0) RETURN_IF_ERROR(ReplayBest(options.out_dir, test, &r));
  pass_name = "done";
  Json final_progress = progress_json(r.best);
  final_progress["done"] = !r.budget_exhausted;
  RETURN_IF_ERROR(disk.WriteProgress(final_progress));
  r.after = MeasureCase(r.best);
  r.seconds = SecondsSince(start);
  return r;
}

}  // namespace trench::hlo_reduce
