// The build of a landed commit (commit_tools.h BuildCommit, steps_commit.cc)
// run for real through the sandbox and `hlo-bisect build`, attacked:
//  - a hostile build of commit B writes fake entries for commit A wherever
//    it can reach, and A's later build is unaffected (issue 18, item 4);
//  - a binary changed in the cache is seen and rebuilt;
//  - a fork failure is retried, never cached as "does not build"; a
//    compile error is cached once (item 7);
//  - a disk filler and a file-count bomb stop at the builder volume, the
//    daemon's other directories untouched, and the next build succeeds
//    (item 3; needs root and loop devices).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "git/build_cache.h"
#include "git/mirror.h"
#include "orchestrator/pipeline/build_volume.h"
#include "orchestrator/pipeline/commit_tools.h"
#include "tests/orchestrator/pipeline/step_test_fixture.h"

namespace trench::orchestrator {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Writes wrappers of the real tools naming the commit they were built
// from, and counts its builds in W/builds.txt.
std::string FakeBuild() {
  return std::string(
             "echo \"$TRENCH_COMMIT\" >> ../builds.txt && "
             "mkdir -p \"$TRENCH_BUILD_DIR\" && "
             "for t in hloc tpusim hlo-run; do "
             "printf '#!/bin/sh\\n# built from %s\\nexec %s/%s \"$@\"\\n' "
             "\"$TRENCH_COMMIT\" '") +
         TRENCH_BINARY_DIR +
         "' \"$t\" > \"$TRENCH_BUILD_DIR/$t\" && "
         "chmod +x \"$TRENCH_BUILD_DIR/$t\" || exit 1; done";
}

class BuildStepTest : public testing::StepTest {
 protected:
  void SetUp() override {
    StepTest::SetUp();
    a_ = Commit({{"a.txt", "a\n"}}, "a", "");
    b_ = Commit({{"b.txt", "b\n"}}, "b", "");
    config_.build_timeout_seconds = 120;
    config_.build_command = FakeBuild();
    ctx_.worker = "orchestrator";
  }

  Job BuildJob(const std::string& commit) {
    Json payload = Json::MakeObject();
    payload["commit"] = commit;
    return MakeJob("build", std::move(payload));
  }

  // The builder volume at the work dir, of `bytes` and `inodes`.
  BuildVolumeOptions VolumeOptions(uint64_t bytes, uint64_t inodes) const {
    BuildVolumeOptions o;
    o.image = paths_->build_image;
    o.mount_point = paths_->worktree;
    o.bytes = bytes;
    o.inodes = inodes;
    return o;
  }
  // False where this machine cannot mount one (not root, no loop devices):
  // the test is skipped there.
  static bool CanMount(const StatusOr<BuildVolume>& v) {
    return v.ok() || v.status().code() != StatusCode::kFailedPrecondition;
  }

  std::vector<std::string> Builds() {
    std::vector<std::string> lines;
    std::istringstream in(ReadText(paths_->worktree + "/builds.txt"));
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
  }

  std::string a_, b_;
};

// The attack of issue 18, item 4: B's build command writes result.json
// ("built": true) and fake binaries for A into the cache (where it was,
// inside the build's old work dir, and where it is now), the staging dir,
// and the mirror. None of it reaches A's entry.
TEST_F(BuildStepTest, AHostileBuildCannotPoisonAnotherCommitsCache) {
  std::string plant;
  for (const std::string& dir :
       {paths_->build_cache, paths_->worktree + "/cache", paths_->build_out,
        paths_->builder + "/cache", paths_->mirror + "/cache"}) {
    const std::string e = dir + "/" + a_;
    plant += "mkdir -p '" + e + "/bin' 2>/dev/null && { echo '{\"key\": \"" +
             a_ + "\", \"commit\": \"" + a_ + "\", \"built\": true}' > '" + e +
             "/result.json'; for t in hloc tpusim hlo-run; do printf "
             "'#!/bin/sh\\necho evil\\n' > '" +
             e + "/bin/'$t; chmod +x '" + e + "/bin/'$t; done; } 2>/dev/null; ";
  }
  config_.build_command = "if [ \"$TRENCH_COMMIT\" = " + b_ + " ]; then " +
                          plant + "fi; " + FakeBuild();
  StatusOr<Json> b = BuildCommit(ctx_, b_, b_, "");
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_TRUE(b->Find("built")->bool_value()) << b->Dump();
  // Nothing of A's in the cache; the staged fake is not installed.
  EXPECT_FALSE(fs::exists(paths_->build_cache + "/" + a_));

  StatusOr<Json> a = BuildCommit(ctx_, a_, a_, "");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(a->Find("built")->bool_value()) << a->Dump();
  EXPECT_FALSE(a->Find("cached")->bool_value());
  const std::string hloc = paths_->build_cache + "/" + a_ + "/bin/hloc";
  EXPECT_NE(ReadText(hloc).find("built from " + a_), std::string::npos)
      << ReadText(hloc);
  EXPECT_EQ(ReadText(hloc).find("evil"), std::string::npos);
  EXPECT_EQ(Builds(), (std::vector<std::string>{b_, a_}));
  // The cache belongs to the daemon, not to the sandbox's uid.
  struct stat st;
  ASSERT_EQ(::lstat(hloc.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, ::geteuid());
  StatusOr<Build> row = store_->GetBuild(a_, "");
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row->status, BuildStatus::kOk);
  EXPECT_EQ(row->bin_dir, paths_->build_cache + "/" + a_ + "/bin");
}

// What the cache check cannot see: a build leaves files in the shared work
// dir (the build directory, ccache) that the next commit's incremental
// build picks up. builder.clean empties the work dir before each build.
TEST_F(BuildStepTest, CleanBuildsShareNothingBetweenCommits) {
  const std::string check =
      "if [ -e ../planted ] || [ -e \"$TRENCH_BUILD_DIR/planted\" ]; then "
      "echo 'error: planted by another build' >&2; exit 1; fi; ";
  config_.build_command = "if [ \"$TRENCH_COMMIT\" = " + b_ +
                          " ]; then : > ../planted; mkdir -p "
                          "\"$TRENCH_BUILD_DIR\"; : > "
                          "\"$TRENCH_BUILD_DIR/planted\"; else " +
                          check + "fi; " + FakeBuild();
  config_.builder_clean = true;
  ASSERT_TRUE(BuildCommit(ctx_, b_, b_, "").ok());
  StatusOr<Json> a = BuildCommit(ctx_, a_, a_, "");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_TRUE(a->Find("built")->bool_value()) << a->Dump();
  // Without it, the plant reaches the next build (incremental builds).
  config_.builder_clean = false;
  ASSERT_TRUE(BuildCommit(ctx_, b_, b_, "p1").ok());
  StatusOr<Json> again = BuildCommit(ctx_, a_, a_, "p2");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_FALSE(again->Find("built")->bool_value()) << again->Dump();
}

// A binary changed in the cache after it was installed: LookupBuild sees
// it, and the next build of the commit replaces it.
TEST_F(BuildStepTest, ATamperedCacheBinaryIsRebuilt) {
  ASSERT_TRUE(BuildCommit(ctx_, a_, a_, "").ok());
  const std::string hloc = paths_->build_cache + "/" + a_ + "/bin/hloc";
  {
    std::ofstream evil(hloc, std::ios::app);
    evil << "echo evil\n";
  }
  EXPECT_EQ(hlo_bisect::LookupBuild(paths_->build_cache, a_).status().code(),
            StatusCode::kFailedPrecondition);
  StatusOr<Json> again = BuildCommit(ctx_, a_, a_, "");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->Find("built")->bool_value());
  EXPECT_FALSE(again->Find("cached")->bool_value());
  EXPECT_EQ(ReadText(hloc).find("evil"), std::string::npos);
  EXPECT_EQ(Builds().size(), 2u);
  // A good entry is taken without a build.
  StatusOr<Json> hit = BuildCommit(ctx_, a_, a_, "");
  ASSERT_TRUE(hit.ok());
  EXPECT_TRUE(hit->Find("cached")->bool_value());
  EXPECT_EQ(Builds().size(), 2u);
}

// Issue 18, item 7: "vfork: Resource temporarily unavailable" once, then a
// clean build. The first try is retryable and records nothing; the second
// ends built.
TEST_F(BuildStepTest, AForkFailureIsRetriedNotCachedAsDoesNotBuild) {
  // The step syncs the mirror from the repository first: the fixture's
  // repository becomes the source of a real (bare) mirror.
  config_.repo = dir_ + "/source";
  fs::rename(paths_->mirror, config_.repo);
  ASSERT_TRUE(SyncMirror(config_.repo, paths_->mirror).ok());
  config_.build_command =
      "if [ ! -e ../tried ]; then : > ../tried; echo 'make: vfork: Resource "
      "temporarily unavailable' >&2; exit 2; fi; " +
      FakeBuild();
  StatusOr<Json> first = RunBuildStep(ctx_, BuildJob(a_));
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.status().code(), StatusCode::kResourceExhausted)
      << first.status().ToString();
  EXPECT_NE(first.status().message().find("vfork"), std::string::npos)
      << first.status().message();  // The log, in the job's error.
  EXPECT_FALSE(store_->GetBuild(a_, "").ok());
  EXPECT_FALSE(fs::exists(paths_->build_cache + "/" + a_));

  StatusOr<Json> second = RunBuildStep(ctx_, BuildJob(a_));
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  EXPECT_TRUE(second->Find("built")->bool_value()) << second->Dump();
  StatusOr<Build> row = store_->GetBuild(a_, "");
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row->status, BuildStatus::kOk);
}

// A compile error is the commit's: cached as "does not build" once, with
// its log, and not built again.
TEST_F(BuildStepTest, ACompileErrorIsCachedOnce) {
  config_.build_command =
      "echo \"$TRENCH_COMMIT\" >> ../builds.txt; "
      "echo 'pass.cc:3:7: error: expected ; before }' >&2; exit 1";
  for (int i = 0; i < 2; ++i) {
    StatusOr<Json> r = BuildCommit(ctx_, a_, a_, "");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_FALSE(r->Find("built")->bool_value());
    EXPECT_EQ(r->Find("cached")->bool_value(), i == 1);
  }
  EXPECT_EQ(Builds().size(), 1u);
  StatusOr<Build> row = store_->GetBuild(a_, "");
  ASSERT_TRUE(row.ok());
  EXPECT_EQ(row->status, BuildStatus::kFailed);
  EXPECT_NE(row->log_tail.find("expected ;"), std::string::npos);
}

// Issue 18, item 3: with the builder volume mounted, a build that writes
// far more than it holds, and one that creates 300,000 files, stop at its
// bounds (infrastructure failures: retried, never cached), the daemon's
// other directories keep their files and their room, and the next build
// succeeds.
TEST_F(BuildStepTest, DiskFillerAndFileBombStopAtTheBuilderVolume) {
  const BuildVolumeOptions o = VolumeOptions(64ull << 20, 4096);
  StatusOr<BuildVolume> volume = BuildVolume::Mount(o);
  if (!CanMount(volume)) GTEST_SKIP() << volume.status().ToString();
  ASSERT_TRUE(volume.ok()) << volume.status().ToString();
  config_.builder_disk_bytes = o.bytes;
  const std::string keep = paths_->cases + "/keep.txt";
  { std::ofstream(keep) << "kept\n"; }

  const std::string filler =
      "dd if=/dev/zero of=fill bs=1M count=2048 2>&1; exit 1";
  const std::string bomb =
      "mkdir -p bomb && cd bomb && seq 1 300000 | xargs touch; exit 1";
  for (const std::string& attack : {filler, bomb}) {
    config_.build_command = attack;
    StatusOr<Json> r = BuildCommit(ctx_, a_, a_, "");
    ASSERT_FALSE(r.ok()) << attack;
    EXPECT_EQ(r.status().code(), StatusCode::kResourceExhausted)
        << r.status().ToString();
    // The log says so, or (when the log itself found no room) the file
    // system's own count does.
    const std::string m = r.status().message();
    EXPECT_TRUE(m.find("No space left on device") != std::string::npos ||
                m.find("is full") != std::string::npos)
        << m;
    EXPECT_FALSE(store_->GetBuild(a_, "").ok());
    // The volume was emptied for the next build.
    StatusOr<VolumeSpace> space = SpaceOf(paths_->worktree);
    ASSERT_TRUE(space.ok());
    EXPECT_GT(space->bytes_free, 0.5) << attack;
    EXPECT_GT(space->inodes_free, 0.5) << attack;
  }
  EXPECT_EQ(ReadText(keep), "kept\n");
  // The image never took more than its size from the disk under var/.
  struct stat st;
  ASSERT_EQ(::stat(paths_->build_image.c_str(), &st), 0);
  EXPECT_LE(static_cast<uint64_t>(st.st_blocks) * 512, o.bytes);

  config_.build_command = FakeBuild();
  StatusOr<Json> ok = BuildCommit(ctx_, a_, a_, "");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_TRUE(ok->Find("built")->bool_value()) << ok->Dump();
  EXPECT_TRUE(volume->Unmount().ok());
}

// The volume is reused when a daemon finds its own image still mounted
// (after a crash), and made again when the configuration changed.
TEST_F(BuildStepTest, TheBuilderVolumeIsReusedOrRemade) {
  BuildVolumeOptions o = VolumeOptions(32ull << 20, 2048);
  StatusOr<BuildVolume> first = BuildVolume::Mount(o);
  if (!CanMount(first)) GTEST_SKIP() << first.status().ToString();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  { std::ofstream(paths_->worktree + "/mark") << "x"; }
  // A second daemon (the first one "crashed": its mount stays).
  StatusOr<BuildVolume> again = BuildVolume::Mount(o);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(fs::exists(paths_->worktree + "/mark"));
  o.inodes = 4096;  // Configured otherwise: a fresh image.
  StatusOr<BuildVolume> remade = BuildVolume::Mount(o);
  ASSERT_TRUE(remade.ok()) << remade.status().ToString();
  EXPECT_FALSE(fs::exists(paths_->worktree + "/mark"));
  EXPECT_TRUE(remade->Unmount().ok());
  (void)again->Unmount();
}

// A volume that was busy when it was unmounted lives on, detached; the
// next start must not mount its image a second time (two ext4 mounts of
// one image corrupt it: "Structure needs cleaning"), but a new image.
TEST_F(BuildStepTest, ABusyDetachedVolumeIsNotMountedTwice) {
  BuildVolumeOptions o = VolumeOptions(32ull << 20, 2048);
  StatusOr<BuildVolume> first = BuildVolume::Mount(o);
  if (!CanMount(first)) GTEST_SKIP() << first.status().ToString();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  { std::ofstream(paths_->worktree + "/mark") << "x"; }
  ::sync();  // On the image: a second mount of it would show the mark.
  // A build still holds a file open: the unmount detaches lazily.
  const int busy = ::open((paths_->worktree + "/mark").c_str(), O_RDONLY);
  ASSERT_GE(busy, 0);
  ASSERT_TRUE(first->Unmount().ok());
  StatusOr<BuildVolume> next = BuildVolume::Mount(o);
  ASSERT_TRUE(next.ok()) << next.status().ToString();
  EXPECT_FALSE(fs::exists(paths_->worktree + "/mark"))
      << "the detached volume's image was mounted again";
  { std::ofstream(paths_->worktree + "/new") << "y"; }
  EXPECT_TRUE(fs::exists(paths_->worktree + "/new"));
  ::close(busy);
  EXPECT_TRUE(next->Unmount().ok());
}

}  // namespace
}  // namespace trench::orchestrator
