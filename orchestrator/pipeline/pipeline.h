// The daemon's pipeline: one job kind per step (pipeline.def), the
// handlers that run them, and the reconciler that queues the next step of
// every open bug from its lifecycle state.
//
// A handler runs on a worker thread with its own Store connection. It
// re-reads the bug first and does nothing when the bug is no longer in the
// state the step acts on (a re-run after a crash, or a duplicate job), so
// every step is idempotent. It checks each claim with its own tool runs
// before it moves the bug (TransitionBug: the state and the event row in
// one transaction), then queues the next step. If the daemon dies between
// the move and the queueing, the reconciler queues it on the next tick.
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "orchestrator/config/daemon_config.h"
#include "orchestrator/pipeline/executor.h"
#include "orchestrator/pipeline/tool_runner.h"
#include "orchestrator/store/job_queue.h"
#include "orchestrator/store/store.h"
#include "sandbox/sandbox.h"
#include "triage/case/verdict_record.h"

namespace trench::orchestrator {

// The state directory's layout. With a shared directory (the Slurm
// executor's shared_dir, which every node mounts), what runs read and
// write (cases/, builder/, work/) lives there instead of under var; the
// store stays in var, on the daemon's host.
struct DaemonPaths {
  explicit DaemonPaths(const std::string& var_dir,
                       const std::string& shared_dir = "");
  std::string var;
  std::string store;  // var/store.db
  // Where cases/, builder/ and work/ are: var, or the shared directory.
  std::string root;
  std::string cases;    // var/cases/<sha256>/ (content-addressed)
  std::string builder;  // var/builder/: the daemon's (0755, root)
  std::string mirror;   // var/builder/repo.git (bare mirror of the repo)
  // var/builder/work: the builds' sandbox work dir, the only place a build
  // writes (checkout src/, build/, ccache/, staged out/<key>/); mounted
  // from build_image when the builder volume is on (build_volume.h).
  std::string worktree;
  std::string build_out;    // var/builder/work/out (staged entries)
  std::string build_image;  // var/builder/work.img
  // var/builder/cache/<key>/{result.json,bin/}: written by the daemon only
  // (build_cache.h), read-only to every sandboxed run.
  std::string build_cache;
  std::string work;  // var/work/<job id>/ scratch per step
};

// What a handler may use. One per worker thread.
struct StepContext {
  const DaemonConfig* config = nullptr;
  const DaemonPaths* paths = nullptr;
  Store* store = nullptr;
  JobQueue* queue = nullptr;
  Executor* runner = nullptr;  // Local or Slurm (executor.h).
  std::string tools_dir;       // Resolved: hlo-diff, hlo-reduce, ...
  std::string worker;          // "reproducer#0", for event actors.
  const std::atomic<bool>* stopping = nullptr;
  // The job being handled (set by the worker before each handler; 0
  // outside a job) and its runs so far: each run's RunLabel.
  int64_t job_id = 0;
  int job_attempt = 0;
  mutable int run_seq = 0;
  // Starts a new job's numbering of runs.
  void BeginJob(int64_t id, int attempt);

  // The label of this job's next run.
  RunLabel NextLabel() const;
  // Runs `options` through the executor, labelled as this job's next run.
  StatusOr<sandbox::Result> Run(const sandbox::Options& options) const;
  // Runs each of `runs` at once (a thread each), labelled in order as
  // this job's next runs; their outcomes in the same order.
  std::vector<StatusOr<sandbox::Result>> RunAll(
      const std::vector<sandbox::Options>& runs) const;

  // Sandbox options for `argv` with `work_dir` writable (created) and the
  // daemon's read-only paths visible; `timeout` in seconds.
  sandbox::Options Sandboxed(std::vector<std::string> argv,
                             const std::string& work_dir, double timeout) const;
  // Runs a tool of tools_dir (argv[0] is its name) in the sandbox.
  StatusOr<sandbox::Result> RunTool(std::vector<std::string> argv,
                                    const std::string& work_dir,
                                    double timeout) const;
  std::string Tool(const std::string& name) const;
  // A fresh scratch directory for this job: var/work/<job id>-<tag>,
  // mode 0711. As root it is a tmpfs of config sandbox.scratch_bytes and
  // scratch_inodes (sandbox/limited_dir.h), which bounds what the job's
  // tool runs write there; ReleaseScratches() unmounts it.
  StatusOr<std::string> Scratch(int64_t job_id, const std::string& tag) const;
};

// The end of job `job_id`: unmounts its scratch tmpfs mounts (their
// contents go; plain scratch directories stay as they are). Errors:
// IoError from umount.
Status ReleaseScratches(const DaemonPaths& paths, int64_t job_id);

// A step's handler: the job's result JSON, or an error (retryable unless
// the code is kInvalidArgument / kFailedPrecondition / kNotFound).
using StepHandler = std::function<StatusOr<Json>(StepContext&, const Job&)>;

struct StepKind {
  std::string kind;
  std::string worker;             // A swarm role or "orchestrator".
  std::optional<BugState> state;  // The bug state it acts on.
  std::string event;
  StepHandler handler;
};

// Every step, in pipeline.def's order (a kind may appear more than once:
// one entry per bug state it acts on).
const std::vector<StepKind>& Steps();
// The handler of `kind`; nullptr when unknown.
const StepKind* FindStep(const std::string& kind);
// The options of every job the daemon queues: 8 failures before a job is
// parked for a human. A lease taken back after a daemon crash is not a
// failure: crash loops have their own bound (JobQueueOptions::max_crashes).
JobOptions StepJobOptions();
// Job priorities (higher is leased first; equal ones in queue order). A
// filed bug's next step goes before the builds of commits that landed
// since, and those before each commit's fuzzing and fix checks: while
// commits keep landing, a bug already found is worked on first, so its
// triage does not wait for every newer commit to be built and checked.
inline constexpr int kBugStepPriority = 2;
inline constexpr int kBuildPriority = 1;
// The job kinds `worker` leases.
std::vector<std::string> KindsOfWorker(const std::string& worker);

// The dedup key of `bug`'s job of step `kind`: "bug:<id>:<kind>".
std::string BugJobKey(int64_t bug, const std::string& kind);
// Queues the step that `bug`'s state calls for (dedup key BugJobKey), if
// any, unless the bug waits for a human (details.needs_human), or the
// step is "push" and PushWanted says no, or a new bug still waits for an
// older one (StillWaiting, root_cause.h), or that
// step's last job failed (or was parked) after the bug last changed, or it
// waits for the first build: a bug found on no particular commit (a
// report) is reproduced on the newest built one (meta "head.built"), so
// its reproduce step is queued only once there is one; the reconciler
// queues it on its first tick after the first build. Returns the kind
// queued, or "".
StatusOr<std::string> QueueNextStep(StepContext& ctx, const Bug& bug);
// `bug`'s jobs (its steps, every attempt), newest first, at most `limit`.
StatusOr<std::vector<Job>> JobsOfBug(JobQueue& queue, int64_t bug, int limit);
// Queues again (JobQueue::Unpark) each of `bug`'s steps whose newest job
// is parked or failed. Returns the ids queued (none: nothing to retry).
StatusOr<std::vector<int64_t>> RetryBugSteps(JobQueue& queue, int64_t bug);
// QueueNextStep for every open bug.
Status Reconcile(StepContext& ctx);
// Commits that landed together, oldest first (RepoWatcher::Poll): records
// each one's commit_landed event in that order (once per commit, however
// often it is called) and queues their builds (then fuzz and fix checks)
// newest first. The tip is built and fuzzed first (it is what runs now,
// and holds every bug of the push that no later commit fixed); the older
// commits' turns still follow. The caller records the push as handled
// only once this returns Ok (a retry lands it again, without duplicates).
Status QueueLandedCommits(StepContext& ctx,
                          const std::vector<std::string>& landed);
// Continuous fuzzing (config fuzz.continuous): when no job is queued or
// running and the newest landed commit is built (meta "head.built"), queues
// one more fuzz round of it (payload {"commit", "round"}; meta "fuzz.round"
// counts the rounds; dedup key "fuzz:<sha>:round<n>"). Its findings are
// bisected like any other. Returns whether a round was queued.
StatusOr<bool> QueueIdleFuzz(StepContext& ctx);

// Handlers (steps_commit.cc, steps_bug.cc, steps_patch.cc,
// steps_stress.cc).
StatusOr<Json> RunBuildStep(StepContext& ctx, const Job& job);
StatusOr<Json> RunFuzzStep(StepContext& ctx, const Job& job);
StatusOr<Json> RunCheckFixesStep(StepContext& ctx, const Job& job);
StatusOr<Json> RunStressStep(StepContext& ctx, const Job& job);  // stress
StatusOr<Json> RunReproduceStep(StepContext& ctx, const Job& job);
// The build step's move of meta "head.built" (the commit drafts, stress
// tests and continuous fuzzing run on) to the built commit `sha`: builds
// of several landed commits run at once and finish in any order, so it
// moves only forward, to a commit that contains the current one (as the
// mirror's history says; an unknown commit is taken as newer). Errors:
// the store's; the mirror's when it cannot be opened.
Status AdvanceBuiltHead(StepContext& ctx, const std::string& sha);
// The reproduce step's judgement of its runs (apart, for tests): records
// each of `verdicts` (hlo-diff's, of case `case_sha` at `commit`) as a run
// of `bug`, then moves it: every run fails -> reproduced, some -> flaky,
// none -> not_reproducible. A report (not a fuzz finding) whose failure's
// signature names another bug (KnownBugOfReproduction) becomes its
// duplicate instead (evidence "duplicate_of"). `evidence` and `fields` are
// completed and used for the move. Returns the evidence. Errors:
// kInvalidArgument without verdicts; the store's.
StatusOr<Json> JudgeReproduction(StepContext& ctx, const Bug& bug,
                                 const std::string& case_sha,
                                 const std::string& commit,
                                 const std::vector<hlo_diff::Verdict>& verdicts,
                                 Json evidence, TransitionFields fields);
StatusOr<Json> RunMinimizeStep(StepContext& ctx, const Job& job);
StatusOr<Json> RunLocalizeStep(StepContext& ctx, const Job& job);
StatusOr<Json> RunBisectStep(StepContext& ctx, const Job& job);
StatusOr<Json> RunDraftStep(StepContext& ctx, const Job& job);
// The patch drafter's task for a round on `bug` (RunDraftStep's): "bug",
// "case" (its repro case), "localization", "culprit_sources" (the target's
// files of the localized pass at `found_at`, read in `scratch`),
// "culprit" {"sha", "summary"}, "head", and "hints": the reviewers'
// guidance (triage_verbs.h DraftHintsOf), oldest first, when there is any.
StatusOr<Json> DrafterTask(StepContext& ctx, const Bug& bug,
                           const std::string& head, const std::string& found_at,
                           const std::string& scratch);
StatusOr<Json> RunVerifyStep(StepContext& ctx, const Job& job);
StatusOr<Json> RunProposeStep(StepContext& ctx, const Job& job);
// review.on_approve "push" (steps_push.cc): pushes the approved bug's
// branch trench/bug-<id> from the target repository to
// review.push_remote (never the watched branch) and records details.push
// {"remote", "branch", "commit", "ok", "error"?, "attempt", "at_ms"};
// a failed push is a failed attempt (retried with backoff, then parked).
StatusOr<Json> RunPushStep(StepContext& ctx, const Job& job);
// True when `bug` is approved, the config says push, and its proposal's
// commit is not pushed yet (the reconciler's condition for "push").
bool PushWanted(const DaemonConfig* config, const Bug& bug);

}  // namespace trench::orchestrator
