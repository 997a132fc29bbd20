// Helpers for the store tests: a fresh temporary directory per test and a
// fork helper for crash tests.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <functional>
#include <ostream>
#include <string>

#include "orchestrator/store/store.h"

namespace trench::orchestrator {
// gtest prints states by name.
inline void PrintTo(BugState state, std::ostream* os) {
  *os << BugStateName(state);
}
}  // namespace trench::orchestrator

namespace trench::orchestrator::testing {

// A test fixture owning a temporary directory, removed afterwards.
class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = ::testing::TempDir() + "trench-store-XXXXXX";
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    path_ = dir_ + "/trench.db";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Store> OpenStore(Clock* clock) {
    StoreOptions options;
    options.clock = clock;
    auto store = Store::Open(path_, options);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? std::move(store).value() : nullptr;
  }

  std::string dir_;
  std::string path_;
  FakeClock clock_;
};

// Forks a child that runs `body(ack_fd)`; the child may write one byte to
// ack_fd per acknowledged (committed) step. The parent reads `acks` bytes,
// then SIGKILLs the child (unless it already exited) and reaps it. Returns
// the number of bytes read (less than `acks` when the child ended first).
// The child never returns into the test: it ends with _exit().
inline int RunChildAndKill(const std::function<void(int ack_fd)>& body,
                           int acks) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    body(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  int got = 0;
  char c;
  while (got < acks && read(fds[0], &c, 1) == 1) ++got;
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  close(fds[0]);
  return got;
}

inline void Ack(int fd) {
  char c = 'x';
  if (write(fd, &c, 1) != 1) _exit(3);
}

}  // namespace trench::orchestrator::testing
