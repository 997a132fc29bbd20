// The Slurm commands (slurm_client.h).
#include "orchestrator/slurm/slurm_client.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <utility>

#include "base/display_text.h"
#include "base/lines.h"
#include "base/subprocess.h"

namespace trench::orchestrator::slurm {
namespace {

constexpr std::pair<JobState, std::string_view> kStateNames[] = {
    {JobState::kPending, "PENDING"},
    {JobState::kRunning, "RUNNING"},
    {JobState::kSuspended, "SUSPENDED"},
    {JobState::kCompleting, "COMPLETING"},
    {JobState::kCompleted, "COMPLETED"},
    {JobState::kFailed, "FAILED"},
    {JobState::kCancelled, "CANCELLED"},
    {JobState::kTimeout, "TIMEOUT"},
    {JobState::kNodeFail, "NODE_FAIL"},
    {JobState::kPreempted, "PREEMPTED"},
    {JobState::kBootFail, "BOOT_FAIL"},
    {JobState::kDeadline, "DEADLINE"},
    {JobState::kOutOfMemory, "OUT_OF_MEMORY"},
    {JobState::kRequeued, "REQUEUED"},
    {JobState::kUnknown, "UNKNOWN"},
};

std::optional<int64_t> ParseId(std::string_view s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v <= 0) {
    return std::nullopt;
  }
  return v;
}

// "Key=Value" fields of one `scontrol show job -o` line (values end at the
// next space; scontrol's one-line form).
std::string Field(const std::string& line, const std::string& key) {
  const std::string needle = key + "=";
  size_t at = 0;
  while ((at = line.find(needle, at)) != std::string::npos) {
    if (at == 0 || line[at - 1] == ' ') {
      const size_t start = at + needle.size();
      const size_t end = line.find(' ', start);
      return line.substr(
          start, end == std::string::npos ? std::string::npos : end - start);
    }
    at += needle.size();
  }
  return "";
}

Status CheckSpec(const JobSpec& job) {
  if (!IsSlurmToken(job.name)) {
    return InvalidArgument("job name '" + job.name +
                           "' is not a Slurm token ([A-Za-z0-9_.-], 1-64)");
  }
  for (const auto& [what, value] :
       {std::pair{"partition", &job.partition}, {"account", &job.account}}) {
    if (!value->empty() && !IsSlurmToken(*value)) {
      return InvalidArgument(std::string(what) + " '" + *value +
                             "' is not a Slurm token");
    }
  }
  if (job.work_dir.empty() || job.work_dir[0] != '/' ||
      !std::filesystem::is_directory(job.work_dir)) {
    return InvalidArgument("work_dir '" + job.work_dir +
                           "' is not an existing absolute directory");
  }
  if (job.argv.empty() || job.argv[0].empty() || job.argv[0][0] != '/') {
    return InvalidArgument("the job's program must be an absolute path");
  }
  if (job.cpus < 1 || job.time_limit_minutes < 0) {
    return InvalidArgument("cpus must be >= 1 and the time limit >= 0");
  }
  for (const std::string& a : job.extra_args) {
    const bool printable = std::all_of(a.begin(), a.end(), [](unsigned char c) {
      return c > 0x20 && c < 0x7f;
    });
    if (!printable || a.rfind("--", 0) != 0 || a.size() < 3) {
      return InvalidArgument("extra sbatch argument '" + a +
                             "' is not --option or --option=value");
    }
  }
  return Status::Ok();
}

}  // namespace

std::string_view JobStateName(JobState s) {
  for (const auto& [state, name] : kStateNames) {
    if (state == s) return name;
  }
  return "UNKNOWN";
}

JobState ParseJobState(std::string_view name) {
  name = name.substr(0, name.find(' '));
  if (!name.empty() && name.back() == '+') name.remove_suffix(1);
  for (const auto& [state, n] : kStateNames) {
    if (n == name) return state;
  }
  return JobState::kUnknown;
}

bool IsFinished(JobState s) {
  switch (s) {
    case JobState::kCompleted:
    case JobState::kFailed:
    case JobState::kCancelled:
    case JobState::kTimeout:
    case JobState::kNodeFail:
    case JobState::kPreempted:
    case JobState::kBootFail:
    case JobState::kDeadline:
    case JobState::kOutOfMemory:
      return true;
    default:
      return false;
  }
}

bool IsClusterFailure(JobState s) {
  return s == JobState::kNodeFail || s == JobState::kPreempted ||
         s == JobState::kBootFail;
}

bool IsSlurmToken(std::string_view s) {
  if (s.empty() || s.size() > 64 || s[0] == '-') return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '_' || c == '.' || c == '-';
  });
}

std::string ShellQuote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

SlurmClient::SlurmClient(ClientOptions options)
    : options_(std::move(options)) {}

StatusOr<SlurmClient::Output> SlurmClient::RunCommand(
    const std::string& program, std::vector<std::string> args) const {
  const std::string path = hlo_diff::FindProgram(
      options_.bin_dir.empty() ? program : options_.bin_dir + "/" + program);
  if (path.empty()) {
    return FailedPrecondition("Slurm's " + program +
                              " is not installed (Debian package slurm-client "
                              "or slurm-wlm)");
  }
  hlo_diff::ProcessSpec spec;
  spec.argv = {path};
  for (std::string& a : args) spec.argv.push_back(std::move(a));
  if (!options_.slurm_conf.empty()) {
    spec.env.emplace_back("SLURM_CONF", options_.slurm_conf);
  }
  spec.timeout_seconds = options_.command_timeout_seconds;
  spec.capture_bytes = 1 << 20;
  StatusOr<hlo_diff::ProcessResult> r = hlo_diff::RunProcess(spec);
  if (!r.ok()) {
    return IoError(program + " could not be run: " + r.status().message());
  }
  if (r->timed_out) {
    return Status(StatusCode::kDeadlineExceeded,
                  program + " did not answer in " +
                      std::to_string(options_.command_timeout_seconds) + " s");
  }
  // What Slurm's commands print reaches logs and messages: one line,
  // no controls.
  return Output{std::move(r->out), OneLine(r->err_last_line, 300),
                r->exit_code};
}

Status SlurmClient::CheckPartition(const std::string& partition) const {
  if (!IsSlurmToken(partition)) {
    return InvalidArgument("partition '" + partition +
                           "' is not a Slurm token");
  }
  ASSIGN_OR_RETURN(Output o, RunCommand("sinfo", {"-h", "-o", "%R %a"}));
  if (o.exit_code != 0) {
    return IoError("sinfo failed (exit " + std::to_string(o.exit_code) +
                   "): " + o.err_last_line);
  }
  std::istringstream lines(o.out);
  std::string line, known;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string name, avail;
    words >> name >> avail;
    if (name.empty()) continue;
    if (name == partition) {
      if (avail == "up") return Status::Ok();
      return FailedPrecondition("Slurm partition '" + partition + "' is " +
                                avail + ", not up");
    }
    known += (known.empty() ? "" : ", ") + name;
  }
  return FailedPrecondition("Slurm partition '" + partition +
                            "' does not exist (sinfo shows: " +
                            (known.empty() ? "none" : known) + ")");
}

StatusOr<int64_t> SlurmClient::Submit(const JobSpec& job) const {
  RETURN_IF_ERROR(CheckSpec(job));
  const std::string script = job.work_dir + "/" + job.name + ".sbatch";
  {
    std::string text = "#!/bin/sh\nexec";
    for (const std::string& a : job.argv) text += " " + ShellQuote(a);
    text += "\n";
    std::ofstream f(script, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f.flush()) return IoError("cannot write " + script);
  }
  std::vector<std::string> args = {
      "--parsable",
      "--job-name=" + job.name,
      "--chdir=" + job.work_dir,
      "--output=" + job.work_dir + "/" + job.name + ".out",
      "--cpus-per-task=" + std::to_string(job.cpus),
      "--no-requeue",
  };
  if (!job.partition.empty()) args.push_back("--partition=" + job.partition);
  if (!job.account.empty()) args.push_back("--account=" + job.account);
  if (job.time_limit_minutes > 0) {
    args.push_back("--time=" + std::to_string(job.time_limit_minutes));
  }
  if (job.memory_mb > 0)
    args.push_back("--mem=" + std::to_string(job.memory_mb));
  for (const std::string& a : job.extra_args) args.push_back(a);
  args.push_back(script);
  ASSIGN_OR_RETURN(Output o, RunCommand("sbatch", std::move(args)));
  if (o.exit_code != 0) {
    return FailedPrecondition("sbatch refused job '" + job.name +
                              "': " + o.err_last_line);
  }
  // --parsable: "id" or "id;cluster".
  const std::string first =
      std::string(TrimWhitespace(o.out.substr(0, o.out.find(';'))));
  std::optional<int64_t> id = ParseId(first);
  if (!id) {
    return Internal("sbatch printed no job id: '" + OneLine(o.out, 200) + "'");
  }
  return *id;
}

StatusOr<JobInfo> SlurmClient::Query(int64_t job_id) const {
  ASSIGN_OR_RETURN(Output o, RunCommand("scontrol", {"show", "job", "-o",
                                                     std::to_string(job_id)}));
  if (o.exit_code != 0) {
    if (o.err_last_line.find("Invalid job id") != std::string::npos) {
      return NotFound("Slurm does not know job " + std::to_string(job_id));
    }
    return IoError("scontrol failed (exit " + std::to_string(o.exit_code) +
                   "): " + o.err_last_line);
  }
  const std::string line =
      std::string(TrimWhitespace(o.out.substr(0, o.out.find('\n'))));
  JobInfo info;
  std::optional<int64_t> id = ParseId(Field(line, "JobId"));
  if (!id || *id != job_id) {
    return Internal("scontrol printed no line for job " +
                    std::to_string(job_id));
  }
  info.id = *id;
  info.name = Field(line, "JobName");
  info.state = ParseJobState(Field(line, "JobState"));
  info.reason = Field(line, "Reason");
  const std::string exit = Field(line, "ExitCode");  // "code:signal"
  const size_t colon = exit.find(':');
  if (colon != std::string::npos) {
    int code = -1, sig = 0;
    std::from_chars(exit.data(), exit.data() + colon, code);
    std::from_chars(exit.data() + colon + 1, exit.data() + exit.size(), sig);
    info.exit_code = code;
    info.signal = sig;
  }
  return info;
}

StatusOr<std::vector<JobInfo>> SlurmClient::ListJobs(
    const std::string& name_prefix) const {
  if (!IsSlurmToken(name_prefix)) {
    return InvalidArgument("job name prefix '" + name_prefix +
                           "' is not a Slurm token");
  }
  ASSIGN_OR_RETURN(Output o,
                   RunCommand("squeue", {"-h", "-t", "all", "-o", "%i %T %j"}));
  if (o.exit_code != 0) {
    return IoError("squeue failed (exit " + std::to_string(o.exit_code) +
                   "): " + o.err_last_line);
  }
  std::vector<JobInfo> jobs;
  std::istringstream lines(o.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string id, state, name;
    words >> id >> state >> name;
    if (name.rfind(name_prefix, 0) != 0) continue;
    std::optional<int64_t> n = ParseId(id);
    if (!n) continue;  // An array or het job's "1_2": not ours.
    JobInfo info;
    info.id = *n;
    info.name = name;
    info.state = ParseJobState(state);
    jobs.push_back(std::move(info));
  }
  std::sort(jobs.begin(), jobs.end(),
            [](const JobInfo& a, const JobInfo& b) { return a.id < b.id; });
  return jobs;
}

Status SlurmClient::Cancel(int64_t job_id) const {
  ASSIGN_OR_RETURN(Output o, RunCommand("scancel", {std::to_string(job_id)}));
  if (o.exit_code != 0 &&
      o.err_last_line.find("Invalid job id") == std::string::npos &&
      o.err_last_line.find("already completing or completed") ==
          std::string::npos) {
    return IoError("scancel " + std::to_string(job_id) +
                   " failed: " + o.err_last_line);
  }
  return Status::Ok();
}

}  // namespace trench::orchestrator::slurm
