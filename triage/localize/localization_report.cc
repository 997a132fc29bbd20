#include "triage/localize/localization_report.h"

#include <sstream>

#include "triage/case/verdict.h"

namespace trench::hlo_bisect {
namespace {

std::optional<std::string> OrNone(const std::string& s) {
  return s.empty() ? std::nullopt : std::optional<std::string>(s);
}

Json OrNull(const std::optional<std::string>& s) {
  return s ? Json(*s) : Json();
}

const Json* Field(const Json& j, std::string_view key) {
  return j.is_object() ? j.Find(key) : nullptr;
}

std::string StringField(const Json& j, std::string_view key) {
  const Json* v = Field(j, key);
  return v && v->is_string() ? v->string_value() : "";
}

}  // namespace

bool IsPassCulprit(const std::string& pass) {
  return !pass.empty() && pass != "codegen" && pass != "buffer-assignment";
}

RefinedSignatureRecord RefinedSignatureOf(const Localization& l) {
  const Findings& f = l.findings;
  RefinedSignatureRecord s;
  s.status = l.full.status;
  s.pass = OrNone(f.pass);
  s.site = OrNone(StringField(f.rewrite, "site"));
  std::string opcode;
  // A decision on a parameter or constant (e.g. the shared operand of a
  // multi-output fusion) names no computation.
  const bool informative = !f.rewrite_opcode.empty() &&
                           f.rewrite_opcode != "parameter" &&
                           f.rewrite_opcode != "constant";
  if (IsPassCulprit(f.pass) && informative) {
    opcode = f.rewrite_opcode;
  } else if (!f.called_opcode.empty()) {
    opcode = f.called_opcode;
  } else if (!f.fused_opcode.empty()) {
    opcode = f.fused_opcode;
  } else if (!f.opcode.empty()) {
    opcode = f.opcode;
  } else {
    opcode = f.rewrite_opcode;
  }
  s.opcode = OrNone(opcode);
  std::string dtype = f.dtype;
  if (dtype.empty()) dtype = l.full.verdict.signature.dtype.value_or("");
  s.dtype = OrNone(dtype);
  // The hash covers what tells bugs apart (the header says why).
  Json key = Json::MakeObject();
  const bool crash = hlo_diff::IsCrashStatus(l.full.status);
  key["class"] = hlo_diff::IsValueFailureStatus(l.full.status) ? "value"
                 : crash                                       ? "crash"
                                                               : l.full.status;
  key["pass"] = OrNull(s.pass);
  key["site"] = OrNull(s.site);
  key["opcode"] = s.site ? Json() : OrNull(s.opcode);
  // Value failures keep their hashes: the key grows for crashes only.
  if (crash) key["crash"] = l.full.verdict.signature.message;
  s.sig = hlo_diff::WithSignatureHash(std::move(key))["sig"].string_value();
  return s;
}

Json RefinedSignature(const Localization& l) {
  return FromJsonDoc(ToJson(RefinedSignatureOf(l)));
}

LocalizationReport MakeLocalizationReport(const Localization& l,
                                          const std::string& case_dir) {
  LocalizationReport r;
  r.case_dir = case_dir;
  r.status = l.full.status;
  r.message = l.full.verdict.message;
  r.coarse_signature = ToJsonDoc(l.full.verdict.signature.ToJson());
  for (const LevelResult& level : l.levels) {
    r.levels.push_back({.level = level.level,
                        .result = level.result,
                        .summary = level.summary,
                        .runs = level.runs,
                        .linear_runs = level.linear_runs,
                        .evidence = ToJsonDoc(level.evidence)});
  }
  const Findings& f = l.findings;
  LocalizationFindingsRecord& fr = r.findings;
  fr.pass = OrNone(f.pass);
  fr.trigger = OrNone(f.trigger);
  if (f.pass_execution >= 0) fr.pass_execution = f.pass_execution;
  fr.rewrite = ToJsonDoc(f.rewrite);
  fr.instruction = OrNone(f.instruction);
  fr.opcode = OrNone(f.opcode);
  fr.fusion = OrNone(f.fusion);
  fr.fused_instruction = OrNone(f.fused_instruction);
  fr.fused_opcode = OrNone(f.fused_opcode);
  fr.dtype = OrNone(f.dtype);
  if (f.device >= 0) fr.device = f.device;
  fr.called_computation = OrNone(f.called_computation);
  fr.called_instruction = OrNone(f.called_instruction);
  fr.called_opcode = OrNone(f.called_opcode);
  r.signature = RefinedSignatureOf(l);
  r.runs = {.localize = l.runs, .linear_scan = l.linear_runs};
  return r;
}

Json LocalizationJson(const Localization& l, const std::string& case_dir) {
  return FromJsonDoc(ToJson(MakeLocalizationReport(l, case_dir)));
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
  o << "signature: " << RefinedSignature(l).Dump() << "\n";
  o << "target runs: " << l.runs
    << " (baseline included); linear scan: " << l.linear_runs << "\n";
  return o.str();
}

}  // namespace trench::hlo_bisect
