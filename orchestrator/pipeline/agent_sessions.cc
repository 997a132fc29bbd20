#include "orchestrator/pipeline/agent_sessions.h"

#include <spdlog/spdlog.h>

#include <memory>

#include "agents/brain.h"
#include "agents/llm_brain.h"

namespace trench::orchestrator {
namespace {

constexpr std::string_view kEstimatedNote =
    " (tokens estimated: the server reported no usage)";

// The LLM transcript of one session, into the store, with what each
// message's tokens cost.
class StoreTranscript : public agents::TranscriptSink {
 public:
  StoreTranscript(Store* store, int64_t session, agents::Prices prices,
                  std::shared_ptr<bool> estimated)
      : store_(store),
        session_(session),
        prices_(prices),
        estimated_(std::move(estimated)) {}
  void OnMessage(std::string_view role, std::string_view content,
                 int64_t input_tokens, int64_t output_tokens) override {
    const double cost = agents::CostOf({input_tokens, output_tokens}, prices_);
    StatusOr<int64_t> id = store_->AddAgentMessage(
        session_, std::string(role), std::string(content), input_tokens,
        output_tokens, cost);
    if (!id.ok()) {
      spdlog::error("agent session {}: {}", session_, id.status().message());
    }
  }
  void OnEnd(std::string_view status) override { status_ = status; }
  void OnTokensEstimated() override { *estimated_ = true; }

 private:
  Store* store_;
  int64_t session_;
  agents::Prices prices_;
  std::shared_ptr<bool> estimated_;
  std::string status_;
};

// What the bug's earlier sessions used (the per-bug budgets); nothing when
// the task names no bug or the store fails.
AgentSpend SpendOfTask(Store* store, const Json& task) {
  const Json* bug = task.Find("bug");
  if (!bug || !bug->is_integer()) return AgentSpend{};
  StatusOr<AgentSpend> spend = store->AgentSpendOfBug(bug->int64_value());
  return spend.ok() ? *spend : AgentSpend{};
}

struct LlmSettings {
  agents::LlmConfig client;
  agents::Prices prices;
};

// config.llm.<backend> -> the client's settings and the backend's prices.
StatusOr<LlmSettings> LlmSettingsOf(const DaemonConfig& config,
                                    const std::string& backend) {
  const Json* section = config.llm.Find(backend);
  if (!section || !section->is_object()) {
    return InvalidArgument("config: llm." + backend +
                           " is missing (base_url, model, api_key_env)");
  }
  LlmSettings s;
  agents::LlmConfig& c = s.client;
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
    } else if (key == "input_usd_per_mtok" && value.is_number() &&
               value.number_value() >= 0) {
      s.prices.input_usd_per_mtok = value.number_value();
    } else if (key == "output_usd_per_mtok" && value.is_number() &&
               value.number_value() >= 0) {
      s.prices.output_usd_per_mtok = value.number_value();
    } else {
      return InvalidArgument("config: llm." + backend + "." + key +
                             ": unknown field or wrong type");
    }
  }
  return s;
}

StatusOr<std::unique_ptr<agents::Brain>> MakeBrain(
    StepContext& ctx, const std::string& role, const std::string& brain,
    int64_t session, std::shared_ptr<bool> estimated) {
  if (brain == "builtin") return agents::MakeBuiltinBrain(role);
  ASSIGN_OR_RETURN(LlmSettings llm, LlmSettingsOf(*ctx.config, brain));
  ASSIGN_OR_RETURN(std::unique_ptr<agents::LlmClient> client,
                   agents::MakeLlmClient(llm.client));
  agents::LlmBrainOptions o;
  o.role = role;
  o.prompts_dir = ctx.config->prompts_dir;
  o.budgets.max_turns = ctx.config->budget_turns;
  o.budgets.max_tokens = ctx.config->budget_tokens;
  o.budgets.max_wall_seconds = ctx.config->budget_wall_seconds;
  o.budgets.max_bug_tokens = ctx.config->budget_bug_tokens;
  o.budgets.max_bug_cost_usd = ctx.config->budget_bug_cost_usd;
  o.budgets.prices = llm.prices;
  Store* store = ctx.store;
  o.transcripts = [store, session, prices = llm.prices,
                   estimated](const Json&) {
    return std::unique_ptr<agents::TranscriptSink>(
        new StoreTranscript(store, session, prices, estimated));
  };
  o.cancel = ctx.stopping;
  o.bug_tokens_spent = [store](const Json& task) {
    return SpendOfTask(store, task).tokens;
  };
  o.bug_cost_spent_usd = [store](const Json& task) {
    return SpendOfTask(store, task).cost_usd;
  };
  ASSIGN_OR_RETURN(std::unique_ptr<agents::LlmBrain> b,
                   agents::MakeLlmBrain(o, std::move(client)));
  return std::unique_ptr<agents::Brain>(std::move(b));
}

}  // namespace

StatusOr<Json> RunAgent(StepContext& ctx, const std::string& role,
                        std::optional<int64_t> bug_id, const Json& task,
                        agents::ToolBox& tools) {
  auto it = ctx.config->swarm.find(role);
  const std::string brain_name =
      it == ctx.config->swarm.end() ? "builtin" : it->second.brain;
  ASSIGN_OR_RETURN(int64_t session,
                   ctx.store->StartAgentSession(bug_id, role, brain_name));
  RETURN_IF_ERROR(
      ctx.store->AddAgentMessage(session, "task", task.Dump(), 0, 0).status());
  auto estimated = std::make_shared<bool>(false);
  StatusOr<std::unique_ptr<agents::Brain>> brain =
      MakeBrain(ctx, role, brain_name, session, estimated);
  std::string set_up_failure;
  if (!brain.ok()) {
    set_up_failure = brain.status().message();
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
    // Stopped by the shutdown: the job goes back to the queue and runs
    // again after the restart.
    const bool interrupted = claim.status().code() == StatusCode::kCancelled;
    RETURN_IF_ERROR(ctx.store->EndAgentSession(
        session,
        interrupted ? "interrupted" : "error: " + claim.status().message()));
    return claim.status();
  }
  RETURN_IF_ERROR(
      ctx.store->AddAgentMessage(session, "claim", claim->Dump(), 0, 0)
          .status());
  const Json* fallback = claim->Find("fallback");
  std::string status = "done";
  if (fallback) {
    status = "fell back to builtin: " + fallback->Dump();
  } else if (!set_up_failure.empty()) {
    status = "fell back to builtin: " + set_up_failure;
  }
  if (*estimated) status += kEstimatedNote;
  RETURN_IF_ERROR(ctx.store->EndAgentSession(session, status));
  spdlog::info("agent {} ({}) for {}: done", role, brain_name,
               bug_id ? "bug " + std::to_string(*bug_id) : "no bug");
  return claim;
}

}  // namespace trench::orchestrator
