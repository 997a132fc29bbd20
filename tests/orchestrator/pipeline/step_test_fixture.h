// A fixture for running pipeline steps for real: a real SQLite store, a
// real git mirror, the tool runner with its own event loop, the daemon's
// directories (readable by the sandbox's uid), and the project's own build
// (TRENCH_BINARY_DIR) as the built target. Tests commit files with Commit,
// which records a successful build of each commit.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "git/git_repo.h"
#include "orchestrator/pipeline/pipeline.h"
#include "orchestrator/pipeline/tool_runner.h"
#include "sandbox/limited_dir.h"
#include "tests/orchestrator/store/store_test_util.h"

namespace trench::orchestrator::testing {

class StepTest : public StoreTest {
 protected:
  StepTest()
      : guard_(boost::asio::make_work_guard(ioc_)),
        loop_([this] { ioc_.run(); }),
        runner_(ioc_, 2) {}
  ~StepTest() override {
    guard_.reset();
    ioc_.stop();
    loop_.join();
  }

  void SetUp() override {
    StoreTest::SetUp();
    ::chmod(dir_.c_str(), 0755);  // The sandbox's uid walks through it.
    paths_ = std::make_unique<DaemonPaths>(dir_ + "/var");
    for (const std::string& d :
         {paths_->cases, paths_->work, paths_->build_cache}) {
      std::filesystem::create_directories(d);
    }
    auto repo = hlo_bisect::GitRepo::Init(paths_->mirror);
    ASSERT_TRUE(repo.ok()) << repo.status().ToString();
    repo_ = std::move(*repo);
    store_ = OpenStore(SystemClock::Get());
    ASSERT_NE(store_, nullptr);
    queue_ = std::make_unique<JobQueue>(store_.get());
    config_.prompts_dir = std::string(TRENCH_SOURCE_DIR) + "/prompts";
    ctx_.config = &config_;
    ctx_.paths = paths_.get();
    ctx_.store = store_.get();
    ctx_.queue = queue_.get();
    ctx_.runner = &runner_;
    ctx_.tools_dir = TRENCH_BINARY_DIR;
  }

  void TearDown() override {
    // Scratch() mounted tmpfs dirs there (as root).
    if (paths_) sandbox::SweepLimitedDirs(paths_->work);
    StoreTest::TearDown();
  }

  // Commits `files` on main after the last commit and records a build of
  // it in `bin` (none when empty). Returns the commit.
  std::string Commit(const std::vector<hlo_bisect::FileChange>& files,
                     const std::string& message = "commit",
                     const std::string& bin = TRENCH_BINARY_DIR) {
    StatusOr<std::string> sha =
        repo_->CommitFiles(head_, files, message, "refs/heads/main");
    EXPECT_TRUE(sha.ok()) << sha.status().ToString();
    head_ = sha.ok() ? *sha : head_;
    if (!bin.empty()) {
      EXPECT_TRUE(store_->PutBuild(head_, "", BuildStatus::kOk, bin, "").ok());
    }
    return head_;
  }

  // Makes the build directory `name` (paths_->build_cache/name/bin)
  // readable, and its `scripts` executable, by the sandbox's uid.
  void OpenBinToSandbox(const std::string& name,
                        const std::vector<std::string>& scripts) {
    namespace fs = std::filesystem;
    const std::string bin = paths_->build_cache + "/" + name + "/bin";
    for (const std::string& s : scripts) {
      fs::permissions(bin + "/" + s,
                      fs::perms::owner_all | fs::perms::group_read |
                          fs::perms::group_exec | fs::perms::others_read |
                          fs::perms::others_exec);
    }
    for (const std::string& d :
         {paths_->build_cache, paths_->build_cache + "/" + name, bin}) {
      ::chmod(d.c_str(), 0755);
    }
  }

  // What another worker, or the daemon restarted, has: a store connection
  // and a queue of its own, and ctx_ using them.
  struct Connection {
    std::unique_ptr<Store> store;
    std::unique_ptr<JobQueue> queue;
    StepContext ctx;
  };
  StatusOr<Connection> OwnConnection() const {
    StoreOptions options;
    options.clock = SystemClock::Get();
    Connection c;
    ASSIGN_OR_RETURN(c.store, Store::Open(path_, options));
    c.queue = std::make_unique<JobQueue>(c.store.get());
    c.ctx = ctx_;
    c.ctx.store = c.store.get();
    c.ctx.queue = c.queue.get();
    return c;
  }

  // A job of `kind` with `payload`, numbered after the last one.
  Job MakeJob(const std::string& kind, Json payload) {
    Job job;
    job.id = ++jobs_;
    job.kind = kind;
    job.payload = std::move(payload);
    return job;
  }

  static Json J(std::string_view text) {
    StatusOr<Json> j = ParseJson(text);
    EXPECT_TRUE(j.ok()) << j.status().ToString() << "\n" << text;
    return j.ok() ? *j : Json();
  }

  boost::asio::io_context ioc_;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type>
      guard_;
  std::thread loop_;
  ToolRunner runner_;
  std::unique_ptr<DaemonPaths> paths_;
  std::unique_ptr<hlo_bisect::GitRepo> repo_;
  std::string head_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<JobQueue> queue_;
  DaemonConfig config_;
  StepContext ctx_;
  int64_t jobs_ = 0;
};

}  // namespace trench::orchestrator::testing
