// The built-in reproducer: a finding or a free-text report -> a case run
// `runs` times on the build under test. All runs fail: reproduced
// (deterministic); some: flaky with the failure rate; none: not
// reproducible, with the reason. Dedup is by the returned signature (the
// orchestrator compares it with the open bugs'). A report with no HLO that
// names ops in words is reproduced by a fuzz campaign focused on those
// ops: its first failing case stands in for the report's program (the
// claim says so under "described").
#include <algorithm>
#include <set>

#include "agents/builtin_brains.h"
#include "git/unified_diff.h"
#include "triage/case/verdict_status.h"

namespace trench::agents {
namespace {

bool StartsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::string Join(const std::vector<std::string_view>& lines, size_t begin,
                 size_t end) {
  std::string out;
  for (size_t i = begin; i < end; ++i) {
    out.append(lines[i]);
    out += '\n';
  }
  return out;
}

bool IsModuleLine(std::string_view line) {
  return StartsWith(Trim(line), "HloModule ");
}

// Lines [begin, end) from the HloModule line at `begin` to the line that
// closes the ENTRY computation; `end` is the last line + 1.
size_t ModuleEnd(const std::vector<std::string_view>& lines, size_t begin,
                 size_t limit) {
  int depth = 0;
  bool in_entry = false;
  for (size_t i = begin; i < limit; ++i) {
    if (Trim(lines[i]).substr(0, 5) == "ENTRY") in_entry = true;
    for (char c : lines[i]) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    if (in_entry && depth <= 0 && lines[i].find('}') != std::string_view::npos)
      return i + 1;
  }
  return limit;
}

Json NoCase(const std::string& reason) {
  Json claim = Json::MakeObject();
  claim["case"] = nullptr;
  claim["outcome"] = "no_case";
  claim["reason"] = reason;
  return claim;
}

class Reproducer : public Brain {
 public:
  StatusOr<Json> Run(const Json& task, ToolBox& tools) override {
    RETURN_IF_ERROR(CheckTaskObject(task));
    ASSIGN_OR_RETURN(std::optional<std::string> case_id,
                     TaskString(task, "case"));
    ASSIGN_OR_RETURN(std::optional<std::string> report,
                     TaskString(task, "report_text"));
    ASSIGN_OR_RETURN(int64_t runs, TaskInt(task, "runs", 5));
    ASSIGN_OR_RETURN(int64_t seed, TaskInt(task, "seed", -1));
    runs = std::clamp<int64_t>(runs, 1, 20);  // run_case's schema.
    if (!case_id && !report) {
      return InvalidArgument("task: needs `case` or `report_text`");
    }
    Json described;
    if (!case_id) {
      std::string reason;
      ASSIGN_OR_RETURN(case_id, CaseFromReport(task, *report, seed, tools,
                                               &reason, &described));
      if (!case_id) return NoCase(reason);
    }
    ASSIGN_OR_RETURN(Json claim, RunIt(*case_id, runs, tools));
    if (!described.is_null()) claim["described"] = std::move(described);
    return claim;
  }

 private:
  // Writes the first HLO of the report that parses as a case; without HLO,
  // the case a campaign focused on the ops the report names finds
  // (`described` says how). nullopt with `reason` when there is none.
  StatusOr<std::optional<std::string>> CaseFromReport(
      const Json& task, const std::string& report, int64_t seed, ToolBox& tools,
      std::string* reason, Json* described) {
    const std::vector<std::string> blocks = HloBlocksInText(report);
    if (blocks.empty()) {
      return CaseFromDescription(task, report, seed, tools, reason, described);
    }
    std::string errors;
    for (const std::string& hlo : blocks) {
      Json args = Json::MakeObject();
      args["hlo"] = hlo;
      if (seed >= 0) args["seed"] = seed % 4294967296;  // The schema's range.
      const Json* bug = task.Find("bug");
      args["origin"] = bug && bug->is_number()
                           ? "report of bug " + bug->number_text()
                           : std::string("report");
      ASSIGN_OR_RETURN(ToolResult r, tools.Call("write_case", args));
      const std::string id = r.ok ? OutString(r.output, "case") : "";
      if (!id.empty()) return std::optional<std::string>(id);
      errors += (errors.empty() ? "" : "; ") +
                (r.ok ? std::string("write_case gave no case id") : r.error);
    }
    *reason = "the HLO in the report is not a valid module: " + errors;
    return std::optional<std::string>();
  }

  // A campaign of `fuzz_seconds` (default 30) focused on the ops the
  // report names. An op the fuzzer does not draw (its error quotes it) is
  // dropped and the campaign run again with the rest.
  StatusOr<std::optional<std::string>> CaseFromDescription(
      const Json& task, const std::string& report, int64_t seed, ToolBox& tools,
      std::string* reason, Json* described) {
    ASSIGN_OR_RETURN(std::vector<std::string> target_ops,
                     TaskStrings(task, "target_ops"));
    std::vector<std::string> ops = OpsNamedInText(report, target_ops);
    ASSIGN_OR_RETURN(int64_t seconds, TaskInt(task, "fuzz_seconds", 30));
    seconds = std::clamp<int64_t>(seconds, 1, 600);  // The fuzz schema's.
    std::vector<std::string> dropped;
    while (!ops.empty()) {
      Json args = Json::MakeObject();
      args["seconds"] = seconds;
      args["seed"] = (seed < 0 ? 1 : seed) % 4294967296;
      args["ops"] = Json::MakeArray();
      for (const std::string& op : ops) args["ops"].push_back(op);
      ASSIGN_OR_RETURN(ToolResult r, tools.Call("fuzz", args));
      if (!r.ok) {
        auto quoted = std::find_if(ops.begin(), ops.end(), [&](auto& op) {
          return r.error.find("'" + op + "'") != std::string::npos;
        });
        if (quoted == ops.end()) {
          *reason =
              "the report holds no HLO module; a fuzz campaign on the "
              "ops it names failed: " +
              r.error;
          return std::optional<std::string>();
        }
        dropped.push_back(*quoted);
        ops.erase(quoted);
        continue;
      }
      Json note = Json::MakeObject();
      note["ops"] = args["ops"];
      note["seconds"] = seconds;
      note["programs"] = OutInt(r.output, "programs", 0);
      if (!dropped.empty()) {
        note["dropped"] = Json::MakeArray();
        for (const std::string& op : dropped) note["dropped"].push_back(op);
      }
      if (const Json* f = r.output.Find("findings"); f && f->is_array()) {
        for (const Json& x : f->array()) {
          const std::string id = x.is_object() ? OutString(x, "case") : "";
          if (id.empty() ||
              hlo_diff::IsUnjudgeableStatus(OutString(x, "status")))
            continue;
          *described = std::move(note);
          return std::optional<std::string>(id);
        }
      }
      *reason = "the report holds no HLO module; " + std::to_string(seconds) +
                " s of fuzzing focused on the ops it names (" +
                args["ops"].Dump() + ", " +
                std::to_string(OutInt(r.output, "programs", 0)) +
                " programs) found no failure";
      return std::optional<std::string>();
    }
    *reason =
        "the report holds no HLO module (no \"HloModule\" block), no case is "
        "attached, and it names no op the fuzzer can aim at" +
        (dropped.empty() ? std::string()
                         : " (of " + std::to_string(dropped.size()) +
                               " named, none is drawn by the fuzzer)");
    return std::optional<std::string>();
  }

  StatusOr<Json> RunIt(const std::string& case_id, int64_t runs,
                       ToolBox& tools) {
    Json args = Json::MakeObject();
    args["case"] = case_id;
    args["runs"] = runs;
    ASSIGN_OR_RETURN(ToolResult r, tools.Call("run_case", args));
    Json claim = Json::MakeObject();
    claim["case"] = case_id;
    if (!r.ok) {
      claim["outcome"] = "error";
      claim["reason"] = "run_case failed: " + r.error;
      return claim;
    }
    const int64_t done = std::max<int64_t>(OutInt(r.output, "runs", runs), 0);
    const int64_t failures =
        std::clamp<int64_t>(OutInt(r.output, "failures", 0), 0, done);
    const std::string status = OutString(r.output, "status", "unknown");
    const double rate = done > 0 ? double(failures) / double(done) : 0.0;
    claim["runs"] = done;
    claim["failures"] = failures;
    claim["rate"] = rate;
    claim["status"] = status;
    const Json* sig = r.output.Find("signature");
    claim["signature"] = sig ? *sig : Json();
    if (const Json* s = r.output.Find("statuses"); s && s->is_array()) {
      claim["statuses"] = *s;
    }
    if (hlo_diff::IsUnjudgeableStatus(status)) {
      claim["outcome"] = "not_reproducible";
      claim["reason"] =
          "the case cannot be judged on this target (status " + status + ")";
    } else if (done > 0 && failures == done) {
      claim["outcome"] = "reproduced";
    } else if (failures > 0) {
      claim["outcome"] = "flaky";
      claim["reason"] = "failed " + std::to_string(failures) + " of " +
                        std::to_string(done) + " runs";
    } else {
      claim["outcome"] = "not_reproducible";
      claim["reason"] = "passed all " + std::to_string(done) +
                        " runs on the build under test (status " + status + ")";
    }
    return claim;
  }
};

}  // namespace

std::vector<std::string> HloBlocksInText(std::string_view text) {
  const std::vector<std::string_view> lines = SplitLineViews(text);
  std::vector<std::string> fenced, loose;
  size_t fence_begin = 0;
  bool in_fence = false;
  std::vector<bool> fenced_line(lines.size(), false);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!StartsWith(Trim(lines[i]), "```")) continue;
    if (!in_fence) {
      in_fence = true;
      fence_begin = i + 1;
      continue;
    }
    in_fence = false;
    for (size_t j = fence_begin; j < i; ++j) {
      fenced_line[j] = true;
      if (IsModuleLine(lines[j])) {
        fenced.push_back(Join(lines, j, ModuleEnd(lines, j, i)));
        break;
      }
    }
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    if (fenced_line[i] || !IsModuleLine(lines[i])) continue;
    // An unclosed fence runs to the end of the text.
    loose.push_back(Join(lines, i, ModuleEnd(lines, i, lines.size())));
  }
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (auto* list : {&fenced, &loose}) {
    for (std::string& b : *list) {
      if (seen.insert(b).second) out.push_back(std::move(b));
    }
  }
  return out;
}

std::unique_ptr<Brain> MakeBuiltinReproducer() {
  return std::make_unique<Reproducer>();
}

}  // namespace trench::agents
