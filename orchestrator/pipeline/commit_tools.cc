// Building and fuzzing commits, and filing what the fuzzer finds.
#include "orchestrator/pipeline/commit_tools.h"

#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <mutex>
#include <set>
#include <sstream>

#include "base/display_text.h"
#include "base/json_nlohmann.h"
#include "git/build_cache.h"
#include "git/git_repo.h"
#include "git/patch_apply.h"
#include "orchestrator/pipeline/build_volume.h"
#include "orchestrator/pipeline/commit_reach.h"
#include "orchestrator/pipeline/fuzz_shards.h"
#include "orchestrator/pipeline/step_util.h"

namespace trench::orchestrator {
namespace fs = std::filesystem;

namespace {

// Gives `path` (and, when `recursive`, what it holds; links not followed)
// back to root where another uid owns it.
void OwnByRoot(const std::string& path, bool recursive) {
  struct stat st;
  if (::lstat(path.c_str(), &st) == 0 && st.st_uid != 0) {
    (void)::lchown(path.c_str(), 0, 0);
  }
  if (!recursive) return;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(path, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (::lstat(it->path().c_str(), &st) == 0 && st.st_uid != 0) {
      (void)::lchown(it->path().c_str(), 0, 0);
    }
  }
}

}  // namespace

StatusOr<BuildVolume> SetUpBuilder(const DaemonConfig& config,
                                   const DaemonPaths& paths) {
  if (::geteuid() == 0) {
    OwnByRoot(paths.builder, false);
    OwnByRoot(paths.mirror, true);
    OwnByRoot(paths.build_cache, true);
  }
  ::chmod(paths.builder.c_str(), 0755);
  ::chmod(paths.build_cache.c_str(), 0755);
  const std::string unbounded =
      "builder: builds write " + paths.worktree +
      " as a plain directory, with no bound on their bytes or files";
  if (config.builder_disk_bytes == 0) {
    spdlog::warn("{} (builder.disk_bytes is 0)", unbounded);
    return BuildVolume();
  }
  BuildVolumeOptions o;
  o.image = paths.build_image;
  o.mount_point = paths.worktree;
  o.bytes = config.builder_disk_bytes;
  o.inodes = config.builder_inodes;
  StatusOr<BuildVolume> v = BuildVolume::Mount(o);
  if (!v.ok() && v.status().code() == StatusCode::kFailedPrecondition) {
    spdlog::warn("{}: {}", unbounded, v.status().message());
    return BuildVolume();
  }
  if (!v.ok()) return v.status();
  spdlog::info(
      "builder: builds write {}, an ext4 image of {:.1f} GiB and {} inodes "
      "({})",
      paths.worktree, static_cast<double>(o.bytes) / (1ull << 30), o.inodes,
      o.image);
  return v;
}

namespace {

// Removes everything in the builder's work dir (the file system's own
// lost+found stays).
void EmptyWorkDir(const std::string& dir) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.path().filename() == "lost+found") continue;
    std::error_code rm;
    fs::remove_all(e.path(), rm);
  }
}

}  // namespace

std::mutex& BuilderMutex() {
  static std::mutex* mu = new std::mutex;
  return *mu;
}

StatusOr<BuilderRun> PrepareBuilderRun(StepContext& ctx,
                                       std::vector<std::string> argv,
                                       double timeout) {
  BuilderRun run;
  run.lock = std::unique_lock<std::mutex>(BuilderMutex());
  const DaemonPaths& p = *ctx.paths;
  std::error_code ec;
  fs::remove_all(p.build_out, ec);  // The last run's staged entries.
  if (ctx.config->builder_clean) EmptyWorkDir(p.worktree);
  for (const std::string& dir :
       {p.worktree, p.build_out, p.worktree + "/tmp"}) {
    fs::create_directories(dir, ec);
    if (ec) return IoError("cannot create " + dir + ": " + ec.message());
  }
  run.options = ctx.Sandboxed(std::move(argv), p.worktree, timeout);
  run.options.read_only_paths.push_back(p.mirror);
  // Compiler temporaries count against the builder's volume, not /tmp.
  run.options.env.push_back("TMPDIR=" + p.worktree + "/tmp");
  run.options.env.push_back("CCACHE_DIR=" + p.worktree + "/ccache");
  if (ctx.config->builder_clean) {
    run.options.env.push_back("CCACHE_DISABLE=1");
  } else if (ctx.config->builder_disk_bytes > 0) {
    // A quarter of the volume, so that a full cache leaves room to build.
    run.options.env.push_back(
        "CCACHE_MAXSIZE=" +
        std::to_string(ctx.config->builder_disk_bytes / 4 / 1000000) + "M");
  }
  return run;
}

void ReclaimBuilderSpace(StepContext& ctx) {
  StatusOr<VolumeSpace> space = SpaceOf(ctx.paths->worktree);
  if (!space.ok() || (space->bytes_free >= 0.1 && space->inodes_free >= 0.1)) {
    return;
  }
  spdlog::warn(
      "builder: {} is nearly full ({:.0f}% of its bytes, {:.0f}% of its "
      "inodes free): emptied, the next build starts cold",
      ctx.paths->worktree, space->bytes_free * 100, space->inodes_free * 100);
  EmptyWorkDir(ctx.paths->worktree);
}

namespace {

// The machine failed the build of `key`: nothing is recorded; the step is
// retried with backoff (kResourceExhausted), the log in its error.
Status InfraFailure(const std::string& key, const std::string& why,
                    const std::string& log_tail) {
  spdlog::warn("build {}: not a verdict on the commit ({}); built again later",
               key.substr(0, 12), why);
  return ResourceExhausted("build of " + key +
                           ": an infrastructure failure, built again later: " +
                           why + (log_tail.empty() ? "" : "\n" + log_tail));
}

// Builds `rev` of the mirror under `key` in the sandbox (hlo-bisect build)
// and installs what it staged into the cache; a verified cache entry is
// taken as it is.
StatusOr<hlo_bisect::BuildResult> BuildKey(StepContext& ctx,
                                           const std::string& rev,
                                           const std::string& key,
                                           const std::string& flavour = "",
                                           const std::string& command = "") {
  const DaemonPaths& p = *ctx.paths;
  StatusOr<hlo_bisect::BuildResult> hit =
      hlo_bisect::LookupBuild(p.build_cache, key);
  if (hit.ok()) return hit;
  if (hit.status().code() != StatusCode::kNotFound) {
    spdlog::warn("build cache: the entry of {} is refused, built again: {}",
                 key, hit.status().message());
  }
  std::vector<std::string> argv = {
      ctx.Tool("hlo-bisect"),
      "build",
      rev,
      "--key",
      key,
      "--repo",
      p.mirror,
      "--work",
      p.worktree,
      "--cache",
      p.build_cache,
      "--out",
      p.build_out,
      "--timeout",
      std::to_string(ctx.config->build_timeout_seconds)};
  const std::string& cmd =
      flavour.empty() ? ctx.config->build_command : command;
  if (!cmd.empty()) argv.insert(argv.end(), {"--build-cmd", cmd});
  if (!flavour.empty()) argv.insert(argv.end(), {"--flavour", flavour});
  ASSIGN_OR_RETURN(
      BuilderRun run,
      PrepareBuilderRun(ctx, argv, ctx.config->build_timeout_seconds + 60));
  StatusOr<sandbox::Result> r = ctx.Run(run.options);
  ReclaimBuilderSpace(ctx);
  if (!r.ok()) {
    return InfraFailure(
        key, "the sandbox could not run it: " + r.status().message(), "");
  }
  // Stopped from outside: the memory limit, the OOM killer, the clock.
  if (!r->exited || r->timed_out ||
      (r->limits_hit & (sandbox::kLimitMemory | sandbox::kLimitWallTime |
                        sandbox::kLimitCpu)) != 0) {
    return InfraFailure(key, "hlo-bisect build was stopped: " + r->Summary(),
                        "");
  }
  if (r->exit_code == 3) {
    StatusOr<Json> j = ToolJson("hlo-bisect build", *r);
    const Json* reason = j.ok() ? j->Find("reason") : nullptr;
    const Json* tail = j.ok() ? j->Find("log_tail") : nullptr;
    return InfraFailure(
        key,
        reason && reason->is_string() ? reason->string_value() : r->Summary(),
        tail && tail->is_string() ? tail->string_value() : "");
  }
  if (r->exit_code != 0 && r->exit_code != 1) {
    std::string err = r->stderr_data;
    if (err.size() > 2000) err = "..." + err.substr(err.size() - 2000);
    return Internal("hlo-bisect build " + key + ": " + r->Summary() +
                    "; stderr: " + err);
  }
  StatusOr<hlo_bisect::BuildResult> installed =
      hlo_bisect::InstallBuild(p.build_out, key, p.build_cache);
  if (!installed.ok() && installed.status().code() == StatusCode::kNotFound) {
    // Nothing staged: the tool found the entry in the cache itself.
    installed = hlo_bisect::LookupBuild(p.build_cache, key);
  }
  if (!installed.ok()) {
    return Internal("build of " + key + ": its output is not installed: " +
                    installed.status().message());
  }
  if (installed->built != (r->exit_code == 0)) {
    return Internal("build of " + key + ": hlo-bisect build exited " +
                    std::to_string(r->exit_code) + " but staged built: " +
                    (installed->built ? "true" : "false"));
  }
  return installed;
}

}  // namespace

StatusOr<Json> BuildCommit(StepContext& ctx, const std::string& rev,
                           const std::string& sha,
                           const std::string& patch_hash) {
  const std::string key = patch_hash.empty() ? sha : sha + "-p" + patch_hash;
  ASSIGN_OR_RETURN(hlo_bisect::BuildResult b, BuildKey(ctx, rev, key));
  RETURN_IF_ERROR(
      ctx.store
          ->PutBuild(sha, patch_hash,
                     b.built ? BuildStatus::kOk : BuildStatus::kFailed,
                     ctx.paths->build_cache + "/" + key + "/bin", b.log_tail)
          .status());
  return b.ToJson();
}

StatusOr<hlo_bisect::BuildResult> BuildFlavour(StepContext& ctx,
                                               const std::string& sha,
                                               const std::string& flavour,
                                               const std::string& command) {
  return BuildKey(ctx, sha, sha + "-" + flavour, flavour, command);
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

}  // namespace

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
  // A model may have written the status: one line, no controls.
  nb.title =
      OneLine("fuzz finding: " +
                  (status && status->is_string() ? status->string_value()
                                                 : std::string("failure")) +
                  " (" + sig->string_value() + ")",
              200);
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
                         const std::vector<std::string>& extra_flags,
                         const std::string& changed_diff) {
  ASSIGN_OR_RETURN(std::string scratch, ctx.Scratch(job_id, "fuzz"));
  std::vector<std::string> argv = {
      "hlo-fuzz",
      "--budget",
      std::to_string(seconds) + "s",
      "--jobs",
      std::to_string(ctx.config->fuzz_jobs),
      "--seed",
      std::to_string(ctx.config->fuzz_seed + job_id),
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
  if (!changed_diff.empty()) {
    ASSIGN_OR_RETURN(std::string path, WriteDiffFile(scratch, changed_diff));
    argv.insert(argv.end(), {"--changed-lines", path});
  }
  // One run, or fuzz.shards runs at once (Slurm jobs on as many nodes),
  // each with its share of the seed's programs and its own findings dir.
  const int shards = std::max(1, ctx.config->fuzz_shards);
  argv[0] = ctx.Tool(argv[0]);
  std::vector<sandbox::Options> runs;
  for (int k = 0; k < shards; ++k) {
    std::vector<std::string> shard = argv;
    const std::string out =
        scratch +
        (shards == 1 ? std::string("/out") : "/out-" + std::to_string(k));
    shard.insert(shard.end(), {"--out", out});
    for (std::string& flag : ShardFlags(k, shards)) shard.push_back(flag);
    runs.push_back(ctx.Sandboxed(std::move(shard), scratch, seconds * 4 + 120));
  }
  if (shards == 1) {
    ASSIGN_OR_RETURN(sandbox::Result r, ctx.Run(runs.front()));
    return ToolJson("hlo-fuzz", r);
  }
  std::vector<Json> summaries;
  for (StatusOr<sandbox::Result>& r : ctx.RunAll(runs)) {
    if (!r.ok()) return r.status();
    ASSIGN_OR_RETURN(Json summary, ToolJson("hlo-fuzz", *r));
    summaries.push_back(std::move(summary));
  }
  return MergeFuzzSummaries(summaries);
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

using hlo_diff::TargetDescription;

void AddOnce(std::vector<std::string>& list, const std::string& name) {
  if (std::find(list.begin(), list.end(), name) == list.end()) {
    list.push_back(name);
  }
}

// Says once per repository and process that its target describes nothing:
// every commit would say it again.
void NoteUndescribed(const StepContext& ctx) {
  static std::mutex mu;
  static std::set<std::string>* noted = new std::set<std::string>;
  std::lock_guard<std::mutex> lock(mu);
  if (!noted->insert(ctx.paths->mirror).second) return;
  spdlog::warn(
      "the target of {} does not describe its passes and emitters (no {} "
      "and no sources in hloc --capabilities): commits are fuzzed without "
      "focus on what they change",
      ctx.config->repo, hlo_diff::kManifestPath);
}

// The description stored with `b`; nullopt when none is stored yet.
StatusOr<std::optional<TargetDescription>> StoredTarget(const Build& b) {
  if (b.target.empty()) return std::optional<TargetDescription>();
  ASSIGN_OR_RETURN(TargetDescription d,
                   hlo_diff::ParseTargetDescriptionText(
                       b.target, "the description stored with the build of " +
                                     b.commit_sha));
  return std::optional<TargetDescription>(std::move(d));
}

}  // namespace

StatusOr<TargetDescription> DescribeTarget(StepContext& ctx,
                                           const std::string& sha,
                                           const std::string& bin_dir,
                                           const std::string& scratch) {
  ASSIGN_OR_RETURN(auto mirror, hlo_bisect::GitRepo::Open(ctx.paths->mirror));
  StatusOr<std::string> manifest = agents::ReadFileAt(
      *mirror, sha, hlo_diff::kManifestPath, hlo_diff::kMaxDescriptionBytes);
  if (manifest.ok()) {
    return hlo_diff::ParseTargetDescriptionText(
        *manifest,
        std::string(hlo_diff::kManifestPath) + " at " + sha.substr(0, 12));
  }
  if (manifest.status().code() != StatusCode::kNotFound) {
    return manifest.status();
  }
  ASSIGN_OR_RETURN(sandbox::Result r,
                   ctx.Run(ctx.Sandboxed({bin_dir + "/hloc", "--capabilities"},
                                         scratch, 60)));
  const std::string origin = "hloc --capabilities of " + sha.substr(0, 12);
  // Killed from outside (the OOM killer, a machine too loaded to answer in
  // time): ask again later; nothing is stored.
  if (r.timed_out || (!r.exited && r.signal == SIGKILL && r.limits_hit == 0)) {
    return ResourceExhausted(origin + " did not finish (" + r.Summary() +
                             "); it is asked again");
  }
  // An hloc that ran and printed no JSON fails the same way every time.
  if (r.stdout_truncated > 0) {
    return InvalidArgument(origin + ": more output than a description takes");
  }
  StatusOr<Json> caps = ToolJson(origin, r);
  if (!caps.ok()) return InvalidArgument(caps.status().message());
  return hlo_diff::ParseTargetDescription(*caps, origin);
}

StatusOr<TargetDescription> TargetOfBuild(StepContext& ctx,
                                          const std::string& sha,
                                          const std::string& scratch) {
  ASSIGN_OR_RETURN(std::string bin, BinDirOf(ctx, sha));
  ASSIGN_OR_RETURN(Build build, ctx.store->GetBuild(sha, ""));
  ASSIGN_OR_RETURN(std::optional<TargetDescription> stored,
                   StoredTarget(build));
  TargetDescription target;
  if (stored) {
    target = std::move(*stored);
  } else {
    StatusOr<TargetDescription> d = DescribeTarget(ctx, sha, bin, scratch);
    if (!d.ok() && d.status().code() != StatusCode::kInvalidArgument) {
      return d.status();
    }
    if (d.ok()) {
      target = std::move(*d);
    } else {
      spdlog::warn("{}: the target's description is malformed: {}",
                   sha.substr(0, 12), d.status().message());
    }
    RETURN_IF_ERROR(ctx.store->SetBuildTarget(sha, "", target.ToJson().Dump()));
  }
  if (!target.described()) NoteUndescribed(ctx);
  return target;
}

ChangedArea ChangedAreaOf(const std::string& diff,
                          const TargetDescription& target) {
  ChangedArea area;
  std::istringstream lines(diff);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("+++ b/", 0) != 0) continue;
    target.NamesOfPath(line.substr(6), &area.passes, &area.ops);
    TargetDescription::LargeArrays large =
        target.LargeArraysOfPath(line.substr(6));
    if (large.from_elements > area.large_elements) {
      area.large_elements = large.from_elements;
      area.large_attributes = std::move(large.frontend_attributes);
    }
  }
  return area;
}

StatusOr<ChangedArea> ChangedAreaOfCommits(
    StepContext& ctx, const std::string& head,
    const std::vector<std::string>& commits, const std::string& scratch) {
  ASSIGN_OR_RETURN(TargetDescription head_target,
                   TargetOfBuild(ctx, head, scratch));
  ChangedArea area;
  if (!head_target.described()) return area;
  auto mirror = hlo_bisect::GitRepo::Open(ctx.paths->mirror);
  if (!mirror.ok()) return area;
  for (const std::string& c : commits) {
    StatusOr<std::string> d = agents::DiffOfCommit(**mirror, c);
    if (!d.ok()) continue;
    // A commit's own description knows the files as that commit named
    // them (before a later rename).
    std::optional<TargetDescription> own;
    if (StatusOr<Build> b = ctx.store->GetBuild(c, ""); b.ok()) {
      if (auto s = StoredTarget(*b); s.ok() && *s && (*s)->described()) {
        own = std::move(**s);
      }
    }
    area.Add(ChangedAreaOf(*d, own ? *own : head_target));
  }
  return area;
}

void ChangedArea::Add(const ChangedArea& other) {
  for (const std::string& p : other.passes) AddOnce(passes, p);
  for (const std::string& o : other.ops) AddOnce(ops, o);
  if (other.large_elements > large_elements) {
    large_elements = other.large_elements;
    large_attributes = other.large_attributes;
  }
}

}  // namespace trench::orchestrator
