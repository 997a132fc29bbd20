// The built-in minimizer: drives reduce_case (hlo-reduce) and judges when
// to stop. After each round it re-runs the result (run_case) and keeps it
// only if it still fails the same way (same status, same dtype in the
// signature when both say one). Another round follows only while the last
// one shrank the case by more than `min_gain_percent` (default 10) and
// enough of the time budget is left (at least a fifth of it and 5 s).
// Time is the tools' own reported seconds, so the policy is deterministic
// for given tool answers.
#include <algorithm>
#include <cmath>

#include "agents/builtin_brains.h"

namespace trench::agents {
namespace {

constexpr int kMaxRounds = 4;

// The size reduce_case reports: {instructions, elements, text_bytes}, or a
// plain number.
double SizeOf(const Json* size) {
  if (size == nullptr) return -1;
  if (size->is_number()) return size->number_value();
  for (const char* key : {"instructions", "text_bytes", "elements"}) {
    const Json* v = size->Find(key);
    if (v && v->is_number()) return v->number_value();
  }
  return -1;
}

std::string DtypeOf(const Json& run) {
  const Json* sig = run.Find("signature");
  return sig && sig->is_object() ? OutString(*sig, "dtype") : "";
}

class Minimizer : public Brain {
 public:
  StatusOr<Json> Run(const Json& task, ToolBox& tools) override {
    RETURN_IF_ERROR(CheckTaskObject(task));
    ASSIGN_OR_RETURN(std::optional<std::string> case_id,
                     TaskString(task, "case"));
    if (!case_id) return InvalidArgument("task: case: required");
    ASSIGN_OR_RETURN(int64_t seconds, TaskInt(task, "seconds", 120));
    ASSIGN_OR_RETURN(int64_t min_gain, TaskInt(task, "min_gain_percent", 10));
    budget_ = std::max<double>(seconds, 5);
    used_ = 0;

    Json claim = Json::MakeObject();
    claim["case"] = *case_id;
    claim["before"] = nullptr;
    claim["after"] = nullptr;
    ASSIGN_OR_RETURN(ToolResult base, RunOnce(*case_id, tools));
    if (!base.ok) {
      claim["reason"] = "run_case on the input failed: " + base.error;
      return claim;
    }
    const std::string status = OutString(base.output, "status");
    const std::string dtype = DtypeOf(base.output);
    claim["status"] = status;
    if (status == "pass" || OutInt(base.output, "failures", 1) == 0) {
      claim["reason"] = "the case does not fail on the build under test";
      return claim;
    }

    Json rounds = Json::MakeArray();
    Json notes = Json::MakeArray();
    std::string current = *case_id;
    for (int round = 1; round <= kMaxRounds; ++round) {
      const double left = budget_ - used_;
      if (round > 1 && left < std::max(5.0, budget_ / 5)) {
        notes.push_back("stopped: " + std::to_string(int(left)) +
                        " s of the budget left");
        break;
      }
      Json args = Json::MakeObject();
      args["case"] = current;
      args["seconds"] =
          static_cast<int64_t>(std::clamp(std::floor(left), 5.0, 1800.0));
      ASSIGN_OR_RETURN(ToolResult r, tools.Call("reduce_case", args));
      used_ += r.seconds;
      const std::string reduced = r.ok ? OutString(r.output, "case") : "";
      if (reduced.empty()) {
        notes.push_back("round " + std::to_string(round) + ": reduce_case " +
                        (r.ok ? "gave no case" : "failed: " + r.error));
        break;
      }
      ASSIGN_OR_RETURN(ToolResult check, RunOnce(reduced, tools));
      const std::string got = check.ok ? OutString(check.output, "status") : "";
      const std::string got_dtype = check.ok ? DtypeOf(check.output) : "";
      if (got != status ||
          (!dtype.empty() && !got_dtype.empty() && dtype != got_dtype)) {
        notes.push_back("round " + std::to_string(round) +
                        ": the reduced case fails differently (" +
                        (check.ok ? got + " " + got_dtype : check.error) +
                        "); kept the previous case");
        break;
      }
      const Json* before = r.output.Find("before");
      const Json* after = r.output.Find("after");
      if (claim["before"].is_null() && before) claim["before"] = *before;
      if (after) claim["after"] = *after;
      current = reduced;
      const double b = SizeOf(before), a = SizeOf(after);
      const double gain = b > 0 && a >= 0 ? 100.0 * (b - a) / b : 0.0;
      Json rj = Json::MakeObject();
      rj["case"] = reduced;
      rj["before"] = before ? *before : Json();
      rj["after"] = after ? *after : Json();
      rj["gain_percent"] = std::round(gain * 10) / 10;
      rj["seconds"] = r.seconds;
      rounds.push_back(std::move(rj));
      if (gain <= static_cast<double>(min_gain)) {
        notes.push_back("converged: round " + std::to_string(round) +
                        " shrank the case by " +
                        std::to_string(static_cast<int>(gain)) + "%");
        break;
      }
    }
    claim["case"] = current;
    claim["rounds"] = std::move(rounds);
    claim["verified"] = current != *case_id;
    claim["notes"] = std::move(notes);
    if (current == *case_id)
      claim["reason"] = "no smaller case that fails the same way";
    return claim;
  }

 private:
  StatusOr<ToolResult> RunOnce(const std::string& case_id, ToolBox& tools) {
    Json args = Json::MakeObject();
    args["case"] = case_id;
    args["runs"] = 1;
    StatusOr<ToolResult> r = tools.Call("run_case", args);
    if (r.ok()) used_ += r->seconds;
    return r;
  }

  double budget_ = 0, used_ = 0;
};

}  // namespace

std::unique_ptr<Brain> MakeBuiltinMinimizer() {
  return std::make_unique<Minimizer>();
}

}  // namespace trench::agents
