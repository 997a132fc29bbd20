// The tool-calling runtime (DESIGN.md "Agents"): the conversation loop of
// an LLM brain over an LlmClient and a ToolBox. It knows nothing about the
// roles: a session is a system prompt, a first user message and the
// toolbox's tools, and it ends on the `finish` tool.
//
// Each turn: one Chat request; every tool call of the reply is answered
// with a tool result message:
//   - arguments that are not JSON (ToolCall::arguments_error), a tool the
//     toolbox does not offer, arguments that fail the schema, and tools that
//     fail are answered with is_error results that say why, so that the
//     model can correct itself;
//   - a successful `finish` ends the session: its arguments are the claim.
// Hard limits end a session early: turns, tokens (input + output, this
// session), tokens per bug and cost per bug (this session plus the bug's
// earlier ones; cost is tokens at the backend's Prices), wall time; and
// loop detection: the same call (name and arguments) with the same result
// `loop_repeats` times (a text-only reply repeated counts the same way).
// The model is warned once, one repeat before the stop.
//
// The budgets also bound each request, not only the turns between them:
//   - its time limit (ChatRequest::time_limit_seconds) is what is left of
//     max_wall_seconds, so a slow or hung server is cut there (the client's
//     own timeout_seconds still applies when smaller); a request cut so
//     ends the session with kBudget "wall time: ...";
//   - its max_tokens is the smaller of max_output_tokens and what the
//     token budgets (session, per bug) and the per-bug cost budget leave
//     after the request's estimated input; when they cannot cover the
//     estimated input and one output token, the session ends with kBudget
//     before sending.
// Token estimates: ceil(bytes / 4) of the text sent (system prompt,
// messages, tool calls, tool specs as JSON) or received (text, tool names
// and arguments). A reply whose usage is absent or all zero (Ollama, some
// llama.cpp builds) is counted at these estimates, so that the token and
// cost budgets still hold; the transcript says so (the assistant message's
// "usage": "estimated ..." and TranscriptSink::OnTokensEstimated), and so
// does SessionOutcome::tokens_estimated.
// A stop request (SessionSetup::cancel) ends the session with
// kInterrupted: before the next turn, or during a request (the client
// returns kCancelled).
//
// Untrusted text (bug reports) is never put in the system prompt: it goes
// into the first user message as quoted data between markers that carry a
// random nonce, and any marker-like text inside it is defused
// (QuoteUntrusted).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "agents/llm_client.h"
#include "agents/toolbox.h"
#include "base/json.h"
#include "base/status.h"

namespace trench::agents {

// What a backend's tokens cost, in currency units (USD in the config) per
// million tokens. All zero (the default, e.g. a local server): free.
struct Prices {
  double input_usd_per_mtok = 0;
  double output_usd_per_mtok = 0;
};
// What `usage` costs at `prices`.
double CostOf(const Usage& usage, const Prices& prices);

struct Budgets {
  int max_turns = 20;               // Chat requests.
  int64_t max_tokens = 200000;      // Input + output tokens of the session.
  double max_wall_seconds = 600;    // From the session's start.
  int64_t max_bug_tokens = 0;       // Tokens per bug, all sessions; 0: none.
  double max_bug_cost_usd = 0;      // Cost per bug, all sessions; 0: none.
  Prices prices;                    // What the cost is counted with.
  int loop_repeats = 3;             // Same call + same result: stop at N.
  int max_output_tokens = 4096;     // Per turn (ChatRequest::max_tokens).
  size_t max_result_chars = 16000;  // A tool result shown to the model.
};

// Receives the transcript (the orchestrator stores it with
// Store::AddAgentMessage / EndAgentSession). `content` of assistant and tool
// messages is JSON text: {"text", "tool_calls": [{id, name, arguments}]}
// and {"tool_call_id", "name", "is_error", "content"}. Tokens are those of
// the turn that produced the message (0 for others).
class TranscriptSink {
 public:
  virtual ~TranscriptSink() = default;
  virtual void OnMessage(std::string_view role, std::string_view content,
                         int64_t input_tokens, int64_t output_tokens) = 0;
  // Once, at the end: StopReasonName() of the outcome, or "error".
  virtual void OnEnd(std::string_view status) = 0;
  // Once, at the first turn whose token counts are estimates (the server
  // reported no usage).
  virtual void OnTokensEstimated() {}
};

enum class StopReason {
  kFinished,
  kBudget,
  kLoop,
  kBackendError,
  kInterrupted
};
// "finished", "budget", "loop", "backend_error", "interrupted".
std::string_view StopReasonName(StopReason reason);

// A piece of untrusted text for the first user message.
struct UntrustedText {
  std::string label;  // e.g. "the bug report's text"; trusted.
  std::string text;
};

struct SessionSetup {
  std::string system_prompt;        // Trusted only.
  std::string user_message;         // Trusted: the task.
  std::vector<UntrustedText> data;  // Quoted after user_message.
  int64_t bug_tokens_spent = 0;     // By the bug's earlier sessions.
  double bug_cost_spent_usd = 0;    // By the bug's earlier sessions.
  // When set and true, the session stops (kInterrupted); passed to every
  // request (ChatRequest::cancel). Not owned. Null: never.
  const std::atomic<bool>* cancel = nullptr;
};

struct SessionOutcome {
  StopReason stop = StopReason::kBudget;
  std::string detail;   // Which budget, the loop's call, the backend error.
  Json claim;           // finish's arguments when kFinished; null otherwise.
  Usage usage;          // Summed over the turns.
  double cost_usd = 0;  // CostOf(usage, budgets.prices).
  int turns = 0;
  int tool_calls = 0;
  bool tokens_estimated = false;  // Some turn's usage was estimated.
};

// ceil(bytes / 4): the token estimate of `bytes` bytes of text.
int64_t EstimateTokens(size_t bytes);

// Seconds on a monotonic clock (tests pass a fake one).
using Clock = std::function<double()>;

// Runs one session. Backend failures end it with kBackendError (the
// detail is the client's message); a cancelled request with kInterrupted.
// Errors: kInternal (or another non-InvalidArgument code) from ToolBox::Call
// for a broken set-up, after which the session stops (the sink gets
// OnEnd("error")). `sink` and `clock` may be null (no transcript;
// steady_clock).
StatusOr<SessionOutcome> RunSession(LlmClient& client, ToolBox& tools,
                                    const SessionSetup& setup,
                                    const Budgets& budgets,
                                    TranscriptSink* sink,
                                    const Clock& clock = nullptr);

// `text` as quoted data: an explanation naming `label`, then the text
// between "<<<DATA <nonce>" and "DATA <nonce>>>>" lines. Runs of '<' or
// '>' of length 3 or more inside `text` are broken up, so that the text can
// neither close the quote nor fake a new one. REQUIRES: nonce is
// alphanumeric.
std::string QuoteUntrusted(std::string_view label, std::string_view text,
                           std::string_view nonce);

}  // namespace trench::agents
