// POST /api/v1/bugs/{id}/triage (api_triage.h): the route, the bodies and
// the handler.
#include "orchestrator/api/api_triage.h"

#include "orchestrator/api/api_bodies.h"
#include "orchestrator/api/api_handlers.h"
#include "orchestrator/api/api_query.h"

namespace trench::orchestrator {
namespace {

constexpr std::string_view kBugsPrefix = "/api/v1/bugs/";
constexpr std::string_view kTriageSuffix = "/triage";

}  // namespace

StatusOr<TriageAction> ParseTriageRequest(std::string_view body) {
  ASSIGN_OR_RETURN(JsonDoc doc, ParseRequestBody(body));
  ASSIGN_OR_RETURN(JsonFields f,
                   JsonFields::Of(doc, "", JsonFields::Null::kWrongType));
  RETURN_IF_ERROR(f.OnlyFields({"verb", "comment", "hint", "duplicate_of"}));
  TriageAction r;
  ASSIGN_OR_RETURN(std::string verb, f.String("verb"));
  StatusOr<TriageVerb> v = ParseTriageVerb(verb);
  if (!v.ok()) return v.status().WithContext("field 'verb'");
  r.verb = *v;
  ASSIGN_OR_RETURN(r.comment, f.OptionalString("comment"));
  ASSIGN_OR_RETURN(r.hint, f.OptionalString("hint"));
  ASSIGN_OR_RETURN(r.duplicate_of, f.OptionalInt("duplicate_of"));
  RETURN_IF_ERROR(CheckTriageAction(r));
  return r;
}

JsonDoc ToJson(const TriageAction& r) {
  JsonDoc j = JsonDoc::object();
  j["verb"] = TriageVerbName(r.verb);
  if (r.comment) j["comment"] = *r.comment;
  if (r.hint) j["hint"] = *r.hint;
  if (r.duplicate_of) j["duplicate_of"] = *r.duplicate_of;
  return j;
}

StatusOr<TriageResult> ParseTriageResult(const JsonDoc& doc) {
  ASSIGN_OR_RETURN(JsonFields f, JsonFields::Of(doc));
  TriageResult r;
  ASSIGN_OR_RETURN(const JsonDoc* bug, f.Required("bug"));
  StatusOr<Bug> b = BugFromJson(*bug);
  if (!b.ok()) return b.status().WithContext(f.Name("bug"));
  r.bug = std::move(*b);
  ASSIGN_OR_RETURN(std::string verb, f.String("verb"));
  StatusOr<TriageVerb> v = ParseTriageVerb(verb);
  if (!v.ok()) return v.status().WithContext("field 'verb'");
  r.verb = *v;
  return r;
}

JsonDoc ToJson(const TriageResult& r) {
  JsonDoc j = JsonDoc::object();
  j["bug"] = ToJson(r.bug);
  j["verb"] = TriageVerbName(r.verb);
  return j;
}

std::optional<ApiResponse> ApiHandlers::RouteTriage(const ApiRequest& request) {
  const std::string& p = request.path;
  if (!p.starts_with(kBugsPrefix) || !p.ends_with(kTriageSuffix) ||
      p.size() <= kBugsPrefix.size() + kTriageSuffix.size()) {
    return std::nullopt;
  }
  const std::string_view id_text = std::string_view(p).substr(
      kBugsPrefix.size(), p.size() - kBugsPrefix.size() - kTriageSuffix.size());
  if (id_text.find('/') != std::string_view::npos) return std::nullopt;
  if (request.method != "POST") return MethodNotAllowed(request, "POST");
  if (std::optional<ApiResponse> denied = CheckToken(request)) return *denied;
  std::optional<int64_t> id = ParsePositive(id_text);
  if (!id) {
    return ErrorResponse(404, "not_found",
                         "no bug '" + std::string(id_text) +
                             "' to triage (bug ids are positive integers)");
  }
  StatusOr<TriageAction> action = ParseTriageRequest(request.body);
  if (!action.ok()) return StatusResponse(action.status());
  // The CLI says who it is (api_client.cc); everything else is the API.
  auto agent = request.headers.find("user-agent");
  const std::string actor =
      agent != request.headers.end() && agent->second.starts_with("trench-cli")
          ? "cli:triage"
          : "api:triage";
  StatusOr<Bug> bug =
      ApplyTriage(store_, *id, *action, actor, options_.push_on_approve);
  if (!bug.ok()) return StatusResponse(bug.status());
  return JsonResponse(200, ToJson(TriageResult{std::move(*bug), action->verb}));
}

}  // namespace trench::orchestrator
