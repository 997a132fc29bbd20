// The SandboxToolBox's case tools, each running a tool binary in the
// sandbox: write_case and run_case (hlo-diff), reduce_case (hlo-reduce),
// localize_case (hlo-bisect) and fuzz (hlo-fuzz).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "agents/sandbox_toolbox.h"
#include "agents/sandbox_toolbox_internal.h"
#include "base/json.h"
#include "git/git_repo.h"
#include "git/patch_apply.h"
#include "triage/case/target_description.h"

namespace trench::agents {
namespace {

namespace fs = std::filesystem;
using internal::CaseDir;
using internal::FailureText;
using internal::MakeScratchDir;
using internal::ParseToolOutput;
using internal::RunToolBinary;
using internal::StoreCaseDir;
using internal::VerdictForModel;

const ToolDef& Def(std::string_view name) { return *FindTool(name); }

// The share of large programs in a campaign aimed at large-array code:
// half, so that the other half still covers the small-array paths.
constexpr char kLargeShare[] = "0.5";

int64_t IntArg(const Json& args, std::string_view key, int64_t fallback) {
  const Json* v = args.Find(key);
  return v && v->is_integer() ? static_cast<int64_t>(v->number_value())
                              : fallback;
}

// Writes the head commit's diff to <work>/commit.diff for hlo-fuzz
// --changed-lines; "" when the session has no repository or head.
StatusOr<std::string> HeadDiffFile(const ToolContext& ctx,
                                   const std::string& work) {
  if (ctx.repo.empty() || ctx.head.empty()) return std::string();
  StatusOr<std::unique_ptr<hlo_bisect::GitRepo>> repo =
      hlo_bisect::GitRepo::Open(ctx.repo);
  if (!repo.ok()) return repo.status();
  ASSIGN_OR_RETURN(std::string diff, DiffOfCommit(**repo, ctx.head));
  if (diff.empty()) return std::string();
  const std::string path = work + "/commit.diff";
  std::ofstream out(path, std::ios::binary);
  out << diff;
  if (!out.flush()) return IoError("cannot write " + path);
  return path;
}

std::string JoinStrings(const Json* list) {
  std::string out;
  if (list == nullptr || !list->is_array()) return out;
  for (const Json& s : list->array()) {
    if (s.is_string()) out += (out.empty() ? "" : ",") + s.string_value();
  }
  return out;
}

bool Exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

// The directory of stored case `id`, which must have inputs (case.json):
// reduce_case and localize_case need them. The error names the problem.
StatusOr<std::string> CaseDirWithInputs(const ToolContext& ctx,
                                        const std::string& id) {
  ASSIGN_OR_RETURN(std::string dir, CaseDir(ctx, id));
  if (!Exists(dir + "/case.json")) {
    return InvalidArgument("case " + id +
                           " is a bare module without inputs; store it with "
                           "write_case first");
  }
  return dir;
}

// The failure of a tool binary run `r` in `work_dir`; when it exited with
// `uninteresting_exit` (the tool's "nothing to do with this case" code),
// `uninteresting_why` comes first.
ToolResult BinaryFailure(const ToolDef& def, const sandbox::Result& r,
                         const std::string& work_dir, int uninteresting_exit,
                         std::string_view uninteresting_why) {
  if (r.exited && r.exit_code == uninteresting_exit) {
    return ToolFailure(std::string(uninteresting_why) + ": " +
                       FailureText(def, r, work_dir));
  }
  return ToolFailure(FailureText(def, r, work_dir));
}

// hlo-diff exit codes that carry a verdict on stdout (hlo_diff.h).
bool IsVerdictExit(const sandbox::Result& r) {
  return r.exited && !r.timed_out &&
         (r.exit_code == 0 || r.exit_code == 1 || r.exit_code == 10 ||
          r.exit_code == 11 || r.exit_code == 12);
}

// Module size for reduce_case's before/after when hlo-reduce gave none.
Json SizeOf(const std::string& case_dir, int64_t instructions) {
  Json size = Json::MakeObject();
  size["instructions"] = instructions;
  std::error_code ec;
  size["text_bytes"] =
      static_cast<int64_t>(fs::file_size(case_dir + "/module.hlo", ec));
  return size;
}

}  // namespace

StatusOr<ToolResult> SandboxToolBox::WriteCase(const Json& args) {
  const ToolDef& def = Def("write_case");
  ASSIGN_OR_RETURN(ScopedTempDir work,
                   MakeScratchDir(ctx_, "write_case", ++calls_));
  const std::string module = work.path() + "/module.hlo";
  {
    std::ofstream out(module, std::ios::binary);
    out << args.Find("hlo")->string_value();
    if (!out.flush()) return Internal("cannot write " + module);
  }
  const int64_t seed = IntArg(args, "seed", 0);
  ASSIGN_OR_RETURN(
      sandbox::Result r,
      RunToolBinary(
          ctx_, def,
          {module, "--random-inputs", "--seed", std::to_string(seed),
           "--write-case", work.path() + "/case", "--bin-dir", ctx_.bin_dir},
          work.path(), def.wall_seconds));
  if (r.exited && r.exit_code == 1) {
    return ToolFailure("the module is not valid HLO: " +
                       FailureText(def, r, work.path()));
  }
  if (!IsVerdictExit(r)) return ToolFailure(FailureText(def, r, work.path()));
  StatusOr<Json> verdict = ParseToolOutput(def, r);
  if (!verdict.ok()) return ToolFailure(verdict.status().message());
  Json origin = Json::MakeObject();
  origin["kind"] = "agent";
  origin["role"] = role_;
  origin["seed"] = seed;
  if (const Json* o = args.Find("origin")) origin["note"] = *o;
  int64_t instructions = 0;
  StatusOr<std::string> sha =
      StoreCaseDir(ctx_, work.path() + "/case", origin, &instructions);
  if (!sha.ok()) return ToolFailure(sha.status().message());
  ToolResult result = ToolSuccess(Json::MakeObject());
  result.output["case"] = *sha;
  result.output["instructions"] = instructions;
  const Json* status = verdict->Find("status");
  result.output["status"] = status ? *status : Json();
  const Json* sig = verdict->Find("signature");
  result.output["signature"] = sig ? *sig : Json();
  return result;
}

StatusOr<ToolResult> SandboxToolBox::RunCase(const Json& args) {
  const ToolDef& def = Def("run_case");
  StatusOr<std::string> dir = CaseDir(ctx_, args.Find("case")->string_value());
  if (!dir.ok()) return ToolFailure(dir.status().message());
  std::vector<std::string> argv;
  if (Exists(*dir + "/case.json")) {
    argv = {*dir};
  } else {  // A bare module (e.g. from a report): seed-0 random inputs.
    argv = {*dir + "/module.hlo", "--random-inputs", "--seed", "0"};
  }
  argv.insert(argv.end(), {"--bin-dir", ctx_.bin_dir});
  const int64_t runs = IntArg(args, "runs", 1);
  std::map<std::string, int> counts;
  std::map<std::string, Json> verdicts;  // The first of each status.
  Json statuses = Json::MakeArray();
  int failures = 0;
  for (int64_t i = 0; i < runs; ++i) {
    ASSIGN_OR_RETURN(ScopedTempDir work,
                     MakeScratchDir(ctx_, "run_case", ++calls_));
    ASSIGN_OR_RETURN(
        sandbox::Result r,
        RunToolBinary(ctx_, def, argv, work.path(), def.wall_seconds));
    if (!IsVerdictExit(r)) return ToolFailure(FailureText(def, r, work.path()));
    StatusOr<Json> verdict = ParseToolOutput(def, r);
    if (!verdict.ok()) return ToolFailure(verdict.status().message());
    const Json* st = verdict->Find("status");
    if (st == nullptr || !st->is_string()) {
      return ToolFailure("hlo-diff's verdict has no status");
    }
    const std::string status = st->string_value();
    failures += status != "pass";
    statuses.push_back(status);
    if (counts[status]++ == 0) verdicts[status] = *std::move(verdict);
  }
  std::string top;
  for (const auto& [status, n] : counts) {
    // Ties go to a failing status.
    if (top.empty() || n > counts[top] || (n == counts[top] && top == "pass")) {
      top = status;
    }
  }
  ToolResult result = ToolSuccess(Json::MakeObject());
  result.output["runs"] = runs;
  result.output["failures"] = failures;
  result.output["status"] = top;
  result.output["statuses"] = std::move(statuses);
  const Json* sig = verdicts[top].Find("signature");
  result.output["signature"] = sig ? *sig : Json();
  result.output["verdict"] = VerdictForModel(verdicts[top]);
  return result;
}

StatusOr<ToolResult> SandboxToolBox::ReduceCase(const Json& args) {
  const ToolDef& def = Def("reduce_case");
  const std::string id = args.Find("case")->string_value();
  StatusOr<std::string> dir = CaseDirWithInputs(ctx_, id);
  if (!dir.ok()) return ToolFailure(dir.status().message());
  ASSIGN_OR_RETURN(ScopedTempDir work,
                   MakeScratchDir(ctx_, "reduce_case", ++calls_));
  const std::string out = work.path() + "/out";
  std::vector<std::string> argv = {*dir, "--out", out, "--bin-dir",
                                   ctx_.bin_dir};
  if (std::string passes = JoinStrings(args.Find("passes")); !passes.empty()) {
    argv.push_back("--passes=" + passes);
  }
  const double seconds = static_cast<double>(IntArg(args, "seconds", 120));
  ASSIGN_OR_RETURN(sandbox::Result r,
                   RunToolBinary(ctx_, def, argv, work.path(), seconds));
  // Stopped at the time limit: OUT/best still holds the best case so far.
  const bool stopped = r.timed_out && Exists(out + "/best/module.hlo");
  if (!r.ok() && !stopped) {
    return BinaryFailure(def, r, work.path(), 3,
                         "the case is not interesting to hlo-reduce (it "
                         "passes, or fails differently)");
  }
  Json summary = Json::MakeObject();
  if (!stopped) {
    StatusOr<Json> parsed = ParseToolOutput(def, r);
    if (!parsed.ok()) return ToolFailure(parsed.status().message());
    summary = *std::move(parsed);
  }
  Json origin = Json::MakeObject();
  origin["kind"] = "reduced";
  origin["from"] = id;
  int64_t after = 0;
  StatusOr<std::string> sha = StoreCaseDir(ctx_, out + "/best", origin, &after);
  if (!sha.ok()) return ToolFailure(sha.status().message());
  ToolResult result = ToolSuccess(Json::MakeObject());
  result.output["case"] = *sha;
  const Json* before = summary.Find("before");
  const Json* after_size = summary.Find("after");
  result.output["before"] = before ? *before : SizeOf(*dir, -1);
  result.output["after"] =
      after_size ? *after_size : SizeOf(ctx_.cases_dir + "/" + *sha, after);
  result.output["complete"] = !stopped;
  if (const Json* stats = summary.Find("stats")) {
    result.output["stats"] = *stats;
  }
  return result;
}

StatusOr<ToolResult> SandboxToolBox::LocalizeCase(const Json& args) {
  const ToolDef& def = Def("localize_case");
  const std::string id = args.Find("case")->string_value();
  StatusOr<std::string> dir = CaseDirWithInputs(ctx_, id);
  if (!dir.ok()) return ToolFailure(dir.status().message());
  ASSIGN_OR_RETURN(ScopedTempDir work,
                   MakeScratchDir(ctx_, "localize_case", ++calls_));
  std::vector<std::string> argv = {*dir, "--json", "--bin-dir", ctx_.bin_dir};
  if (std::string levels = JoinStrings(args.Find("levels")); !levels.empty()) {
    argv.push_back("--levels=" + levels);
  }
  ASSIGN_OR_RETURN(
      sandbox::Result r,
      RunToolBinary(ctx_, def, argv, work.path(), def.wall_seconds));
  if (!r.ok()) {
    return BinaryFailure(def, r, work.path(), 1,
                         "hlo-bisect cannot localize it (unreadable, or it "
                         "does not fail)");
  }
  StatusOr<Json> report = ParseToolOutput(def, r);
  if (!report.ok()) return ToolFailure(report.status().message());
  return ToolSuccess(*std::move(report));
}

StatusOr<ToolResult> SandboxToolBox::Fuzz(const Json& args) {
  const ToolDef& def = Def("fuzz");
  const std::string ops = JoinStrings(args.Find("ops"));
  const std::string passes = JoinStrings(args.Find("passes"));
  if (!ops.empty() && !passes.empty()) {
    return ToolFailure("give `ops` or `passes`, not both");
  }
  ASSIGN_OR_RETURN(ScopedTempDir work, MakeScratchDir(ctx_, "fuzz", ++calls_));
  const std::string out = work.path() + "/out";
  const int64_t seconds = IntArg(args, "seconds", 60);
  std::vector<std::string> argv = {
      "--budget",     std::to_string(seconds) + "s",
      "--seed",       std::to_string(IntArg(args, "seed", 1)),
      "--out",        out,
      "--hlo-run",    ctx_.bin_dir + "/hlo-run",
      "--hloc",       ctx_.bin_dir + "/hloc",
      "--tpusim",     ctx_.bin_dir + "/tpusim",
      "--jobs",       std::to_string(std::max(ctx_.fuzz_jobs, 1)),
      "--no-progress"};
  if (!ctx_.fuzz_corpus.empty()) {
    argv.insert(argv.end(), {"--corpus", ctx_.fuzz_corpus});
  }
  if (!ops.empty()) argv.insert(argv.end(), {"--focus", "ops:" + ops});
  if (!passes.empty()) argv.insert(argv.end(), {"--focus", "passes:" + passes});
  if (const Json* lines = args.Find("changed_lines");
      lines && lines->is_bool() && lines->bool_value()) {
    StatusOr<std::string> diff = HeadDiffFile(ctx_, work.path());
    if (!diff.ok()) return ToolFailure(diff.status().message());
    if (!diff->empty()) argv.insert(argv.end(), {"--changed-lines", *diff});
  }
  if (const Json* n = args.Find("large_elements"); n && n->is_integer()) {
    argv.insert(argv.end(),
                {"--large-share", kLargeShare, "--large-elements", n->Dump()});
  }
  if (const Json* a = args.Find("large_attributes"); a && a->is_array()) {
    for (const Json& e : a->array()) {
      // NAME=VALUE, each part a plain module attribute token: it goes into
      // generated HLO text.
      const std::string& kv = e.string_value();
      if (auto parsed = hlo_diff::ParseFrontendAttribute(kv); !parsed.ok()) {
        return ToolFailure("large_attributes: " + parsed.status().message());
      }
      argv.insert(argv.end(), {"--large-attribute", kv});
    }
  }
  // Past the budget the campaign still localizes and writes its findings.
  ASSIGN_OR_RETURN(sandbox::Result r,
                   RunToolBinary(ctx_, def, argv, work.path(),
                                 static_cast<double>(seconds) * 2 + 120));
  if (!r.ok()) return ToolFailure(FailureText(def, r, work.path()));
  StatusOr<Json> summary = ParseToolOutput(def, r);
  if (!summary.ok()) return ToolFailure(summary.status().message());
  Json findings = Json::MakeArray();
  const Json* list = summary->Find("findings");
  if (list != nullptr && !list->is_array()) {
    return ToolFailure("hlo-fuzz's summary: findings is not an array");
  }
  for (size_t i = 0; list != nullptr && i < list->size(); ++i) {
    const Json& f = list->array()[i];
    const Json* dir = f.Find("case");
    if (dir == nullptr || !dir->is_string()) continue;  // Not kept.
    std::string path = dir->string_value();
    if (!path.empty() && path[0] != '/') path = work.path() + "/" + path;
    if (!internal::IsInside(path, out)) {
      return ToolFailure("hlo-fuzz named a case outside its output dir: " +
                         dir->string_value());
    }
    Json origin = Json::MakeObject();
    origin["kind"] = "fuzz";
    origin["role"] = role_;
    if (const Json* o = f.Find("origin")) origin["campaign"] = *o;
    StatusOr<std::string> sha = StoreCaseDir(ctx_, path, origin, nullptr);
    if (!sha.ok()) return ToolFailure(sha.status().message());
    Json entry = Json::MakeObject();
    entry["case"] = *sha;
    const Json* status = f.Find("status");
    entry["status"] = status ? *status : Json();
    const Json* sig = f.Find("signature");
    entry["signature"] = sig ? *sig : Json();
    // The coarse (verdict) signatures let the orchestrator match a later
    // report of the same bug.
    if (const Json* c = f.Find("coarse_signatures")) {
      entry["coarse_signatures"] = *c;
    }
    findings.push_back(std::move(entry));
  }
  ToolResult result = ToolSuccess(Json::MakeObject());
  const Json* programs = summary->Find("programs");
  result.output["programs"] = programs ? *programs : Json(0);
  result.output["findings"] = std::move(findings);
  if (const Json* reach = summary->Find("reach"); reach && reach->is_object()) {
    Json brief = Json::MakeObject();
    for (const char* key : {"lines", "reached", "no_code", "unreached"}) {
      if (const Json* v = reach->Find(key)) brief[key] = *v;
    }
    result.output["reach"] = std::move(brief);
  }
  return result;
}

}  // namespace trench::agents
