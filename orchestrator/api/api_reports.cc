// POST /api/v1/reports: validates a bug report and records it as a new bug
// (and its case when it carries HLO).
#include <filesystem>
#include <fstream>

#include "base/display_text.h"
#include "base/sha256.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/literal_json.h"
#include "compiler/ir/verifier.h"
#include "orchestrator/api/api_bodies.h"
#include "orchestrator/api/api_handlers.h"
#include "orchestrator/api/api_query.h"

namespace trench::orchestrator {
namespace {

constexpr size_t kMaxTitle = 120;

// A report as checked: text and hlo "" when absent.
struct Report {
  std::string text;
  std::string title;
  std::string hlo;
  Json inputs;  // Array of literals (validated), or null.
};

// Checks `inputs` against the entry computation's parameters: one literal
// per parameter, each with the parameter's shape. REQUIRES: inputs is an
// array (ParseReportRequest checked it).
Status CheckInputs(const Json& inputs, const HloModule& module) {
  const HloComputation* entry = module.entry_computation();
  if (static_cast<int64_t>(inputs.size()) != entry->num_parameters()) {
    return InvalidArgument("field 'inputs' has " +
                           std::to_string(inputs.size()) +
                           " literals, the HLO entry takes " +
                           std::to_string(entry->num_parameters()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const std::string where = "field 'inputs[" + std::to_string(i) + "]'";
    StatusOr<Literal> lit = LiteralFromJson(inputs.array()[i]);
    if (!lit.ok()) return lit.status().WithContext(where);
    const Shape& want = entry->parameters()[i]->shape();
    if (!lit->shape().Compatible(want)) {
      return InvalidArgument(where + " has shape " +
                             lit->shape().ToString(false) +
                             ", the parameter is " + want.ToString(false));
    }
  }
  return Status::Ok();
}

StatusOr<Report> ParseReport(const std::string& body) {
  ASSIGN_OR_RETURN(ReportRequest req, ParseReportRequest(body));
  Report r;
  r.text = req.text.value_or("");
  r.title = req.title.value_or("");
  r.hlo = req.hlo.value_or("");
  if (r.text.empty() && r.hlo.empty()) {
    return InvalidArgument("a report needs 'text' or 'hlo' (or both)");
  }
  if (!req.inputs.is_null() && r.hlo.empty()) {
    return InvalidArgument("field 'inputs' needs 'hlo'");
  }
  if (!r.hlo.empty()) {
    StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(r.hlo);
    if (!module.ok()) {
      return InvalidArgument("field 'hlo' is not a valid HLO module: " +
                             module.status().message());
    }
    // The pipeline verifies every case it loads (ParseCaseModule), so a
    // module the verifier refuses would file a bug that never moves.
    if (Status v = VerifyModule(**module); !v.ok()) {
      return InvalidArgument("field 'hlo' does not verify: " + v.message());
    }
    if (!req.inputs.is_null()) {
      // The literals are compiler/ir's, which reads base/json.
      r.inputs = FromJsonDoc(req.inputs);
      RETURN_IF_ERROR(CheckInputs(r.inputs, **module));
    }
  }
  return r;
}

// The given title, else the text's first line, else a generic one: one
// line without controls (display_text.h), since titles go to commit
// subjects and terminals.
std::string TitleOf(const Report& r) {
  std::string t = OneLine(r.title, kMaxTitle);
  if (t.empty()) t = OneLine(r.text.substr(0, r.text.find('\n')), kMaxTitle);
  if (t.empty()) t = "reported HLO module";
  return t;
}

// Writes <dir>/module.hlo through a temporary file and a rename.
Status WriteModuleFile(const std::string& dir, const std::string& hlo) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return IoError("cannot create " + dir + ": " + ec.message());
  const std::string tmp = dir + "/module.hlo.tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << hlo;
    if (!out.flush()) return IoError("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, dir + "/module.hlo", ec);
  if (ec) return IoError("cannot write " + dir + "/module.hlo");
  return Status::Ok();
}

// The request's Idempotency-Key (key "" when none): 1 to 255 printable
// ASCII characters, no spaces. The report is hashed field by field, so a
// retry that spells the same JSON differently is the same report.
StatusOr<IdempotencyKey> KeyOf(const ApiRequest& request, const Report& r,
                               int64_t retention_seconds) {
  IdempotencyKey key;
  ASSIGN_OR_RETURN(key.key, IdempotencyKeyOf(request));
  if (key.key.empty()) return key;
  key.request_sha256 = Sha256Hex(r.text + '\0' + r.title + '\0' + r.hlo + '\0' +
                                 r.inputs.Dump());
  key.retention_ms = retention_seconds * 1000;
  return key;
}

StatusOr<CreatedBug> CreatedBugOf(StatusOr<int64_t> id) {
  if (!id.ok()) return id.status();
  return CreatedBug{*id, false};
}

}  // namespace

ApiResponse ApiHandlers::PostReport(const ApiRequest& request) {
  StatusOr<Report> report = ParseReport(request.body);
  if (!report.ok()) return StatusResponse(report.status());
  StatusOr<IdempotencyKey> key =
      KeyOf(request, *report, options_.idempotency_retention_seconds);
  if (!key.ok()) return StatusResponse(key.status());
  NewBug bug;
  bug.title = TitleOf(*report);
  bug.signature =
      "report:" + Sha256Hex(report->text + '\0' + report->hlo).substr(0, 16);
  Json details = Json::MakeObject();
  details["source"] = "api";
  Json& rep = details["report"] = Json::MakeObject();
  rep["text"] = report->text;
  // The title as given, when cleaning changed it: data, like the text.
  if (!report->title.empty() && report->title != bug.title) {
    rep["title"] = report->title;
  }
  if (!report->hlo.empty()) rep["hlo"] = report->hlo;
  if (!report->inputs.is_null()) rep["inputs"] = report->inputs;
  bug.details = std::move(details);
  if (!report->hlo.empty()) {
    // The case is content-addressed by the module text. Storing it is
    // idempotent, so a case left behind by a failed CreateBug below is
    // harmless (and reused by the next report of the same module).
    const std::string sha = Sha256Hex(report->hlo);
    std::string path;
    if (!options_.cases_dir.empty()) {
      path = options_.cases_dir + "/" + sha + "/";
      Status s = WriteModuleFile(path, report->hlo);
      if (!s.ok()) return StatusResponse(s);
    }
    Json origin = Json::MakeObject();
    origin["source"] = "report";
    StatusOr<bool> put = store_->PutCase(sha, path, origin);
    if (!put.ok()) return StatusResponse(put.status());
    bug.case_sha256 = sha;
  }
  Json evidence = Json::MakeObject();
  evidence["event"] = "report_received";
  StatusOr<CreatedBug> created =
      key->key.empty()
          ? CreatedBugOf(store_->CreateBug(bug, "api:report", evidence))
          : store_->CreateBugOnce(bug, "api:report", evidence, *key);
  if (!created.ok()) return StatusResponse(created.status());
  const int64_t id = created->id;
  ApiResponse r = JsonResponse(201, ToJson(ReportCreated{id, bug.case_sha256}));
  r.headers.emplace_back("Location", "/api/v1/bugs/" + std::to_string(id));
  if (created->replayed) r.headers.emplace_back("Idempotent-Replayed", "true");
  return r;
}

}  // namespace trench::orchestrator
