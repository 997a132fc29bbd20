// The progress reporter (orchestrator/cli/progress.h): a status line on a
// terminal, nothing otherwise. The real `trench triage` is run with its
// stderr on a pseudo-terminal (forkpty) and on a pipe.
#include "orchestrator/cli/progress.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

namespace trench::cli {
namespace {

namespace fs = std::filesystem;

const fs::path kBin = TRENCH_BINARY_DIR;
const fs::path kWitness = fs::path(TRENCH_SOURCE_DIR) / "tests" / "bugzoo" /
                          "05-algsimp-sub-self-float" / "witness";

TEST(ProgressTest, IsTerminalTellsAPtyFromAPipe) {
  int master = -1, slave = -1;
  ASSERT_EQ(openpty(&master, &slave, nullptr, nullptr, nullptr), 0);
  EXPECT_TRUE(IsTerminal(slave));
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  EXPECT_FALSE(IsTerminal(fds[1]));
  for (int fd : {master, slave, fds[0], fds[1]}) close(fd);
}

TEST(ProgressTest, OneLineRewrittenInPlaceOnATerminal) {
  std::ostringstream term;
  {
    Progress p(&term, true);
    p.Update("fuzz: 10 programs");
    p.Update("fuzz: 20 programs\x1b[2J");  // Stranger text is escaped.
    p.Print(term, "finding 1\n");
  }  // Finish: the line is erased.
  EXPECT_EQ(term.str(),
            "\rfuzz: 10 programs\x1b[K"
            "\rfuzz: 20 programs\\x1b[2J\x1b[K"
            "\r\x1b[Kfinding 1\n"
            "\rfuzz: 20 programs\\x1b[2J\x1b[K"
            "\r\x1b[K");
}

TEST(ProgressTest, SilentWhenNotATerminal) {
  std::ostringstream pipe_like, out;
  {
    Progress p(&pipe_like, false);
    p.Update("fuzz: 10 programs");
    p.Print(out, "finding 1\n");
    ProgressTicker ticker(&p, [] { return std::string("tick"); });
    p.Finish();
  }
  EXPECT_EQ(pipe_like.str(), "");
  EXPECT_EQ(out.str(), "finding 1\n");  // Output still goes through.
}

TEST(ProgressTest, TickerShowsItsStatusAtOnce) {
  std::ostringstream term;
  Progress p(&term, true);
  {
    ProgressTicker ticker(
        &p, [] { return std::string("triage: verdict"); },
        std::chrono::hours(1));
  }
  EXPECT_EQ(term.str(), "\rtriage: verdict\x1b[K");
}

// Runs `trench triage` (a passing case) with stderr on a pty (`pty`) or a
// pipe; returns what stderr got.
std::string TriageStderr(bool pty, const fs::path& out_dir) {
  const std::string trench = (kBin / "trench").string();
  const std::string hlo_run = (kBin / "hlo-run").string();
  std::vector<std::string> args = {trench,  "triage",         kWitness.string(),
                                   "--out", out_dir.string(), "--hlo-run",
                                   hlo_run};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int read_fd = -1;
  pid_t pid;
  if (pty) {
    int master = -1, slave = -1;
    if (openpty(&master, &slave, nullptr, nullptr, nullptr) != 0) return "?";
    pid = fork();
    if (pid == 0) {
      dup2(slave, 2);
      int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, 1);  // stdout is not the subject.
      close(master);
      close(slave);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(slave);
    read_fd = master;
  } else {
    int fds[2];
    if (pipe(fds) != 0) return "?";
    pid = fork();
    if (pid == 0) {
      dup2(fds[1], 2);
      int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, 1);
      close(fds[0]);
      close(fds[1]);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(fds[1]);
    read_fd = fds[0];
  }
  std::string got;
  char buf[4096];
  ssize_t n;
  // A pty's master reads EIO once the child is gone: the end, as EOF.
  while ((n = read(read_fd, buf, sizeof(buf))) > 0) got.append(buf, n);
  close(read_fd);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << got;
  return got;
}

TEST(ProgressTest, TriageShowsProgressOnATerminalOnly) {
  std::string t = ::testing::TempDir() + "trench-progress-XXXXXX";
  ASSERT_NE(mkdtemp(t.data()), nullptr);
  const fs::path dir = t;
  const std::string on_pty = TriageStderr(true, dir / "pty");
  EXPECT_NE(on_pty.find("\rtriage: verdict of " + kWitness.string()),
            std::string::npos)
      << on_pty;
  EXPECT_NE(on_pty.find("\x1b[K"), std::string::npos) << on_pty;
  const std::string on_pipe = TriageStderr(false, dir / "pipe");
  EXPECT_EQ(on_pipe, "");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trench::cli
