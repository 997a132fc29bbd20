#include "agents/sandbox_toolbox.h"

#include <chrono>
#include <fstream>
#include <sstream>

#include "agents/claims.h"
#include "agents/json_schema.h"
#include "agents/sandbox_toolbox_internal.h"
#include "agents/tool_registry.h"
#include "git/git_repo.h"
#include "git/patch_apply.h"
#include "git/unified_diff.h"

namespace trench::agents {
namespace {

constexpr size_t kMaxHloChars = 200000;
constexpr size_t kMaxDiffChars = 100000;
constexpr int64_t kMaxSourceLines = 400;
// A source file larger than this is refused unread (a hostile commit's
// multi-gigabyte blob must not be loaded into the daemon).
constexpr uint64_t kMaxSourceBytes = 16 << 20;

using Handler = StatusOr<ToolResult> (SandboxToolBox::*)(const Json&);

// Registry name -> handler. Every tools.def entry must have one (checked in
// Create, so that a new registry entry cannot be offered unimplemented).
const std::vector<std::pair<std::string_view, Handler>>& Handlers() {
  static const std::vector<std::pair<std::string_view, Handler>> handlers = {
      {"write_case", &SandboxToolBox::WriteCase},
      {"read_case", &SandboxToolBox::ReadCaseTool},
      {"run_case", &SandboxToolBox::RunCase},
      {"reduce_case", &SandboxToolBox::ReduceCase},
      {"localize_case", &SandboxToolBox::LocalizeCase},
      {"fuzz", &SandboxToolBox::Fuzz},
      {"culprit_diff", &SandboxToolBox::CulpritDiff},
      {"read_source", &SandboxToolBox::ReadSource},
      {"try_patch", &SandboxToolBox::TryPatch},
      {"submit_patch", &SandboxToolBox::SubmitPatch},
      {"finish", &SandboxToolBox::Finish},
  };
  return handlers;
}

Handler HandlerOf(std::string_view name) {
  for (const auto& [n, h] : Handlers()) {
    if (n == name) return h;
  }
  return nullptr;
}

StatusOr<std::string> ReadFileText(const std::string& path, size_t max) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("cannot read " + path);
  std::string text(max + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

// The commit argument, with "head" meaning the head under test.
std::string CommitArg(const ToolContext& ctx, const Json& args) {
  const std::string& c = args.Find("commit")->string_value();
  return c == "head" && !ctx.head.empty() ? ctx.head : c;
}

StatusOr<ToolResult> FromCallback(
    const std::function<StatusOr<Json>(const Json&)>& callback,
    std::string_view name, const Json& args) {
  if (!callback) {
    return ToolFailure(std::string(name) + " is not available in this session");
  }
  StatusOr<Json> out = callback(args);
  if (!out.ok()) return ToolFailure(out.status().message());
  return ToolSuccess(*std::move(out));
}

}  // namespace

ToolResult ToolFailure(std::string error) {
  ToolResult r;
  r.ok = false;
  r.error = std::move(error);
  return r;
}

ToolResult ToolSuccess(Json output) {
  ToolResult r;
  r.ok = true;
  r.output = std::move(output);
  return r;
}

SandboxToolBox::SandboxToolBox(std::string role, ToolContext context,
                               std::vector<ToolSpec> specs)
    : role_(std::move(role)),
      ctx_(std::move(context)),
      specs_(std::move(specs)) {}

StatusOr<std::unique_ptr<SandboxToolBox>> SandboxToolBox::Create(
    const std::string& role, ToolContext context) {
  RETURN_IF_ERROR(RegistryStatus());
  for (const ToolDef& t : AllTools()) {
    if (HandlerOf(t.name) == nullptr) {
      return Internal("tools.def: no handler for tool " + std::string(t.name));
    }
  }
  ASSIGN_OR_RETURN(std::vector<ToolSpec> specs, SpecsForRole(role));
  if (context.tools_dir.empty() || context.cases_dir.empty() ||
      context.scratch_dir.empty()) {
    return InvalidArgument(
        "tool context: tools_dir, cases_dir and scratch_dir are required");
  }
  return std::unique_ptr<SandboxToolBox>(
      new SandboxToolBox(role, std::move(context), std::move(specs)));
}

StatusOr<ToolResult> SandboxToolBox::Call(const std::string& name,
                                          const Json& args) {
  if (!RoleMayUse(role_, name)) {
    std::string names;
    for (const ToolSpec& s : specs_)
      names += (names.empty() ? "" : ", ") + s.name;
    return InvalidArgument("unknown tool '" + name + "' (tools of the " +
                           role_ + ": " + names + ")");
  }
  const ToolDef* def = FindTool(name);
  Status valid = ValidateJson(def->schema, args);
  if (!valid.ok()) return InvalidArgument(name + ": " + valid.message());
  const auto start = std::chrono::steady_clock::now();
  StatusOr<ToolResult> r = (this->*HandlerOf(name))(args);
  if (r.ok()) {
    r->seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
  }
  return r;
}

StatusOr<ToolResult> SandboxToolBox::ReadCaseTool(const Json& args) {
  StatusOr<std::string> dir =
      internal::CaseDir(ctx_, args.Find("case")->string_value());
  if (!dir.ok()) return ToolFailure(dir.status().message());
  ASSIGN_OR_RETURN(std::string hlo,
                   ReadFileText(*dir + "/module.hlo", kMaxHloChars));
  ToolResult result = ToolSuccess(Json::MakeObject());
  if (hlo.size() > kMaxHloChars) {
    hlo.resize(kMaxHloChars);
    result.output["truncated"] = true;
  }
  result.output["hlo"] = std::move(hlo);
  result.output["case_json"] = Json();
  StatusOr<std::string> text = ReadFileText(*dir + "/case.json", 1 << 20);
  if (text.ok()) {
    StatusOr<Json> j = ParseJson(*text);
    if (!j.ok()) return ToolFailure("case.json: " + j.status().message());
    // A finding's case.json carries its verdict: without the maps.
    if (j->is_object() && j->Find("verdict") != nullptr) {
      (*j)["verdict"] = internal::VerdictForModel(*j->Find("verdict"));
    }
    result.output["case_json"] = *std::move(j);
  }
  return result;
}

StatusOr<ToolResult> SandboxToolBox::CulpritDiff(const Json& args) {
  if (ctx_.repo.empty()) return ToolFailure("no repository in this session");
  StatusOr<std::unique_ptr<hlo_bisect::GitRepo>> repo =
      hlo_bisect::GitRepo::Open(ctx_.repo);
  if (!repo.ok()) return Internal(repo.status().message());
  const std::string commit = CommitArg(ctx_, args);
  const Json* path = args.Find("path");
  StatusOr<std::string> diff =
      DiffOfCommit(**repo, commit, path ? path->string_value() : "");
  if (!diff.ok()) return ToolFailure(diff.status().message());
  std::vector<std::string> files;
  if (StatusOr<UnifiedDiff> parsed = ParseUnifiedDiff(*diff); parsed.ok()) {
    for (const FileDiff& f : parsed->files) files.push_back(f.path());
  }
  StatusOr<std::string> sha = (*repo)->Resolve(commit);
  ToolResult result = ToolSuccess(Json::MakeObject());
  result.output["commit"] = sha.ok() ? *sha : commit;
  if (diff->size() > kMaxDiffChars) {
    diff->resize(kMaxDiffChars);
    result.output["truncated"] = true;
  }
  result.output["diff"] = *std::move(diff);
  Json list = Json::MakeArray();
  for (std::string& f : files) list.push_back(std::move(f));
  result.output["files"] = std::move(list);
  return result;
}

StatusOr<ToolResult> SandboxToolBox::ReadSource(const Json& args) {
  if (ctx_.repo.empty()) return ToolFailure("no repository in this session");
  StatusOr<std::unique_ptr<hlo_bisect::GitRepo>> repo =
      hlo_bisect::GitRepo::Open(ctx_.repo);
  if (!repo.ok()) return Internal(repo.status().message());
  StatusOr<std::string> text =
      ReadFileAt(**repo, CommitArg(ctx_, args),
                 args.Find("path")->string_value(), kMaxSourceBytes);
  if (!text.ok()) return ToolFailure(text.status().message());
  std::vector<std::string> lines;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const int64_t total = static_cast<int64_t>(lines.size());
  const Json* s = args.Find("start");
  const Json* e = args.Find("end");
  const int64_t start = s ? s->int64_value() : 1;
  int64_t end = e ? e->int64_value() : start + kMaxSourceLines - 1;
  end = std::min({end, total, start + kMaxSourceLines - 1});
  if (start > total && total > 0) {
    return ToolFailure("start " + std::to_string(start) + " is past the end (" +
                       std::to_string(total) + " lines)");
  }
  std::string out;
  for (int64_t i = start; i <= end; ++i) out += lines[i - 1] + "\n";
  ToolResult result = ToolSuccess(Json::MakeObject());
  result.output["text"] = std::move(out);
  result.output["lines"] = total;
  result.output["start"] = start;
  result.output["end"] = std::max(end, start - 1);
  return result;
}

StatusOr<ToolResult> SandboxToolBox::TryPatch(const Json& args) {
  return FromCallback(ctx_.try_patch, "try_patch", args);
}

StatusOr<ToolResult> SandboxToolBox::SubmitPatch(const Json& args) {
  return FromCallback(ctx_.submit_patch, "submit_patch", args);
}

StatusOr<ToolResult> SandboxToolBox::Finish(const Json& args) {
  // The claim's ids are checked here too, so that the model hears why a
  // claim is refused and can correct it; the steps check them again.
  const JsonDoc claim = ToJsonDoc(args);
  Status parsed = Status::Ok();
  if (role_ == "reproducer") {
    parsed = ParseReproducerClaim(claim).status();
  } else if (role_ == "minimizer") {
    parsed = ParseMinimizerClaim(claim).status();
  } else if (role_ == "stress_test_author") {
    StatusOr<StressAuthorClaim> c = ParseStressAuthorClaim(claim);
    const JsonDoc* given =
        claim.contains("findings") ? &claim["findings"] : nullptr;
    if (!c.ok()) {
      parsed = c.status();
    } else if (given != nullptr && given->is_array() &&
               c->findings.size() < given->size()) {
      parsed = InvalidArgument(c->refused.back());
    }
  }
  if (!parsed.ok()) {
    return ToolFailure("finish refused: " + parsed.message() +
                       " (name a case only by the id a tool returned, "
                       "or finish without one)");
  }
  return ToolSuccess(Json::MakeObject());
}

}  // namespace trench::agents
