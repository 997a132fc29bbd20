// Prometheus text rendering of the store's counts and the tool runner's.
#include "orchestrator/api/metrics.h"

#include <cstdint>
#include <cstdio>

#include "orchestrator/store/job_queue.h"
#include "orchestrator/pipeline/tool_runner.h"

namespace trench::orchestrator {
namespace {

constexpr JobState kJobStates[] = {JobState::kQueued, JobState::kLeased,
                                   JobState::kDone, JobState::kFailed,
                                   JobState::kParked};

// What the families read.
struct Sources {
  Store* store;
  const ToolRunner* runner;  // May be null.
};

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

Status WriteBugs(const Sources& s, Writer* w) {
  ASSIGN_OR_RETURN(auto counts, s.store->CountBugsByState());
  for (BugState b : AllBugStates()) w->Sample(counts[b], BugStateName(b));
  return Status::Ok();
}

Status WriteJobs(const Sources& s, Writer* w) {
  JobQueue queue(s.store);
  for (JobState j : kJobStates) {
    ASSIGN_OR_RETURN(int64_t n, queue.Count(j));
    w->Sample(n, JobStateName(j));
  }
  return Status::Ok();
}

Status WriteTargetRuns(const Sources& s, Writer* w) {
  ASSIGN_OR_RETURN(int64_t n, s.store->CountRuns());
  w->Sample(n);
  return Status::Ok();
}

Status WriteToolRuns(const Sources& s, Writer* w) {
  w->Sample(s.runner ? s.runner->total_runs() : int64_t{0});
  return Status::Ok();
}

Status WriteToolRunsRunning(const Sources& s, Writer* w) {
  w->Sample(static_cast<int64_t>(s.runner ? s.runner->running() : 0));
  return Status::Ok();
}

Status WriteAgentTokens(const Sources& s, Writer* w) {
  ASSIGN_OR_RETURN(int64_t n, s.store->TotalAgentTokens());
  w->Sample(n);
  return Status::Ok();
}

// The fuzz rate: two counters summed over the finished fuzz jobs' results
// (rate = programs / seconds over any window), and the newest finished
// campaign's own rate as a gauge.
StatusOr<Statement> FuzzTotals(Store* store) {
  ASSIGN_OR_RETURN(
      Statement st,
      store->db()->Prepare(
          "SELECT coalesce(sum(json_extract(result, '$.programs')), 0), "
          "coalesce(sum(json_extract(result, '$.seconds')), 0) FROM jobs "
          "WHERE kind = 'fuzz' AND state = 'done' AND json_valid(result)"));
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return Internal("metrics: the fuzz totals gave no row");
  return st;
}

Status WriteFuzzPrograms(const Sources& s, Writer* w) {
  ASSIGN_OR_RETURN(Statement st, FuzzTotals(s.store));
  w->Sample(st.ColumnInt64(0));
  return Status::Ok();
}

Status WriteFuzzSeconds(const Sources& s, Writer* w) {
  ASSIGN_OR_RETURN(Statement st, FuzzTotals(s.store));
  w->Sample(static_cast<int64_t>(st.ColumnDouble(1)));
  return Status::Ok();
}

Status WriteFuzzRate(const Sources& s, Writer* w) {
  ASSIGN_OR_RETURN(
      Statement last,
      s.store->db()->Prepare(
          "SELECT coalesce(json_extract(result, '$.programs'), 0), "
          "coalesce(json_extract(result, '$.seconds'), 0) FROM jobs "
          "WHERE kind = 'fuzz' AND state = 'done' AND json_valid(result) "
          "ORDER BY updated_ms DESC, id DESC LIMIT 1"));
  ASSIGN_OR_RETURN(bool has_last, last.Step());
  const double seconds = has_last ? last.ColumnDouble(1) : 0;
  w->Sample(seconds > 0 ? last.ColumnInt64(0) / seconds : 0.0);
  return Status::Ok();
}

struct Family {
  Status (*write)(const Sources&, Writer*);
  const char* name;
  const char* type;
  const char* help;
};

constexpr Family kFamilies[] = {
#define TRENCH_METRIC(writer, name, type, help) {writer, name, type, help},
#include "orchestrator/api/metrics.def"
};

}  // namespace

StatusOr<std::string> RenderMetrics(Store* store, const ToolRunner* runner) {
  const Sources sources{store, runner};
  Writer w;
  for (const Family& f : kFamilies) {
    w.Family(f.name, f.type, f.help);
    RETURN_IF_ERROR(f.write(sources, &w));
  }
  return w.Take();
}

}  // namespace trench::orchestrator
