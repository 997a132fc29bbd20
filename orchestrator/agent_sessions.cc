#include "orchestrator/agent_sessions.h"

#include <spdlog/spdlog.h>

#include "agents/brain.h"
#include "agents/llm_brain.h"

namespace trench::orchestrator {
namespace {

// The LLM transcript of one session, into the store.
class StoreTranscript : public agents::TranscriptSink {
 public:
  StoreTranscript(Store* store, int64_t session)
      : store_(store), session_(session) {}
  void OnMessage(std::string_view role, std::string_view content,
                 int64_t input_tokens, int64_t output_tokens) override {
    StatusOr<int64_t> id = store_->AddAgentMessage(session_, std::string(role),
                                                   std::string(content),
                                                   input_tokens, output_tokens);
    if (!id.ok()) {
      spdlog::error("agent session {}: {}", session_, id.status().message());
    }
  }
  void OnEnd(std::string_view status) override { status_ = status; }

 private:
  Store* store_;
  int64_t session_;
  std::string status_;
};

// Tokens of every earlier session of the bug (the per-bug budget).
int64_t BugTokens(Store* store, int64_t bug_id) {
  StatusOr<Statement> st = store->db()->Prepare(
      "SELECT coalesce(sum(m.input_tokens + m.output_tokens), 0) FROM "
      "agent_messages m JOIN agent_sessions s ON m.session_id = s.id WHERE "
      "s.bug_id = ?1");
  if (!st.ok()) return 0;
  StatusOr<bool> row = st->BindInt64(1, bug_id).Step();
  return row.ok() && *row ? st->ColumnInt64(0) : 0;
}

// config.llm.<backend> -> the client's settings.
StatusOr<agents::LlmConfig> LlmSettings(const DaemonConfig& config,
                                        const std::string& backend) {
  const Json* section = config.llm.Find(backend);
  if (!section || !section->is_object()) {
    return InvalidArgument("config: llm." + backend +
                           " is missing (base_url, model, api_key_env)");
  }
  agents::LlmConfig c;
  c.backend = backend;
  for (const auto& [key, value] : section->object()) {
    if (key == "base_url" && value.is_string()) {
      c.base_url = value.string_value();
    } else if (key == "model" && value.is_string()) {
      c.model = value.string_value();
    } else if (key == "api_key_env" && value.is_string()) {
      c.api_key_env = value.string_value();
    } else if (key == "stream" && value.is_bool()) {
      c.stream = value.bool_value();
    } else if (key == "timeout_seconds" && value.is_number()) {
      c.timeout_seconds = value.number_value();
    } else if (key == "max_retries" && value.is_integer()) {
      c.max_retries = static_cast<int>(value.int64_value());
    } else {
      return InvalidArgument("config: llm." + backend + "." + key +
                             ": unknown field or wrong type");
    }
  }
  return c;
}

StatusOr<std::unique_ptr<agents::Brain>> MakeBrain(StepContext& ctx,
                                                   const std::string& role,
                                                   const std::string& brain,
                                                   int64_t session) {
  if (brain == "builtin") return agents::MakeBuiltinBrain(role);
  ASSIGN_OR_RETURN(agents::LlmConfig llm, LlmSettings(*ctx.config, brain));
  ASSIGN_OR_RETURN(std::unique_ptr<agents::LlmClient> client,
                   agents::MakeLlmClient(llm));
  agents::LlmBrainOptions o;
  o.role = role;
  o.prompts_dir = ctx.config->prompts_dir;
  o.budgets.max_turns = ctx.config->budget_turns;
  o.budgets.max_tokens = ctx.config->budget_tokens;
  o.budgets.max_wall_seconds = ctx.config->budget_wall_seconds;
  o.budgets.max_bug_tokens = ctx.config->budget_bug_tokens;
  Store* store = ctx.store;
  o.transcripts = [store, session](const Json&) {
    return std::unique_ptr<agents::TranscriptSink>(
        new StoreTranscript(store, session));
  };
  o.bug_tokens_spent = [store](const Json& task) -> int64_t {
    const Json* bug = task.Find("bug");
    return bug && bug->is_integer() ? BugTokens(store, bug->int64_value()) : 0;
  };
  ASSIGN_OR_RETURN(std::unique_ptr<agents::LlmBrain> b,
                   agents::MakeLlmBrain(o, std::move(client)));
  return std::unique_ptr<agents::Brain>(std::move(b));
}

}  // namespace

StatusOr<Json> RunAgent(StepContext& ctx, const std::string& role,
                        int64_t bug_id, const Json& task,
                        agents::ToolBox& tools) {
  auto it = ctx.config->swarm.find(role);
  const std::string brain_name =
      it == ctx.config->swarm.end() ? "builtin" : it->second.brain;
  ASSIGN_OR_RETURN(int64_t session,
                   ctx.store->StartAgentSession(bug_id, role, brain_name));
  RETURN_IF_ERROR(
      ctx.store->AddAgentMessage(session, "task", task.Dump(), 0, 0).status());
  StatusOr<std::unique_ptr<agents::Brain>> brain =
      MakeBrain(ctx, role, brain_name, session);
  if (!brain.ok()) {
    // A broken LLM set-up (no key, bad config) must not stop the pipeline.
    spdlog::warn("agent {} ({}): {}; using the built-in brain", role,
                 brain_name, brain.status().message());
    RETURN_IF_ERROR(ctx.store
                        ->AddAgentMessage(session, "fallback",
                                          brain.status().message(), 0, 0)
                        .status());
    brain = agents::MakeBuiltinBrain(role);
    if (!brain.ok()) return brain.status();
  }
  StatusOr<Json> claim = (*brain)->Run(task, tools);
  if (!claim.ok()) {
    RETURN_IF_ERROR(ctx.store->EndAgentSession(
        session, "error: " + claim.status().message()));
    return claim.status();
  }
  RETURN_IF_ERROR(
      ctx.store->AddAgentMessage(session, "claim", claim->Dump(), 0, 0)
          .status());
  const Json* fallback = claim->Find("fallback");
  RETURN_IF_ERROR(ctx.store->EndAgentSession(
      session,
      fallback ? "fell back to builtin: " + fallback->Dump() : "done"));
  spdlog::info("agent {} ({}) for bug {}: done", role, brain_name, bug_id);
  return claim;
}

}  // namespace trench::orchestrator
