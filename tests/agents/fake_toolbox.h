// A scripted ToolBox for the built-in brains' tests: each tool answers
// from a handler the test installs. Arguments are validated against the
// real registry's schemas (agents/tools.def) and the role's permissions,
// like the sandboxed ToolBox does, so a brain that sends what a tool does
// not accept fails its test.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "agents/json_schema.h"
#include "agents/tool_registry.h"
#include "agents/toolbox.h"

namespace trench::agents::testing {

inline ToolResult OkResult(Json output, double seconds = 1) {
  ToolResult r;
  r.ok = true;
  r.output = std::move(output);
  r.seconds = seconds;
  return r;
}

inline ToolResult FailResult(std::string error, double seconds = 1) {
  ToolResult r;
  r.error = std::move(error);
  r.seconds = seconds;
  return r;
}

inline Json Obj(std::initializer_list<std::pair<const char*, Json>> kv) {
  Json o = Json::MakeObject();
  for (const auto& [k, v] : kv) o[k] = v;
  return o;
}

// A 64-hex case id made from a short name.
inline std::string CaseId(const std::string& name) {
  std::string id = name;
  id.resize(64, '0');
  return id;
}

// read_source's answer for a file of `lines`: lines start..end (1-based,
// at most 400), joined with '\n' (or each ended by one, as
// agents/sandbox_toolbox.cc does), and the file's line count.
inline ToolResult SourcePage(const std::vector<std::string>& lines,
                             const Json& args, bool newline_each = false) {
  const Json* s = args.Find("start");
  const int64_t start = s ? *s->GetInt64() : 1;
  const Json* e = args.Find("end");
  const int64_t end =
      std::min<int64_t>({e ? *e->GetInt64() : start + 399, start + 399,
                         static_cast<int64_t>(lines.size())});
  std::string text;
  for (int64_t i = start; i <= end; ++i) {
    text += lines[i - 1] + (i < end || newline_each ? "\n" : "");
  }
  Json out = Json::MakeObject();
  out["text"] = text;
  out["lines"] = static_cast<int64_t>(lines.size());
  return OkResult(std::move(out));
}

// try_patch's answer for a candidate committed onto the head (`applied`:
// its commit, or why it does not apply), the repro passing when
// `passes(commit)` says so.
inline Json TryPatchAnswer(
    const StatusOr<std::string>& applied,
    const std::function<bool(const std::string&)>& passes) {
  if (!applied.ok()) {
    return Obj({{"applies", false},
                {"built", false},
                {"repro_status", ""},
                {"message", applied.status().message()}});
  }
  return Obj({{"applies", true},
              {"built", true},
              {"repro_status", passes(*applied) ? "pass" : "mismatch"},
              {"message", ""}});
}

class FakeToolBox : public ToolBox {
 public:
  using Handler = std::function<ToolResult(const Json& args)>;

  explicit FakeToolBox(std::string role) : role_(std::move(role)) {}

  void On(const std::string& tool, Handler handler) {
    handlers_[tool] = std::move(handler);
  }
  // Answers `tool` with `results` in order (the last one repeats).
  void Script(const std::string& tool, std::vector<ToolResult> results) {
    auto queue = std::make_shared<std::vector<ToolResult>>(std::move(results));
    auto next = std::make_shared<size_t>(0);
    On(tool, [queue, next](const Json&) {
      const size_t i = std::min(*next, queue->size() - 1);
      ++*next;
      return (*queue)[i];
    });
  }

  const std::vector<ToolSpec>& Specs() const override { return specs_; }

  StatusOr<ToolResult> Call(const std::string& name,
                            const Json& args) override {
    calls_.emplace_back(name, args);
    const ToolDef* def = FindTool(name);
    if (def == nullptr || !RoleMayUse(role_, name)) {
      return InvalidArgument("unknown tool for " + role_ + ": " + name);
    }
    Status valid = ValidateJson(def->schema, args);
    if (!valid.ok()) return valid.WithContext(name);
    auto it = handlers_.find(name);
    if (it == handlers_.end()) return FailResult("no script for " + name);
    return it->second(args);
  }

  const std::vector<std::pair<std::string, Json>>& calls() const {
    return calls_;
  }
  int Count(const std::string& name) const {
    int n = 0;
    for (const auto& c : calls_) n += c.first == name;
    return n;
  }
  // The arguments of the i-th call of `name`.
  Json Args(const std::string& name, int i = 0) const {
    for (const auto& c : calls_) {
      if (c.first == name && i-- == 0) return c.second;
    }
    return Json();
  }

 private:
  std::string role_;
  std::vector<ToolSpec> specs_;
  std::map<std::string, Handler> handlers_;
  std::vector<std::pair<std::string, Json>> calls_;
};

}  // namespace trench::agents::testing
