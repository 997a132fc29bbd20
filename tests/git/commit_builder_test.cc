// CommitBuilder (git/commit_builder.h) on a fake target
// repository (commit_test_util.h) whose build is a quick shell script.
#include "git/commit_builder.h"

#include <gtest/gtest.h>

#include "tests/git/commit_test_util.h"

namespace trench::hlo_bisect {
namespace {

using testing::FakeCommit;
using testing::MakeFakeRepo;
using testing::ReadText;
using testing::TempDir;
namespace fs = std::filesystem;

BuilderOptions Options(const TempDir& tmp, std::string cmd = "") {
  BuilderOptions o;
  o.work_dir = tmp / "work";
  o.cache_dir = tmp / "cache";
  o.build_command = cmd.empty() ? testing::FakeBuildCommand() : cmd;
  return o;
}

TEST(CommitBuilderTest, BuildsCachesAndReusesTheBuildDirectory) {
  TempDir tmp;
  auto f = MakeFakeRepo(tmp / "repo", 3, {});
  ASSERT_TRUE(f.repo);
  CommitBuilder builder(f.repo.get(), Options(tmp));
  StatusOr<BuildResult> r = builder.Build(f.shas[1]);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->built) << r->reason << "\n" << r->log_tail;
  EXPECT_FALSE(r->cached);
  EXPECT_EQ(r->key, f.shas[1]);
  EXPECT_EQ(r->bin_dir, tmp / "cache/" + f.shas[1] + "/bin");
  for (const std::string& b : TargetBinaries()) {
    EXPECT_TRUE(fs::exists(fs::path(r->bin_dir) / b)) << b;
  }
  EXPECT_TRUE(fs::exists(tmp / "cache/" + f.shas[1] + "/result.json"));
  // The worktree holds commit 1.
  EXPECT_EQ(ReadText(tmp / "work/src/notes/1.txt"), "note 1");
  EXPECT_FALSE(fs::exists(tmp / "work/src/notes/2.txt"));

  // Same commit again (by branch name): from the cache, no build.
  StatusOr<BuildResult> again = builder.Build("main~2");
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->built);
  EXPECT_TRUE(again->cached);
  EXPECT_EQ(builder.builds(), 1);
  EXPECT_EQ(builder.cache_hits(), 1);

  // Another commit reuses the same build directory (incremental builds).
  ASSERT_TRUE(builder.Build(f.shas[3]).ok());
  EXPECT_EQ(ReadText(tmp / "work/build/builds.txt"),
            f.shas[1] + "\n" + f.shas[3] + "\n");
  EXPECT_EQ(ReadText(tmp / "work/src/notes/3.txt"), "note 3");

  // A second builder on the same cache (a later run) builds nothing.
  CommitBuilder later(f.repo.get(), Options(tmp));
  StatusOr<BuildResult> hit = later.Build(f.shas[3]);
  ASSERT_TRUE(hit.ok());
  EXPECT_TRUE(hit->cached && hit->built);
  EXPECT_EQ(later.builds(), 0);
}

// A build flavour (the coverage flavour next to the plain build) builds in
// its own directory, so each stays incremental; its entry has its own key.
TEST(CommitBuilderTest, AFlavourBuildsInItsOwnDirectory) {
  TempDir tmp;
  auto f = MakeFakeRepo(tmp / "repo", 2, {});
  ASSERT_TRUE(f.repo);
  CommitBuilder plain(f.repo.get(), Options(tmp));
  ASSERT_TRUE(plain.Build(f.shas[1]).ok());
  BuilderOptions o = Options(tmp);
  o.flavour = "coverage";
  CommitBuilder flavoured(f.repo.get(), o);
  StatusOr<BuildResult> r =
      flavoured.BuildAs(f.shas[1], f.shas[1] + "-coverage");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->built) << r->reason << "\n" << r->log_tail;
  EXPECT_EQ(r->bin_dir, tmp / "cache/" + f.shas[1] + "-coverage/bin");
  EXPECT_EQ(ReadText(tmp / "work/build/builds.txt"), f.shas[1] + "\n");
  EXPECT_EQ(ReadText(tmp / "work/build-coverage/builds.txt"), f.shas[1] + "\n");
  // The plain entry is untouched and still cached.
  StatusOr<BuildResult> hit = plain.Build(f.shas[1]);
  ASSERT_TRUE(hit.ok());
  EXPECT_TRUE(hit->cached);

  o.flavour = "../x";
  CommitBuilder bad(f.repo.get(), o);
  StatusOr<BuildResult> refused = bad.BuildAs(f.shas[1], f.shas[1] + "-x");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(), "bad build flavour '../x'");
  EXPECT_FALSE(fs::exists(tmp / "work/build-../x"));
}

TEST(CommitBuilderTest, TheDefaultCommandCarriesAFlavoursFlags) {
  const std::string plain = DefaultBuildCommand();
  const std::string cov = DefaultBuildCommand(
      {"-DTRENCH_TARGET_COVERAGE=ON", "-DCMAKE_CXX_COMPILER=clang++"});
  EXPECT_EQ(plain.find("TRENCH_TARGET_COVERAGE"), std::string::npos);
  EXPECT_NE(cov.find(" '-DTRENCH_TARGET_COVERAGE=ON' "
                     "'-DCMAKE_CXX_COMPILER=clang++' && cmake --build"),
            std::string::npos)
      << cov;
}

TEST(CommitBuilderTest, BrokenCommitIsRecordedWithItsLogAndCached) {
  TempDir tmp;
  auto f = MakeFakeRepo(tmp / "repo", 2, {{2, FakeCommit{.add_broken = true}}});
  ASSERT_TRUE(f.repo);
  CommitBuilder builder(f.repo.get(), Options(tmp));
  StatusOr<BuildResult> r = builder.Build(f.shas[2]);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->built);
  EXPECT_EQ(r->exit_code, 1);
  EXPECT_NE(r->reason.find("exited with 1"), std::string::npos) << r->reason;
  EXPECT_NE(r->log_tail.find("this commit is broken"), std::string::npos)
      << r->log_tail;
  EXPECT_TRUE(r->bin_dir.empty());
  StatusOr<BuildResult> again = builder.Build(f.shas[2]);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->built);
  EXPECT_TRUE(again->cached);
  EXPECT_NE(again->log_tail.find("this commit is broken"), std::string::npos);
  EXPECT_EQ(builder.builds(), 1);
}

TEST(CommitBuilderTest, EnvironmentAndWorkingDirectory) {
  TempDir tmp;
  auto f = MakeFakeRepo(tmp / "repo", 1, {});
  ASSERT_TRUE(f.repo);
  CommitBuilder builder(
      f.repo.get(),
      Options(tmp,
              "pwd > \"$TRENCH_BUILD_DIR/env.txt\"; echo "
              "\"$TRENCH_WORKTREE $TRENCH_COMMIT $TRENCH_JOBS\" >> "
              "\"$TRENCH_BUILD_DIR/env.txt\"; " +
                  testing::FakeBuildCommand()));
  StatusOr<BuildResult> r = builder.Build(f.shas[1]);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->built) << r->log_tail;
  const std::string src = tmp / "work/src";
  const std::string env = ReadText(tmp / "work/build/env.txt");
  EXPECT_EQ(env.substr(0, env.find('\n')), src);
  EXPECT_NE(env.find(src + " " + f.shas[1] + " "), std::string::npos) << env;
}

// A binary missing after a successful command is the commit's failure
// (cached); a timeout is the machine's (not cached: built again).
TEST(CommitBuilderTest, MissingBinaryDoesNotBuildATimeoutIsInfra) {
  TempDir tmp;
  auto f = MakeFakeRepo(tmp / "repo", 2, {});
  ASSERT_TRUE(f.repo);
  CommitBuilder quiet(f.repo.get(), Options(tmp, "echo nothing to do"));
  StatusOr<BuildResult> r = quiet.Build(f.shas[1]);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->built);
  EXPECT_NE(r->reason.find("left no"), std::string::npos) << r->reason;

  BuilderOptions o = Options(tmp, "sleep 30");
  o.cache_dir = tmp / "cache2";
  o.timeout_seconds = 0.3;
  CommitBuilder slow(f.repo.get(), o);
  StatusOr<BuildResult> t = slow.Build(f.shas[2]);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_FALSE(t->built);
  EXPECT_TRUE(t->timed_out);
  EXPECT_TRUE(t->infra);
  EXPECT_NE(t->reason.find("timed out"), std::string::npos) << t->reason;
  EXPECT_EQ(slow.Lookup(f.shas[2]).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(r->infra);
  EXPECT_TRUE(quiet.Lookup(f.shas[1]).ok());  // "Does not build", cached.
}

// A build that fails with a fork error (EAGAIN from a process limit shared
// with other runs) is not "does not build": nothing is cached, and the next
// try builds. A compile error is cached once.
TEST(CommitBuilderTest, InfraFailureIsNotCachedACompileErrorIs) {
  TempDir tmp;
  auto f = MakeFakeRepo(tmp / "repo", 2, {});
  ASSERT_TRUE(f.repo);
  const std::string flaky =
      "if [ ! -e \"$TRENCH_BUILD_DIR/../tried\" ]; then : > "
      "\"$TRENCH_BUILD_DIR/../tried\"; echo 'make: vfork: Resource "
      "temporarily unavailable' >&2; exit 2; fi; " +
      testing::FakeBuildCommand();
  CommitBuilder builder(f.repo.get(), Options(tmp, flaky));
  StatusOr<BuildResult> first = builder.Build(f.shas[1]);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->built);
  EXPECT_TRUE(first->infra);
  EXPECT_NE(first->reason.find("Resource temporarily unavailable"),
            std::string::npos)
      << first->reason;
  EXPECT_NE(first->log_tail.find("vfork"), std::string::npos);
  EXPECT_EQ(builder.Lookup(f.shas[1]).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(fs::exists(tmp / "work/out/" + f.shas[1]));
  StatusOr<BuildResult> second = builder.Build(f.shas[1]);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_TRUE(second->built) << second->reason << second->log_tail;
  EXPECT_FALSE(second->cached);
  EXPECT_EQ(builder.builds(), 2);

  CommitBuilder broken(
      f.repo.get(),
      Options(tmp, "echo 'x.cc:1:1: error: expected ;' >&2; exit 1"));
  StatusOr<BuildResult> e = broken.Build(f.shas[2]);
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->built);
  EXPECT_FALSE(e->infra);
  StatusOr<BuildResult> again = broken.Build(f.shas[2]);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->cached);
  EXPECT_FALSE(again->built);
  EXPECT_EQ(broken.builds(), 1);
}

// A binary changed in the cache after it was installed is seen: the entry
// is refused (with the reason in the result) and the commit built again.
TEST(CommitBuilderTest, TamperedCacheBinaryIsAMissAndRebuilt) {
  TempDir tmp;
  auto f = MakeFakeRepo(tmp / "repo", 1, {});
  ASSERT_TRUE(f.repo);
  CommitBuilder builder(f.repo.get(), Options(tmp));
  StatusOr<BuildResult> r = builder.Build(f.shas[1]);
  ASSERT_TRUE(r.ok() && r->built) << r.status().ToString();
  ASSERT_EQ(r->sha256.size(), TargetBinaries().size());
  {
    std::ofstream evil(r->bin_dir + "/hloc", std::ios::trunc);
    evil << "#!/bin/sh\necho pwned\n";
  }
  StatusOr<BuildResult> look = builder.Lookup(f.shas[1]);
  EXPECT_EQ(look.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(look.status().message().find("SHA-256"), std::string::npos)
      << look.status().ToString();
  StatusOr<BuildResult> again = builder.Build(f.shas[1]);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->built);
  EXPECT_FALSE(again->cached);
  EXPECT_NE(again->cache_problem.find("SHA-256"), std::string::npos);
  EXPECT_EQ(builder.builds(), 2);
  EXPECT_EQ(ReadText(again->bin_dir + "/hloc").find("pwned"),
            std::string::npos);
  EXPECT_TRUE(builder.Lookup(f.shas[1]).ok());
}

TEST(CommitBuilderTest, BuildAsKeysAPatchedCommit) {
  TempDir tmp;
  auto f = MakeFakeRepo(tmp / "repo", 3, {{2, FakeCommit{.set_bug = "1"}}});
  ASSERT_TRUE(f.repo);
  StatusOr<RevertResult> rev = f.repo->RevertOnto(f.shas[2], f.shas[3]);
  ASSERT_TRUE(rev.ok()) << rev.status().ToString();
  CommitBuilder builder(f.repo.get(), Options(tmp));
  const std::string key = f.shas[3] + "-p" + rev->patch_hash;
  StatusOr<BuildResult> r = builder.BuildAs(rev->sha, key);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->built);
  EXPECT_EQ(r->commit, rev->sha);
  EXPECT_TRUE(builder.Lookup(key).ok());
  EXPECT_FALSE(builder.Lookup(rev->sha).ok());
  EXPECT_FALSE(fs::exists(tmp / "work/src/bug"));  // Reverted.
  EXPECT_FALSE(builder.BuildAs(rev->sha, "../escape").ok());
  EXPECT_FALSE(builder.BuildAs(rev->sha, "Upper").ok());
}

}  // namespace
}  // namespace trench::hlo_bisect
