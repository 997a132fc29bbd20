// Test doubles for the runtime and brain tests: a scripted in-process
// LlmClient and a ToolBox over the registry's specs with canned answers.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "agents/json_schema.h"
#include "agents/llm_client.h"
#include "agents/runtime.h"
#include "agents/tool_registry.h"
#include "agents/toolbox.h"

namespace trench::agents::runtime_testing {

inline ToolCall Call(std::string name, std::string args_json) {
  ToolCall c;
  c.id = "call_" + name;
  c.name = std::move(name);
  c.raw_arguments = std::move(args_json);
  StatusOr<Json> parsed = ParseJson(c.raw_arguments);
  if (parsed.ok()) {
    c.arguments = *parsed;
  } else {
    c.arguments_error = parsed.status().message();
  }
  return c;
}

inline ChatResponse Reply(std::vector<ToolCall> calls, std::string text = "",
                          int64_t in = 100, int64_t out = 20) {
  ChatResponse r;
  r.message.role = Role::kAssistant;
  r.message.content = std::move(text);
  r.message.tool_calls = std::move(calls);
  r.stop_reason = r.message.tool_calls.empty() ? "stop" : "tool_calls";
  r.usage = {in, out};
  return r;
}

// Answers with the script's replies in order; past its end, `forever`
// (when set) makes each further reply from the turn number.
class FakeLlm : public LlmClient {
 public:
  std::deque<StatusOr<ChatResponse>> script;
  std::function<ChatResponse(int turn)> forever;
  std::vector<ChatRequest> requests;

  StatusOr<ChatResponse> Chat(const ChatRequest& request) override {
    requests.push_back(request);
    if (!script.empty()) {
      StatusOr<ChatResponse> r = script.front();
      script.pop_front();
      return r;
    }
    if (forever) return forever(static_cast<int>(requests.size()));
    return IoError("fake: script exhausted");
  }
  std::string_view backend() const override { return "fake"; }
};

// The registry's tools of `role`, validated by their schemas; each tool
// answers with its entry of `answers` (default {"ok": true}), or fails
// with `failures[name]`.
class FakeToolBox : public ToolBox {
 public:
  explicit FakeToolBox(const std::string& role)
      : specs_(*SpecsForRole(role)), role_(role) {}
  const std::vector<ToolSpec>& Specs() const override { return specs_; }
  StatusOr<ToolResult> Call(const std::string& name,
                            const Json& args) override {
    if (!RoleMayUse(role_, name)) {
      return InvalidArgument("unknown tool '" + name + "'");
    }
    Status valid = ValidateJson(FindTool(name)->schema, args);
    if (!valid.ok()) return InvalidArgument(name + ": " + valid.message());
    calls.push_back(name);
    ToolResult r;
    if (failures.contains(name)) {
      r.error = failures[name];
      return r;
    }
    r.ok = true;
    r.output = answers.contains(name) ? answers[name] : Json::MakeObject();
    return r;
  }
  std::map<std::string, Json> answers;
  std::map<std::string, std::string> failures;
  std::vector<std::string> calls;

 private:
  std::vector<ToolSpec> specs_;
  std::string role_;
};

// Keeps the transcript.
class RecordingSink : public TranscriptSink {
 public:
  struct Entry {
    std::string role, content;
    int64_t in, out;
  };
  void OnMessage(std::string_view role, std::string_view content, int64_t in,
                 int64_t out) override {
    entries.push_back({std::string(role), std::string(content), in, out});
  }
  void OnEnd(std::string_view status) override {
    ends.push_back(std::string(status));
  }
  std::vector<Entry> entries;
  std::vector<std::string> ends;
};

// Forwards to a sink the test owns (LlmBrain destroys the sinks it makes
// at the end of each Run).
class ForwardingSink : public TranscriptSink {
 public:
  explicit ForwardingSink(TranscriptSink* to) : to_(to) {}
  void OnMessage(std::string_view role, std::string_view content, int64_t in,
                 int64_t out) override {
    to_->OnMessage(role, content, in, out);
  }
  void OnEnd(std::string_view status) override { to_->OnEnd(status); }
  void OnTokensEstimated() override { to_->OnTokensEstimated(); }

 private:
  TranscriptSink* to_;
};

}  // namespace trench::agents::runtime_testing
