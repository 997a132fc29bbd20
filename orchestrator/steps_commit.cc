// The commit steps: build a landed commit, fuzz it, and check whether it
// fixes open bugs.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "agents/git_patch.h"
#include "orchestrator/repo_mirror.h"
#include "orchestrator/step_util.h"
#include "tools/hlo-bisect/git_repo.h"

namespace trench::orchestrator {
namespace fs = std::filesystem;

namespace {

// Builds `rev` of the mirror in the sandbox (hlo-bisect build), under
// `key` when not empty. Returns the build's JSON (built, reason, ...).
StatusOr<Json> BuildInSandbox(StepContext& ctx, const std::string& rev,
                              const std::string& key) {
  std::vector<std::string> argv = {
      ctx.Tool("hlo-bisect"),
      "build",
      rev,
      "--repo",
      ctx.paths->mirror,
      "--work",
      ctx.paths->worktree,
      "--cache",
      ctx.paths->build_cache,
      "--timeout",
      std::to_string(ctx.config->build_timeout_seconds)};
  if (!key.empty()) argv.insert(argv.end(), {"--key", key});
  if (!ctx.config->build_command.empty()) {
    argv.insert(argv.end(), {"--build-cmd", ctx.config->build_command});
  }
  sandbox::Options o = ctx.Sandboxed(argv, ctx.paths->builder,
                                     ctx.config->build_timeout_seconds + 60);
  o.env.push_back("CCACHE_DIR=" + ctx.paths->builder + "/ccache");
  ASSIGN_OR_RETURN(sandbox::Result r, ctx.runner->Run(o));
  return ToolJson("hlo-bisect build", r);
}

}  // namespace

StatusOr<Json> BuildCommit(StepContext& ctx, const std::string& rev,
                           const std::string& sha,
                           const std::string& patch_hash) {
  const std::string key = patch_hash.empty() ? "" : sha + "-p" + patch_hash;
  ASSIGN_OR_RETURN(Json b, BuildInSandbox(ctx, rev, key));
  const Json* built = b.Find("built");
  const bool ok = built && built->is_bool() && built->bool_value();
  const std::string cache_key = key.empty() ? sha : key;
  const Json* tail = b.Find("log_tail");
  RETURN_IF_ERROR(
      ctx.store
          ->PutBuild(sha, patch_hash,
                     ok ? BuildStatus::kOk : BuildStatus::kFailed,
                     ctx.paths->build_cache + "/" + cache_key + "/bin",
                     tail && tail->is_string() ? tail->string_value() : "")
          .status());
  return b;
}

StatusOr<Json> RunBuildStep(StepContext& ctx, const Job& job) {
  ASSIGN_OR_RETURN(std::string sha, PayloadString(job, "commit"));
  RETURN_IF_ERROR(SyncMirror(ctx.config->repo, ctx.paths->mirror));
  ASSIGN_OR_RETURN(Json b, BuildCommit(ctx, sha, sha, ""));
  const Json* built = b.Find("built");
  if (!built || !built->is_bool() || !built->bool_value()) {
    spdlog::warn("build_ready: {} does not build", sha.substr(0, 12));
    return b;
  }
  spdlog::info("build_ready: {}", sha.substr(0, 12));
  RETURN_IF_ERROR(ctx.store->SetMeta("head.built", sha));
  Json payload = Json::MakeObject();
  payload["commit"] = sha;
  for (const char* kind : {"check_fixes", "fuzz"}) {
    JobOptions o = StepJobOptions();
    o.dedup_key = std::string(kind) + ":" + sha;
    RETURN_IF_ERROR(ctx.queue->Enqueue(kind, payload, o).status());
  }
  return b;
}

namespace {}  // namespace

// Files one fuzz finding: attaches it to the open bug with its signature,
// or opens a new bug (then queues its reproduction).
StatusOr<Json> FileFinding(StepContext& ctx, const std::string& commit,
                           const Json& finding) {
  const Json* dir = finding.Find("case");
  const Json* sig = finding.Find("sig");
  if (!dir || !dir->is_string() || !sig || !sig->is_string()) {
    return Internal("hlo-fuzz finding without a case or sig: " +
                    finding.Dump());
  }
  Json origin = Json::MakeObject();
  origin["source"] = "fuzz";
  origin["commit"] = commit;
  ASSIGN_OR_RETURN(std::string sha,
                   ImportCase(ctx, dir->string_value(), Json::MakeObject()));
  const std::string signature = "sig:" + sig->string_value();
  Json out = Json::MakeObject();
  out["case"] = sha;
  ASSIGN_OR_RETURN(std::optional<Bug> open,
                   ctx.store->FindOpenBugBySignature(signature));
  if (open) {
    ASSIGN_OR_RETURN(int64_t run,
                     ctx.store->AddRun(sha, open->id, commit, finding, 0));
    out["attached_to"] = open->id;
    out["run"] = run;
    return out;
  }
  NewBug nb;
  nb.signature = signature;
  const Json* status = finding.Find("status");
  nb.title = "fuzz finding: " +
             (status && status->is_string() ? status->string_value()
                                            : std::string("failure")) +
             " (" + sig->string_value() + ")";
  nb.case_sha256 = sha;
  nb.details = Json::MakeObject();
  nb.details["source"] = "fuzz";
  nb.details["commit"] = commit;
  nb.details["finding"] = finding;
  Json evidence = Json::MakeObject();
  evidence["event"] = "finding";
  evidence["commit"] = commit;
  ASSIGN_OR_RETURN(int64_t id, ctx.store->CreateBug(nb, ctx.worker, evidence));
  ASSIGN_OR_RETURN(Bug bug, ctx.store->GetBug(id));
  RETURN_IF_ERROR(QueueNextStep(ctx, bug).status());
  spdlog::info("finding: bug {} opened at {} ({})", id, commit.substr(0, 12),
               signature);
  out["bug"] = id;
  return out;
}

StatusOr<Json> FuzzBuild(StepContext& ctx, int64_t job_id,
                         const std::string& bin_dir, double seconds,
                         const std::vector<std::string>& extra_flags) {
  ASSIGN_OR_RETURN(std::string scratch, ctx.Scratch(job_id, "fuzz"));
  std::vector<std::string> argv = {
      "hlo-fuzz",
      "--budget",
      std::to_string(seconds) + "s",
      "--jobs",
      std::to_string(ctx.config->fuzz_jobs),
      "--seed",
      std::to_string(ctx.config->fuzz_seed + job_id),
      "--out",
      scratch + "/out",
      "--no-progress",
      "--hlo-run",
      bin_dir + "/hlo-run",
      "--hloc",
      bin_dir + "/hloc",
      "--tpusim",
      bin_dir + "/tpusim"};
  if (!ctx.config->fuzz_corpus.empty()) {
    argv.insert(argv.end(), {"--corpus", ctx.config->fuzz_corpus});
  }
  argv.insert(argv.end(), extra_flags.begin(), extra_flags.end());
  ASSIGN_OR_RETURN(sandbox::Result r,
                   ctx.RunTool(argv, scratch, seconds * 4 + 120));
  return ToolJson("hlo-fuzz", r);
}

namespace {

// The longest of `names` that `stem` starts with ("" when none).
std::string LongestPrefix(const std::string& stem,
                          const std::vector<std::string>& names) {
  std::string best;
  for (const std::string& n : names) {
    if (stem.rfind(n, 0) == 0 && n.size() > best.size()) best = n;
  }
  return best;
}

void AddOnce(std::vector<std::string>& list, const std::string& name) {
  if (!name.empty() &&
      std::find(list.begin(), list.end(), name) == list.end()) {
    list.push_back(name);
  }
}

}  // namespace

ChangedArea ChangedAreaOf(const std::string& diff) {
  static const std::vector<std::string> passes = {
#define X(cls, name, kind, description) name,
#include "compiler/passes/pass_registry.def"
#undef X
  };
  static const std::vector<std::string> ops = {
#define X(e, name, arity, kind) name,
#include "compiler/ir/opcode.def"
#undef X
  };
  ChangedArea area;
  std::istringstream lines(diff);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("+++ b/", 0) != 0) continue;
    const fs::path path(line.substr(6));
    std::string stem = path.stem().string();
    std::replace(stem.begin(), stem.end(), '_', '-');
    const std::string dir = path.parent_path().generic_string();
    if (dir == "compiler/passes") {
      AddOnce(area.passes, LongestPrefix(stem, passes));
    } else if (dir == "compiler/codegen" && stem.rfind("emit-", 0) == 0) {
      // emit_<op>[_part].cc emits <op>: aim at that opcode.
      AddOnce(area.ops, LongestPrefix(stem.substr(5), ops));
    }
  }
  return area;
}

namespace {

std::string Joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

}  // namespace

StatusOr<Json> RunFuzzStep(StepContext& ctx, const Job& job) {
  ASSIGN_OR_RETURN(std::string sha, PayloadString(job, "commit"));
  ASSIGN_OR_RETURN(std::string bin, BinDirOf(ctx, sha));
  // The budget is shared by campaigns aimed at what this commit changed
  // (the stress-test author's "recently changed passes"; for the code
  // generator, the opcodes of the changed emitters) and an unfocused one.
  ChangedArea area;
  if (auto mirror = hlo_bisect::GitRepo::Open(ctx.paths->mirror); mirror.ok()) {
    if (StatusOr<std::string> d = agents::DiffOfCommit(**mirror, sha); d.ok()) {
      area = ChangedAreaOf(*d);
    }
  }
  std::vector<std::vector<std::string>> rounds;
  if (!area.passes.empty()) {
    rounds.push_back({"--focus", "passes:" + Joined(area.passes)});
  }
  if (!area.ops.empty())
    rounds.push_back({"--focus", "ops:" + Joined(area.ops)});
  rounds.push_back({});
  const double seconds = ctx.config->fuzz_budget_seconds / rounds.size();
  Json filed = Json::MakeArray();
  Json out = Json::MakeObject();
  int64_t programs = 0;
  double seconds_run = 0;
  for (const std::vector<std::string>& flags : rounds) {
    StatusOr<Json> summary = FuzzBuild(ctx, job.id, bin, seconds, flags);
    if (!summary.ok() && !flags.empty()) {
      // A focus hlo-fuzz does not take: the other rounds still run.
      spdlog::warn("fuzz {}: {} refused: {}", sha.substr(0, 12), flags[1],
                   summary.status().message());
      continue;
    }
    if (!summary.ok()) return summary.status();
    if (const Json* findings = summary->Find("findings");
        findings && findings->is_array()) {
      for (const Json& f : findings->array()) {
        ASSIGN_OR_RETURN(Json one, FileFinding(ctx, sha, f));
        filed.push_back(std::move(one));
      }
    }
    if (const Json* p = summary->Find("programs"); p && p->is_integer()) {
      programs += p->int64_value();
    }
    if (const Json* t = summary->Find("seconds"); t && t->is_number()) {
      seconds_run += t->number_value();
    }
  }
  out["programs"] = programs;
  out["seconds"] = seconds_run;
  Json focus = Json::MakeObject();
  focus["passes"] = Joined(area.passes);
  focus["ops"] = Joined(area.ops);
  out["focus"] = std::move(focus);
  out["filed"] = std::move(filed);
  return out;
}

StatusOr<Json> RunCheckFixesStep(StepContext& ctx, const Job& job) {
  ASSIGN_OR_RETURN(std::string sha, PayloadString(job, "commit"));
  ASSIGN_OR_RETURN(std::string bin, BinDirOf(ctx, sha));
  ASSIGN_OR_RETURN(auto repo, hlo_bisect::GitRepo::Open(ctx.paths->mirror));
  Json fixed = Json::MakeArray();
  int64_t after = 0;
  while (true) {
    ASSIGN_OR_RETURN(std::vector<Bug> bugs,
                     ctx.store->ListBugs(std::nullopt, after, 200));
    if (bugs.empty()) break;
    for (const Bug& bug : bugs) {
      after = bug.id;
      if (!CheckTransition(bug.state, BugState::kFixed).ok()) continue;
      // Only commits after the one the bug was seen at can fix it.
      StatusOr<std::string> found = FoundCommitOf(ctx, bug);
      if (!found.ok() || *found == sha) continue;
      StatusOr<std::vector<std::string>> line =
          repo->FirstParentRange(*found, sha);
      if (!line.ok()) continue;  // Not a descendant.
      ASSIGN_OR_RETURN(std::string case_sha, ReproCaseOf(bug, true));
      ASSIGN_OR_RETURN(std::string scratch,
                       ctx.Scratch(job.id, "fix-" + std::to_string(bug.id)));
      ASSIGN_OR_RETURN(Json v, RunVerdict(ctx, case_sha, bin, scratch));
      if (VerdictStatus(v) != "pass") continue;
      Json evidence = Json::MakeObject();
      evidence["event"] = "fix_verified";
      evidence["commit"] = sha;
      evidence["verdict"] = v;
      TransitionFields f;
      f.fix_commit = sha;
      ASSIGN_OR_RETURN(Bug moved,
                       Advance(ctx, bug, BugState::kFixed, evidence, f));
      spdlog::info("fix_verified: bug {} fixed by {}", moved.id,
                   sha.substr(0, 12));
      fixed.push_back(moved.id);
    }
  }
  Json out = Json::MakeObject();
  out["fixed"] = std::move(fixed);
  return out;
}

}  // namespace trench::orchestrator
