// Child processes: exit codes, signals, bounded capture, line workers.
#include "base/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "tests/triage/case/hlo_diff_test_util.h"

namespace trench::hlo_diff {
namespace {

TEST(BoundedCaptureTest, KeepsHeadAndTail) {
  BoundedCapture c(8);
  c.Append("abcdefghijkl", 12);
  c.Append("\nlast line\n", 11);
  EXPECT_EQ(c.str(), "abcd\n[... 15 bytes dropped ...]\nine\n");
  EXPECT_EQ(c.LastLine(), "ine");
  BoundedCapture small(100);
  small.Append("one\ntwo\n\n", 9);
  EXPECT_EQ(small.str(), "one\ntwo\n\n");
  EXPECT_EQ(small.LastLine(), "two");
}

TEST(RunProcessTest, ExitCodeSignalAndOutput) {
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo out; echo err >&2; exit 7"};
  StatusOr<ProcessResult> r = RunProcess(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 7);
  EXPECT_EQ(r->signal, 0);
  EXPECT_EQ(r->out, "out\n");
  EXPECT_EQ(r->err_last_line, "err");

  spec.argv = {"/bin/sh", "-c", "kill -SEGV $$"};
  r = RunProcess(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->signal, SIGSEGV);
  EXPECT_FALSE(r->timed_out);

  spec.argv = {"/bin/sh", "-c", "echo \"$HLO_DIFF_TEST_VAR\""};
  spec.env = {{"HLO_DIFF_TEST_VAR", "from-env"}};
  r = RunProcess(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->out, "from-env\n");
}

TEST(RunProcessTest, TimeoutKillsTheProcessGroup) {
  ProcessSpec spec;
  // The grandchild keeps stdout open: only killing the group ends it.
  spec.argv = {"/bin/sh", "-c", "sleep 60 & sleep 60; echo never"};
  spec.timeout_seconds = 0.3;
  StatusOr<ProcessResult> r = RunProcess(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->out, "");
}

// A run that waits for a CPU while other work takes it (a busy loop on
// the same CPU, the run at idle priority) is not timed out while it
// could not run: at kMaxTimeoutStretch times the limit it is killed as
// starved, not as a slow program. The same run alone times out at the
// limit, not starved, unless the machine's other work starved it too:
// then it is killed as starved at the stretched limit, never in between.
TEST(RunProcessTest, AStarvedRunIsNotATimeout) {
  if (::access("/usr/bin/taskset", X_OK) != 0) GTEST_SKIP() << "no taskset";
  const std::string spin = "while :; do :; done";
  ProcessSpec alone;
  alone.argv = {"/usr/bin/taskset", "-c", "0", "/bin/sh", "-c", spin};
  alone.timeout_seconds = 0.4;
  StatusOr<ProcessResult> a = RunProcess(alone);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(a->timed_out);
  // Starvation needs the kernel's run-queue accounting; without it the
  // run times out as before.
  std::ifstream schedstat("/proc/self/schedstat");
  unsigned long long run = 0, wait = 0;
  if (!(schedstat >> run >> wait)) {
    EXPECT_LT(a->seconds, 0.4 * kMaxTimeoutStretch);
    GTEST_SKIP() << "no /proc/PID/schedstat";
  }
  if (a->starved) {
    EXPECT_GE(a->seconds, 0.4 * kMaxTimeoutStretch);
  } else {
    EXPECT_LT(a->seconds, 0.4 * kMaxTimeoutStretch);
  }
  ProcessSpec hog;
  hog.argv = {"/usr/bin/taskset", "-c", "0", "/bin/sh", "-c", spin};
  hog.timeout_seconds = 5;
  std::thread hogger([&] { (void)RunProcess(hog); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // SCHED_IDLE, not nice 19: the test may itself run niced (nice 10
  // leaves a nice-19 task an eighth of the CPU, enough not to starve).
  ProcessSpec starved;
  if (::access("/usr/bin/chrt", X_OK) == 0) {
    starved.argv = {"/usr/bin/taskset", "-c",     "0",
                    "/usr/bin/chrt",    "--idle", "0",
                    "/bin/sh",          "-c",     spin};
  } else {
    starved.argv = {"/usr/bin/taskset", "-c", "0", "/usr/bin/nice", "-n", "19",
                    "/bin/sh",          "-c", spin};
  }
  starved.timeout_seconds = 0.4;
  StatusOr<ProcessResult> s = RunProcess(starved);
  hogger.join();
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->timed_out);
  EXPECT_TRUE(s->starved) << s->seconds;
  EXPECT_GE(s->seconds, 0.4 * kMaxTimeoutStretch);
}

TEST(RunProcessTest, MissingProgramExits127) {
  ProcessSpec spec;
  spec.argv = {"/nonexistent/tool"};
  StatusOr<ProcessResult> r = RunProcess(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->exit_code, 127);
  EXPECT_NE(r->err.find("/nonexistent/tool"), std::string::npos);
}

TEST(LineProcessTest, AnswersLinesAndReportsDeath) {
  LineProcess p;
  ProcessSpec spec;
  spec.argv = {"/bin/sh", "-c",
               "while read -r l; do [ \"$l\" = die ] && kill -KILL $$; "
               "echo \"got $l\"; done"};
  ASSERT_TRUE(p.Start(spec).ok());
  StatusOr<std::string> a = p.Request("one", 30);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, "got one");
  EXPECT_TRUE(p.Alive());
  a = p.Request("die", 30);
  EXPECT_FALSE(a.ok());
  EXPECT_FALSE(p.running());
  EXPECT_EQ(p.last_exit().signal, SIGKILL);
}

}  // namespace
}  // namespace trench::hlo_diff
