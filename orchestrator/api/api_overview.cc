// GET /api/v1/overview (web_data.h): the repository, recent commits, the
// swarm, the job queue, bugs by state and the fuzzing time series, from
// the store (commit events, builds, the fuzz and build jobs' results,
// agent sessions) and the configuration. Commit summaries come from the
// watched repository through libgit2 ("" when it cannot be read).
#include <algorithm>
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "git/git_repo.h"
#include "orchestrator/api/api_bodies.h"
#include "orchestrator/api/web_data.h"
#include "orchestrator/store/job_queue.h"

namespace trench::orchestrator {
namespace {

constexpr int kCommits = 50;
constexpr int kAttentionJobs = 50;
constexpr int64_t kBucketMs = 3600 * 1000;  // The series' bucket: an hour.
constexpr int kBuckets = 7 * 24;            // A week of them.

// What the fuzz jobs of one commit found (their results summed).
struct FuzzTotals {
  int64_t programs = 0;
  int64_t findings = 0;
  std::set<std::string> focus;
  // Changed-line reach of the latest fuzz job that measured it (a
  // coverage build): {reached, lines}; lines < 0 when none did.
  int64_t reached = 0, lines = -1;
};

void AddFocus(const std::string& joined, std::set<std::string>* focus) {
  size_t start = 0;
  while (start <= joined.size()) {
    size_t comma = joined.find(',', start);
    if (comma == std::string::npos) comma = joined.size();
    if (comma > start) focus->insert(joined.substr(start, comma - start));
    start = comma + 1;
  }
}

StatusOr<std::map<std::string, FuzzTotals>> FuzzByCommit(Store* store) {
  ASSIGN_OR_RETURN(Statement st,
                   store->db()->Prepare(
                       "SELECT json_extract(payload, '$.commit'), "
                       "coalesce(json_extract(result, '$.programs'), 0), "
                       "coalesce(json_array_length(result, '$.filed'), 0), "
                       "coalesce(json_extract(result, '$.focus.passes'), ''), "
                       "coalesce(json_extract(result, '$.focus.ops'), ''), "
                       "json_extract(result, '$.reach.reached'), "
                       "json_extract(result, '$.reach.lines') "
                       "FROM jobs WHERE kind = 'fuzz' AND state = 'done' "
                       "ORDER BY id"));
  std::map<std::string, FuzzTotals> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    std::optional<std::string> commit = st.ColumnOptionalText(0);
    if (!commit) continue;
    FuzzTotals& t = out[*commit];
    t.programs += st.ColumnInt64(1);
    t.findings += st.ColumnInt64(2);
    AddFocus(st.ColumnText(3), &t.focus);
    AddFocus(st.ColumnText(4), &t.focus);
    const std::optional<int64_t> reached = st.ColumnOptionalInt64(5);
    const std::optional<int64_t> lines = st.ColumnOptionalInt64(6);
    if (reached && lines) {
      t.reached = *reached;
      t.lines = *lines;
    }
  }
  return out;
}

// The build of each commit: {"status", "seconds"} (seconds from the build
// job's result, else the build row's own span).
StatusOr<JsonDoc> BuildOf(Store* store, const std::string& sha) {
  ASSIGN_OR_RETURN(
      Statement st,
      store->db()->Prepare(
          "SELECT b.status, b.created_ms, b.updated_ms, (SELECT "
          "json_extract(j.result, '$.seconds') FROM jobs j WHERE j.kind = "
          "'build' AND j.state = 'done' AND json_extract(j.payload, "
          "'$.commit') = b.commit_sha ORDER BY j.id DESC LIMIT 1) FROM "
          "builds b WHERE b.commit_sha = ?1 AND b.patch_hash = ''"));
  st.BindText(1, sha);
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return JsonDoc();
  JsonDoc b = JsonDoc::object();
  b["status"] = st.ColumnText(0);
  b["seconds"] =
      st.IsNull(3)
          ? static_cast<double>(st.ColumnInt64(2) - st.ColumnInt64(1)) / 1000
          : st.ColumnDouble(3);
  return b;
}

StatusOr<JsonDoc> CommitsJson(Store* store, const ApiOptions& options) {
  ASSIGN_OR_RETURN(
      Statement st,
      store->db()->Prepare("SELECT commit_sha, at_ms FROM events WHERE name = "
                           "'commit_landed' ORDER BY id DESC LIMIT ?1"));
  st.BindInt64(1, kCommits);
  std::vector<std::pair<std::string, int64_t>> landed;
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    landed.emplace_back(st.ColumnText(0), st.ColumnInt64(1));
  }
  ASSIGN_OR_RETURN(auto fuzz, FuzzByCommit(store));
  std::unique_ptr<hlo_bisect::GitRepo> repo;
  const std::string& git_dir =
      options.git_dir.empty() ? options.repo : options.git_dir;
  if (!git_dir.empty()) {
    if (auto r = hlo_bisect::GitRepo::Open(git_dir); r.ok()) {
      repo = std::move(*r);
    }
  }
  JsonDoc out = JsonDoc::array();
  for (const auto& [sha, at_ms] : landed) {
    JsonDoc c = JsonDoc::object();
    c["sha"] = sha;
    c["summary"] = "";
    c["author"] = "";
    if (repo) {
      if (auto info = repo->Describe(sha); info.ok()) {
        c["summary"] = info->summary;
        c["author"] = info->author;
      }
    }
    c["landed_ms"] = at_ms;
    ASSIGN_OR_RETURN(c["build"], BuildOf(store, sha));
    const FuzzTotals& t = fuzz[sha];
    c["programs"] = t.programs;
    c["findings"] = t.findings;
    c["focus"] =
        JsonDoc(std::vector<std::string>(t.focus.begin(), t.focus.end()));
    if (t.lines >= 0) {
      c["reach"] = JsonDoc{{"reached", t.reached}, {"lines", t.lines}};
    } else {
      c["reach"] = nullptr;
    }
    out.push_back(std::move(c));
  }
  return out;
}

StatusOr<JsonDoc> SwarmJson(Store* store, const ApiOptions& options) {
  ASSIGN_OR_RETURN(
      Statement st,
      store->db()->Prepare(
          "SELECT role, count(*), sum(ended_ms IS NULL), "
          "sum(fallback_reason != '') FROM agent_sessions GROUP BY role"));
  std::map<std::string, std::array<int64_t, 3>> sessions;
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    sessions[st.ColumnText(0)] = {st.ColumnInt64(1), st.ColumnInt64(2),
                                  st.ColumnInt64(3)};
  }
  std::vector<std::string> roles = SwarmRoles();
  for (const auto& [role, unused] : options.swarm) {
    if (std::find(roles.begin(), roles.end(), role) == roles.end()) {
      roles.push_back(role);
    }
  }
  for (const auto& [role, unused] : sessions) {
    if (std::find(roles.begin(), roles.end(), role) == roles.end()) {
      roles.push_back(role);
    }
  }
  JsonDoc out = JsonDoc::array();
  for (const std::string& role : roles) {
    RoleConfig rc;
    if (auto it = options.swarm.find(role); it != options.swarm.end()) {
      rc = it->second;
    }
    const std::array<int64_t, 3> s = sessions[role];
    JsonDoc r = JsonDoc::object();
    r["role"] = role;
    r["brain"] = rc.brain;
    r["count"] = rc.count;
    r["running"] = s[1];
    r["sessions"] = s[0];
    r["fallbacks"] = s[2];
    out.push_back(std::move(r));
  }
  return out;
}

StatusOr<JsonDoc> JobsJson(Store* store) {
  JsonDoc counts = JsonDoc::object();
  for (const char* name : {"queued", "running", "failed", "parked", "done"}) {
    counts[name] = 0;
  }
  ASSIGN_OR_RETURN(
      Statement st,
      store->db()->Prepare("SELECT state, count(*) FROM jobs GROUP BY state"));
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    std::string state = st.ColumnText(0);
    if (state == "leased") state = "running";
    counts[state] = st.ColumnInt64(1);
  }
  JobQueue queue(store);
  std::vector<Job> attention;
  for (JobState s : {JobState::kLeased, JobState::kFailed, JobState::kParked}) {
    JobFilter f;
    f.state = s;
    f.limit = kAttentionJobs;
    ASSIGN_OR_RETURN(std::vector<Job> jobs, queue.Find(f));
    for (Job& j : jobs) attention.push_back(std::move(j));
  }
  std::sort(attention.begin(), attention.end(),
            [](const Job& a, const Job& b) { return a.id > b.id; });
  if (attention.size() > kAttentionJobs) attention.resize(kAttentionJobs);
  JsonDoc list = JsonDoc::array();
  for (const Job& j : attention) list.push_back(ToJson(BugJobOf(j)));
  JsonDoc out = JsonDoc::object();
  out["counts"] = std::move(counts);
  out["attention"] = std::move(list);
  return out;
}

// Hourly buckets of the fuzz jobs' results over the last week (up to the
// newest one): programs per second of fuzzing, findings per hour.
StatusOr<JsonDoc> SeriesJson(Store* store) {
  ASSIGN_OR_RETURN(
      Statement st,
      store->db()->Prepare(
          "SELECT updated_ms / ?1, sum(coalesce(json_extract(result, "
          "'$.programs'), 0)), sum(coalesce(json_extract(result, "
          "'$.seconds'), 0)), sum(coalesce(json_array_length(result, "
          "'$.filed'), 0)) FROM jobs WHERE kind IN ('fuzz', 'stress') AND "
          "state = 'done' GROUP BY 1 ORDER BY 1 DESC LIMIT ?2"));
  st.BindInt64(1, kBucketMs).BindInt64(2, kBuckets);
  JsonDoc pps = JsonDoc::array(), fph = JsonDoc::array();
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) break;
    const int64_t t = st.ColumnInt64(0) * kBucketMs;
    const double seconds = st.ColumnDouble(2);
    pps.push_back(JsonDoc::array(
        {t, seconds > 0 ? static_cast<double>(st.ColumnInt64(1)) / seconds
                        : 0.0}));
    fph.push_back(JsonDoc::array({t, st.ColumnInt64(3)}));
  }
  std::reverse(pps.begin(), pps.end());
  std::reverse(fph.begin(), fph.end());
  JsonDoc out = JsonDoc::object();
  out["programs_per_second"] = std::move(pps);
  out["findings_per_hour"] = std::move(fph);
  return out;
}

StatusOr<JsonDoc> RepoJson(Store* store, const ApiOptions& options) {
  ASSIGN_OR_RETURN(std::optional<std::string> head,
                   store->GetMeta("watch.last_commit"));
  ASSIGN_OR_RETURN(std::optional<std::string> built,
                   store->GetMeta("head.built"));
  std::string good = options.good_commit;
  if (good.empty()) {
    ASSIGN_OR_RETURN(std::optional<std::string> base,
                     store->GetMeta("watch.base"));
    good = base.value_or("");
  }
  JsonDoc r = JsonDoc::object();
  r["path"] = options.repo;
  r["branch"] = options.branch;
  r["head"] = head ? JsonDoc(*head) : JsonDoc();
  r["built_head"] = built && !built->empty() ? JsonDoc(*built) : JsonDoc();
  r["good_commit"] = good.empty() ? JsonDoc() : JsonDoc(good);
  return r;
}

StatusOr<JsonDoc> OverviewJson(Store* store, const ApiOptions& options) {
  JsonDoc out = JsonDoc::object();
  ASSIGN_OR_RETURN(out["repo"], RepoJson(store, options));
  ASSIGN_OR_RETURN(out["commits"], CommitsJson(store, options));
  ASSIGN_OR_RETURN(out["swarm"], SwarmJson(store, options));
  ASSIGN_OR_RETURN(out["jobs"], JobsJson(store));
  ASSIGN_OR_RETURN(auto by_state, store->CountBugsByState());
  JsonDoc states = JsonDoc::object();
  for (const auto& [state, n] : by_state) states[BugStateName(state)] = n;
  out["bugs_by_state"] = std::move(states);
  ASSIGN_OR_RETURN(out["series"], SeriesJson(store));
  return out;
}

}  // namespace

ApiResponse WebOverview(Store* store, const ApiOptions& options) {
  StatusOr<JsonDoc> out = OverviewJson(store, options);
  if (!out.ok()) return StatusResponse(out.status());
  return JsonResponse(200, *out);
}

}  // namespace trench::orchestrator
