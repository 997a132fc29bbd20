// GET /api/v1/bugs/{id}/view (web_data.h; the contract's shape): the bug,
// its timeline, runs with their verdicts and the error maps hlo-diff drew
// (triage/case/error_map.h), the
// case and minimized modules with the localized instruction, the
// localization chain, the culprit commit with its diff (libgit2), the
// patches with their round and coverage (pipeline/draft_coverage.h: a
// partial revert is flagged), the agent sessions with every message, the
// bug's jobs and the download links. One response, a handful of indexed
// queries.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "git/git_repo.h"
#include "git/patch_apply.h"
#include "orchestrator/api/api_bodies.h"
#include "orchestrator/api/bug_graph.h"
#include "orchestrator/api/web_data.h"
#include "orchestrator/pipeline/pipeline.h"
#include "triage/case/error_map.h"

namespace trench::orchestrator {
namespace {

constexpr int kEvents = 5000;
constexpr int kRuns = 200;
constexpr int kJobs = 50;
constexpr size_t kMaps = 16;                 // Error maps shown, at most.
constexpr size_t kMaxModuleBytes = 1 << 20;  // Larger modules: cut.
constexpr size_t kMaxDiffBytes = 1 << 20;

std::string Cut(std::string text, size_t max) {
  if (text.size() > max) {
    text.resize(max);
    text += "\n[... cut at " + std::to_string(max) + " bytes ...]\n";
  }
  return text;
}

// <case dir>/module.hlo of a stored case, or null.
JsonDoc ModuleText(Store* store, const std::optional<std::string>& sha) {
  if (!sha) return JsonDoc();
  StatusOr<Case> c = store->GetCase(*sha);
  if (!c.ok() || c->path.empty()) return JsonDoc();
  std::ifstream in(std::filesystem::path(c->path) / "module.hlo",
                   std::ios::binary);
  if (!in) return JsonDoc();
  std::string text(kMaxModuleBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return Cut(std::move(text), kMaxModuleBytes);
}

bool HasFiles(Store* store, const std::optional<std::string>& sha) {
  if (!sha) return false;
  StatusOr<Case> c = store->GetCase(*sha);
  return c.ok() && !c->path.empty();
}

JsonDoc LocalizationOf(const JsonDoc& details) {
  auto it = details.find("localization");
  if (it == details.end() || !it->is_object()) return JsonDoc();
  JsonDoc out = JsonDoc::object();
  JsonDoc& levels = out["levels"] = JsonDoc::array();
  if (auto l = it->find("levels"); l != it->end() && l->is_array()) {
    for (const JsonDoc& level : *l) {
      if (!level.is_object()) continue;
      JsonDoc one = JsonDoc::object();
      for (const char* key : {"level", "result", "summary", "evidence"}) {
        auto v = level.find(key);
        one[key] = v != level.end() ? *v : JsonDoc();
      }
      levels.push_back(std::move(one));
    }
  }
  auto f = it->find("findings");
  out["findings"] = f != it->end() ? *f : JsonDoc();
  return out;
}

JsonDoc CulpritOf(const ApiOptions& options, const Bug& bug) {
  if (!bug.culprit_commit || bug.culprit_commit->empty()) return JsonDoc();
  JsonDoc c = JsonDoc::object();
  c["sha"] = *bug.culprit_commit;
  c["summary"] = "";
  c["author"] = "";
  c["time_ms"] = JsonDoc();
  c["diff"] = "";
  const std::string& dir =
      options.git_dir.empty() ? options.repo : options.git_dir;
  if (dir.empty()) return c;
  StatusOr<std::unique_ptr<hlo_bisect::GitRepo>> repo =
      hlo_bisect::GitRepo::Open(dir);
  if (!repo.ok()) return c;
  if (auto info = (*repo)->Describe(*bug.culprit_commit); info.ok()) {
    c["sha"] = info->sha;
    c["summary"] = info->summary;
    c["author"] = info->author;
    c["time_ms"] = info->time * 1000;
  }
  if (auto diff = agents::DiffOfCommit(**repo, *bug.culprit_commit);
      diff.ok()) {
    c["diff"] = Cut(std::move(*diff), kMaxDiffBytes);
  }
  return c;
}

JsonDoc SessionJson(const AgentSession& s) {
  JsonDoc j = JsonDoc::object();
  j["id"] = s.id;
  j["bug_id"] = s.bug_id ? JsonDoc(*s.bug_id) : JsonDoc();
  j["role"] = s.role;
  j["brain"] = s.backend;
  j["status"] = s.status;
  j["fallback_reason"] = s.fallback_reason;
  j["cost_usd"] = s.cost_usd;
  j["input_tokens"] = s.input_tokens;
  j["output_tokens"] = s.output_tokens;
  j["started_ms"] = s.started_ms;
  j["ended_ms"] = s.ended_ms ? JsonDoc(*s.ended_ms) : JsonDoc();
  return j;
}

StatusOr<JsonDoc> SessionsJson(Store* store, int64_t id) {
  ASSIGN_OR_RETURN(std::vector<AgentSession> sessions,
                   store->ListAgentSessions(id));
  JsonDoc out = JsonDoc::array();
  for (const AgentSession& s : sessions) {
    JsonDoc j = SessionJson(s);
    ASSIGN_OR_RETURN(std::vector<AgentMessage> messages,
                     store->ListAgentMessages(s.id));
    JsonDoc& list = j["messages"] = JsonDoc::array();
    for (const AgentMessage& m : messages) {
      JsonDoc one = JsonDoc::object();
      one["role"] = m.role;
      one["content"] = m.content;
      one["input_tokens"] = m.input_tokens;
      one["output_tokens"] = m.output_tokens;
      one["at_ms"] = m.at_ms;
      list.push_back(std::move(one));
    }
    out.push_back(std::move(j));
  }
  return out;
}

struct RunRow {
  int64_t id = 0;
  std::string case_sha;
  JsonDoc json;
};

StatusOr<std::vector<RunRow>> RunsOf(Store* store, int64_t id) {
  ASSIGN_OR_RETURN(Statement st,
                   store->db()->Prepare(
                       "SELECT id, commit_sha, seconds, created_ms, verdict, "
                       "case_sha256 "
                       "FROM runs WHERE bug_id = ?1 ORDER BY id LIMIT ?2"));
  st.BindInt64(1, id).BindInt64(2, kRuns);
  std::vector<RunRow> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    RunRow r;
    r.id = st.ColumnInt64(0);
    r.case_sha = st.ColumnText(5);
    r.json = JsonDoc::object();
    r.json["id"] = r.id;
    r.json["commit"] = st.ColumnText(1);
    r.json["seconds"] = st.ColumnDouble(2);
    r.json["created_ms"] = st.ColumnInt64(3);
    StatusOr<JsonDoc> verdict = ParseJsonDoc(st.ColumnText(4));
    if (!verdict.ok()) {
      return IoError("runs.verdict of run " + std::to_string(r.id) + ": " +
                     verdict.status().message());
    }
    r.json["verdict"] = std::move(*verdict);
    out.push_back(std::move(r));
  }
  return out;
}

// What the patch_drafted event naming a patch says of it: its round, and
// its coverage (pipeline/draft_coverage.h; a partial revert is flagged).
struct DraftedPatch {
  JsonDoc round, coverage;  // null when the event has none.
};
std::map<int64_t, DraftedPatch> DraftedPatches(
    const std::vector<Event>& events) {
  std::map<int64_t, DraftedPatch> out;
  for (const Event& e : events) {
    const Json* what = e.evidence.Find("event");
    const Json* patch = e.evidence.Find("patch");
    if (!what || !what->is_string() ||
        what->string_value() != "patch_drafted" || !patch ||
        !patch->GetInt64().ok()) {
      continue;
    }
    DraftedPatch& d = out[*patch->GetInt64()];
    const Json* round = e.evidence.Find("round");
    if (round && round->GetInt64().ok()) d.round = *round->GetInt64();
    const Json* coverage = e.evidence.Find("coverage");
    if (coverage && coverage->is_object()) d.coverage = ToJsonDoc(*coverage);
  }
  return out;
}

StatusOr<JsonDoc> ViewJson(Store* store, const ApiOptions& options,
                           int64_t id) {
  ASSIGN_OR_RETURN(Bug bug, store->GetBug(id));
  JsonDoc out = JsonDoc::object();
  out["bug"] = ToJson(bug);
  const std::string url = "/api/v1/bugs/" + std::to_string(id);
  ASSIGN_OR_RETURN(std::vector<Event> events,
                   store->ListEvents(id, 0, kEvents));
  JsonDoc& timeline = out["events"] = JsonDoc::array();
  for (const Event& e : events) timeline.push_back(ToJson(e));

  ASSIGN_OR_RETURN(std::vector<RunRow> runs, RunsOf(store, id));
  JsonDoc& run_list = out["runs"] = JsonDoc::array();
  JsonDoc& maps = out["error_maps"] = JsonDoc::array();
  std::set<std::pair<std::string, int64_t>> mapped;  // (case, output).
  for (RunRow& r : runs) {
    // hlo-diff drew them (triage/case/error_map.h); they move out of the
    // run's verdict into one list, one per case and output, each read
    // back through ErrorMap::FromJson (a tool's output is data).
    JsonDoc& verdict = r.json["verdict"];
    if (verdict.is_object() && verdict.contains("error_maps")) {
      JsonDoc list = std::move(verdict["error_maps"]);
      verdict.erase("error_maps");
      if (!list.is_array()) list = JsonDoc::array();
      for (const JsonDoc& one : list) {
        StatusOr<hlo_diff::ErrorMap> m =
            hlo_diff::ErrorMap::FromJson(FromJsonDoc(one));
        if (!m.ok() || maps.size() >= kMaps ||
            !mapped.emplace(r.case_sha, m->output).second) {
          continue;
        }
        JsonDoc shown = ToJsonDoc(m->ToJson());
        shown["run"] = r.id;
        maps.push_back(std::move(shown));
      }
    }
    run_list.push_back(std::move(r.json));
  }

  out["minimized_hlo"] = ModuleText(store, bug.minimized_sha256);
  out["case_hlo"] = ModuleText(store, bug.case_sha256);
  const JsonDoc details = ToJsonDoc(bug.details);
  JsonDoc localization = LocalizationOf(details);
  const GraphHighlight h = LocalizedHighlight(bug.details);
  JsonDoc highlight = JsonDoc::object();
  for (const auto& [key, value] :
       {std::pair{"instruction", &h.instruction},
        {"fusion", &h.fusion},
        {"fused_instruction", &h.fused_instruction},
        {"called_instruction", &h.called_instruction}}) {
    highlight[key] = value->empty() ? JsonDoc() : JsonDoc(*value);
  }
  out["highlight"] = std::move(highlight);
  out["localization"] = std::move(localization);
  out["culprit"] = CulpritOf(options, bug);
  // One root cause, one bug (pipeline/root_cause.h): why this bug is a
  // duplicate, which older bug it waits for or waited for, and the check
  // against that bug's patch.
  JsonDoc root_cause = JsonDoc::object();
  for (const char* key :
       {"duplicate", "waiting_for", "released", "patch_check"}) {
    auto it = details.find(key);
    root_cause[key] = it != details.end() && it->is_object() ? *it : JsonDoc();
  }
  out["root_cause"] = std::move(root_cause);

  ASSIGN_OR_RETURN(std::vector<Patch> patches, store->ListPatches(id));
  const std::map<int64_t, DraftedPatch> drafted = DraftedPatches(events);
  JsonDoc& patch_list = out["patches"] = JsonDoc::array();
  for (const Patch& p : patches) {
    JsonDoc j = ToJson(p);
    auto d = drafted.find(p.id);
    j["round"] = d != drafted.end() ? d->second.round : JsonDoc();
    j["coverage"] = d != drafted.end() ? d->second.coverage : JsonDoc();
    j["download"] = "/api/v1/patches/" + std::to_string(p.id) + ".patch";
    patch_list.push_back(std::move(j));
  }
  ASSIGN_OR_RETURN(out["sessions"], SessionsJson(store, id));

  JobQueue queue(store);
  ASSIGN_OR_RETURN(std::vector<Job> jobs, JobsOfBug(queue, id, kJobs));
  JsonDoc& job_list = out["jobs"] = JsonDoc::array();
  for (const Job& j : jobs) job_list.push_back(ToJson(BugJobOf(j)));

  const bool has_case = HasFiles(store, bug.case_sha256);
  const bool has_minimized = HasFiles(store, bug.minimized_sha256);
  JsonDoc downloads = JsonDoc::object();
  downloads["case"] = has_case ? JsonDoc(url + "/case.tar.gz") : JsonDoc();
  downloads["minimized"] =
      has_minimized ? JsonDoc(url + "/minimized.tar.gz") : JsonDoc();
  out["downloads"] = std::move(downloads);
  out["graph"] =
      has_case || has_minimized ? JsonDoc(url + "/graph.svg") : JsonDoc();
  return out;
}

}  // namespace

ApiResponse WebBugView(Store* store, const ApiOptions& options, int64_t id) {
  StatusOr<JsonDoc> out = ViewJson(store, options, id);
  if (!out.ok()) return StatusResponse(out.status());
  return JsonResponse(200, *out);
}

}  // namespace trench::orchestrator
