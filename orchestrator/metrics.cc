// Prometheus text rendering of the store's counts.
#include "orchestrator/metrics.h"

#include <cstdint>
#include <cstdio>
#include <functional>

#include "orchestrator/job_queue.h"

namespace trench::orchestrator {
namespace {

constexpr JobState kJobStates[] = {JobState::kQueued, JobState::kLeased,
                                   JobState::kDone, JobState::kFailed,
                                   JobState::kParked};

// Appends one metric family: HELP, TYPE and its samples.
class Writer {
 public:
  void Family(const char* name, const char* type, const char* help) {
    name_ = name;
    out_ += std::string("# HELP ") + name + " " + help + "\n";
    out_ += std::string("# TYPE ") + name + " " + type + "\n";
  }
  void Sample(int64_t value, std::string_view state = {}) {
    Line(std::to_string(value), state);
  }
  void Sample(double value) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.6g", value);
    Line(buf, {});
  }
  std::string Take() { return std::move(out_); }

 private:
  void Line(const std::string& value, std::string_view state) {
    out_ += name_;
    if (!state.empty()) out_ += "{state=\"" + std::string(state) + "\"}";
    out_ += " " + value + "\n";
  }
  std::string name_;
  std::string out_;
};

Status WriteBugs(Store* store, Writer* w) {
  ASSIGN_OR_RETURN(auto counts, store->CountBugsByState());
  w->Family("trench_bugs", "gauge", "Bugs by lifecycle state.");
  for (BugState s : AllBugStates()) w->Sample(counts[s], BugStateName(s));
  return Status::Ok();
}

Status WriteJobs(Store* store, Writer* w) {
  JobQueue queue(store);
  w->Family("trench_jobs", "gauge", "Jobs in the durable queue by state.");
  for (JobState s : kJobStates) {
    ASSIGN_OR_RETURN(int64_t n, queue.Count(s));
    w->Sample(n, JobStateName(s));
  }
  return Status::Ok();
}

Status WriteRuns(Store* store, Writer* w) {
  ASSIGN_OR_RETURN(int64_t n, store->CountRuns());
  w->Family("trench_target_runs_total", "counter",
            "Target runs recorded in the store.");
  w->Sample(n);
  return Status::Ok();
}

Status WriteTokens(Store* store, Writer* w) {
  ASSIGN_OR_RETURN(int64_t n, store->TotalAgentTokens());
  w->Family("trench_agent_tokens_total", "counter",
            "LLM tokens used by agents (input + output).");
  w->Sample(n);
  return Status::Ok();
}

// The fuzz rate: two counters summed over the finished fuzz jobs' results
// (rate = programs / seconds over any window), and the newest finished
// campaign's own rate as a gauge.
Status WriteFuzz(Store* store, Writer* w) {
  ASSIGN_OR_RETURN(
      Statement st,
      store->db()->Prepare(
          "SELECT coalesce(sum(json_extract(result, '$.programs')), 0), "
          "coalesce(sum(json_extract(result, '$.seconds')), 0) FROM jobs "
          "WHERE kind = 'fuzz' AND state = 'done' AND json_valid(result)"));
  ASSIGN_OR_RETURN(bool row, st.Step());
  const int64_t programs = row ? st.ColumnInt64(0) : 0;
  const double seconds = row ? st.ColumnDouble(1) : 0;
  w->Family("trench_fuzz_programs_total", "counter",
            "Programs run by finished fuzz campaigns.");
  w->Sample(programs);
  w->Family("trench_fuzz_seconds_total", "counter",
            "Wall seconds of finished fuzz campaigns (the fuzz rate is "
            "programs_total / seconds_total).");
  w->Sample(static_cast<int64_t>(seconds));
  ASSIGN_OR_RETURN(
      Statement last,
      store->db()->Prepare(
          "SELECT coalesce(json_extract(result, '$.programs'), 0), "
          "coalesce(json_extract(result, '$.seconds'), 0) FROM jobs "
          "WHERE kind = 'fuzz' AND state = 'done' AND json_valid(result) "
          "ORDER BY updated_ms DESC, id DESC LIMIT 1"));
  ASSIGN_OR_RETURN(bool has_last, last.Step());
  const double last_seconds = has_last ? last.ColumnDouble(1) : 0;
  w->Family("trench_fuzz_rate", "gauge",
            "Programs per second of the newest finished fuzz campaign.");
  w->Sample(last_seconds > 0 ? last.ColumnInt64(0) / last_seconds : 0.0);
  return Status::Ok();
}

// THE metric list: one writer per family, in exposition order.
const std::function<Status(Store*, Writer*)> kFamilies[] = {
    WriteBugs, WriteJobs, WriteRuns, WriteFuzz, WriteTokens};

}  // namespace

StatusOr<std::string> RenderMetrics(Store* store) {
  Writer w;
  for (const auto& family : kFamilies) RETURN_IF_ERROR(family(store, &w));
  return w.Take();
}

}  // namespace trench::orchestrator
