// The built-in stress-test author: the fuzzer with focus on the task's
// area. hlo-fuzz focuses on ops or on passes, not both, so an area naming
// both gets two campaigns that share the time; no area gets one unfocused
// campaign. Seeds derive from the bug id (or the task's `seed`), so a task
// replays the same programs. Findings are merged by signature. A task with
// `changed_lines` (the commit's diff and its unreached lines) asks each
// campaign to measure and steer toward the commit's changed lines; an area
// with `large_elements` (the commit changed code that runs only on large
// arrays) makes half of the programs that large.
#include <algorithm>
#include <set>

#include "agents/builtin_brains.h"

namespace trench::agents {
namespace {

std::string SignatureKey(const Json& finding) {
  const Json* sig = finding.Find("signature");
  if (sig == nullptr) return OutString(finding, "case");
  if (sig->is_object() && sig->Find("sig")) return sig->Find("sig")->Dump();
  return sig->Dump();
}

class StressAuthor : public Brain {
 public:
  StatusOr<Json> Run(const Json& task, ToolBox& tools) override {
    RETURN_IF_ERROR(CheckTaskObject(task));
    const Json* area = task.Find("area");
    if (area && !area->is_null() && !area->is_object()) {
      return InvalidArgument("task: area: expected an object");
    }
    const Json empty = Json::MakeObject();
    if (area == nullptr || area->is_null()) area = &empty;
    ASSIGN_OR_RETURN(std::vector<std::string> ops, TaskStrings(*area, "ops"));
    ASSIGN_OR_RETURN(std::vector<std::string> passes,
                     TaskStrings(*area, "passes"));
    ASSIGN_OR_RETURN(int64_t seconds, TaskInt(task, "seconds", 60));
    ASSIGN_OR_RETURN(int64_t bug, TaskInt(task, "bug", 0));
    ASSIGN_OR_RETURN(int64_t seed, TaskInt(task, "seed", -1));
    ASSIGN_OR_RETURN(int64_t large, TaskInt(*area, "large_elements", 0));
    ASSIGN_OR_RETURN(std::vector<std::string> large_attributes,
                     TaskStrings(*area, "large_attributes"));
    const Json* lines = task.Find("changed_lines");
    const bool aim_lines = lines != nullptr && lines->is_object();
    if (seed < 0)
      seed = ((bug * 7919 + 17) % 4294967296 + 4294967296) % 4294967296;
    // The fuzz tool's schema caps lists at 16 names.
    if (ops.size() > 16) ops.resize(16);
    if (passes.size() > 16) passes.resize(16);

    struct Campaign {
      std::string focus;
      std::vector<std::string> names;
    };
    std::vector<Campaign> campaigns;
    if (!ops.empty()) campaigns.push_back({"ops", ops});
    if (!passes.empty()) campaigns.push_back({"passes", passes});
    if (campaigns.empty()) campaigns.push_back({"none", {}});
    const int64_t total = std::max<int64_t>(seconds, 1);

    Json findings = Json::MakeArray();
    Json rounds = Json::MakeArray();
    Json notes = Json::MakeArray();
    std::set<std::string> seen;
    int64_t programs = 0;
    for (size_t i = 0; i < campaigns.size(); ++i) {
      const int64_t share = std::clamp<int64_t>(
          total / static_cast<int64_t>(campaigns.size()), 1, 600);
      Json args = Json::MakeObject();
      args["seconds"] = share;
      args["seed"] = (seed + static_cast<int64_t>(i)) % 4294967296;
      if (campaigns[i].focus != "none") {
        args[campaigns[i].focus] = Json::MakeStringArray(campaigns[i].names);
      }
      if (aim_lines) args["changed_lines"] = true;
      if (large > 0) {
        args["large_elements"] = large;
        if (!large_attributes.empty()) {
          args["large_attributes"] = Json::MakeStringArray(large_attributes);
        }
      }
      ASSIGN_OR_RETURN(ToolResult r, tools.Call("fuzz", args));
      Json round = Json::MakeObject();
      round["focus"] = campaigns[i].focus;
      round["names"] = Json::MakeStringArray(campaigns[i].names);
      round["seconds"] = share;
      if (!r.ok) {
        notes.push_back("fuzz (" + campaigns[i].focus + ") failed: " + r.error);
        round["error"] = r.error;
        rounds.push_back(std::move(round));
        continue;
      }
      programs += OutInt(r.output, "programs", 0);
      int64_t fresh = 0;
      if (const Json* f = r.output.Find("findings"); f && f->is_array()) {
        for (const Json& x : f->array()) {
          if (!x.is_object() || OutString(x, "case").empty()) continue;
          if (!seen.insert(SignatureKey(x)).second) continue;
          findings.push_back(x);
          ++fresh;
        }
      }
      round["programs"] = OutInt(r.output, "programs", 0);
      round["findings"] = fresh;
      rounds.push_back(std::move(round));
    }
    Json claim = Json::MakeObject();
    claim["findings"] = std::move(findings);
    claim["programs"] = programs;
    claim["rounds"] = std::move(rounds);
    const bool failed = !notes.array().empty();
    if (failed) claim["notes"] = std::move(notes);
    if (claim["findings"].array().empty()) {
      claim["reason"] =
          failed ? "no finding; a fuzz campaign failed"
                 : "no finding in " + std::to_string(total) + " s of fuzzing";
    }
    return claim;
  }
};

}  // namespace

std::unique_ptr<Brain> MakeBuiltinStressAuthor() {
  return std::make_unique<StressAuthor>();
}

}  // namespace trench::agents
