// `trench serve` checks its configuration before it starts (issue 19,
// point 4): a typo in the llm section, or an LLM brain whose key variable
// is unset, stops the start with a message naming the field or variable,
// a non-zero exit and no READY=1 for systemd.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <string>

#include "git/git_repo.h"
#include "tests/orchestrator/daemon/daemon_test_util.h"

namespace trench::orchestrator::testing {
namespace {

class ServeConfigCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "trench-serve-check-XXXXXX";
    ASSERT_NE(::mkdtemp(dir_.data()), nullptr);
    StatusOr<std::unique_ptr<hlo_bisect::GitRepo>> repo =
        hlo_bisect::GitRepo::Init(dir_ + "/repo");
    ASSERT_TRUE(repo.ok()) << repo.status().ToString();
    ASSERT_TRUE((*repo)
                    ->CommitFiles("", {{"README", std::string("target\n")}},
                                  "first", "refs/heads/main")
                    .ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Runs `trench serve` on `config` (JSON text) and returns its exit code
  // (-1: it was still running after the bound, and was killed); *log gets
  // its output.
  int Serve(const std::string& config, std::string* log) {
    const std::string path = dir_ + "/trench.json";
    std::ofstream(path) << config;
    DaemonProcess daemon(path, dir_ + "/log");
    daemon.Start();
    int status = 0;
    // A bound against a hang: a refused start returns at once.
    const bool exited =
        WaitFor([&] { return ::waitpid(daemon.pid(), &status, WNOHANG) > 0; },
                std::chrono::seconds(120), std::chrono::milliseconds(50));
    *log = ReadAll(dir_ + "/log");
    if (!exited) {
      daemon.Kill(SIGKILL);
      return -1;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  std::string Config(const std::string& llm, const std::string& brain) {
    return R"({"var_dir": ")" + dir_ + R"(/var", "repo": ")" + dir_ +
           R"(/repo", "http": {"port": 0},
              "swarm": {"reproducer": {"brain": ")" +
           brain + R"("}}, "llm": )" + llm + "}";
  }

  std::string dir_;
};

TEST_F(ServeConfigCheckTest, ATypoInTheLlmSectionStopsTheStart) {
  std::string log;
  ASSERT_EQ(Serve(Config(R"({"openai": {"base_url": "http://127.0.0.1:9/v1",
                              "model": "m", "strem": true}})",
                         "openai"),
                  &log),
            1)
      << "the daemon did not refuse a config with a typo\n"
      << log;
  EXPECT_NE(log.find("llm.openai.strem"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(dir_ + "/var/daemon.json")) << log;
}

TEST_F(ServeConfigCheckTest, AnUnsetKeyVariableStopsTheStart) {
  ::unsetenv("TRENCH_TEST_UNSET_KEY");
  std::string log;
  ASSERT_EQ(Serve(Config(R"({"openai": {"base_url": "http://127.0.0.1:9/v1",
                              "model": "m",
                              "api_key_env": "TRENCH_TEST_UNSET_KEY"}})",
                         "openai"),
                  &log),
            1)
      << "the daemon did not refuse to start without its LLM key\n"
      << log;
  EXPECT_NE(log.find("TRENCH_TEST_UNSET_KEY"), std::string::npos) << log;
  EXPECT_NE(log.find("reproducer"), std::string::npos) << log;
}

TEST_F(ServeConfigCheckTest, AnUnsetReadTokenVariableStopsTheStart) {
  // Reads were meant to be closed: starting with them open instead would
  // be the silent failure.
  ::unsetenv("TRENCH_TEST_UNSET_READ_TOKEN");
  std::string log;
  ASSERT_EQ(Serve(R"({"var_dir": ")" + dir_ + R"(/var", "repo": ")" + dir_ +
                      R"(/repo", "http": {"port": 0, "read_token_env":
                      "TRENCH_TEST_UNSET_READ_TOKEN"}})",
                  &log),
            1)
      << log;
  EXPECT_NE(log.find("TRENCH_TEST_UNSET_READ_TOKEN"), std::string::npos) << log;
  EXPECT_FALSE(fs::exists(dir_ + "/var/daemon.json")) << log;
}

}  // namespace
}  // namespace trench::orchestrator::testing
