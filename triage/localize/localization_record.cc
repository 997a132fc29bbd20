// The localization report's one JSON mapping (localization_record.h).
#include "triage/localize/localization_record.h"

#include <string>
#include <utility>

namespace trench::hlo_bisect {
namespace {

JsonDoc OrNull(const std::optional<std::string>& s) {
  return s ? JsonDoc(*s) : JsonDoc();
}

// The reader of one object of the report, which also knows whether a member
// is there at all (JsonFields reads a null member as absent).
struct Members {
  const JsonDoc* object;
  JsonFields fields;

  static StatusOr<Members> Of(const JsonDoc& object, std::string path) {
    ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(object, std::move(path)));
    return Members{&object, std::move(f)};
  }

  Status Present(std::string_view key) const {
    if (object->contains(std::string(key))) return Status::Ok();
    return InvalidArgument(fields.Name(key) + " is missing");
  }
  // A member that is always written and may be null.
  StatusOr<std::optional<std::string>> NullableString(
      std::string_view key) const {
    RETURN_IF_ERROR(Present(key));
    return fields.OptionalString(key);
  }
  StatusOr<std::optional<int64_t>> NullableInt(std::string_view key) const {
    RETURN_IF_ERROR(Present(key));
    return fields.OptionalInt(key);
  }
  // A free-form member: an object, or null.
  StatusOr<JsonDoc> FreeForm(std::string_view key) const {
    RETURN_IF_ERROR(Present(key));
    const JsonDoc* v = fields.Find(key);
    if (v == nullptr) return JsonDoc();
    if (!v->is_object()) return fields.WrongType(key, "an object or null", *v);
    return *v;
  }
  StatusOr<Members> Object(std::string_view key) const {
    ASSIGN_OR_RETURN(const JsonDoc* v, fields.Required(key));
    if (!v->is_object()) return fields.WrongType(key, "an object", *v);
    return Of(*v, fields.Path(key));
  }
};

StatusOr<RefinedSignatureRecord> SignatureFromJson(const Members& m) {
  RETURN_IF_ERROR(m.fields.OnlyFields(
      {"status", "pass", "site", "opcode", "dtype", "sig"}));
  RefinedSignatureRecord s;
  ASSIGN_OR_RETURN(s.status, m.fields.String("status"));
  ASSIGN_OR_RETURN(s.pass, m.NullableString("pass"));
  ASSIGN_OR_RETURN(s.site, m.NullableString("site"));
  ASSIGN_OR_RETURN(s.opcode, m.NullableString("opcode"));
  ASSIGN_OR_RETURN(s.dtype, m.NullableString("dtype"));
  ASSIGN_OR_RETURN(s.sig, m.fields.String("sig"));
  return s;
}

StatusOr<LocalizationLevelRecord> LevelFromJson(const Members& m) {
  RETURN_IF_ERROR(m.fields.OnlyFields(
      {"level", "result", "summary", "runs", "linear_runs", "evidence"}));
  LocalizationLevelRecord r;
  ASSIGN_OR_RETURN(r.level, m.fields.String("level"));
  ASSIGN_OR_RETURN(r.result, m.fields.String("result"));
  ASSIGN_OR_RETURN(r.summary, m.fields.String("summary"));
  ASSIGN_OR_RETURN(r.runs, m.fields.Int("runs"));
  ASSIGN_OR_RETURN(r.linear_runs, m.fields.Int("linear_runs"));
  ASSIGN_OR_RETURN(r.evidence, m.FreeForm("evidence"));
  return r;
}

StatusOr<LocalizationFindingsRecord> FindingsFromJson(const Members& m) {
  RETURN_IF_ERROR(m.fields.OnlyFields(
      {"pass", "trigger", "pass_execution", "rewrite", "instruction", "opcode",
       "fusion", "fused_instruction", "fused_opcode", "dtype"}));
  LocalizationFindingsRecord f;
  ASSIGN_OR_RETURN(f.pass, m.NullableString("pass"));
  ASSIGN_OR_RETURN(f.trigger, m.NullableString("trigger"));
  ASSIGN_OR_RETURN(f.pass_execution, m.NullableInt("pass_execution"));
  ASSIGN_OR_RETURN(f.rewrite, m.FreeForm("rewrite"));
  ASSIGN_OR_RETURN(f.instruction, m.NullableString("instruction"));
  ASSIGN_OR_RETURN(f.opcode, m.NullableString("opcode"));
  ASSIGN_OR_RETURN(f.fusion, m.NullableString("fusion"));
  ASSIGN_OR_RETURN(f.fused_instruction, m.NullableString("fused_instruction"));
  ASSIGN_OR_RETURN(f.fused_opcode, m.NullableString("fused_opcode"));
  ASSIGN_OR_RETURN(f.dtype, m.NullableString("dtype"));
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
  j["pass"] = OrNull(signature.pass);
  j["site"] = OrNull(signature.site);
  j["opcode"] = OrNull(signature.opcode);
  j["dtype"] = OrNull(signature.dtype);
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
  fj["pass"] = OrNull(f.pass);
  fj["trigger"] = OrNull(f.trigger);
  fj["pass_execution"] =
      f.pass_execution ? JsonDoc(*f.pass_execution) : JsonDoc();
  fj["rewrite"] = f.rewrite;
  fj["instruction"] = OrNull(f.instruction);
  fj["opcode"] = OrNull(f.opcode);
  fj["fusion"] = OrNull(f.fusion);
  fj["fused_instruction"] = OrNull(f.fused_instruction);
  fj["fused_opcode"] = OrNull(f.fused_opcode);
  fj["dtype"] = OrNull(f.dtype);
  j["findings"] = std::move(fj);
  j["signature"] = ToJson(report.signature);
  JsonDoc runs = JsonDoc::object();
  runs["localize"] = report.runs.localize;
  runs["linear_scan"] = report.runs.linear_scan;
  j["runs"] = std::move(runs);
  return j;
}

StatusOr<LocalizationReport> LocalizationReportFromJson(const JsonDoc& doc) {
  ASSIGN_OR_RETURN(Members m, Members::Of(doc, ""));
  RETURN_IF_ERROR(m.fields.OnlyFields({"format", "case", "status", "message",
                                       "coarse_signature", "levels", "findings",
                                       "signature", "runs"}));
  LocalizationReport r;
  ASSIGN_OR_RETURN(r.format, m.fields.Int("format"));
  if (r.format != 1) {
    return InvalidArgument(m.fields.Name("format") + " must be 1, got " +
                           std::to_string(r.format));
  }
  ASSIGN_OR_RETURN(r.case_dir, m.fields.String("case"));
  ASSIGN_OR_RETURN(r.status, m.fields.String("status"));
  ASSIGN_OR_RETURN(r.message, m.fields.String("message"));
  ASSIGN_OR_RETURN(r.coarse_signature, m.FreeForm("coarse_signature"));
  ASSIGN_OR_RETURN(const JsonDoc* levels, m.fields.Required("levels"));
  if (!levels->is_array()) {
    return m.fields.WrongType("levels", "an array", *levels);
  }
  for (size_t i = 0; i < levels->size(); ++i) {
    ASSIGN_OR_RETURN(
        Members level,
        Members::Of((*levels)[i], "levels[" + std::to_string(i) + "]"));
    ASSIGN_OR_RETURN(LocalizationLevelRecord x, LevelFromJson(level));
    r.levels.push_back(std::move(x));
  }
  ASSIGN_OR_RETURN(Members findings, m.Object("findings"));
  ASSIGN_OR_RETURN(r.findings, FindingsFromJson(findings));
  ASSIGN_OR_RETURN(Members signature, m.Object("signature"));
  ASSIGN_OR_RETURN(r.signature, SignatureFromJson(signature));
  ASSIGN_OR_RETURN(Members runs, m.Object("runs"));
  RETURN_IF_ERROR(runs.fields.OnlyFields({"localize", "linear_scan"}));
  ASSIGN_OR_RETURN(r.runs.localize, runs.fields.Int("localize"));
  ASSIGN_OR_RETURN(r.runs.linear_scan, runs.fields.Int("linear_scan"));
  return r;
}

StatusOr<LocalizationReport> ParseLocalizationReport(std::string_view text) {
  ASSIGN_OR_RETURN(JsonDoc doc, ParseJsonDoc(text));
  return LocalizationReportFromJson(doc);
}

}  // namespace trench::hlo_bisect
