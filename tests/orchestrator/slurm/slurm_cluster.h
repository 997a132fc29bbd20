// A real single-node Slurm cluster for tests (Debian's slurm-wlm and
// munge): munged with a generated key, slurmctld and slurmd with a
// generated slurm.conf in a fresh directory, on loopback ports that were
// free, with this machine's CPUs and 80% of its memory, one partition
// "trench". Every daemon runs in the foreground as a child of the test and
// is killed and reaped at the end; nothing is left behind but the
// directory, which is removed.
//
// Needs root (slurmd starts jobs as their user). Start() says to skip
// when the programs are missing or the test is not root.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"
#include "base/subprocess.h"
#include "tests/orchestrator/unused_port.h"

namespace trench::orchestrator::testing {

class SlurmCluster {
 public:
  static constexpr char kPartition[] = "trench";

  SlurmCluster() = default;
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;
  ~SlurmCluster() { Stop(); }

  // Starts the cluster and waits (up to 60 s) until its node is idle.
  // *skip_reason is set (and OK returned) when it cannot run here.
  Status Start(std::string* skip_reason) {
    for (const char* p : {"munged", "slurmctld", "slurmd", "sbatch", "sinfo",
                          "scontrol", "squeue", "scancel"}) {
      if (Find(p).empty()) {
        *skip_reason =
            std::string(p) + " is missing: apt-get install slurm-wlm munge";
        return Status::Ok();
      }
    }
    if (::geteuid() != 0) {
      *skip_reason = "a Slurm cluster of the test's own needs root";
      return Status::Ok();
    }
    char tmpl[] = "/tmp/trench-slurm.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) return IoError("mkdtemp");
    dir_ = tmpl;
    ::chmod(dir_.c_str(), 0755);
    for (const char* d : {"state", "spool", "log", "shared"}) {
      std::filesystem::create_directories(dir_ + "/" + d);
    }
    ::chmod((dir_ + "/shared").c_str(), 01777);
    {
      std::ofstream key(dir_ + "/munge.key", std::ios::binary);
      std::ifstream random("/dev/urandom", std::ios::binary);
      std::vector<char> bytes(1024);
      random.read(bytes.data(), bytes.size());
      key.write(bytes.data(), bytes.size());
    }
    ::chmod((dir_ + "/munge.key").c_str(), 0400);
    pids_.push_back(Spawn(
        {Find("munged"), "-F", "--force", "--key-file=" + dir_ + "/munge.key",
         "--socket=" + Socket(), "--pid-file=" + dir_ + "/munged.pid",
         "--log-file=" + dir_ + "/log/munged.log",
         "--seed-file=" + dir_ + "/munge.seed"},
        dir_ + "/log/munged.out"));
    if (!WaitFor([&] { return std::filesystem::exists(Socket()); })) {
      return Internal("munged did not start; see " + dir_ + "/log/munged.log");
    }
    RETURN_IF_ERROR(WriteConf());
    pids_.push_back(Spawn({Find("slurmctld"), "-D", "-i", "-f", conf()},
                          dir_ + "/log/slurmctld.out"));
    pids_.push_back(
        Spawn({Find("slurmd"), "-D", "-f", conf(), "-N", "localhost"},
              dir_ + "/log/slurmd.out"));
    if (!WaitFor([&] { return NodeIdle(); })) {
      return Internal("the Slurm node did not become idle in 60 s; see " +
                      dir_ + "/log/");
    }
    return Status::Ok();
  }

  void Stop() {
    for (auto it = pids_.rbegin(); it != pids_.rend(); ++it) {
      if (*it > 0) ::kill(*it, SIGTERM);
    }
    for (pid_t pid : pids_) {
      if (pid <= 0) continue;
      int status = 0;
      for (int i = 0; i < 100 && ::waitpid(pid, &status, WNOHANG) == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
    pids_.clear();
    if (!dir_.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
      dir_.clear();
    }
  }

  // SLURM_CONF for the client.
  std::string conf() const { return dir_ + "/slurm.conf"; }
  // A directory every job and the test see (mode 1777).
  std::string shared_dir() const { return dir_ + "/shared"; }

  // `scontrol update` of the node's state ("DOWN" kills its jobs as a node
  // failure would; "RESUME" brings it back, and waits until it is idle).
  // With ReturnToService=2 a downed node whose slurmd answers may be back
  // by itself: then there is nothing to resume.
  Status SetNodeState(const std::string& state) const {
    if (state == "RESUME" && NodeIdle()) return Status::Ok();
    hlo_diff::ProcessSpec spec;
    spec.argv = {Find("scontrol"), "update", "NodeName=localhost",
                 "State=" + state, "Reason=trench-test"};
    spec.env = {{"SLURM_CONF", conf()}};
    spec.timeout_seconds = 30;
    StatusOr<hlo_diff::ProcessResult> r = hlo_diff::RunProcess(spec);
    if (!r.ok()) return r.status();
    if (r->exit_code != 0) return Internal("scontrol update: " + r->err);
    if (state == "RESUME" && !WaitFor([&] { return NodeIdle(); })) {
      return Internal("the node did not come back idle");
    }
    return Status::Ok();
  }

  // Starts `argv` (argv[0] a path) as the leader of a new process group,
  // its stdout and stderr appended to `log`.
  static pid_t Spawn(const std::vector<std::string>& argv,
                     const std::string& log) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (fd >= 0) {
        ::dup2(fd, 1);
        ::dup2(fd, 2);
        ::close(fd);
      }
      std::vector<char*> args;
      for (const std::string& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      ::setpgid(0, 0);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
    return pid;
  }

 private:
  static std::string Find(const std::string& name) {
    for (const char* d : {"/usr/sbin/", "/usr/bin/"}) {
      if (::access((d + name).c_str(), X_OK) == 0) return d + name;
    }
    return hlo_diff::FindProgram(name);
  }
  std::string Socket() const { return dir_ + "/munge.sock"; }

  // Runs `argv` as a child in a process group of its own, its output
  // appended to `log`.

  template <typename F>
  static bool WaitFor(F ready) {
    for (int i = 0; i < 600; ++i) {
      if (ready()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  bool NodeIdle() const {
    hlo_diff::ProcessSpec spec;
    spec.argv = {Find("sinfo"), "-h", "-N", "-o", "%t"};
    spec.env = {{"SLURM_CONF", conf()}};
    spec.timeout_seconds = 10;
    StatusOr<hlo_diff::ProcessResult> r = hlo_diff::RunProcess(spec);
    return r.ok() && r->exit_code == 0 && r->out.rfind("idle", 0) == 0;
  }

  Status WriteConf() const {
    const int ctld = UnusedPort(), slurmd = UnusedPort();
    if (ctld <= 0 || slurmd <= 0 || ctld == slurmd) {
      return IoError("no free loopback ports for Slurm");
    }
    const long pages = ::sysconf(_SC_PHYS_PAGES);
    const long page = ::sysconf(_SC_PAGE_SIZE);
    const long memory_mb =
        pages > 0 && page > 0
            ? static_cast<long>(pages * 0.8 / (1 << 20) * page)
            : 1024;
    std::ostringstream c;
    c << "ClusterName=trenchtest\n"
      << "SlurmctldHost=localhost(127.0.0.1)\n"
      << "SlurmctldPort=" << ctld << "\nSlurmdPort=" << slurmd << "\n"
      << "AuthType=auth/munge\nCredType=cred/munge\n"
      << "AuthInfo=socket=" << Socket() << "\n"
      << "SlurmUser=root\nSlurmdUser=root\n"
      << "StateSaveLocation=" << dir_ << "/state\n"
      << "SlurmdSpoolDir=" << dir_ << "/spool\n"
      << "SlurmctldPidFile=" << dir_ << "/slurmctld.pid\n"
      << "SlurmdPidFile=" << dir_ << "/slurmd.pid\n"
      << "SlurmctldLogFile=" << dir_ << "/log/slurmctld.log\n"
      << "SlurmdLogFile=" << dir_ << "/log/slurmd.log\n"
      << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
      << "JobAcctGatherType=jobacct_gather/none\n"
      << "AccountingStorageType=accounting_storage/none\n"
      << "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\n"
      << "MpiDefault=none\nReturnToService=2\n"
      << "SchedulerType=sched/backfill\n"
      // Finished jobs stay visible to scontrol for 5 minutes.
      << "MinJobAge=300\n"
      << "NodeName=localhost NodeAddr=127.0.0.1 CPUs="
      << std::thread::hardware_concurrency() << " RealMemory=" << memory_mb
      << " State=UNKNOWN\n"
      << "PartitionName=" << kPartition
      << " Nodes=localhost Default=YES MaxTime=INFINITE State=UP\n";
    std::ofstream f(conf());
    f << c.str();
    if (!f.flush()) return IoError("cannot write " + conf());
    return Status::Ok();
  }

  std::string dir_;
  std::vector<pid_t> pids_;
};

}  // namespace trench::orchestrator::testing
