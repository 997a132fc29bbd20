#include "agents/llm_brain.h"

#include "agents/prompts.h"

namespace trench::agents {
namespace {

constexpr std::string_view kSplit = "<!-- user message -->";

// Task fields that come from outside (bug submitters): quoted data only.
struct UntrustedField {
  std::string_view key;
  std::string_view label;
};
constexpr UntrustedField kUntrustedFields[] = {
    {"report_text", "The bug report's text, as its submitter wrote it"},
};

// Replaces the {{name}} placeholders of `text` from `vars`.
StatusOr<std::string> Substitute(
    const std::string& text,
    const std::vector<std::pair<std::string, std::string>>& vars,
    const std::string& where) {
  std::string out;
  size_t pos = 0;
  while (true) {
    const size_t open = text.find("{{", pos);
    if (open == std::string::npos) break;
    const size_t close = text.find("}}", open + 2);
    if (close == std::string::npos) {
      return InvalidArgument(where + ": unclosed {{");
    }
    const std::string name = text.substr(open + 2, close - open - 2);
    const std::string* value = nullptr;
    for (const auto& [k, v] : vars) {
      if (k == name) value = &v;
    }
    if (value == nullptr) {
      return InvalidArgument(where + ": unknown placeholder {{" + name + "}}");
    }
    out += text.substr(pos, open - pos) + *value;
    pos = close + 2;
  }
  return out + text.substr(pos);
}

std::string ToolList(const std::vector<ToolSpec>& tools) {
  std::string list;
  for (const ToolSpec& t : tools) {
    list += "- " + t.name + ": " + t.description + "\n";
  }
  return list;
}

// A ToolBox that remembers the successful calls of the session, so that
// the claim can name what the tools really returned (submitted patches,
// findings) instead of the model's retelling.
class RecordingToolBox : public ToolBox {
 public:
  struct Call {
    std::string name;
    Json args, output;
  };
  explicit RecordingToolBox(ToolBox& inner) : inner_(inner) {}
  const std::vector<ToolSpec>& Specs() const override { return inner_.Specs(); }
  StatusOr<ToolResult> Call(const std::string& name,
                            const Json& args) override {
    StatusOr<ToolResult> r = inner_.Call(name, args);
    if (r.ok() && r->ok) calls_.push_back({name, args, r->output});
    return r;
  }
  const std::vector<struct Call>& calls() const { return calls_; }

 private:
  ToolBox& inner_;
  std::vector<struct Call> calls_;
};

// Findings of the author's session: fuzz findings and failing cases.
Json RecordedFindings(const RecordingToolBox& box) {
  Json findings = Json::MakeArray();
  for (const auto& c : box.calls()) {
    if (c.name == "fuzz") {
      if (const Json* f = c.output.Find("findings"); f && f->is_array()) {
        for (const Json& e : f->array()) findings.push_back(e);
      }
    } else if (c.name == "write_case" || c.name == "run_case") {
      const Json* status = c.output.Find("status");
      if (status == nullptr || !status->is_string() ||
          status->string_value() == "pass") {
        continue;
      }
      Json e = Json::MakeObject();
      const Json* id =
          c.name == "write_case" ? c.output.Find("case") : c.args.Find("case");
      e["case"] = id ? *id : Json();
      e["status"] = *status;
      const Json* sig = c.output.Find("signature");
      e["signature"] = sig ? *sig : Json();
      findings.push_back(std::move(e));
    }
  }
  return findings;
}

// The drafter's candidates: what submit_patch accepted.
Json RecordedCandidates(const RecordingToolBox& box) {
  Json candidates = Json::MakeArray();
  for (const auto& c : box.calls()) {
    if (c.name != "submit_patch") continue;
    Json e = Json::MakeObject();
    const Json* id = c.output.Find("candidate");
    e["candidate"] = id ? *id : Json();
    const Json* strategy = c.args.Find("strategy");
    e["strategy"] = strategy ? *strategy : Json("llm");
    e["diff"] = *c.args.Find("diff");
    candidates.push_back(std::move(e));
  }
  return candidates;
}

// The role's claim from finish's arguments (brain.h lists the shapes).
Json ClaimOf(const std::string& role, const Json& finish,
             const RecordingToolBox& box, std::string_view backend) {
  Json claim = Json::MakeObject();
  for (const auto& [k, v] : finish.object()) {
    if (k != "outcome") claim[k] = v;
  }
  const Json* outcome = finish.Find("outcome");
  const bool gave_up = outcome && *outcome == Json("gave_up");
  if (gave_up) {
    const Json* summary = finish.Find("summary");
    claim["reason"] = summary ? *summary : Json("gave up");
  }
  if ((role == "reproducer" || role == "minimizer") &&
      (gave_up || claim.Find("case") == nullptr)) {
    claim["case"] = Json();  // brain.h: {case: null, reason}.
  }
  if (role == "stress_test_author") {
    const Json* f = claim.Find("findings");
    if (f == nullptr || !f->is_array())
      claim["findings"] = RecordedFindings(box);
  }
  if (role == "patch_drafter") {
    // Only what submit_patch accepted counts; the model's list is replaced.
    claim["candidates"] = RecordedCandidates(box);
  }
  claim["brain"] = std::string(backend);
  return claim;
}

}  // namespace

StatusOr<RenderedPrompt> RenderPrompt(const std::string& prompts_dir,
                                      const std::string& role, const Json& task,
                                      const std::vector<ToolSpec>& tools,
                                      const Budgets& budgets) {
  if (!task.is_object()) return InvalidArgument("task: expected an object");
  std::string path;
  ASSIGN_OR_RETURN(std::string text, LoadPrompt(prompts_dir, role, &path));
  const size_t split = text.find(kSplit);
  if (split == std::string::npos) {
    return InvalidArgument(path + ": no line \"" + std::string(kSplit) +
                           "\" splitting system prompt and user message");
  }
  RenderedPrompt p;
  Json visible = Json::MakeObject();
  for (const auto& [k, v] : task.object()) {
    bool untrusted = false;
    for (const UntrustedField& f : kUntrustedFields) {
      if (k != f.key) continue;
      untrusted = true;
      if (!v.is_string()) {
        return InvalidArgument("task: " + k + ": expected a string");
      }
      visible[k] = "(quoted below as data)";
      p.data.push_back({std::string(f.label), v.string_value()});
    }
    if (!untrusted) visible[k] = v;
  }
  std::vector<std::pair<std::string, std::string>> vars = {
      {"role", role},
      {"tools", ToolList(tools)},
      {"max_turns", std::to_string(budgets.max_turns)}};
  ASSIGN_OR_RETURN(p.system,
                   Substitute(text.substr(0, split), vars, path + " (system)"));
  vars.emplace_back("task", visible.DumpPretty());
  ASSIGN_OR_RETURN(p.user, Substitute(text.substr(split + kSplit.size()), vars,
                                      path + " (user message)"));
  return p;
}

LlmBrain::LlmBrain(LlmBrainOptions options, std::shared_ptr<LlmClient> client,
                   std::unique_ptr<Brain> fallback)
    : options_(std::move(options)),
      client_(std::move(client)),
      fallback_(std::move(fallback)) {}

StatusOr<Json> LlmBrain::Run(const Json& task, ToolBox& tools) {
  last_ = LastRun();
  ASSIGN_OR_RETURN(RenderedPrompt prompt,
                   RenderPrompt(options_.prompts_dir, options_.role, task,
                                tools.Specs(), options_.budgets));
  SessionSetup setup;
  setup.system_prompt = std::move(prompt.system);
  setup.user_message = std::move(prompt.user);
  setup.data = std::move(prompt.data);
  if (options_.bug_tokens_spent) {
    setup.bug_tokens_spent = options_.bug_tokens_spent(task);
  }
  if (options_.bug_cost_spent_usd) {
    setup.bug_cost_spent_usd = options_.bug_cost_spent_usd(task);
  }
  setup.cancel = options_.cancel;
  std::unique_ptr<TranscriptSink> sink;
  if (options_.transcripts) sink = options_.transcripts(task);
  RecordingToolBox box(tools);
  ASSIGN_OR_RETURN(last_.outcome,
                   RunSession(*client_, box, setup, options_.budgets,
                              sink.get(), options_.clock));
  const SessionOutcome& o = last_.outcome;
  if (o.stop == StopReason::kFinished && o.claim.is_object()) {
    return ClaimOf(options_.role, o.claim, box, client_->backend());
  }
  if (o.stop == StopReason::kInterrupted) {
    return Cancelled("interrupted: " + o.detail);
  }
  last_.fell_back = true;
  last_.reason = std::string(StopReasonName(o.stop)) + ": " + o.detail;
  ASSIGN_OR_RETURN(Json claim, fallback_->Run(task, tools));
  if (!claim.is_object()) return claim;
  Json fallback = Json::MakeObject();
  fallback["from"] = std::string(client_->backend());
  fallback["reason"] = last_.reason;
  claim["fallback"] = std::move(fallback);
  return claim;
}

StatusOr<std::unique_ptr<LlmBrain>> MakeLlmBrain(
    LlmBrainOptions options, std::shared_ptr<LlmClient> client) {
  if (client == nullptr) return InvalidArgument("LLM brain: no client");
  ASSIGN_OR_RETURN(std::unique_ptr<Brain> fallback,
                   MakeBuiltinBrain(options.role));
  return std::make_unique<LlmBrain>(std::move(options), std::move(client),
                                    std::move(fallback));
}

}  // namespace trench::agents
