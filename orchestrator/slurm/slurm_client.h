// The Slurm commands trench uses, as a client of a real cluster (issue 22's
// executor builds on it): check a partition (sinfo), submit a batch job
// (sbatch --parsable), read a job's state and exit code (scontrol), list
// the jobs whose name starts with a prefix (squeue: a restarted daemon
// finds what it started), and cancel a job (scancel).
//
// Every command is a child process with argv only (no shell), the
// configured SLURM_CONF, and a timeout. Transient failures are kIoError (a
// command that cannot be started or fails without refusing) or
// kDeadlineExceeded (no answer in time): the caller retries, and never
// caches them as a verdict. A missing command or partition is
// kFailedPrecondition naming it; a job sbatch refuses too, with sbatch's
// last stderr line. Names that reach a command line (partition, account,
// job name) must be tokens of [A-Za-z0-9_.-] (IsSlurmToken); the job's
// program and arguments go into a batch script, each single-quoted for
// /bin/sh.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace trench::orchestrator::slurm {

struct ClientOptions {
  // Where sinfo, sbatch, squeue, scontrol and scancel are ("": looked up
  // in PATH).
  std::string bin_dir;
  // SLURM_CONF for every command ("": Slurm's default configuration).
  std::string slurm_conf;
  double command_timeout_seconds = 30;
};

// A job's state, as Slurm names it (JobState of scontrol, %T of squeue).
enum class JobState {
  kPending,
  kRunning,
  kSuspended,
  kCompleting,
  kCompleted,
  kFailed,
  kCancelled,
  kTimeout,
  kNodeFail,
  kPreempted,
  kBootFail,
  kDeadline,
  kOutOfMemory,
  kRequeued,
  kUnknown,  // A state this client does not know, or a job Slurm forgot.
};
// "PENDING", "RUNNING", ... ("UNKNOWN" for kUnknown).
std::string_view JobStateName(JobState s);
// The state named `name` (a trailing "+" and anything after a space are
// ignored, as in "CANCELLED by 0"); kUnknown for any other.
JobState ParseJobState(std::string_view name);
// Whether the job will not run again by itself.
bool IsFinished(JobState s);
// Whether the job ended because of the cluster, not the program: node
// failure, preemption, boot failure. Such a job is requeued without
// counting against its step's failures.
bool IsClusterFailure(JobState s);

// Whether `s` can go on a Slurm command line as a name: 1-64 of
// [A-Za-z0-9_.-], not starting with '-'.
bool IsSlurmToken(std::string_view s);

struct JobSpec {
  std::string name;            // --job-name (IsSlurmToken).
  std::string partition;       // --partition ("": the default partition).
  std::string account;         // --account ("": none).
  int time_limit_minutes = 0;  // --time (0: the partition's limit).
  int cpus = 1;                // --cpus-per-task.
  uint64_t memory_mb = 0;      // --mem (0: the partition's default).
  // An existing absolute directory every node sees: the job's cwd, and
  // where its batch script (<name>.sbatch) and output (<name>.out) go.
  std::string work_dir;
  // What the job runs: argv[0] is an absolute path.
  std::vector<std::string> argv;
  // More sbatch options, each "--option" or "--option=value" (checked:
  // printable, no whitespace).
  std::vector<std::string> extra_args;
};

struct JobInfo {
  int64_t id = 0;
  std::string name;
  JobState state = JobState::kUnknown;
  // When finished: the program's exit code, or the signal that ended it
  // (scontrol's ExitCode=code:signal).
  int exit_code = -1;
  int signal = 0;
  std::string reason;  // Slurm's Reason ("None" when it gives none).
};

class SlurmClient {
 public:
  explicit SlurmClient(ClientOptions options);

  // OK when `partition` exists and is up; else kFailedPrecondition naming
  // it ("Slurm partition 'x' does not exist (sinfo shows: a, b)").
  Status CheckPartition(const std::string& partition) const;
  // Submits `job`; its Slurm job id. kInvalidArgument for a bad spec.
  StatusOr<int64_t> Submit(const JobSpec& job) const;
  // The job's state now. kNotFound when Slurm no longer knows the job
  // (finished longer ago than its MinJobAge, without accounting).
  StatusOr<JobInfo> Query(int64_t job_id) const;
  // The jobs in the queue or recently finished whose name starts with
  // `name_prefix` (IsSlurmToken), in id order.
  StatusOr<std::vector<JobInfo>> ListJobs(const std::string& name_prefix) const;
  // Cancels the job (a finished or forgotten job is not an error).
  Status Cancel(int64_t job_id) const;

  const ClientOptions& options() const { return options_; }

 private:
  struct Output {
    std::string out, err_last_line;
    int exit_code = -1;
  };
  StatusOr<Output> RunCommand(const std::string& program,
                              std::vector<std::string> args) const;

  ClientOptions options_;
};

// A /bin/sh single-quoted word for `s` (embedded quotes as '\'').
std::string ShellQuote(std::string_view s);

}  // namespace trench::orchestrator::slurm
