// The localization report's one JSON mapping (localization_record.h).
#include "triage/localize/localization_record.h"

#include <string>
#include <utility>

#include "compiler/ir/collective_groups.h"

namespace trench::hlo_bisect {
namespace {

StatusOr<RefinedSignatureRecord> SignatureFromJson(const JsonFields& m) {
  RETURN_IF_ERROR(
      m.OnlyFields({"status", "pass", "site", "opcode", "dtype", "sig"}));
  RefinedSignatureRecord s;
  ASSIGN_OR_RETURN(s.status, m.String("status"));
  ASSIGN_OR_RETURN(s.pass, m.NullableString("pass"));
  ASSIGN_OR_RETURN(s.site, m.NullableString("site"));
  ASSIGN_OR_RETURN(s.opcode, m.NullableString("opcode"));
  ASSIGN_OR_RETURN(s.dtype, m.NullableString("dtype"));
  ASSIGN_OR_RETURN(s.sig, m.String("sig"));
  return s;
}

StatusOr<LocalizationLevelRecord> LevelFromJson(const JsonFields& m) {
  RETURN_IF_ERROR(m.OnlyFields(
      {"level", "result", "summary", "runs", "linear_runs", "evidence"}));
  LocalizationLevelRecord r;
  ASSIGN_OR_RETURN(r.level, m.String("level"));
  ASSIGN_OR_RETURN(r.result, m.String("result"));
  ASSIGN_OR_RETURN(r.summary, m.String("summary"));
  ASSIGN_OR_RETURN(r.runs, m.Int("runs"));
  ASSIGN_OR_RETURN(r.linear_runs, m.Int("linear_runs"));
  ASSIGN_OR_RETURN(r.evidence, m.NullableObject("evidence"));
  return r;
}

// A member added later: absent reads as null.
StatusOr<std::optional<std::string>> AbsentOrString(const JsonFields& m,
                                                    std::string_view key) {
  if (m.Find(key) == nullptr) return std::optional<std::string>();
  return m.NullableString(key);
}

StatusOr<LocalizationFindingsRecord> FindingsFromJson(const JsonFields& m) {
  RETURN_IF_ERROR(m.OnlyFields(
      {"pass", "trigger", "pass_execution", "rewrite", "instruction", "opcode",
       "fusion", "fused_instruction", "fused_opcode", "dtype",
       "called_computation", "called_instruction", "called_opcode", "device"}));
  LocalizationFindingsRecord f;
  ASSIGN_OR_RETURN(f.pass, m.NullableString("pass"));
  ASSIGN_OR_RETURN(f.trigger, m.NullableString("trigger"));
  ASSIGN_OR_RETURN(f.pass_execution, m.NullableInt("pass_execution"));
  ASSIGN_OR_RETURN(f.rewrite, m.NullableObject("rewrite"));
  ASSIGN_OR_RETURN(f.instruction, m.NullableString("instruction"));
  ASSIGN_OR_RETURN(f.opcode, m.NullableString("opcode"));
  ASSIGN_OR_RETURN(f.fusion, m.NullableString("fusion"));
  ASSIGN_OR_RETURN(f.fused_instruction, m.NullableString("fused_instruction"));
  ASSIGN_OR_RETURN(f.fused_opcode, m.NullableString("fused_opcode"));
  ASSIGN_OR_RETURN(f.dtype, m.NullableString("dtype"));
  ASSIGN_OR_RETURN(f.called_computation,
                   AbsentOrString(m, "called_computation"));
  ASSIGN_OR_RETURN(f.called_instruction,
                   AbsentOrString(m, "called_instruction"));
  ASSIGN_OR_RETURN(f.called_opcode, AbsentOrString(m, "called_opcode"));
  if (m.Find("device") != nullptr) {
    ASSIGN_OR_RETURN(f.device, m.NullableInt("device"));
    if (f.device && (*f.device < 0 || *f.device >= kMaxMeshDevices)) {
      return InvalidArgument("findings.device: expected a device in 0.." +
                             std::to_string(kMaxMeshDevices - 1));
    }
  }
  return f;
}

}  // namespace

std::optional<std::string> LocalizationFindingsRecord::RewriteSite() const {
  if (!rewrite.is_object()) return std::nullopt;
  auto it = rewrite.find("site");
  if (it == rewrite.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

JsonDoc ToJson(const RefinedSignatureRecord& signature) {
  JsonDoc j = JsonDoc::object();
  j["status"] = signature.status;
  j["pass"] = JsonDocOrNull(signature.pass);
  j["site"] = JsonDocOrNull(signature.site);
  j["opcode"] = JsonDocOrNull(signature.opcode);
  j["dtype"] = JsonDocOrNull(signature.dtype);
  j["sig"] = signature.sig;
  return j;
}

JsonDoc ToJson(const LocalizationReport& report) {
  JsonDoc j = JsonDoc::object();
  j["format"] = report.format;
  j["case"] = report.case_dir;
  j["status"] = report.status;
  j["message"] = report.message;
  j["coarse_signature"] = report.coarse_signature;
  JsonDoc levels = JsonDoc::array();
  for (const LocalizationLevelRecord& r : report.levels) {
    JsonDoc x = JsonDoc::object();
    x["level"] = r.level;
    x["result"] = r.result;
    x["summary"] = r.summary;
    x["runs"] = r.runs;
    x["linear_runs"] = r.linear_runs;
    x["evidence"] = r.evidence;
    levels.push_back(std::move(x));
  }
  j["levels"] = std::move(levels);
  const LocalizationFindingsRecord& f = report.findings;
  JsonDoc fj = JsonDoc::object();
  fj["pass"] = JsonDocOrNull(f.pass);
  fj["trigger"] = JsonDocOrNull(f.trigger);
  fj["pass_execution"] = JsonDocOrNull(f.pass_execution);
  fj["rewrite"] = f.rewrite;
  fj["instruction"] = JsonDocOrNull(f.instruction);
  fj["opcode"] = JsonDocOrNull(f.opcode);
  fj["fusion"] = JsonDocOrNull(f.fusion);
  fj["fused_instruction"] = JsonDocOrNull(f.fused_instruction);
  fj["fused_opcode"] = JsonDocOrNull(f.fused_opcode);
  fj["dtype"] = JsonDocOrNull(f.dtype);
  fj["called_computation"] = JsonDocOrNull(f.called_computation);
  fj["called_instruction"] = JsonDocOrNull(f.called_instruction);
  fj["called_opcode"] = JsonDocOrNull(f.called_opcode);
  if (f.device) fj["device"] = *f.device;
  j["findings"] = std::move(fj);
  j["signature"] = ToJson(report.signature);
  JsonDoc runs = JsonDoc::object();
  runs["localize"] = report.runs.localize;
  runs["linear_scan"] = report.runs.linear_scan;
  j["runs"] = std::move(runs);
  return j;
}

StatusOr<LocalizationReport> LocalizationReportFromJson(const JsonDoc& doc) {
  ASSIGN_OR_RETURN(JsonFields m, JsonFields::Of(doc));
  RETURN_IF_ERROR(
      m.OnlyFields({"format", "case", "status", "message", "coarse_signature",
                    "levels", "findings", "signature", "runs"}));
  LocalizationReport r;
  ASSIGN_OR_RETURN(r.format, m.Int("format"));
  if (r.format != 1) {
    return InvalidArgument(m.Name("format") + " must be 1, got " +
                           std::to_string(r.format));
  }
  ASSIGN_OR_RETURN(r.case_dir, m.String("case"));
  ASSIGN_OR_RETURN(r.status, m.String("status"));
  ASSIGN_OR_RETURN(r.message, m.String("message"));
  ASSIGN_OR_RETURN(r.coarse_signature, m.NullableObject("coarse_signature"));
  ASSIGN_OR_RETURN(const JsonDoc* levels, m.Required("levels"));
  if (!levels->is_array()) {
    return m.WrongType("levels", "an array", *levels);
  }
  for (size_t i = 0; i < levels->size(); ++i) {
    ASSIGN_OR_RETURN(
        JsonFields level,
        JsonFields::Of((*levels)[i], "levels[" + std::to_string(i) + "]"));
    ASSIGN_OR_RETURN(LocalizationLevelRecord x, LevelFromJson(level));
    r.levels.push_back(std::move(x));
  }
  ASSIGN_OR_RETURN(JsonFields findings, m.Object("findings"));
  ASSIGN_OR_RETURN(r.findings, FindingsFromJson(findings));
  ASSIGN_OR_RETURN(JsonFields signature, m.Object("signature"));
  ASSIGN_OR_RETURN(r.signature, SignatureFromJson(signature));
  ASSIGN_OR_RETURN(JsonFields runs, m.Object("runs"));
  RETURN_IF_ERROR(runs.OnlyFields({"localize", "linear_scan"}));
  ASSIGN_OR_RETURN(r.runs.localize, runs.Int("localize"));
  ASSIGN_OR_RETURN(r.runs.linear_scan, runs.Int("linear_scan"));
  return r;
}

StatusOr<LocalizationReport> ParseLocalizationReport(std::string_view text) {
  ASSIGN_OR_RETURN(JsonDoc doc, ParseJsonDoc(text));
  return LocalizationReportFromJson(doc);
}

}  // namespace trench::hlo_bisect
