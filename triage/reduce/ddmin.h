// A generic delta-debugging engine (ddmin over chunks, as llvm-reduce and
// C-Reduce's passes use it). It knows nothing of HLO: a client numbers its
// simplification opportunities 0..n-1 and says, for a subset "apply these",
// whether the result is still interesting.
//
// The schedule. `accepted` (initially empty) is the set applied so far and
// `remaining` the opportunities not in it. Levels use chunk sizes k = n,
// ceil(k/2), ..., 1: at each level `remaining` is cut into consecutive
// chunks of k, and each chunk C in order is tried as the candidate
// accepted ∪ C. An interesting candidate is accepted (C joins `accepted`)
// and the level goes on with the next chunk on the new base. The run ends
// after the k = 1 level (or after the first acceptance with
// `stop_after_success`, for callers that recount their opportunities after
// every step). So the first test is "apply everything", and a run costs at
// most sum over levels of ceil(n/k) tests (~2n); DryRunTests counts it by
// running the schedule with a test that always answers "not interesting".
//
// Every candidate is validated before it is tested (Validate): an invalid
// one costs no test run and counts as such. Validate may also name the
// candidate's content (a key); an OutcomeCache then answers repeated
// candidates without a run (e.g. the same module reached by two passes),
// and a candidate whose content a run already accepted (it changes
// nothing) counts as invalid.
//
// Parallel testing (jobs > 1): the calling thread consumes outcomes in
// schedule order, exactly as a sequential run does, while `jobs` worker
// threads test the candidates the schedule will most likely ask next. To
// find them, a copy of the schedule is run ahead: outcomes already known
// are used, unknown ones are predicted from the recent rate of interesting
// outcomes (interesting iff it is at least one half; Options::prior_rate
// seeds it). So after a run of acceptances the workers test accepted ∪ C1
// ∪ C2 next to accepted ∪ C1, after rejections the next chunks on the same
// base, and at the end of a level the next level's first chunks. A
// candidate is keyed by its exact set, so an outcome is used only for the
// candidate it was tested as: the accepted sets and the order of
// acceptances are the same for any `jobs` when the test is deterministic,
// and jobs only change how many tests run and how fast. Mispredicted
// candidates cost a test each (speculative_dropped); `ahead` counts the
// outcomes that were ready or running before the schedule reached them.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"

namespace trench::ddmin {

enum class Outcome { kInteresting, kNotInteresting, kInvalid };
const char* OutcomeName(Outcome o);

// The client side. Both calls get the candidate as `chosen` (ascending,
// unique, each < n) and the calling worker's index in [0, jobs); calls with
// different worker indices may run concurrently, calls with one index never
// do. Test(chosen, w) always directly follows a Validate(chosen, w) that
// returned a valid result on the same worker, so a client may keep the
// candidate it built in Validate for Test.
class SubsetTest {
 public:
  struct Validation {
    bool valid = false;
    std::string key;  // Content key for the cache ("" = do not cache).
    std::string why;  // Why it is invalid (for logs).
  };
  virtual ~SubsetTest() = default;
  virtual Validation Validate(std::span<const int64_t> chosen, int worker) = 0;
  // kInteresting or kNotInteresting (kInvalid counts as invalid). Errors
  // are the harness's own and stop the run.
  virtual StatusOr<Outcome> Test(std::span<const int64_t> chosen,
                                 int worker) = 0;
};

// A thread-safe map from candidate keys to test outcomes; may be shared by
// several engine runs (passes) over one reduction.
class OutcomeCache {
 public:
  std::optional<Outcome> Find(const std::string& key) const;
  void Insert(const std::string& key, Outcome o);
  size_t size() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, Outcome> map_;
};

struct Stats {
  int64_t candidates = 0;           // Candidates considered (all below).
  int64_t tests = 0;                // Test runs.
  int64_t interesting = 0;          // Test runs answering interesting.
  int64_t invalid = 0;              // Rejected by Validate (no test run).
  int64_t cache_hits = 0;           // Answered by the cache (no test run).
  int64_t speculative_dropped = 0;  // Outcomes the schedule never used.
  int64_t ahead = 0;  // Used outcomes taken up before the schedule got there.
  int64_t accepted = 0;  // Accepted chunks.

  Stats& operator+=(const Stats& o);
};

struct Options {
  int jobs = 1;                     // Worker threads (>= 1).
  bool stop_after_success = false;  // Return after the first acceptance.
  int64_t max_tests = -1;           // Stop when this many tests ran (< 0: no
                                    // limit); the result says so.
  OutcomeCache* cache = nullptr;    // Optional.
  // The expected rate of interesting outcomes before any is seen (jobs > 1
  // only: it seeds the prediction of which candidates come next).
  double prior_rate = 0.25;
  // Called (on the calling thread) after every acceptance with the new
  // accepted set; an error stops the run.
  std::function<Status(std::span<const int64_t> accepted)> on_accept;
};

struct Result {
  std::vector<int64_t> accepted;  // Ascending.
  Stats stats;
  bool budget_exhausted = false;  // Stopped by max_tests.
};

// Runs the schedule over opportunities 0..n-1. Errors: InvalidArgument for
// n < 0 or jobs < 1; the first error of Test or on_accept.
StatusOr<Result> Minimize(int64_t n, SubsetTest& test,
                          const Options& options = {});

// How many tests a run over n opportunities costs at most (the schedule
// run with a test that always answers "not interesting").
int64_t DryRunTests(int64_t n);

// A test over a flaky predicate: runs `once` up to `repeats` times and
// answers interesting iff at least ceil(min_rate * repeats) runs reproduce
// (stopping as soon as the answer is known). `reproduced`/`runs` receive
// the counts when not null. REQUIRES: repeats >= 1, 0 < min_rate <= 1.
StatusOr<Outcome> RepeatTest(const std::function<StatusOr<bool>()>& once,
                             int repeats, double min_rate,
                             int* reproduced = nullptr, int* runs = nullptr);

}  // namespace trench::ddmin
