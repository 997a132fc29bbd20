// The localization report as a record: what hlo-bisect prints
// (localization_report.h builds it from a Localization) and what the
// service side reads back (the localize step stores it in a bug's
// details.localization; the patch, stress and demo code read its fields).
// One mapping to and from JSON (nlohmann, base/json_nlohmann.h).
//
// JSON, members in this order, every member always written (null where a
// field is unset):
//   {"format": 1, "case": DIR, "status": the baseline verdict status,
//    "message": its message, "coarse_signature": the baseline signature,
//    "levels": [{"level", "result", "summary", "runs", "linear_runs",
//                "evidence": {...}}...],
//    "findings": {"pass", "trigger", "pass_execution", "rewrite",
//                 "instruction", "opcode", "fusion", "fused_instruction",
//                 "fused_opcode", "dtype", "called_computation",
//                 "called_instruction", "called_opcode"},
//    "signature": {"status", "pass", "site", "opcode", "dtype", "sig"},
//    "runs": {"localize": N, "linear_scan": M}}
// The free-form members ("coarse_signature", a level's "evidence",
// "findings.rewrite": what the target's compile report logged) are kept as
// JSON: an object, or null where the producer had none.
//
// Parsing is strict: every member above must be present (nullable ones may
// be null; the findings' three "called_*" members, added later, may also be
// absent, as in reports written before them), of its type, and no other member
// may appear outside the free-form ones (hlo-bisect adds none, and neither does
// the pipeline). Errors are InvalidArgument naming the field by its path:
// "field 'signature.sig' is missing", "field 'levels[1].runs' must be an
// integer, got string", "unknown field 'findings.x' (expected one of ...)";
// text that is no JSON: "LINE:COL: <what>".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_nlohmann.h"
#include "base/status.h"

namespace trench::hlo_bisect {

// The refined signature (localization_report.h says how each field is
// chosen and what "sig" hashes).
struct RefinedSignatureRecord {
  std::string status;                 // The baseline verdict status.
  std::optional<std::string> pass;    // The culprit pass, "codegen", ...
  std::optional<std::string> site;    // The rewrite decision's site.
  std::optional<std::string> opcode;  // The culprit instruction's opcode.
  std::optional<std::string> dtype;   // Its element type.
  std::string sig;                    // 16 hex digits; findings dedup by it.
  bool operator==(const RefinedSignatureRecord&) const = default;
};

// One level's outcome (localize.h LevelResult).
struct LocalizationLevelRecord {
  std::string level;    // localize.h LevelResult::level.
  std::string result;   // "found", "none", "not_applicable", "error".
  std::string summary;  // One readable line.
  int64_t runs = 0;
  int64_t linear_runs = 0;
  JsonDoc evidence = JsonDoc::object();  // Free-form.
  bool operator==(const LocalizationLevelRecord&) const = default;
};

// What the levels found (localize.h Findings; unset: null in JSON).
struct LocalizationFindingsRecord {
  std::optional<std::string> pass, trigger;
  std::optional<int64_t> pass_execution;
  JsonDoc rewrite;  // {"pass", "site", "instruction", "index", ...} | null.
  std::optional<std::string> instruction, opcode;
  std::optional<std::string> fusion, fused_instruction, fused_opcode;
  std::optional<std::string> dtype;
  // The callee level's op inside a called computation (localize.h).
  std::optional<std::string> called_computation, called_instruction;
  std::optional<std::string> called_opcode;
  // An SPMD case: the first device the graph level's instruction diverges
  // on (absent for a single device).
  std::optional<int64_t> device;
  bool operator==(const LocalizationFindingsRecord&) const = default;

  // The rewrite decision's "site" when it names one as a string.
  std::optional<std::string> RewriteSite() const;
};

struct LocalizationReport {
  int64_t format = 1;    // The only format there is.
  std::string case_dir;  // "case".
  std::string status, message;
  JsonDoc coarse_signature;  // Free-form object, or null.
  std::vector<LocalizationLevelRecord> levels;
  LocalizationFindingsRecord findings;
  RefinedSignatureRecord signature;
  struct Runs {
    int64_t localize = 0;     // Target runs, the baseline included.
    int64_t linear_scan = 0;  // What the linear scans would have used.
    bool operator==(const Runs&) const = default;
  };
  Runs runs;
  bool operator==(const LocalizationReport&) const = default;
};

JsonDoc ToJson(const RefinedSignatureRecord& signature);
JsonDoc ToJson(const LocalizationReport& report);

// The JSON above -> the record; errors as described in the file comment.
StatusOr<LocalizationReport> LocalizationReportFromJson(const JsonDoc& doc);

// JSON text (hlo-bisect's stdout) -> the record: ParseJsonDoc's "LINE:COL"
// errors, then LocalizationReportFromJson's.
StatusOr<LocalizationReport> ParseLocalizationReport(std::string_view text);

}  // namespace trench::hlo_bisect
