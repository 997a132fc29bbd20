// Store: builds, patches, agent sessions and their messages.
#include "orchestrator/store/store.h"

namespace trench::orchestrator {
namespace {

constexpr std::string_view kBuildStatusNames[] = {"pending", "ok", "failed"};

StatusOr<BuildStatus> ParseBuildStatus(Db* db, const std::string& name) {
  for (size_t i = 0; i < std::size(kBuildStatusNames); ++i) {
    if (kBuildStatusNames[i] == name) return static_cast<BuildStatus>(i);
  }
  return IoError("store " + db->path() + ": unknown build status '" + name +
                 "'");
}

}  // namespace

std::string_view BuildStatusName(BuildStatus status) {
  return kBuildStatusNames[static_cast<size_t>(status)];
}

StatusOr<int64_t> Store::PutBuild(const std::string& commit_sha,
                                  const std::string& patch_hash,
                                  BuildStatus status,
                                  const std::string& bin_dir,
                                  const std::string& log_tail) {
  ASSIGN_OR_RETURN(
      Statement st,
      db()->Prepare("INSERT INTO builds (commit_sha, patch_hash, status, "
                    "bin_dir, log_tail, created_ms, updated_ms) VALUES (?1, "
                    "?2, ?3, ?4, ?5, ?6, ?6) ON CONFLICT (commit_sha, "
                    "patch_hash) DO UPDATE SET status = excluded.status, "
                    "bin_dir = excluded.bin_dir, log_tail = "
                    "excluded.log_tail, updated_ms = excluded.updated_ms "
                    "RETURNING id"));
  st.BindText(1, commit_sha)
      .BindText(2, patch_hash)
      .BindText(3, BuildStatusName(status))
      .BindText(4, bin_dir)
      .BindText(5, log_tail)
      .BindInt64(6, clock_->NowMillis());
  ASSIGN_OR_RETURN(bool row, st.Step());
  if (!row) return Internal("store: build upsert returned no id");
  int64_t id = st.ColumnInt64(0);
  RETURN_IF_ERROR(st.Run());  // Finishes the statement (commits it).
  return id;
}

StatusOr<Build> Store::GetBuild(const std::string& commit_sha,
                                const std::string& patch_hash) {
  ASSIGN_OR_RETURN(
      Statement st,
      db()->Prepare("SELECT id, commit_sha, patch_hash, status, bin_dir, "
                    "log_tail, created_ms, updated_ms, target FROM builds "
                    "WHERE commit_sha = ?1 AND patch_hash = ?2"));
  ASSIGN_OR_RETURN(bool row,
                   st.BindText(1, commit_sha).BindText(2, patch_hash).Step());
  if (!row) {
    return NotFound("no build of " + commit_sha +
                    (patch_hash.empty() ? "" : " with patch " + patch_hash));
  }
  Build b;
  b.id = st.ColumnInt64(0);
  b.commit_sha = st.ColumnText(1);
  b.patch_hash = st.ColumnText(2);
  ASSIGN_OR_RETURN(b.status, ParseBuildStatus(db(), st.ColumnText(3)));
  b.bin_dir = st.ColumnText(4);
  b.log_tail = st.ColumnText(5);
  b.created_ms = st.ColumnInt64(6);
  b.updated_ms = st.ColumnInt64(7);
  b.target = st.ColumnText(8);
  return b;
}

Status Store::SetBuildTarget(const std::string& commit_sha,
                             const std::string& patch_hash,
                             const std::string& target) {
  ASSIGN_OR_RETURN(
      Statement st,
      db()->Prepare("UPDATE builds SET target = ?3 WHERE commit_sha = ?1 AND "
                    "patch_hash = ?2 RETURNING id"));
  ASSIGN_OR_RETURN(bool row, st.BindText(1, commit_sha)
                                 .BindText(2, patch_hash)
                                 .BindText(3, target)
                                 .Step());
  RETURN_IF_ERROR(st.Run());  // Finishes the statement (commits it).
  if (!row) return NotFound("no build of " + commit_sha + " to describe");
  return Status::Ok();
}

StatusOr<int64_t> Store::AddPatch(int64_t bug_id, const std::string& branch,
                                  const std::string& diff) {
  ASSIGN_OR_RETURN(
      Statement st,
      db()->Prepare("INSERT INTO patches (bug_id, branch, diff, created_ms, "
                    "updated_ms) VALUES (?1, ?2, ?3, ?4, ?4)"));
  RETURN_IF_ERROR(st.BindInt64(1, bug_id)
                      .BindText(2, branch)
                      .BindText(3, diff)
                      .BindInt64(4, clock_->NowMillis())
                      .Run()
                      .WithContext("patch for bug " + std::to_string(bug_id)));
  return db()->LastInsertRowId();
}

Status Store::SetPatchVerified(int64_t patch_id, bool verified,
                               const Json& verification) {
  ASSIGN_OR_RETURN(Statement st,
                   db()->Prepare("UPDATE patches SET verified = ?2, "
                                 "verification = ?3, updated_ms = ?4 WHERE "
                                 "id = ?1"));
  RETURN_IF_ERROR(st.BindInt64(1, patch_id)
                      .BindBool(2, verified)
                      .BindJson(3, verification)
                      .BindInt64(4, clock_->NowMillis())
                      .Run());
  if (db()->Changes() == 0) {
    return NotFound("no patch " + std::to_string(patch_id));
  }
  return Status::Ok();
}

StatusOr<std::vector<Patch>> Store::ListPatches(int64_t bug_id) {
  ASSIGN_OR_RETURN(
      Statement st,
      db()->Prepare("SELECT id, bug_id, branch, diff, verified, verification, "
                    "created_ms, updated_ms FROM patches WHERE bug_id = ?1 "
                    "ORDER BY id"));
  st.BindInt64(1, bug_id);
  return ReadRows<Patch>(st, [&]() -> StatusOr<Patch> {
    Patch p;
    p.id = st.ColumnInt64(0);
    p.bug_id = st.ColumnInt64(1);
    p.branch = st.ColumnText(2);
    p.diff = st.ColumnText(3);
    p.verified = st.ColumnInt64(4) != 0;
    ASSIGN_OR_RETURN(p.verification,
                     st.ColumnJson(5, "patches.verification of patch " +
                                          std::to_string(p.id)));
    p.created_ms = st.ColumnInt64(6);
    p.updated_ms = st.ColumnInt64(7);
    return p;
  });
}

StatusOr<int64_t> Store::StartAgentSession(std::optional<int64_t> bug_id,
                                           const std::string& role,
                                           const std::string& backend) {
  ASSIGN_OR_RETURN(
      Statement st,
      db()->Prepare("INSERT INTO agent_sessions (bug_id, role, backend, "
                    "started_ms) VALUES (?1, ?2, ?3, ?4)"));
  RETURN_IF_ERROR(st.BindOptionalInt64(1, bug_id)
                      .BindText(2, role)
                      .BindText(3, backend)
                      .BindInt64(4, clock_->NowMillis())
                      .Run());
  return db()->LastInsertRowId();
}

Status Store::EndAgentSession(int64_t session_id, const std::string& status,
                              const std::string& fallback_reason) {
  ASSIGN_OR_RETURN(
      Statement st,
      db()->Prepare("UPDATE agent_sessions SET status = ?2, "
                    "ended_ms = ?3, fallback_reason = ?4 WHERE id = ?1"));
  RETURN_IF_ERROR(st.BindInt64(1, session_id)
                      .BindText(2, status)
                      .BindInt64(3, clock_->NowMillis())
                      .BindText(4, fallback_reason)
                      .Run());
  if (db()->Changes() == 0) {
    return NotFound("no agent session " + std::to_string(session_id));
  }
  return Status::Ok();
}

StatusOr<int64_t> Store::AddAgentMessage(
    int64_t session_id, const std::string& role, const std::string& content,
    int64_t input_tokens, int64_t output_tokens, double cost_usd) {
  if (!(cost_usd >= 0)) {
    return InvalidArgument("agent session " + std::to_string(session_id) +
                           ": a message cannot cost " +
                           std::to_string(cost_usd));
  }
  int64_t id = 0;
  RETURN_IF_ERROR(
      InTransaction(db(), [&]() -> Status {
        ASSIGN_OR_RETURN(
            Statement st,
            db()->Prepare(
                "INSERT INTO agent_messages (session_id, role, content, "
                "input_tokens, output_tokens, at_ms) VALUES (?1, ?2, "
                "?3, ?4, ?5, ?6)"));
        RETURN_IF_ERROR(st.BindInt64(1, session_id)
                            .BindText(2, role)
                            .BindText(3, content)
                            .BindInt64(4, input_tokens)
                            .BindInt64(5, output_tokens)
                            .BindInt64(6, clock_->NowMillis())
                            .Run());
        id = db()->LastInsertRowId();
        if (cost_usd == 0) return Status::Ok();
        ASSIGN_OR_RETURN(Statement cost,
                         db()->Prepare("UPDATE agent_sessions SET cost_usd = "
                                       "cost_usd + ?2 WHERE id = ?1"));
        return cost.BindInt64(1, session_id).BindDouble(2, cost_usd).Run();
      }).WithContext("message of agent session " + std::to_string(session_id)));
  return id;
}

StatusOr<std::vector<AgentSession>> Store::ListAgentSessions(
    std::optional<int64_t> bug_id) {
  ASSIGN_OR_RETURN(
      Statement st,
      db()->Prepare(
          "SELECT s.id, s.bug_id, s.role, s.backend, s.status, s.cost_usd, "
          "s.started_ms, s.ended_ms, coalesce(sum(m.input_tokens), 0), "
          "coalesce(sum(m.output_tokens), 0), s.fallback_reason FROM "
          "agent_sessions s LEFT JOIN "
          "agent_messages m ON m.session_id = s.id WHERE ?1 IS NULL OR "
          "s.bug_id = ?1 GROUP BY s.id ORDER BY s.id"));
  st.BindOptionalInt64(1, bug_id);
  return ReadRows<AgentSession>(st, [&]() -> StatusOr<AgentSession> {
    AgentSession a;
    a.id = st.ColumnInt64(0);
    a.bug_id = st.ColumnOptionalInt64(1);
    a.role = st.ColumnText(2);
    a.backend = st.ColumnText(3);
    a.status = st.ColumnText(4);
    a.cost_usd = st.ColumnDouble(5);
    a.started_ms = st.ColumnInt64(6);
    a.ended_ms = st.ColumnOptionalInt64(7);
    a.input_tokens = st.ColumnInt64(8);
    a.output_tokens = st.ColumnInt64(9);
    a.fallback_reason = st.ColumnText(10);
    return a;
  });
}

StatusOr<AgentSpend> Store::AgentSpendOfBug(int64_t bug_id) {
  ASSIGN_OR_RETURN(
      Statement st,
      db()->Prepare(
          "SELECT coalesce((SELECT sum(m.input_tokens + m.output_tokens) FROM "
          "agent_messages m JOIN agent_sessions s ON m.session_id = s.id "
          "WHERE s.bug_id = ?1), 0), coalesce((SELECT sum(cost_usd) FROM "
          "agent_sessions WHERE bug_id = ?1), 0)"));
  ASSIGN_OR_RETURN(bool row, st.BindInt64(1, bug_id).Step());
  AgentSpend spend;
  if (row) {
    spend.tokens = st.ColumnInt64(0);
    spend.cost_usd = st.ColumnDouble(1);
  }
  return spend;
}

StatusOr<std::vector<AgentMessage>> Store::ListAgentMessages(
    int64_t session_id) {
  ASSIGN_OR_RETURN(
      Statement st,
      db()->Prepare("SELECT id, session_id, role, content, input_tokens, "
                    "output_tokens, at_ms FROM agent_messages WHERE "
                    "session_id = ?1 ORDER BY id"));
  st.BindInt64(1, session_id);
  return ReadRows<AgentMessage>(st, [&]() -> StatusOr<AgentMessage> {
    AgentMessage m;
    m.id = st.ColumnInt64(0);
    m.session_id = st.ColumnInt64(1);
    m.role = st.ColumnText(2);
    m.content = st.ColumnText(3);
    m.input_tokens = st.ColumnInt64(4);
    m.output_tokens = st.ColumnInt64(5);
    m.at_ms = st.ColumnInt64(6);
    return m;
  });
}

StatusOr<int64_t> Store::TotalAgentTokens() {
  ASSIGN_OR_RETURN(Statement st,
                   db()->Prepare("SELECT coalesce(sum(input_tokens + "
                                 "output_tokens), 0) FROM agent_messages"));
  ASSIGN_OR_RETURN(bool row, st.Step());
  return row ? st.ColumnInt64(0) : 0;
}

}  // namespace trench::orchestrator
