#include "triage/reduce/reduce_case.h"

#include <filesystem>
#include <sstream>

#include "triage/reduce/interestingness.h"
#include "triage/reduce/reducer.h"

namespace trench::hlo_reduce {
namespace {

namespace fs = std::filesystem;

// The test described in reduce_case.h.
StatusOr<std::unique_ptr<Interestingness>> MakeTest(const hlo_diff::Case& c,
                                                    const ReduceCaseOptions& o,
                                                    bool* not_interesting) {
  if (!o.test_command.empty()) {
    ASSIGN_OR_RETURN(std::unique_ptr<ExternalCommandTest> t,
                     ExternalCommandTest::Create(
                         {.command = o.test_command,
                          .module_path = o.test_module,
                          .timeout_seconds = o.target.timeout_seconds,
                          .work_dir = o.work_dir + "/test",
                          .jobs = o.jobs}));
    return std::unique_ptr<Interestingness>(std::move(t));
  }
  const std::string culprit = o.culprit_pass.empty()
                                  ? CulpritFromSignature(c.signature)
                                  : o.culprit_pass;
  StatusOr<std::unique_ptr<SameBugTest>> t =
      SameBugTest::Create(c, {.target = o.target,
                              .jobs = o.jobs,
                              .work_dir = o.work_dir + "/target",
                              .culprit_pass = culprit});
  if (!t.ok()) {
    *not_interesting = t.status().code() == StatusCode::kFailedPrecondition;
    return Status(t.status().code(), o.case_name + ": " + t.status().message());
  }
  return std::unique_ptr<Interestingness>(std::move(t).value());
}

}  // namespace

StatusOr<Json> ReduceCase(
    const hlo_diff::Case& c,
    const std::vector<std::unique_ptr<ReductionPass>>& passes,
    const ReduceCaseOptions& o, bool* not_interesting) {
  *not_interesting = false;
  if (!o.test_command.empty() && !o.culprit_pass.empty()) {
    return InvalidArgument(
        "--culprit-pass needs the same-bug test (no --test)");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Interestingness> test,
                   MakeTest(c, o, not_interesting));
  RETURN_IF_ERROR(test->SetRepeats(o.repeats, o.min_rate));
  // The initial case must be interesting; its rate is measured (the
  // same-bug test's reference run already reproduced it once).
  StatusOr<double> rate = o.test_command.empty() && o.repeats == 1
                              ? StatusOr<double>(1.0)
                              : test->MeasureRate(c, 0);
  if (!rate.ok()) return rate.status();
  if (*rate + 1e-9 < o.min_rate || *rate == 0) {
    *not_interesting = true;
    std::ostringstream why;
    why << o.case_name << ": the case is not interesting (reproduced "
        << *rate * o.repeats << " of " << o.repeats << " runs, --min-rate "
        << o.min_rate << ")";
    return FailedPrecondition(why.str());
  }
  ReduceOptions ro;
  ro.out_dir = o.out_dir;
  ro.jobs = o.jobs;
  ro.resume = o.resume;
  ro.max_rounds = o.max_rounds;
  ro.max_tests = o.max_tests;
  ro.on_progress = o.on_progress;
  ASSIGN_OR_RETURN(ReduceResult r, Reduce(c, passes, *test, ro));
  Json s = r.ToJson();
  s["case"] = o.case_name;
  s["out"] = o.out_dir;
  s["best"] = (fs::path(o.out_dir) / "best").string();
  s["test"] = test->Describe();
  s["initial_rate"] = *rate;
  s["repeats"] = o.repeats;
  s["min_rate"] = o.min_rate;
  s["jobs"] = o.jobs;
  s["target_runs"] = test->runs();
  return s;
}

}  // namespace trench::hlo_reduce
