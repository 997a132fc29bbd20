#include "orchestrator/pipeline/step_util.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "base/json_nlohmann.h"
#include "base/sha256.h"
#include "triage/case/case_bundle.h"
#include "triage/case/verdict_status.h"
#include "triage/localize/localization_report.h"

namespace trench::orchestrator {
namespace fs = std::filesystem;

StatusOr<std::optional<Bug>> BugForStep(
    StepContext& ctx, const Job& job, std::initializer_list<BugState> states) {
  const Json* id = job.payload.Find("bug");
  if (!id || !id->is_integer()) {
    return InvalidArgument("job " + std::to_string(job.id) + " (" + job.kind +
                           "): payload has no bug id");
  }
  ASSIGN_OR_RETURN(Bug bug, ctx.store->GetBug(id->int64_value()));
  for (BugState s : states) {
    if (bug.state == s) return std::optional<Bug>(bug);
  }
  return std::optional<Bug>();
}

StatusOr<std::string> PayloadString(const Job& job, const std::string& key) {
  const Json* v = job.payload.Find(key);
  if (!v || !v->is_string() || v->string_value().empty()) {
    return InvalidArgument("job " + std::to_string(job.id) + " (" + job.kind +
                           "): payload has no '" + key + "'");
  }
  return v->string_value();
}

std::string CaseDir(const StepContext& ctx, const std::string& sha) {
  return ctx.paths->cases + "/" + sha;
}

StatusOr<std::string> ImportCase(StepContext& ctx, const std::string& dir,
                                 const Json& origin) {
  ASSIGN_OR_RETURN(hlo_diff::Case c, hlo_diff::ReadCase(dir));
  if (origin.is_object() && origin.size() > 0) c.origin = origin;
  ASSIGN_OR_RETURN(std::string path, hlo_diff::StoreCase(ctx.paths->root, c));
  // Readable by the sandbox's uid.
  std::error_code ec;
  for (const auto& e : fs::recursive_directory_iterator(path, ec)) {
    ::chmod(e.path().c_str(), e.is_directory() ? 0755 : 0644);
  }
  ::chmod(path.c_str(), 0755);
  const std::string sha = hlo_diff::CaseSha256(c);
  RETURN_IF_ERROR(ctx.store->PutCase(sha, path, c.origin).status());
  return sha;
}

StatusOr<std::string> ReproCaseOf(const Bug& bug, bool prefer_minimized) {
  if (prefer_minimized && bug.minimized_sha256) return *bug.minimized_sha256;
  if (bug.case_sha256) return *bug.case_sha256;
  return FailedPrecondition("bug " + std::to_string(bug.id) +
                            " has no repro case");
}

StatusOr<std::string> FoundCommitOf(StepContext& ctx, const Bug& bug) {
  if (const Json* c = bug.details.Find("commit"); c && c->is_string()) {
    return c->string_value();
  }
  ASSIGN_OR_RETURN(std::optional<std::string> head,
                   ctx.store->GetMeta("head.built"));
  if (!head) {  // Retryable: a build will come.
    return ResourceExhausted("bug " + std::to_string(bug.id) +
                             ": no commit was built yet to run it on");
  }
  return *head;
}

StatusOr<std::string> KnownGoodCommit(StepContext& ctx) {
  if (!ctx.config->good_commit.empty()) return ctx.config->good_commit;
  ASSIGN_OR_RETURN(std::optional<std::string> base,
                   ctx.store->GetMeta("watch.base"));
  return base ? *base : std::string();
}

StatusOr<std::string> BinDirOf(StepContext& ctx, const std::string& sha,
                               const std::string& patch_hash) {
  StatusOr<Build> b = ctx.store->GetBuild(sha, patch_hash);
  if (!b.ok() || b->status != BuildStatus::kOk) {
    return FailedPrecondition("no successful build of " + sha.substr(0, 12) +
                              (patch_hash.empty() ? "" : "+" + patch_hash));
  }
  return b->bin_dir;
}

std::string PatchHash(const std::string& diff) {
  return Sha256Hex(diff).substr(0, 16);
}

std::vector<std::string> TargetFlagsFor(const std::string& bin_dir) {
  return {"--bin-dir", bin_dir, "--hlo-run", bin_dir + "/hlo-run"};
}

StatusOr<Json> ToolJson(const std::string& tool, const sandbox::Result& r) {
  StatusOr<Json> j = ParseJson(r.stdout_data);
  if (j.ok() && j->is_object()) return j;
  std::string err = r.stderr_data;
  if (err.size() > 600) err = "..." + err.substr(err.size() - 600);
  return Internal(tool + " printed no JSON result (" + r.Summary() +
                  "); stderr: " + err);
}

StatusOr<hlo_bisect::LocalizationReport> ToolLocalization(
    const sandbox::Result& r) {
  StatusOr<hlo_bisect::LocalizationReport> l =
      hlo_bisect::ParseLocalizationReport(r.stdout_data);
  if (!l.ok()) return Internal("hlo-bisect's report: " + l.status().message());
  return l;
}

std::optional<hlo_bisect::LocalizationReport> BugLocalization(const Bug& bug) {
  const Json* loc = bug.details.Find("localization");
  if (loc == nullptr) return std::nullopt;
  StatusOr<hlo_bisect::LocalizationReport> l =
      hlo_bisect::LocalizationReportFromJson(ToJsonDoc(*loc));
  if (!l.ok()) {
    spdlog::warn("bug {}: details.localization: {}", bug.id,
                 l.status().message());
    return std::nullopt;
  }
  return std::move(l).value();
}

std::optional<std::string> PipelinePassOf(const Bug& bug) {
  std::optional<hlo_bisect::LocalizationReport> loc = BugLocalization(bug);
  if (!loc || !loc->signature.pass) return std::nullopt;
  const std::string& pass = *loc->signature.pass;
  const bool plain =
      !pass.empty() && pass.size() <= 64 && pass[0] >= 'a' && pass[0] <= 'z' &&
      std::all_of(pass.begin(), pass.end(), [](char ch) {
        return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
               ch == '-' || ch == '_';
      });
  if (!plain || !hlo_bisect::IsPassCulprit(pass)) return std::nullopt;
  return pass;
}

StatusOr<hlo_diff::Verdict> RunVerdict(StepContext& ctx,
                                       const std::string& case_sha,
                                       const std::string& bin_dir,
                                       const std::string& scratch) {
  std::vector<std::string> argv = {"hlo-diff", CaseDir(ctx, case_sha)};
  for (std::string& f : TargetFlagsFor(bin_dir)) argv.push_back(std::move(f));
  ASSIGN_OR_RETURN(
      sandbox::Result r,
      ctx.RunTool(argv, scratch, ctx.config->step_timeout_seconds));
  return ToolVerdict(r);
}

StatusOr<hlo_diff::Verdict> ToolVerdict(const sandbox::Result& r) {
  ASSIGN_OR_RETURN(Json j, ToolJson("hlo-diff", r));
  StatusOr<hlo_diff::Verdict> v = hlo_diff::Verdict::FromJson(j);
  if (!v.ok()) return Internal("hlo-diff's verdict: " + v.status().message());
  return v;
}

agents::ToolContext ToolContextFor(const StepContext& ctx,
                                   const std::string& bin_dir,
                                   const std::string& scratch,
                                   const std::string& head) {
  agents::ToolContext tc;
  tc.tools_dir = ctx.tools_dir;
  tc.bin_dir = bin_dir;
  tc.cases_dir = ctx.paths->cases;
  tc.scratch_dir = scratch;
  tc.repo = ctx.paths->mirror;
  tc.head = head;
  tc.namespaces = ctx.config->sandbox_namespaces;
  tc.uid = ctx.config->sandbox_uid;
  tc.gid = ctx.config->sandbox_gid;
  tc.fuzz_jobs = ctx.config->fuzz_jobs;
  tc.fuzz_corpus = ctx.config->fuzz_corpus;
  // The agents' runs are the job's runs, labelled in turn.
  tc.run = [&ctx](const sandbox::Options& o) { return ctx.Run(o); };
  return tc;
}

Json DetailsWith(const Bug& bug, const std::string& key, Json value) {
  Json d = bug.details.is_object() ? bug.details : Json::MakeObject();
  d[key] = std::move(value);
  return d;
}

StatusOr<Bug> Advance(StepContext& ctx, const Bug& bug, BugState to,
                      const Json& evidence, const TransitionFields& fields) {
  ASSIGN_OR_RETURN(Bug moved, ctx.store->TransitionBug(bug.id, to, ctx.worker,
                                                       evidence, fields));
  RETURN_IF_ERROR(QueueNextStep(ctx, moved).status());
  return moved;
}

}  // namespace trench::orchestrator
