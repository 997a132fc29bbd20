// Building and fuzzing commits, and filing what the fuzzer finds.
#include "orchestrator/pipeline/commit_tools.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "base/json_nlohmann.h"
#include "git/git_repo.h"
#include "orchestrator/pipeline/step_util.h"

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

namespace {

// The first of `bugs` that is fixed by a commit `commit` does not hold.
StatusOr<std::optional<Bug>> FirstFixedLaterThan(StepContext& ctx,
                                                 std::vector<Bug> bugs,
                                                 const std::string& commit) {
  std::unique_ptr<hlo_bisect::GitRepo> repo;
  for (Bug& bug : bugs) {
    if (IsOpen(bug.state) || !bug.fix_commit) continue;
    if (!repo) {
      ASSIGN_OR_RETURN(repo, hlo_bisect::GitRepo::Open(ctx.paths->mirror));
    }
    ASSIGN_OR_RETURN(bool holds_fix, repo->Contains(commit, *bug.fix_commit));
    if (!holds_fix) return std::optional<Bug>(std::move(bug));
  }
  return std::optional<Bug>();
}

bool HoldsString(const Json* list, const std::string& s) {
  if (!list || !list->is_array()) return false;
  for (const Json& e : list->array()) {
    if (e.is_string() && e.string_value() == s) return true;
  }
  return false;
}

bool CarriesSignature(const Bug& bug, const std::string& sig) {
  if (bug.signature == "sig:" + sig) return true;
  const Json* finding = bug.details.Find("finding");
  if (finding && HoldsString(finding->Find("coarse_signatures"), sig)) {
    return true;
  }
  const Json* r = bug.details.Find("reproduction");
  const Json* v = r ? r->Find("verdict") : nullptr;
  const Json* s = v ? v->Find("signature") : nullptr;
  const Json* h = s ? s->Find("sig") : nullptr;
  return h && h->is_string() && h->string_value() == sig;
}

}  // namespace

StatusOr<std::optional<Bug>> FixedLaterThan(StepContext& ctx,
                                            const std::string& signature,
                                            const std::string& commit) {
  ASSIGN_OR_RETURN(std::vector<Bug> bugs,
                   ctx.store->ListBugsBySignature(signature));
  return FirstFixedLaterThan(ctx, std::move(bugs), commit);
}

StatusOr<std::optional<Bug>> KnownBugOfReproduction(StepContext& ctx,
                                                    const Bug& self,
                                                    const std::string& sig,
                                                    const std::string& commit) {
  if (sig.empty()) return std::optional<Bug>();
  // SQLite picks the candidates; CarriesSignature checks where the
  // signature stands.
  ASSIGN_OR_RETURN(std::vector<Bug> bugs,
                   ctx.store->ListBugsMentioning("sig:" + sig, sig));
  std::vector<Bug> fixed;
  for (Bug& bug : bugs) {
    if (bug.id == self.id || !CarriesSignature(bug, sig)) continue;
    if (IsOpen(bug.state)) return std::optional<Bug>(std::move(bug));
    fixed.push_back(std::move(bug));
  }
  return FirstFixedLaterThan(ctx, std::move(fixed), commit);
}

// Files one fuzz finding: attaches it to the open bug with its signature,
// or to the fixed one whose fix the commit predates, or opens a new bug
// (then queues its reproduction).
StatusOr<Json> FileFinding(StepContext& ctx, const std::string& commit,
                           const Json& finding) {
  const Json* dir = finding.Find("case");
  const Json* sig = finding.Find("sig");
  if (!dir || !dir->is_string() || !sig || !sig->is_string()) {
    return Internal("hlo-fuzz finding without a case or sig: " +
                    finding.Dump());
  }
  // The case keeps hlo-fuzz's own origin (generator, seed); the bug and
  // the run record the commit.
  ASSIGN_OR_RETURN(std::string sha,
                   ImportCase(ctx, dir->string_value(), Json::MakeObject()));
  const std::string signature = "sig:" + sig->string_value();
  Json out = Json::MakeObject();
  out["case"] = sha;
  ASSIGN_OR_RETURN(std::optional<Bug> known,
                   ctx.store->FindOpenBugBySignature(signature));
  if (!known) {
    ASSIGN_OR_RETURN(known, FixedLaterThan(ctx, signature, commit));
    if (known) out["fixed_later"] = true;
  }
  if (known) {
    ASSIGN_OR_RETURN(int64_t run,
                     ctx.store->AddRun(sha, known->id, commit, finding, 0));
    out["attached_to"] = known->id;
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

StatusOr<Json> FileAuthorFindings(StepContext& ctx, const std::string& commit,
                                  const agents::StressAuthorClaim& claim) {
  Json filed = Json::MakeArray();
  for (const std::string& why : claim.refused) {
    spdlog::warn("author's finding refused: {}", why);
  }
  for (const agents::StressAuthorClaim::Finding& f : claim.findings) {
    // A case id (claims.h checked it), so the directory is in the store.
    const std::string dir = CaseDir(ctx, f.case_id);
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      spdlog::warn("author's finding names no stored case: {}", f.case_id);
      continue;
    }
    Json finding = Json::MakeObject();
    finding["case"] = dir;
    finding["status"] = f.status;
    finding["signature"] = FromJsonDoc(f.signature);
    finding["sig"] = f.sig;
    ASSIGN_OR_RETURN(Json one, FileFinding(ctx, commit, finding));
    filed.push_back(std::move(one));
  }
  return filed;
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
    } else if (dir == "compiler/codegen") {
      // emit_<op>[_part].cc emits <op>, stream_<op>[_part].cc streams it
      // beyond VMEM: aim at that opcode.
      for (const std::string prefix : {"emit-", "stream-"}) {
        if (stem.rfind(prefix, 0) == 0) {
          AddOnce(area.ops, LongestPrefix(stem.substr(prefix.size()), ops));
        }
      }
    }
  }
  return area;
}

void ChangedArea::Add(const ChangedArea& other) {
  for (const std::string& p : other.passes) AddOnce(passes, p);
  for (const std::string& o : other.ops) AddOnce(ops, o);
}

}  // namespace trench::orchestrator
