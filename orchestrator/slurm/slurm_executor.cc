// The Slurm executor (slurm_executor.h).
#include "orchestrator/slurm/slurm_executor.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>

#include "base/sha256.h"
#include "base/subprocess.h"
#include "orchestrator/slurm/slurm_job_records.h"
#include "orchestrator/store/job_queue.h"
#include "sandbox/run_files.h"

namespace trench::orchestrator::slurm {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// A store error while recording is logged by the caller's step, not
// fatal to the run: the job runs on either way.
void Note(Status s, std::string* first) {
  if (!s.ok() && first->empty()) *first = s.message();
}

}  // namespace

std::string DaemonJobPrefix(const std::string& var_dir) {
  return "trench-" + Sha256Hex(var_dir).substr(0, 8);
}

SlurmExecutor::SlurmExecutor(SlurmExecutorOptions options)
    : options_(std::move(options)),
      started_ms_(NowMs()),
      client_(options_.client) {
  stats_.kind = "slurm";
  for (const char* outcome :
       {"reattached", "finished", "changed", "unreadable", "unsubmitted"}) {
    stats_.restart_runs[outcome] = 0;
  }
}

StatusOr<std::unique_ptr<SlurmExecutor>> SlurmExecutor::Create(
    SlurmExecutorOptions options) {
  for (const char* command :
       {"sinfo", "sbatch", "squeue", "scontrol", "scancel"}) {
    const std::string where =
        options.client.bin_dir.empty()
            ? hlo_diff::FindProgram(command)
            : hlo_diff::FindProgram(options.client.bin_dir + "/" + command);
    if (where.empty() || ::access(where.c_str(), X_OK) != 0) {
      return FailedPrecondition(
          std::string("executor slurm: ") + command + " not found" +
          (options.client.bin_dir.empty() ? " in PATH"
                                          : " in " + options.client.bin_dir) +
          " (install slurm-client, or set executor.slurm_bin_dir)");
    }
  }
  if (options.run.trench_binary.empty() ||
      fs::path(options.run.trench_binary).is_relative() ||
      ::access(options.run.trench_binary.c_str(), X_OK) != 0) {
    return FailedPrecondition("executor slurm: the trench binary '" +
                              options.run.trench_binary +
                              "' is not an absolute path to an executable");
  }
  const std::string& shared = options.run.shared_dir;
  std::error_code ec;
  if (!fs::is_directory(shared, ec)) {
    return FailedPrecondition("executor slurm: shared_dir " + shared +
                              " is not a directory (every node must mount "
                              "it at this path)");
  }
  fs::create_directories(shared + "/runs", ec);
  if (ec || ::access((shared + "/runs").c_str(), W_OK) != 0) {
    return FailedPrecondition("executor slurm: shared_dir " + shared +
                              " is not writable: " + ec.message());
  }
  if (options.max_jobs < 1) {
    return InvalidArgument("executor slurm: max_jobs must be at least 1");
  }
  auto e = std::unique_ptr<SlurmExecutor>(new SlurmExecutor(options));
  Status partition = e->client_.CheckPartition(options.run.partition);
  if (!partition.ok()) {
    return FailedPrecondition("executor slurm: " + partition.message());
  }
  return e;
}

void SlurmExecutor::Track(const std::string& name, int64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  jobs_[name] = id;
}

void SlurmExecutor::Untrack(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  jobs_.erase(name);
  states_.erase(name);
}

void SlurmExecutor::Count(const std::string& final_state, double wait,
                          double run) {
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.runs_by_state[final_state];
  if (wait >= 0) {
    stats_.queue_wait_seconds_sum += wait;
    ++stats_.queue_wait_count;
  }
  if (run >= 0) {
    stats_.runtime_seconds_sum += run;
    ++stats_.runtime_count;
  }
}

StatusOr<int64_t> SlurmExecutor::FindLeftJob(Store* store,
                                             const std::string& name,
                                             const std::string& dir,
                                             const std::string& request) {
  ASSIGN_OR_RETURN(std::optional<SlurmJobRecord> rec,
                   GetJobRecord(store, name));
  if (!rec) return 0;
  // A record of this process's own (a step retried after a transient
  // error) is no restart: only a previous process's runs are counted.
  const bool previous = rec->submitted_ms <= started_ms_;
  auto count = [&](const char* outcome) {
    if (previous) CountRestart(outcome);
  };
  if (rec->finished) {
    // Its step asks for it again after a restart: a second job, said
    // (a step redone after a crash does that; not a fault by itself).
    count("finished");
    spdlog::info(
        "Slurm run {} of the previous run had finished ({}); "
        "submitted again",
        name, rec->state);
    return 0;
  }
  std::optional<int64_t> id = rec->slurm_id;
  if (!id) {
    // Submitted just before a crash, before its id was stored: found by
    // its unique name. A failed squeue is retried by the step, never
    // taken for "no job" (that would submit it twice).
    ASSIGN_OR_RETURN(std::vector<JobInfo> listed, client_.ListJobs(name));
    for (const JobInfo& j : listed) {
      if (j.name == name) id = j.id;  // The newest (id order).
    }
    if (!id) {
      count("unsubmitted");
      return 0;
    }
  }
  StatusOr<sandbox::Options> left = sandbox::ReadRunRequest(dir);
  if (!left.ok() || sandbox::OptionsToJson(*left).Dump() != request) {
    // Not the run asked for now: the previous daemon's, to be ended. Said,
    // with what differs: a step that asks for another run after a restart
    // costs a second job.
    std::string why = "its request is unreadable";
    count(left.ok() ? "changed" : "unreadable");
    if (left.ok()) {
      why = "the run asked for now differs in";
      const Json was = sandbox::OptionsToJson(*left);
      StatusOr<Json> now = ParseJson(request);
      for (const auto& [key, value] : was.object()) {
        const Json* other = now.ok() ? now->Find(key) : nullptr;
        if (!other || other->Dump() != value.Dump()) why += " " + key;
      }
    }
    spdlog::warn(
        "Slurm job {} ({}) of the previous run: {}; cancelled, submitted "
        "again",
        *id, name, why);
    (void)client_.Cancel(*id);
    return 0;
  }
  count("reattached");
  return *id;
}

void SlurmExecutor::CountRestart(const std::string& outcome) {
  std::lock_guard<std::mutex> lock(mu_);
  ++stats_.restart_runs[outcome];
}

StatusOr<sandbox::Result> SlurmExecutor::RunOnce(
    const sandbox::Options& options, const RunLabel& label,
    const std::string& name, const std::string& dir, int requeues,
    bool* requeue) {
  *requeue = false;
  Store* store = label.job_id > 0 ? label.store : nullptr;
  const std::string request = sandbox::OptionsToJson(options).Dump();
  std::string store_error;
  int64_t id = 0;
  if (store && requeues == 0) {
    ASSIGN_OR_RETURN(id, FindLeftJob(store, name, dir, request));
  }
  const bool attached = id != 0;
  if (!attached) {
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::create_directories(dir, ec);
    if (ec) return IoError("cannot create " + dir + ": " + ec.message());
    fs::permissions(dir, fs::perms::owner_all, ec);
    RETURN_IF_ERROR(sandbox::WriteRunRequest(dir, options));
    if (store) {
      SlurmJobRecord rec;
      rec.name = name;
      rec.job_id = label.job_id;
      rec.attempt = label.attempt;
      rec.seq = label.seq;
      rec.requeues = requeues;
      rec.submitted_ms = NowMs();
      RETURN_IF_ERROR(RecordSubmitting(store, rec));
    }
    ASSIGN_OR_RETURN(id,
                     client_.Submit(RunJobSpec(options_.run, options, name, dir,
                                               options_.time_limit_minutes)));
    if (store) Note(RecordSlurmId(store, name, id), &store_error);
  }
  Track(name, id);
  const Clock::time_point submitted = Clock::now();
  std::optional<Clock::time_point> started;
  bool timed_out = false;
  const double wall = options.limits.wall_seconds;
  auto stop = [&] {
    if (wall > 0 && started &&
        Since(*started) > wall + options_.timeout_grace_seconds) {
      timed_out = true;
      return true;
    }
    std::lock_guard<std::mutex> lock(mu_);
    return killed_;
  };
  auto on_state = [&](const JobInfo& info) {
    bool first_start = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      states_[name] = info.state;
    }
    if (!started && info.state != JobState::kPending) {
      started = Clock::now();
      first_start = true;
    }
    if (store && first_start && !IsFinished(info.state)) {
      Note(RecordState(store, name, std::string(JobStateName(info.state)),
                       false, NowMs(), std::nullopt),
           &store_error);
    }
  };
  StatusOr<JobInfo> waited =
      WaitForJob(client_, id, options_.run.poll_seconds, stop, on_state);
  Untrack(name);
  if (!store_error.empty()) {
    spdlog::warn("Slurm job {} ({}): not recorded in the store: {}", id, name,
                 store_error);
  }
  const double wait_s =
      started ? std::chrono::duration<double>(*started - submitted).count()
              : -1;
  const double run_s = started ? Since(*started) : -1;
  auto finish = [&](const std::string& state) {
    Count(state, attached ? -1 : wait_s, run_s);
    if (store) {
      Note(RecordState(store, name, state, true, std::nullopt, NowMs()),
           &store_error);
    }
  };
  if (!waited.ok()) {
    if (waited.status().code() != StatusCode::kCancelled) {
      return waited.status();  // Transient: the record stays, to reattach.
    }
    finish("CANCELLED");
    if (!timed_out) {
      return FailedPrecondition("shutting down: Slurm job " +
                                std::to_string(id) + " cancelled");
    }
    sandbox::Result r;
    r.timed_out = true;
    r.signal = SIGKILL;
    r.wall_seconds = run_s;
    r.stderr_data = "Slurm job " + std::to_string(id) +
                    " ran past its wall limit: cancelled\n";
    return r;
  }
  const JobState state = waited->state;
  bool cancelled_outside = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_outside = state == JobState::kCancelled && !killed_;
  }
  StatusOr<sandbox::Result> r =
      FinishedRunResult(dir, name, id, state, options.limits);
  if (IsClusterFailure(state) || (cancelled_outside && !r.ok()) ||
      (attached && state == JobState::kUnknown && !r.ok())) {
    finish(std::string(JobStateName(state)));
    *requeue = true;
    return IoError("Slurm job " + std::to_string(id) + " (" +
                   std::string(JobStateName(state)) +
                   "): lost to the cluster, to be requeued");
  }
  finish(state == JobState::kUnknown && r.ok()
             ? std::string("COMPLETED")
             : std::string(JobStateName(state)));
  return r;
}

StatusOr<sandbox::Result> SlurmExecutor::Run(const sandbox::Options& given,
                                             const RunLabel& label) {
  sandbox::Options options = given;
  AddRunnerDefaults(defaults_, &options);
  if (!PathIsUnder(options.work_dir, options_.run.shared_dir)) {
    return InvalidArgument(
        "work dir " + options.work_dir + " is not under the shared directory " +
        options_.run.shared_dir + ": a compute node would not see it");
  }
  std::string name;
  {
    std::unique_lock<std::mutex> lock(mu_);
    slot_free_.wait(lock,
                    [&] { return killed_ || in_flight_ < options_.max_jobs; });
    if (killed_) return FailedPrecondition("shutting down: run refused");
    ++in_flight_;
    ++total_runs_;
    name = options_.run.job_name_prefix +
           (label.job_id > 0 ? "-j" + std::to_string(label.job_id) + "-r" +
                                   std::to_string(label.seq)
                             : "-x" + std::to_string(NowMs()) + "-" +
                                   std::to_string(adhoc_++));
  }
  const std::string dir = options_.run.shared_dir + "/runs/" + name;
  StatusOr<sandbox::Result> r = IoError("not run");
  for (int requeues = 0;; ++requeues) {
    bool requeue = false;
    r = RunOnce(options, label, name, dir, requeues, &requeue);
    if (!requeue || requeues >= options_.max_requeues) break;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (killed_) break;
      ++stats_.requeued;
    }
    if (label.store && label.job_id > 0) {
      (void)RecordRequeue(label.store, name);
    }
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    --in_flight_;
  }
  slot_free_.notify_all();
  if (r.ok()) {
    std::error_code ec;
    fs::remove_all(dir, ec);  // Its work dir holds what the step reads.
  }
  return r;
}

void SlurmExecutor::KillAll() {
  std::map<std::string, int64_t> jobs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    killed_ = true;
    jobs = jobs_;
  }
  slot_free_.notify_all();
  for (const auto& [name, id] : jobs) (void)client_.Cancel(id);
}

StatusOr<std::vector<std::string>> SlurmExecutor::LeftByPreviousRun(
    Store* store) const {
  ASSIGN_OR_RETURN(std::vector<SlurmJobRecord> left,
                   UnfinishedJobRecords(store, 0));
  std::vector<std::string> names;
  for (const SlurmJobRecord& r : left) names.push_back(r.name);
  return names;
}

StatusOr<std::vector<std::string>> SlurmExecutor::CancelOrphans(Store* store) {
  ASSIGN_OR_RETURN(std::vector<SlurmJobRecord> left,
                   UnfinishedJobRecords(store, 0));
  JobQueue queue(store);
  std::vector<std::string> cancelled;
  for (const SlurmJobRecord& r : left) {
    StatusOr<Job> job = queue.Get(r.job_id);
    if (job.ok() && (job->state == orchestrator::JobState::kQueued ||
                     job->state == orchestrator::JobState::kLeased)) {
      continue;  // Its step runs again and reattaches.
    }
    if (!job.ok() && job.status().code() != StatusCode::kNotFound) {
      return job.status();
    }
    std::vector<int64_t> ids;
    if (r.slurm_id) {
      ids.push_back(*r.slurm_id);
    } else {
      ASSIGN_OR_RETURN(std::vector<JobInfo> named, client_.ListJobs(r.name));
      for (const JobInfo& j : named) {
        if (j.name == r.name && !IsFinished(j.state)) ids.push_back(j.id);
      }
    }
    for (int64_t id : ids) RETURN_IF_ERROR(client_.Cancel(id));
    RETURN_IF_ERROR(
        RecordState(store, r.name, "CANCELLED", true, std::nullopt, NowMs()));
    cancelled.push_back(r.name);
  }
  return cancelled;
}

bool SlurmExecutor::MayHaveLiveRuns(int64_t job_id, Store* store) const {
  if (store == nullptr || job_id <= 0) return false;
  StatusOr<std::vector<SlurmJobRecord>> left =
      UnfinishedJobRecords(store, job_id);
  return !left.ok() || !left->empty();
}

int SlurmExecutor::running() const {
  std::lock_guard<std::mutex> lock(mu_);
  return in_flight_;
}

int64_t SlurmExecutor::total_runs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return total_runs_;
}

ExecutorStats SlurmExecutor::Stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  ExecutorStats s = stats_;
  for (const auto& [name, state] : states_) {
    if (!IsFinished(state)) ++s.runs_by_state[std::string(JobStateName(state))];
  }
  return s;
}

}  // namespace trench::orchestrator::slurm
