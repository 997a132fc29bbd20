// The pass level (localize.h): binary search on --pass-limit, then a
// semantic check of the culprit execution's output module.
#include <filesystem>
#include <map>

#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/npy.h"
#include "oracle/evaluator.h"
#include "triage/localize/localize.h"

namespace trench::hlo_bisect {
namespace {

namespace fs = std::filesystem;

std::optional<int64_t> IntAt(const Json& j, std::string_view key) {
  if (!j.is_object()) return std::nullopt;
  const Json* v = j.Find(key);
  if (v == nullptr || !v->is_integer()) return std::nullopt;
  return v->int64_value();
}

// The name of pass execution `n` in a compile report ("" if absent).
std::string PassOfExecution(const Json& compile, int64_t n) {
  const Json* passes = compile.is_object() ? compile.Find("passes") : nullptr;
  if (passes == nullptr || !passes->is_array()) return "";
  for (const Json& p : passes->array()) {
    const Json* e = p.Find("execution");
    const Json* name = p.Find("pass");
    const Json* req = p.Find("required");
    if (e && e->is_integer() && e->int64_value() == n && name &&
        name->is_string() && !(req && req->is_bool() && req->bool_value())) {
      return name->string_value();
    }
  }
  return "";
}

// The module the target compiled in a dumped run: optimized.hlo, else the
// last pass dump (a compile that failed in the back end).
StatusOr<std::string> DumpedModule(const std::string& dump_dir) {
  const fs::path opt = fs::path(dump_dir) / "optimized.hlo";
  std::error_code ec;
  if (fs::exists(opt, ec)) return ReadTextFile(opt.string());
  std::string last;
  for (const auto& e :
       fs::directory_iterator(fs::path(dump_dir) / "passes", ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() > 4 && name.substr(name.size() - 4) == ".hlo" &&
        name > last) {
      last = name;
    }
  }
  if (last.empty()) {
    return NotFound(dump_dir + ": the target dumped no module");
  }
  return ReadTextFile((fs::path(dump_dir) / "passes" / last).string());
}

// Who is at fault for a value failure that pass execution n introduces:
// the module the target compiled at --pass-limit=n (dumped) is evaluated
// by the oracle. If the target's outputs are within that module's own
// numerics contract, the back end compiled it correctly and the pass
// changed the result (*backend_ok = true); if not, the back end
// miscompiled the module the pass produced (*backend_ok = false). Also
// records whether that module's values agree with the input's contract.
// Returns the evidence; *backend_ok stays unset when the check fails.
Json SemanticCheck(const hlo_diff::Case& c, const HloModule& input,
                   const Probe& dumped, const NumericsOptions& numerics,
                   std::optional<bool>* backend_ok) {
  Json j = Json::MakeObject();
  auto fail = [&](const std::string& why) {
    j["checked"] = false;
    j["why"] = why;
    return j;
  };
  StatusOr<std::string> text = DumpedModule(dumped.dump_dir);
  if (!text.ok()) return fail(text.status().message());
  auto after = hlo_diff::ParseCaseModule(*text, "optimized.hlo");
  if (!after.ok()) return fail(after.status().message());
  // One result per device (SPMD: every device's outputs, out/<d>/).
  StatusOr<std::vector<BoundedResult>> bounds =
      EvaluateCaseWithBounds(c, **after, numerics);
  if (!bounds.ok()) return fail("oracle: " + bounds.status().message());
  const bool spmd = c.mesh.size() > 1;
  bool within = true;
  Json outs = Json::MakeArray();
  for (size_t d = 0; d < bounds->size(); ++d) {
    const std::string dir =
        DeviceOutDir(dumped, spmd ? static_cast<int64_t>(d) : -1);
    for (size_t i = 0; i < (*bounds)[d].outputs.size(); ++i) {
      const BoundedOutput& b = (*bounds)[d].outputs[i];
      StatusOr<Literal> actual =
          ReadNpyFile((fs::path(dir) / (std::to_string(i) + ".npy")).string(),
                      b.nominal.element_type());
      if (!actual.ok()) return fail(actual.status().message());
      ValueCheck v = CheckValue(*actual, b);
      within &= v.ok;
      Json x = v.ToJson();
      x["output"] = static_cast<int64_t>(i);
      if (spmd) x["device"] = static_cast<int64_t>(d);
      outs.push_back(std::move(x));
    }
  }
  *backend_ok = within;
  j["checked"] = true;
  j["target_within_compiled_module_contract"] = within;
  j["outputs_vs_compiled_module"] = std::move(outs);
  StatusOr<std::vector<BoundedResult>> in_bounds =
      EvaluateCaseWithBounds(c, input, numerics);
  if (in_bounds.ok() && in_bounds->size() == bounds->size()) {
    bool agree = true;
    for (size_t d = 0; d < bounds->size(); ++d) {
      agree &= CompareWithBounds((*bounds)[d].nominal, (*in_bounds)[d]).ok();
    }
    j["compiled_module_agrees_with_input"] = agree;
  }
  return j;
}

}  // namespace

LevelResult LocalizePass(const hlo_diff::Case& c, const HloModule& module,
                         const Probe& full, Prober& prober,
                         const NumericsOptions& numerics, Findings* findings) {
  LevelResult r;
  r.level = "pass";
  Json& ev = r.evidence;
  // A compile crash inside a pass: the pass trace names it.
  if (full.status == "compile_crash" && !full.last_pass.empty() &&
      full.last_pass != "codegen") {
    r.result = "found";
    findings->pass = full.last_pass;
    ev["method"] = "pass trace (last pass entered before the crash)";
    ev["last_pass"] = full.last_pass;
    ev["message"] = full.verdict.message;
    r.summary = "the compile crashes inside pass '" + full.last_pass + "'";
    return r;
  }
  std::map<int64_t, std::string> probes;  // limit -> status
  Status harness;
  auto fails = [&](int64_t n) -> StatusOr<bool> {
    hlo_diff::CaseOptions o = c.options;
    o.pass_limit = n;
    ++r.runs;
    ASSIGN_OR_RETURN(Probe p, prober.Run(o, false));
    probes[n] = p.status;
    return SameFailure(full, p);
  };
  const std::optional<int64_t> executions =
      IntAt(full.compile, "pass_executions");
  auto record_probes = [&] {
    Json a = Json::MakeArray();
    for (const auto& [n, s] : probes) {
      Json p = Json::MakeObject();
      p["pass_limit"] = n;
      p["status"] = s;
      a.push_back(std::move(p));
    }
    ev["probes"] = std::move(a);
  };
  ev["method"] = "binary search on --pass-limit";
  if (!executions) {
    // No compile report (the compile failed): only the back end can be
    // told apart, by --pass-limit=0.
    StatusOr<bool> f = fails(0);
    record_probes();
    if (!f.ok()) {
      r.result = "error";
      r.summary = f.status().message();
    } else if (*f) {
      r.result = "found";
      findings->pass = "codegen";
      r.summary = "fails with --pass-limit=0 (no optional pass): the back end";
    } else {
      r.result = "none";
      r.summary =
          "no compile report (pass_executions unknown) and "
          "--pass-limit=0 does not fail";
    }
    return r;
  }
  const int64_t e = *executions;
  ev["pass_executions"] = e;
  r.linear_runs = e + 1;
  StatusOr<int64_t> n = FirstFailing(0, e + 1, fails);
  record_probes();
  if (!n.ok()) {
    r.result = "error";
    r.summary = n.status().message();
    return r;
  }
  ev["first_failing_limit"] = *n;
  r.result = "found";
  if (*n == 0) {
    findings->pass = "codegen";
    r.summary =
        "fails with --pass-limit=0 (every optional pass skipped, buffer "
        "reuse off): the back end (codegen)";
    return r;
  }
  if (*n == e + 1) {
    findings->pass = "buffer-assignment";
    findings->pass_execution = e + 1;
    r.summary = "passes with all " + std::to_string(e) +
                " pass executions but buffer reuse off (--pass-limit=" +
                std::to_string(e) +
                "), fails once buffer reuse runs: buffer-assignment";
    return r;
  }
  const std::string pass = PassOfExecution(full.compile, *n);
  findings->pass_execution = *n;
  ev["execution"] = *n;
  ev["execution_pass"] = pass;
  const std::string where = "pass execution " + std::to_string(*n) + " ('" +
                            pass + "') introduces the failure";
  if (hlo_diff::IsCrashStatus(full.status)) {
    // A crash is introduced by the pass execution that makes it happen.
    findings->pass = pass;
    r.summary = where;
    return r;
  }
  // Did the back end compile the pass's output correctly?
  hlo_diff::CaseOptions o = c.options;
  o.pass_limit = *n;
  ++r.runs;
  ++r.linear_runs;
  StatusOr<Probe> dumped = prober.Run(o, true);
  std::optional<bool> backend_ok;
  if (dumped.ok()) {
    ev["semantic_check"] =
        SemanticCheck(c, module, *dumped, numerics, &backend_ok);
  } else {
    ev["semantic_check"] = dumped.status().message();
  }
  if (backend_ok.has_value() && !*backend_ok) {
    findings->pass = "codegen";
    findings->trigger = pass;
    r.summary = where +
                ", but the target's outputs violate the contract of the "
                "module it compiled: a back-end bug exposed by '" +
                pass + "'";
  } else {
    findings->pass = pass;
    r.summary = where + (backend_ok.has_value()
                             ? "; the target computes the module after it "
                               "correctly, so the pass changed the result"
                             : "");
  }
  return r;
}

}  // namespace trench::hlo_bisect
