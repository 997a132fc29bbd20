#include "tools/hlo-reduce/ddmin.h"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <thread>

namespace trench::ddmin {
namespace {

using Chunk = std::vector<int64_t>;

// accepted ∪ chunk, ascending (both ascending and disjoint).
std::vector<int64_t> Merge(const std::vector<int64_t>& accepted,
                           const Chunk& chunk) {
  std::vector<int64_t> out;
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

// One run of the schedule: state shared by the coordinator and workers.
class Run {
 public:
  Run(SubsetTest& test, const Options& options)
      : test_(test), options_(options) {}

  StatusOr<Result> Minimize(int64_t n) {
    std::vector<int64_t> remaining(n);
    for (int64_t i = 0; i < n; ++i) remaining[i] = i;
    for (int64_t k = n; !remaining.empty() && !stop_;) {
      std::vector<Chunk> chunks = Split(remaining, k);
      std::vector<bool> taken(chunks.size(), false);
      RETURN_IF_ERROR(options_.jobs == 1 ? Sequential(chunks, taken)
                                         : Parallel(chunks, taken));
      std::vector<int64_t> left;
      for (size_t c = 0; c < chunks.size(); ++c) {
        if (!taken[c])
          left.insert(left.end(), chunks[c].begin(), chunks[c].end());
      }
      remaining = std::move(left);
      if (k == 1) break;
      k = (k + 1) / 2;
    }
    Result r;
    r.accepted = accepted_;
    r.stats = stats_;
    r.budget_exhausted = budget_exhausted_;
    return r;
  }

 private:
  // Validates, looks up and tests one candidate (any thread).
  StatusOr<Outcome> Evaluate(const std::vector<int64_t>& cand, int worker) {
    SubsetTest::Validation v = test_.Validate(cand, worker);
    {
      std::lock_guard<std::mutex> l(stats_mu_);
      ++stats_.candidates;
      if (!v.valid) ++stats_.invalid;
    }
    if (!v.valid) return Outcome::kInvalid;
    if (options_.cache && !v.key.empty()) {
      if (std::optional<Outcome> o = options_.cache->Find(v.key)) {
        std::lock_guard<std::mutex> l(stats_mu_);
        ++stats_.cache_hits;
        return *o;
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
    return o;
  }

  // Whether the test budget is used up (marks the run stopped if so).
  bool OutOfBudget() {
    std::lock_guard<std::mutex> l(stats_mu_);
    if (options_.max_tests >= 0 && stats_.tests >= options_.max_tests) {
      budget_exhausted_ = true;
      return true;
    }
    return false;
  }

  // Records an acceptance; false when the run stops here.
  StatusOr<bool> Accept(const Chunk& chunk) {
    accepted_ = Merge(accepted_, chunk);
    ++stats_.accepted;
    if (options_.on_accept) RETURN_IF_ERROR(options_.on_accept(accepted_));
    return !options_.stop_after_success;
  }

  Status Sequential(const std::vector<Chunk>& chunks,
                    std::vector<bool>& taken) {
    for (size_t c = 0; c < chunks.size(); ++c) {
      if (OutOfBudget()) {
        stop_ = true;
        return Status();
      }
      ASSIGN_OR_RETURN(Outcome o, Evaluate(Merge(accepted_, chunks[c]), 0));
      if (o != Outcome::kInteresting) continue;
      taken[c] = true;
      ASSIGN_OR_RETURN(bool go_on, Accept(chunks[c]));
      if (!go_on) {
        stop_ = true;
        return Status();
      }
    }
    return Status();
  }

  Status Parallel(const std::vector<Chunk>& chunks, std::vector<bool>& taken) {
    std::mutex mu;
    std::condition_variable cv;
    size_t next = 0;     // The next chunk a worker takes.
    uint64_t epoch = 0;  // Bumped at every acceptance (new base).
    std::vector<std::optional<Outcome>> results(chunks.size());
    bool done = false;
    Status error;
    auto worker = [&](int w) {
      std::unique_lock<std::mutex> l(mu);
      while (true) {
        cv.wait(l, [&] { return done || next < chunks.size(); });
        if (done) return;
        if (OutOfBudget()) {
          done = true;
          cv.notify_all();
          return;
        }
        const size_t idx = next++;
        const uint64_t ep = epoch;
        std::vector<int64_t> cand = Merge(accepted_, chunks[idx]);
        l.unlock();
        StatusOr<Outcome> o = Evaluate(cand, w);
        l.lock();
        if (!o.ok()) {
          if (error.ok()) error = o.status();
          done = true;
        } else if (ep == epoch) {
          results[idx] = *o;
        } else {
          std::lock_guard<std::mutex> sl(stats_mu_);
          ++stats_.speculative_dropped;
        }
        cv.notify_all();
      }
    };
    std::vector<std::thread> threads;
    for (int w = 0; w < options_.jobs; ++w) threads.emplace_back(worker, w);
    {
      std::unique_lock<std::mutex> l(mu);
      for (size_t scan = 0; scan < chunks.size(); ++scan) {
        cv.wait(l, [&] { return done || results[scan].has_value(); });
        if (!results[scan].has_value()) break;  // Stopped (error, budget).
        if (*results[scan] != Outcome::kInteresting) continue;
        taken[scan] = true;
        ++epoch;
        for (size_t i = scan + 1; i < chunks.size(); ++i) {
          if (results[i].has_value()) {
            results[i].reset();
            std::lock_guard<std::mutex> sl(stats_mu_);
            ++stats_.speculative_dropped;
          }
        }
        next = scan + 1;
        accepted_ = Merge(accepted_, chunks[scan]);
        {
          std::lock_guard<std::mutex> sl(stats_mu_);
          ++stats_.accepted;
        }
        if (options_.stop_after_success) {
          done = true;
        } else {
          cv.notify_all();  // Workers go on with the new base.
        }
        if (options_.on_accept) {
          const std::vector<int64_t> snapshot = accepted_;
          l.unlock();
          Status st = options_.on_accept(snapshot);
          l.lock();
          if (!st.ok()) {
            if (error.ok()) error = st;
            done = true;
          }
        }
        if (done) break;
      }
      if (done) stop_ = true;
      done = true;
      cv.notify_all();
    }
    for (std::thread& t : threads) t.join();
    return error;
  }

  SubsetTest& test_;
  const Options& options_;
  std::vector<int64_t> accepted_;
  std::mutex stats_mu_;
  Stats stats_;
  bool budget_exhausted_ = false;
  bool stop_ = false;
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
