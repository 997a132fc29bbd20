#include "triage/reduce/ddmin.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <set>
#include <thread>

namespace trench::ddmin {
namespace {

using Chunk = std::vector<int64_t>;
using Candidate = std::vector<int64_t>;

// accepted ∪ chunk, ascending (both ascending and disjoint).
Candidate Merge(const std::vector<int64_t>& accepted, const Chunk& chunk) {
  Candidate out;
  out.reserve(accepted.size() + chunk.size());
  std::merge(accepted.begin(), accepted.end(), chunk.begin(), chunk.end(),
             std::back_inserter(out));
  return out;
}

std::vector<Chunk> Split(const std::vector<int64_t>& remaining, int64_t k) {
  std::vector<Chunk> chunks;
  for (size_t i = 0; i < remaining.size(); i += size_t(k)) {
    const size_t end = std::min(remaining.size(), i + size_t(k));
    chunks.emplace_back(remaining.begin() + i, remaining.begin() + end);
  }
  return chunks;
}

// The schedule of the header as a state machine: Current() is the
// candidate it tests next, Advance() takes that candidate's outcome. A
// copy simulates the schedule ahead under predicted outcomes.
class Schedule {
 public:
  explicit Schedule(int64_t n) : k_(n) {
    remaining_.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i) remaining_[size_t(i)] = i;
    StartLevel();
  }

  bool finished() const { return finished_; }
  const std::vector<int64_t>& accepted() const { return accepted_; }
  // REQUIRES: !finished().
  Candidate Current() const { return Merge(accepted_, chunks_[next_]); }

  // Takes the outcome of Current(); true when it was accepted.
  void Advance(bool interesting) {
    if (interesting) {
      taken_[next_] = true;
      accepted_ = Merge(accepted_, chunks_[next_]);
    }
    if (++next_ < chunks_.size()) return;
    std::vector<int64_t> left;
    for (size_t c = 0; c < chunks_.size(); ++c) {
      if (!taken_[c])
        left.insert(left.end(), chunks_[c].begin(), chunks_[c].end());
    }
    remaining_ = std::move(left);
    if (k_ == 1) {
      finished_ = true;
      return;
    }
    k_ = (k_ + 1) / 2;
    StartLevel();
  }

 private:
  void StartLevel() {
    if (remaining_.empty()) {
      finished_ = true;
      return;
    }
    chunks_ = Split(remaining_, k_);
    taken_.assign(chunks_.size(), false);
    next_ = 0;
  }

  int64_t k_;
  std::vector<int64_t> remaining_;  // At the start of the level.
  std::vector<int64_t> accepted_;
  std::vector<Chunk> chunks_;
  std::vector<bool> taken_;
  size_t next_ = 0;
  bool finished_ = false;
};

// Whether `cand` ⊇ `accepted` (both ascending).
bool Includes(const Candidate& cand, const std::vector<int64_t>& accepted) {
  return std::includes(cand.begin(), cand.end(), accepted.begin(),
                       accepted.end());
}

// One run of the schedule: state shared by the coordinator and workers.
class Run {
 public:
  Run(SubsetTest& test, const Options& options)
      : test_(test), options_(options), rate_(options.prior_rate) {}

  StatusOr<Result> Minimize(int64_t n) {
    Schedule s(n);
    RETURN_IF_ERROR(options_.jobs == 1 ? Sequential(s) : Speculative(s));
    Result r;
    r.accepted = s.accepted();
    r.stats = stats_;
    r.budget_exhausted = budget_exhausted_;
    return r;
  }

 private:
  // A candidate's outcome and its content key (Validation::key).
  struct Evaluated {
    Outcome outcome = Outcome::kInvalid;
    std::string key;
  };

  // Whether `key` is the content of a candidate this run accepted: such
  // a candidate changes nothing and counts as invalid (a run accepts each
  // content once, however far ahead it was tested).
  bool AcceptedBefore(const std::string& key) {
    std::lock_guard<std::mutex> l(stats_mu_);
    return !key.empty() && accepted_keys_.count(key) > 0;
  }

  // Validates, looks up and tests one candidate (any thread).
  StatusOr<Evaluated> Evaluate(const Candidate& cand, int worker) {
    SubsetTest::Validation v = test_.Validate(cand, worker);
    Evaluated e;
    e.key = v.key;
    const bool valid = v.valid && !AcceptedBefore(v.key);
    {
      std::lock_guard<std::mutex> l(stats_mu_);
      ++stats_.candidates;
      if (!valid) ++stats_.invalid;
    }
    if (!valid) return e;
    if (options_.cache && !v.key.empty()) {
      if (std::optional<Outcome> o = options_.cache->Find(v.key)) {
        std::lock_guard<std::mutex> l(stats_mu_);
        ++stats_.cache_hits;
        e.outcome = *o;
        return e;
      }
    }
    StatusOr<Outcome> o = test_.Test(cand, worker);
    if (!o.ok()) return o.status();
    {
      std::lock_guard<std::mutex> l(stats_mu_);
      ++stats_.tests;
      if (*o == Outcome::kInteresting) ++stats_.interesting;
      if (*o == Outcome::kInvalid) ++stats_.invalid;
    }
    if (options_.cache && !v.key.empty()) options_.cache->Insert(v.key, *o);
    e.outcome = *o;
    return e;
  }

  // Whether `running` more test runs would use up the budget.
  bool BudgetLeft(int running) {
    std::lock_guard<std::mutex> l(stats_mu_);
    return options_.max_tests < 0 ||
           stats_.tests + running < options_.max_tests;
  }

  // Takes the outcome of s.Current(); false when the run stops here. `l`
  // (when not null, held by the caller) is unlocked around on_accept.
  StatusOr<bool> Consume(Schedule& s, Evaluated e,
                         std::unique_lock<std::mutex>* l) {
    // Tested ahead, before a candidate of the same content was accepted.
    if (AcceptedBefore(e.key)) e.outcome = Outcome::kInvalid;
    const bool interesting = e.outcome == Outcome::kInteresting;
    rate_ = 0.7 * rate_ + (interesting ? 0.3 : 0.0);
    s.Advance(interesting);
    if (!interesting) return true;
    {
      std::lock_guard<std::mutex> sl(stats_mu_);
      ++stats_.accepted;
      if (!e.key.empty()) accepted_keys_.insert(e.key);
    }
    if (options_.on_accept) {
      const std::vector<int64_t> snapshot = s.accepted();
      if (l) l->unlock();
      Status st = options_.on_accept(snapshot);
      if (l) l->lock();
      RETURN_IF_ERROR(st);
    }
    return !options_.stop_after_success;
  }

  Status Sequential(Schedule& s) {
    while (!s.finished()) {
      if (!BudgetLeft(0)) {
        budget_exhausted_ = true;
        return Status();
      }
      ASSIGN_OR_RETURN(Evaluated e, Evaluate(s.Current(), 0));
      ASSIGN_OR_RETURN(bool go_on, Consume(s, std::move(e), nullptr));
      if (!go_on) return Status();
    }
    return Status();
  }

  // A candidate that a worker took up.
  struct Entry {
    bool done = false;
    bool ahead = false;  // Taken before the schedule reached it.
    Evaluated result;
  };

  // The next candidates of the schedule that nobody took yet, at most
  // `jobs`, found by running a copy of the schedule ahead: known outcomes
  // are used, unknown ones are predicted (interesting iff the recent rate
  // of interesting outcomes is at least one half).
  std::deque<Candidate> Plan(const Schedule& s,
                             const std::map<Candidate, Entry>& entries) const {
    std::deque<Candidate> todo;
    Schedule sim = s;
    const bool predict_interesting = rate_ >= 0.5;
    const size_t jobs = size_t(options_.jobs);
    for (size_t steps = 0;
         !sim.finished() && todo.size() < jobs && steps < 4 * jobs + 16;
         ++steps) {
      Candidate cand = sim.Current();
      auto it = entries.find(cand);
      bool interesting = predict_interesting;
      if (it == entries.end()) {
        todo.push_back(std::move(cand));
      } else if (it->second.done) {
        interesting = it->second.result.outcome == Outcome::kInteresting;
      }
      if (interesting && options_.stop_after_success) break;
      sim.Advance(interesting);
    }
    return todo;
  }

  // jobs > 1: the coordinator (this thread) consumes outcomes in schedule
  // order exactly as Sequential does, while workers test the candidates
  // that Plan expects next.
  Status Speculative(Schedule& s) {
    std::mutex mu;
    std::condition_variable cv;
    std::map<Candidate, Entry> entries;
    std::deque<Candidate> todo;
    Candidate current;
    int running = 0;
    uint64_t finished = 0;  // Evaluations finished so far.
    bool done = false;
    Status error;
    auto worker = [&](int w) {
      std::unique_lock<std::mutex> l(mu);
      while (true) {
        cv.wait(l,
                [&] { return done || (!todo.empty() && BudgetLeft(running)); });
        if (done) return;
        Candidate cand = std::move(todo.front());
        todo.pop_front();
        Entry& e = entries[cand];
        e.ahead = cand != current;
        ++running;
        l.unlock();
        StatusOr<Evaluated> o = Evaluate(cand, w);
        l.lock();
        --running;
        ++finished;
        if (!o.ok()) {
          if (error.ok()) error = o.status();
          done = true;
        } else {
          Entry& f = entries[cand];
          f.done = true;
          f.result = std::move(*o);
        }
        cv.notify_all();
      }
    };
    std::vector<std::thread> threads;
    for (int w = 0; w < options_.jobs; ++w) threads.emplace_back(worker, w);
    {
      std::unique_lock<std::mutex> l(mu);
      while (!s.finished() && !done) {
        current = s.Current();
        todo = Plan(s, entries);
        cv.notify_all();
        // Until the current candidate's outcome is known; a worker that
        // finished another one first gets the plan redone (the outcome it
        // found may extend it), so that it does not sit idle.
        const uint64_t seen = finished;
        bool replan = false;
        cv.wait(l, [&] {
          if (done) return true;
          auto it = entries.find(current);
          if (it != entries.end() && it->second.done) return true;
          if (it == entries.end() && running == 0 && !BudgetLeft(0)) {
            return true;
          }
          replan = finished != seen;
          return replan;
        });
        if (done) break;
        auto it = entries.find(current);
        if (it == entries.end() && !replan) {
          budget_exhausted_ = true;
          break;
        }
        if (it == entries.end() || !it->second.done) continue;
        const Entry e = it->second;
        entries.erase(it);
        if (e.ahead) {
          std::lock_guard<std::mutex> sl(stats_mu_);
          ++stats_.ahead;
        }
        const size_t before = s.accepted().size();
        StatusOr<bool> go_on = Consume(s, e.result, &l);
        if (!go_on.ok()) {
          error = go_on.status();
          break;
        }
        if (!*go_on) break;
        if (s.accepted().size() != before) DropStale(s, entries);
      }
      done = true;
      cv.notify_all();
    }
    for (std::thread& t : threads) t.join();
    std::lock_guard<std::mutex> sl(stats_mu_);
    stats_.speculative_dropped += int64_t(entries.size());
    return error;
  }

  // Forgets the finished candidates that the schedule can no longer reach
  // (every later candidate includes the accepted set).
  void DropStale(const Schedule& s, std::map<Candidate, Entry>& entries) {
    int64_t dropped = 0;
    for (auto it = entries.begin(); it != entries.end();) {
      if (it->second.done && !Includes(it->first, s.accepted())) {
        it = entries.erase(it);
        ++dropped;
      } else {
        ++it;
      }
    }
    std::lock_guard<std::mutex> sl(stats_mu_);
    stats_.speculative_dropped += dropped;
  }

  SubsetTest& test_;
  const Options& options_;
  std::mutex stats_mu_;
  Stats stats_;
  std::set<std::string> accepted_keys_;  // GUARDED_BY(stats_mu_)
  bool budget_exhausted_ = false;
  double rate_;  // Recent rate of interesting outcomes (coordinator only).
};

class NeverInteresting : public SubsetTest {
 public:
  Validation Validate(std::span<const int64_t>, int) override {
    Validation v;
    v.valid = true;
    return v;
  }
  StatusOr<Outcome> Test(std::span<const int64_t>, int) override {
    return Outcome::kNotInteresting;
  }
};

}  // namespace
const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kInteresting:
      return "interesting";
    case Outcome::kNotInteresting:
      return "not_interesting";
    case Outcome::kInvalid:
      return "invalid";
  }
  return "?";
}

std::optional<Outcome> OutcomeCache::Find(const std::string& key) const {
  std::lock_guard<std::mutex> l(mu_);
  auto it = map_.find(key);
  if (it == map_.end()) return std::nullopt;
  return it->second;
}

void OutcomeCache::Insert(const std::string& key, Outcome o) {
  std::lock_guard<std::mutex> l(mu_);
  map_[key] = o;
}

size_t OutcomeCache::size() const {
  std::lock_guard<std::mutex> l(mu_);
  return map_.size();
}

Stats& Stats::operator+=(const Stats& o) {
  candidates += o.candidates;
  tests += o.tests;
  interesting += o.interesting;
  invalid += o.invalid;
  cache_hits += o.cache_hits;
  speculative_dropped += o.speculative_dropped;
  ahead += o.ahead;
  accepted += o.accepted;
  return *this;
}

StatusOr<Result> Minimize(int64_t n, SubsetTest& test, const Options& options) {
  if (n < 0) return InvalidArgument("ddmin: negative opportunity count");
  if (options.jobs < 1) return InvalidArgument("ddmin: jobs must be >= 1");
  Run run(test, options);
  return run.Minimize(n);
}

int64_t DryRunTests(int64_t n) {
  NeverInteresting never;
  StatusOr<Result> r = Minimize(n, never);
  return r.ok() ? r->stats.tests : 0;
}

StatusOr<Outcome> RepeatTest(const std::function<StatusOr<bool>()>& once,
                             int repeats, double min_rate, int* reproduced,
                             int* runs) {
  if (repeats < 1 || !(min_rate > 0) || min_rate > 1) {
    return InvalidArgument("repeats must be >= 1 and 0 < min-rate <= 1");
  }
  const int needed = std::max(1, int(std::ceil(min_rate * repeats - 1e-9)));
  int hits = 0, done = 0;
  while (done < repeats && hits < needed && hits + (repeats - done) >= needed) {
    ASSIGN_OR_RETURN(bool yes, once());
    ++done;
    if (yes) ++hits;
  }
  if (reproduced) *reproduced = hits;
  if (runs) *runs = done;
  return hits >= needed ? Outcome::kInteresting : Outcome::kNotInteresting;
}

}  // namespace trench::ddmin
