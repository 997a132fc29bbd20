#include "triage/localize/localization_report.h"

#include <sstream>

#include "triage/case/verdict.h"

namespace trench::hlo_bisect {
namespace {

Json OrNull(const std::string& s) { return s.empty() ? Json() : Json(s); }

const Json* Field(const Json& j, std::string_view key) {
  return j.is_object() ? j.Find(key) : nullptr;
}

std::string StringField(const Json& j, std::string_view key) {
  const Json* v = Field(j, key);
  return v && v->is_string() ? v->string_value() : "";
}

bool IsPassCulprit(const std::string& pass) {
  return !pass.empty() && pass != "codegen" && pass != "buffer-assignment";
}

}  // namespace

Json RefinedSignature(const Localization& l) {
  const Findings& f = l.findings;
  Json s = Json::MakeObject();
  s["status"] = l.full.status;
  s["pass"] = OrNull(f.pass);
  s["site"] = OrNull(StringField(f.rewrite, "site"));
  std::string opcode;
  // A decision on a parameter or constant (e.g. the shared operand of a
  // multi-output fusion) names no computation.
  const bool informative = !f.rewrite_opcode.empty() &&
                           f.rewrite_opcode != "parameter" &&
                           f.rewrite_opcode != "constant";
  if (IsPassCulprit(f.pass) && informative) {
    opcode = f.rewrite_opcode;
  } else if (!f.fused_opcode.empty()) {
    opcode = f.fused_opcode;
  } else if (!f.opcode.empty()) {
    opcode = f.opcode;
  } else {
    opcode = f.rewrite_opcode;
  }
  s["opcode"] = OrNull(opcode);
  std::string dtype = f.dtype;
  if (dtype.empty()) dtype = l.full.verdict.signature.dtype.value_or("");
  s["dtype"] = OrNull(dtype);
  // The hash covers what tells bugs apart (the header says why).
  Json key = Json::MakeObject();
  key["class"] = hlo_diff::IsValueFailureStatus(l.full.status) ? "value"
                 : hlo_diff::IsCrashStatus(l.full.status)      ? "crash"
                                                               : l.full.status;
  key["pass"] = s["pass"];
  key["site"] = s["site"];
  key["opcode"] = s["site"].is_null() ? s["opcode"] : Json();
  s["sig"] = hlo_diff::WithSignatureHash(std::move(key))["sig"];
  return s;
}

Json LocalizationJson(const Localization& l, const std::string& case_dir) {
  Json j = Json::MakeObject();
  j["format"] = 1;
  j["case"] = case_dir;
  j["status"] = l.full.status;
  j["message"] = l.full.verdict.message;
  j["coarse_signature"] = l.full.verdict.signature.ToJson();
  Json levels = Json::MakeArray();
  for (const LevelResult& r : l.levels) {
    Json x = Json::MakeObject();
    x["level"] = r.level;
    x["result"] = r.result;
    x["summary"] = r.summary;
    x["runs"] = r.runs;
    x["linear_runs"] = r.linear_runs;
    x["evidence"] = r.evidence;
    levels.push_back(std::move(x));
  }
  j["levels"] = std::move(levels);
  const Findings& f = l.findings;
  Json fj = Json::MakeObject();
  fj["pass"] = OrNull(f.pass);
  fj["trigger"] = OrNull(f.trigger);
  fj["pass_execution"] =
      f.pass_execution >= 0 ? Json(f.pass_execution) : Json();
  fj["rewrite"] = f.rewrite;
  fj["instruction"] = OrNull(f.instruction);
  fj["opcode"] = OrNull(f.opcode);
  fj["fusion"] = OrNull(f.fusion);
  fj["fused_instruction"] = OrNull(f.fused_instruction);
  fj["fused_opcode"] = OrNull(f.fused_opcode);
  fj["dtype"] = OrNull(f.dtype);
  j["findings"] = std::move(fj);
  j["signature"] = RefinedSignature(l);
  Json runs = Json::MakeObject();
  runs["localize"] = l.runs;
  runs["linear_scan"] = l.linear_runs;
  j["runs"] = std::move(runs);
  return j;
}

std::string LocalizationText(const Localization& l,
                             const std::string& case_dir) {
  std::ostringstream o;
  o << "case " << case_dir << ": " << l.full.status;
  const std::string& msg = l.full.verdict.message;
  if (!msg.empty()) o << " (" << msg << ")";
  o << "\n";
  for (const LevelResult& r : l.levels) {
    o << "  " << r.level << ": " << r.result << " [" << r.runs << " run"
      << (r.runs == 1 ? "" : "s") << ", linear scan " << r.linear_runs
      << "]\n    " << r.summary << "\n";
  }
  const Json sig = RefinedSignature(l);
  o << "signature: " << sig.Dump() << "\n";
  o << "target runs: " << l.runs
    << " (baseline included); linear scan: " << l.linear_runs << "\n";
  return o.str();
}

}  // namespace trench::hlo_bisect
