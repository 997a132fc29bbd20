// Child processes: exit codes, signals, bounded capture, line workers.
#include "base/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>

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
