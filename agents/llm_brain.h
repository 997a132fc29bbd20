// The LLM brain of a role (brain.h): "openai" / "anthropic" through an
// LlmClient. It renders the role's prompt (prompts.h LoadPrompt: built
// in, or <prompts_dir>/<role>.md read at each run), runs the tool-calling
// runtime (runtime.h) with the role's tools, and turns the `finish` arguments
// into the role's claim. When a budget runs out, a loop is detected or the
// backend fails, it falls back to the built-in brain on the same task and
// tools, and the claim says so:
//   claim["fallback"] = {"from": "<backend>", "reason": "<stop>: <detail>"}.
// A session stopped by LlmBrainOptions::cancel (shutdown) does not fall
// back: Run returns kCancelled, so that the work is redone after restart.
//
// Prompt files: markdown. The line "<!-- user message -->" splits the file:
// the part above is the system prompt, the part below the first user
// message. Placeholders: {{role}}, {{tools}} (one "- name: description"
// line per tool) and {{max_turns}} anywhere; {{task}} (the task as JSON,
// without its untrusted fields) only below the split. Untrusted task
// fields (report_text) are appended to the user message as quoted data
// (runtime.h QuoteUntrusted), never put into the system prompt.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "agents/brain.h"
#include "agents/llm_client.h"
#include "agents/runtime.h"

namespace trench::agents {

struct LlmBrainOptions {
  std::string role;         // One of RoleNames().
  std::string prompts_dir;  // Holds <role>.md; "": the built-in prompts.
  Budgets budgets;
  // Makes the transcript sink of one session (null, or returning null:
  // no transcript).
  std::function<std::unique_ptr<TranscriptSink>(const Json& task)> transcripts;
  // Tokens the task's bug used in earlier sessions, for the per-bug budget
  // (null: 0).
  std::function<int64_t(const Json& task)> bug_tokens_spent;
  // The same for the per-bug cost budget, in currency units (null: 0).
  std::function<double(const Json& task)> bug_cost_spent_usd;
  Clock clock;  // Null: steady_clock.
  // When set and true, the session and its in-flight request stop
  // (SessionSetup::cancel). Not owned; must outlive the brain.
  const std::atomic<bool>* cancel = nullptr;
};

// The parts of a rendered prompt.
struct RenderedPrompt {
  std::string system;
  std::string user;
  std::vector<UntrustedText> data;
};

// Loads the role's template (prompts.h LoadPrompt(prompts_dir, role)) and
// renders it for `task` and `tools`. Errors: LoadPrompt's;
// kInvalidArgument for a file without the split line, an unknown
// placeholder, {{task}} above the split, or a task that is not an object
// (or whose report_text is not a string).
StatusOr<RenderedPrompt> RenderPrompt(const std::string& prompts_dir,
                                      const std::string& role, const Json& task,
                                      const std::vector<ToolSpec>& tools,
                                      const Budgets& budgets);

class LlmBrain : public Brain {
 public:
  // REQUIRES: client and fallback are not null.
  LlmBrain(LlmBrainOptions options, std::shared_ptr<LlmClient> client,
           std::unique_ptr<Brain> fallback);

  // Errors: RenderPrompt's; a broken tool set-up (kInternal) from the
  // session; kCancelled "interrupted: <detail>" when options.cancel stopped
  // the session (no fallback); the fallback brain's errors.
  StatusOr<Json> Run(const Json& task, ToolBox& tools) override;

  // What the last Run did.
  struct LastRun {
    bool fell_back = false;
    std::string reason;  // Why it fell back.
    SessionOutcome outcome;
  };
  const LastRun& last_run() const { return last_; }

 private:
  LlmBrainOptions options_;
  std::shared_ptr<LlmClient> client_;
  std::unique_ptr<Brain> fallback_;
  LastRun last_;
};

// The LLM brain of options.role over `client`, falling back to
// MakeBuiltinBrain(options.role). kInvalidArgument for an unknown role or a
// null client.
StatusOr<std::unique_ptr<LlmBrain>> MakeLlmBrain(
    LlmBrainOptions options, std::shared_ptr<LlmClient> client);

}  // namespace trench::agents
