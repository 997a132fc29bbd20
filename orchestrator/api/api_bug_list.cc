// GET /api/v1/bugs with the dashboard's filters and GET /api/v1/signatures
// (web_data.h). The filters are SQL over indexed columns and expression
// indexes (migration 12), so a page of 10,000 bugs is one indexed query
// for its ids, one read of those bugs and a count; values reach SQL only as
// bound parameters.
#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <vector>

#include "orchestrator/api/api_query.h"
#include "orchestrator/api/web_data.h"
#include "orchestrator/store/records_json.h"

namespace trench::orchestrator {
namespace {

// The expressions of migration 12's indexes, spelled as there (details
// that do not parse read as null).
#define TRENCH_FINDING(field)                                  \
  "(CASE WHEN json_valid(details) THEN json_extract(details, " \
  "'$.localization.findings." field "') END)"
constexpr char kPassExpr[] = TRENCH_FINDING("pass");
constexpr char kOpcodeExpr[] = TRENCH_FINDING("opcode");
constexpr char kFusedOpcodeExpr[] = TRENCH_FINDING("fused_opcode");
#undef TRENCH_FINDING

// Parameter numbers of the filters in the SQL below.
enum Param { kState = 1, kSignature, kPass, kOpcode, kText, kAfter, kLimit };

struct BugFilter {
  std::optional<std::string> state, signature, pass, opcode, text;
};

// The query parameter `key`, or nullopt when absent or empty (a form's
// empty field filters nothing).
std::optional<std::string> NonEmpty(const ApiRequest& request,
                                    const std::string& key) {
  auto it = request.query.find(key);
  if (it == request.query.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

StatusOr<std::optional<std::string>> StateParam(const ApiRequest& request) {
  std::optional<std::string> state = NonEmpty(request, "state");
  if (state) {
    StatusOr<BugState> s = ParseBugState(*state);
    if (!s.ok()) return s.status().WithContext("query parameter 'state'");
  }
  return state;
}

StatusOr<BugFilter> FilterOf(const ApiRequest& request) {
  BugFilter f;
  ASSIGN_OR_RETURN(f.state, StateParam(request));
  f.signature = NonEmpty(request, "signature");
  f.pass = NonEmpty(request, "pass");
  f.opcode = NonEmpty(request, "opcode");
  f.text = NonEmpty(request, "q");
  if (f.text) {
    std::string& t = *f.text;
    std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) {
      return static_cast<char>(std::tolower(c));
    });
  }
  return f;
}

// " WHERE ..." for the filters that are set (the values are bound).
std::string WhereOf(const BugFilter& f) {
  std::string w = " WHERE 1";
  if (f.state) w += " AND state = ?1";
  if (f.signature) w += " AND signature = ?2";
  if (f.pass) w += std::string(" AND ") + kPassExpr + " = ?3";
  if (f.opcode) {
    w += std::string(" AND (") + kOpcodeExpr + " = ?4 OR " + kFusedOpcodeExpr +
         " = ?4)";
  }
  if (f.text) {
    w += " AND (instr(lower(title), ?5) > 0 OR instr(lower(coalesce(CASE "
         "WHEN json_valid(details) THEN json_extract(details, "
         "'$.report.text') END, '')), ?5) > 0)";
  }
  return w;
}

void BindFilter(Statement& st, const BugFilter& f) {
  if (f.state) st.BindText(kState, *f.state);
  if (f.signature) st.BindText(kSignature, *f.signature);
  if (f.pass) st.BindText(kPass, *f.pass);
  if (f.opcode) st.BindText(kOpcode, *f.opcode);
  if (f.text) st.BindText(kText, *f.text);
}

StatusOr<JsonDoc> BugListJson(Store* store, const BugFilter& f, int64_t after,
                              int limit) {
  const std::string where = WhereOf(f);
  ASSIGN_OR_RETURN(Statement page,
                   store->db()->Prepare("SELECT id FROM bugs" + where +
                                        " AND id > ?6 ORDER BY id LIMIT ?7"));
  BindFilter(page, f);
  page.BindInt64(kAfter, after).BindInt64(kLimit, limit);
  ASSIGN_OR_RETURN(std::vector<int64_t> ids,
                   ReadRows<int64_t>(page, [&]() -> StatusOr<int64_t> {
                     return page.ColumnInt64(0);
                   }));
  JsonDoc out = JsonDoc::object();
  JsonDoc& bugs = out["bugs"] = JsonDoc::array();
  ASSIGN_OR_RETURN(std::vector<Bug> page_bugs, store->GetBugs(ids));
  for (const Bug& bug : page_bugs) bugs.push_back(ToJson(bug));
  if (static_cast<int>(ids.size()) == limit) out["next"] = ids.back();
  ASSIGN_OR_RETURN(Statement count,
                   store->db()->Prepare("SELECT count(*) FROM bugs" + where));
  BindFilter(count, f);
  ASSIGN_OR_RETURN(bool row, count.Step());
  out["total"] = row ? count.ColumnInt64(0) : 0;
  return out;
}

// One signature's row of the table, from its bugs and their runs.
StatusOr<JsonDoc> SignatureJson(Store* store, const std::string& signature,
                                const std::optional<std::string>& state) {
  ASSIGN_OR_RETURN(
      Statement bugs,
      store->db()->Prepare(
          "SELECT id, title, created_ms, CASE WHEN json_valid(details) THEN "
          "json_extract(details, '$.commit') END "
          "FROM bugs WHERE signature = ?1 AND (?2 IS NULL OR state = ?2) "
          "ORDER BY id"));
  bugs.BindText(1, signature).BindOptionalText(2, state);
  JsonDoc s = JsonDoc::object();
  s["signature"] = signature;
  s["title"] = "";
  JsonDoc ids = JsonDoc::array();
  std::set<std::string> commits;
  int64_t first = 0, last = 0;
  while (true) {
    ASSIGN_OR_RETURN(bool row, bugs.Step());
    if (!row) break;
    if (ids.empty()) s["title"] = bugs.ColumnText(1);
    ids.push_back(bugs.ColumnInt64(0));
    const int64_t at = bugs.ColumnInt64(2);
    first = first == 0 ? at : std::min(first, at);
    last = std::max(last, at);
    if (std::optional<std::string> c = bugs.ColumnOptionalText(3)) {
      if (!c->empty()) commits.insert(*c);
    }
  }
  ASSIGN_OR_RETURN(
      Statement runs,
      store->db()->Prepare(
          "SELECT r.commit_sha, min(r.created_ms), max(r.created_ms) FROM "
          "runs r JOIN bugs b ON r.bug_id = b.id WHERE b.signature = ?1 AND "
          "(?2 IS NULL OR b.state = ?2) GROUP BY r.commit_sha"));
  runs.BindText(1, signature).BindOptionalText(2, state);
  while (true) {
    ASSIGN_OR_RETURN(bool row, runs.Step());
    if (!row) break;
    const std::string c = runs.ColumnText(0);
    if (!c.empty()) commits.insert(c);
    first =
        first == 0 ? runs.ColumnInt64(1) : std::min(first, runs.ColumnInt64(1));
    last = std::max(last, runs.ColumnInt64(2));
  }
  s["count"] = ids.size();
  s["first_seen_ms"] = first;
  s["last_seen_ms"] = last;
  s["commits"] =
      JsonDoc(std::vector<std::string>(commits.begin(), commits.end()));
  s["bugs"] = std::move(ids);
  return s;
}

}  // namespace

ApiResponse WebBugList(Store* store, const ApiOptions& options,
                       const ApiRequest& request) {
  StatusOr<BugFilter> filter = FilterOf(request);
  if (!filter.ok()) return StatusResponse(filter.status());
  StatusOr<int64_t> after = QueryInt(request, "after", 0, 0);
  if (!after.ok()) return StatusResponse(after.status());
  StatusOr<int> limit = QueryLimit(request, options);
  if (!limit.ok()) return StatusResponse(limit.status());
  StatusOr<JsonDoc> out = BugListJson(store, *filter, *after, *limit);
  if (!out.ok()) return StatusResponse(out.status());
  return JsonResponse(200, *out);
}

ApiResponse WebSignatures(Store* store, const ApiOptions& options,
                          const ApiRequest& request) {
  StatusOr<std::optional<std::string>> state = StateParam(request);
  if (!state.ok()) return StatusResponse(state.status());
  StatusOr<int> limit = QueryLimit(request, options);
  if (!limit.ok()) return StatusResponse(limit.status());
  const std::string after = NonEmpty(request, "after").value_or("");
  auto run = [&]() -> StatusOr<JsonDoc> {
    ASSIGN_OR_RETURN(
        Statement st,
        store->db()->Prepare(
            "SELECT DISTINCT signature FROM bugs WHERE signature > ?1 AND "
            "(?2 IS NULL OR state = ?2) ORDER BY signature LIMIT ?3"));
    st.BindText(1, after).BindOptionalText(2, *state).BindInt64(3, *limit);
    ASSIGN_OR_RETURN(std::vector<std::string> names,
                     ReadRows<std::string>(st, [&]() -> StatusOr<std::string> {
                       return st.ColumnText(0);
                     }));
    JsonDoc out = JsonDoc::object();
    JsonDoc& list = out["signatures"] = JsonDoc::array();
    for (const std::string& name : names) {
      ASSIGN_OR_RETURN(JsonDoc one, SignatureJson(store, name, *state));
      list.push_back(std::move(one));
    }
    if (static_cast<int>(names.size()) == *limit) out["next"] = names.back();
    return out;
  };
  StatusOr<JsonDoc> out = run();
  if (!out.ok()) return StatusResponse(out.status());
  return JsonResponse(200, *out);
}

}  // namespace trench::orchestrator
