#include "orchestrator/pipeline/agent_sessions.h"

#include <spdlog/spdlog.h>

#include <memory>

#include "agents/brain.h"
#include "agents/llm_brain.h"
#include "base/log_context.h"
#include "orchestrator/pipeline/agent_setup.h"
#include "orchestrator/pipeline/fallback_reason.h"

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
  // Every line of the session (the brain's and its tools' too) names it.
  Json log_fields = Json::MakeObject();
  log_fields["role"] = role;
  log_fields["backend"] = brain_name;
  if (bug_id) log_fields["bug"] = *bug_id;
  LogScope log_scope(log_fields);
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
  std::optional<FallbackReason> reason;
  std::string why;
  if (fallback) {
    status = "fell back to builtin: " + fallback->Dump();
    const Json* r = fallback->Find("reason");
    why = r && r->is_string() ? r->string_value() : fallback->Dump();
    reason = ClassifyFallback(why);
  } else if (!set_up_failure.empty()) {
    status = "fell back to builtin: " + set_up_failure;
    why = set_up_failure;
    reason = FallbackReason::kSetUp;
  }
  if (*estimated) status += kEstimatedNote;
  const std::string reason_name =
      reason ? std::string(FallbackReasonName(*reason)) : "";
  RETURN_IF_ERROR(ctx.store->EndAgentSession(session, status, reason_name));
  Json fields = Json::MakeObject();
  fields["role"] = role;
  fields["backend"] = brain_name;
  fields["bug"] = bug_id ? Json(*bug_id) : Json();
  fields["session"] = session;
  if (reason) {
    // An LLM brain that did not run is never an "info ... done".
    fields["reason"] = reason_name;
    fields["detail"] = why;
    LogScope line(fields);
    spdlog::warn("agent fell back to the built-in brain");
  } else {
    LogScope line(fields);
    spdlog::info("agent done");
  }
  return claim;
}

}  // namespace trench::orchestrator
