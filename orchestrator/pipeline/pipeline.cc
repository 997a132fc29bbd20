#include "orchestrator/pipeline/pipeline.h"

#include <sys/stat.h>

#include <charconv>
#include <filesystem>
#include <thread>

#include "orchestrator/pipeline/root_cause.h"
#include "sandbox/limited_dir.h"

namespace trench::orchestrator {
namespace fs = std::filesystem;

DaemonPaths::DaemonPaths(const std::string& var_dir,
                         const std::string& shared_dir)
    : var(var_dir), store(var_dir + "/store.db") {
  root = shared_dir.empty() ? var_dir : shared_dir;
  cases = root + "/cases";
  builder = root + "/builder";
  mirror = root + "/builder/repo.git";
  worktree = root + "/builder/work";
  build_out = root + "/builder/work/out";
  build_image = root + "/builder/work.img";
  build_cache = root + "/builder/cache";
  work = root + "/work";
}

const std::vector<StepKind>& Steps() {
  constexpr std::optional<BugState> kNone;
  using enum BugState;
  static const std::vector<StepKind> steps = {
#define TRENCH_STEP(kind, worker, state, event, handler) \
  StepKind{kind, worker, state, event, handler},
#include "orchestrator/pipeline/pipeline.def"
  };
  return steps;
}

const StepKind* FindStep(const std::string& kind) {
  for (const StepKind& s : Steps()) {
    if (s.kind == kind) return &s;
  }
  return nullptr;
}

JobOptions StepJobOptions() {
  JobOptions o;
  o.max_attempts = 8;
  return o;
}

std::vector<std::string> KindsOfWorker(const std::string& worker) {
  std::vector<std::string> kinds;
  for (const StepKind& s : Steps()) {
    if (s.worker == worker &&
        std::find(kinds.begin(), kinds.end(), s.kind) == kinds.end()) {
      kinds.push_back(s.kind);
    }
  }
  return kinds;
}

sandbox::Options StepContext::Sandboxed(std::vector<std::string> argv,
                                        const std::string& work_dir,
                                        double timeout) const {
  sandbox::Options o;
  o.argv = std::move(argv);
  o.env = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
           "HOME=/tmp", "LANG=C.UTF-8"};
  o.work_dir = work_dir;
  o.read_only_paths = {tools_dir, paths->cases, paths->build_cache};
  if (!config->fuzz_corpus.empty()) {
    o.read_only_paths.push_back(config->fuzz_corpus);
  }
  for (const std::string& dir : config->regression) {
    o.read_only_paths.push_back(dir);
  }
  o.limits.wall_seconds = timeout;
  o.limits.cpu_seconds = static_cast<uint64_t>(timeout) + 1;
  o.limits.address_space_bytes = config->sandbox_memory_bytes;
  o.limits.file_size_bytes = 4ull << 30;
  o.limits.open_files = 1024;
  o.limits.processes = 1024;
  o.limits.stdout_bytes = 16 << 20;
  o.uid = config->sandbox_uid;
  o.gid = config->sandbox_gid;
  o.use_namespaces = config->sandbox_namespaces;
  return o;
}

std::string StepContext::Tool(const std::string& name) const {
  return tools_dir + "/" + name;
}

StatusOr<sandbox::Result> StepContext::RunTool(std::vector<std::string> argv,
                                               const std::string& work_dir,
                                               double timeout) const {
  argv[0] = Tool(argv[0]);
  return Run(Sandboxed(std::move(argv), work_dir, timeout));
}

void StepContext::BeginJob(int64_t id, int attempt) {
  job_id = id;
  job_attempt = attempt;
  run_seq = 0;
}

RunLabel StepContext::NextLabel() const {
  RunLabel label;
  label.job_id = job_id;
  label.attempt = job_attempt;
  label.seq = run_seq++;
  label.store = store;
  return label;
}

StatusOr<sandbox::Result> StepContext::Run(
    const sandbox::Options& options) const {
  return runner->Run(options, NextLabel());
}

std::vector<StatusOr<sandbox::Result>> StepContext::RunAll(
    const std::vector<sandbox::Options>& runs) const {
  std::vector<StatusOr<sandbox::Result>> out(runs.size(), IoError("not run"));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunLabel label = NextLabel();
    // Each thread records its run on a store connection of its own: a
    // connection is used by one thread at a time.
    threads.emplace_back([this, &runs, &out, i, label] {
      std::unique_ptr<Store> own;
      if (store != nullptr) {
        StatusOr<std::unique_ptr<Store>> opened =
            Store::Open(paths->store, StoreOptions());
        if (opened.ok()) own = std::move(*opened);
      }
      RunLabel mine = label;
      mine.store = own.get();
      out[i] = runner->Run(runs[i], mine);
    });
  }
  for (std::thread& t : threads) t.join();
  return out;
}

StatusOr<std::string> StepContext::Scratch(int64_t job_id,
                                           const std::string& tag) const {
  const std::string dir =
      paths->work + "/" + std::to_string(job_id) + "-" + tag;
  std::error_code ec;
  if (runner != nullptr && !runner->RunsOnThisHost()) {
    // On the shared filesystem, a plain directory: a tmpfs mounted here
    // would be this host's alone. A re-run after a crash keeps it while
    // runs the previous daemon started may still use it (it reattaches
    // to them); otherwise it starts afresh.
    if (!runner->MayHaveLiveRuns(job_id, store)) fs::remove_all(dir, ec);
    fs::create_directories(dir, ec);
    if (ec) return IoError("cannot create " + dir + ": " + ec.message());
    ::chmod(dir.c_str(), 0711);
    return dir;
  }
  // A re-run after a crash starts afresh.
  RETURN_IF_ERROR(sandbox::UnmountLimitedDir(dir));
  fs::remove_all(dir, ec);
  RETURN_IF_ERROR(sandbox::MountLimitedDir(dir, config->sandbox_scratch_bytes,
                                           config->sandbox_scratch_inodes)
                      .status());
  // Search only: runs reach their own dirs below it, not the listing.
  ::chmod(dir.c_str(), 0711);
  return dir;
}

Status ReleaseScratches(const DaemonPaths& paths, int64_t job_id) {
  const std::string prefix = std::to_string(job_id) + "-";
  std::error_code ec;
  for (fs::directory_iterator it(paths.work, ec), end; !ec && it != end;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    RETURN_IF_ERROR(sandbox::UnmountLimitedDir(it->path().string()));
    ::rmdir(it->path().c_str());  // Only when empty: a plain dir stays.
  }
  return Status::Ok();
}

std::string BugJobKey(int64_t bug, const std::string& kind) {
  return "bug:" + std::to_string(bug) + ":" + kind;
}

namespace {

// Whether `bug` has a commit to be reproduced on: its own (a finding's), or
// a built one (FoundCommitOf).
StatusOr<bool> HasCommitToRunOn(StepContext& ctx, const Bug& bug) {
  if (const Json* c = bug.details.Find("commit"); c && c->is_string()) {
    return true;
  }
  ASSIGN_OR_RETURN(std::optional<std::string> head,
                   ctx.store->GetMeta("head.built"));
  return head.has_value() && !head->empty();
}

}  // namespace

StatusOr<std::string> QueueNextStep(StepContext& ctx, const Bug& bug) {
  if (const Json* h = bug.details.Find("needs_human");
      h && h->is_bool() && h->bool_value()) {
    return std::string();
  }
  for (const StepKind& s : Steps()) {
    if (!s.state || *s.state != bug.state) continue;
    if (s.kind == "push" && !PushWanted(ctx.config, bug)) continue;
    if (bug.state == BugState::kNew) {
      // Waiting for the first build is not a failure: no job, no attempt.
      ASSIGN_OR_RETURN(bool ready, HasCommitToRunOn(ctx, bug));
      if (!ready) return std::string();
      // Waiting for an older bug's verified patch (root_cause.h): no job
      // until that bug has one or is no longer worked on.
      ASSIGN_OR_RETURN(bool waiting, StillWaiting(ctx, bug));
      if (waiting) return std::string();
    }
    Json payload = Json::MakeObject();
    payload["bug"] = bug.id;
    JobOptions o = StepJobOptions();
    o.dedup_key = BugJobKey(bug.id, s.kind);
    o.priority = kBugStepPriority;
    // A step that failed for good (or used its attempts) on the bug as it
    // still is waits for a human (JobQueue::Unpark), not for a retry loop.
    ASSIGN_OR_RETURN(std::optional<Job> last, ctx.queue->Latest(o.dedup_key));
    if (last &&
        (last->state == JobState::kFailed ||
         last->state == JobState::kParked) &&
        last->updated_ms >= bug.updated_ms) {
      return std::string();
    }
    RETURN_IF_ERROR(ctx.queue->Enqueue(s.kind, payload, o).status());
    return s.kind;
  }
  return std::string();
}

StatusOr<std::vector<Job>> JobsOfBug(JobQueue& queue, int64_t bug, int limit) {
  return queue.ListByKeyPrefix(BugJobKey(bug, ""), limit);
}

StatusOr<std::vector<int64_t>> RetryBugSteps(JobQueue& queue, int64_t bug) {
  std::vector<int64_t> retried;
  for (const StepKind& s : Steps()) {
    ASSIGN_OR_RETURN(std::optional<Job> last,
                     queue.Latest(BugJobKey(bug, s.kind)));
    if (!last ||
        std::find(retried.begin(), retried.end(), last->id) != retried.end()) {
      continue;  // A kind listed twice (one entry per state).
    }
    if (last->state != JobState::kParked && last->state != JobState::kFailed) {
      continue;
    }
    RETURN_IF_ERROR(queue.Unpark(last->id));
    retried.push_back(last->id);
  }
  return retried;
}

Status Reconcile(StepContext& ctx) {
  int64_t after = 0;
  while (true) {
    ASSIGN_OR_RETURN(std::vector<Bug> bugs,
                     ctx.store->ListBugs(std::nullopt, after, 200));
    if (bugs.empty()) return Status::Ok();
    for (const Bug& bug : bugs) {
      after = bug.id;
      if (!IsOpen(bug.state)) continue;
      RETURN_IF_ERROR(QueueNextStep(ctx, bug).status());
    }
  }
}

Status QueueLandedCommits(StepContext& ctx,
                          const std::vector<std::string>& landed) {
  // The event rows first: when the daemon dies before the watcher records
  // the commits as handled, the next poll lands them again, and no row is
  // written twice (RecordCommitEvent's dedup) nor any build queued twice
  // (the jobs' dedup keys).
  Json evidence = Json::MakeObject();
  evidence["branch"] = ctx.config->branch;
  for (const std::string& sha : landed) {
    RETURN_IF_ERROR(ctx.store
                        ->RecordCommitEvent(sha, CommitEventKind::kCommitLanded,
                                            ctx.worker, evidence)
                        .status());
  }
  for (auto it = landed.rbegin(); it != landed.rend(); ++it) {
    Json payload = Json::MakeObject();
    payload["commit"] = *it;
    JobOptions o = StepJobOptions();
    o.dedup_key = "build:" + *it;
    o.priority = kBuildPriority;
    RETURN_IF_ERROR(ctx.queue->Enqueue("build", payload, o).status());
  }
  return Status::Ok();
}

StatusOr<bool> QueueIdleFuzz(StepContext& ctx) {
  if (!ctx.config->fuzz_continuous) return false;
  for (JobState s : {JobState::kQueued, JobState::kLeased}) {
    ASSIGN_OR_RETURN(int64_t n, ctx.queue->Count(s));
    if (n > 0) return false;
  }
  ASSIGN_OR_RETURN(std::optional<std::string> head,
                   ctx.store->GetMeta("head.built"));
  if (!head || head->empty()) return false;
  ASSIGN_OR_RETURN(std::optional<std::string> last,
                   ctx.store->GetMeta("fuzz.round"));
  int64_t round = 1;
  if (last) {
    const auto r =
        std::from_chars(last->data(), last->data() + last->size(), round);
    if (r.ec != std::errc()) round = 0;
    ++round;
  }
  RETURN_IF_ERROR(ctx.store->SetMeta("fuzz.round", std::to_string(round)));
  Json payload = Json::MakeObject();
  payload["commit"] = *head;
  payload["round"] = round;
  JobOptions o = StepJobOptions();
  o.dedup_key = "fuzz:" + *head + ":round" + std::to_string(round);
  RETURN_IF_ERROR(ctx.queue->Enqueue("fuzz", payload, o).status());
  return true;
}

}  // namespace trench::orchestrator
