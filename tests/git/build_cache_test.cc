// The build cache's one way in (git/build_cache.h): InstallBuild takes the
// staged entry of one key only, and refuses a staged entry that is not
// what a build writes (links, FIFOs, foreign members or keys).
#include "git/build_cache.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "base/sha256.h"
#include "git/commit_builder.h"
#include "tests/git/commit_test_util.h"

namespace trench::hlo_bisect {
namespace {

using testing::MakeFakeRepo;
using testing::ReadText;
using testing::TempDir;
namespace fs = std::filesystem;

void Write(const std::string& path, const std::string& text) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

// A staged entry as a build writes it: result.json and three binaries.
void Stage(const std::string& out, const std::string& key, bool built = true,
           const std::string& extra = "") {
  Write(out + "/" + key + "/result.json",
        "{\"key\": \"" + key + "\", \"commit\": \"" + std::string(40, 'a') +
            "\", \"built\": " + (built ? "true" : "false") + extra + "}");
  for (const std::string& b : TargetBinaries()) {
    Write(out + "/" + key + "/bin/" + b, "#!/bin/sh\necho " + b + "\n");
  }
}

TEST(BuildCacheTest, InstallsTheStagedEntryWithItsHashes) {
  TempDir tmp;
  Stage(tmp / "out", "k1");
  StatusOr<BuildResult> r = InstallBuild(tmp / "out", "k1", tmp / "cache");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(r->built);
  EXPECT_EQ(r->bin_dir, tmp / "cache/k1/bin");
  EXPECT_EQ(r->sha256.at("hloc"), Sha256Hex("#!/bin/sh\necho hloc\n"));
  struct stat st;
  ASSERT_EQ(::stat((tmp / "cache/k1/bin/hloc").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0755u);
  EXPECT_NE(ReadText(tmp / "cache/k1/result.json").find("sha256"),
            std::string::npos);
  StatusOr<BuildResult> hit = LookupBuild(tmp / "cache", "k1");
  ASSERT_TRUE(hit.ok()) << hit.status().ToString();
  EXPECT_TRUE(hit->cached);
  EXPECT_EQ(LookupBuild(tmp / "cache", "k2").status().code(),
            StatusCode::kNotFound);
}

// A build of B (with an output dir: the daemon's mode) that also writes an
// entry for A into the staging dir and a fake one into the cache dir gets
// only B installed; the fake cache entry, having no hashes of ours, is
// refused by Lookup.
TEST(BuildCacheTest, ABuildCanOnlyStageItsOwnKey) {
  TempDir tmp;
  auto f = MakeFakeRepo(tmp / "repo", 2, {});
  ASSERT_TRUE(f.repo);
  const std::string a = f.shas[1], b = f.shas[2];
  const std::string fake =
      "mkdir -p \"$O/" + a + "/bin\" \"$C/" + a +
      "/bin\"; for d in \"$O\" \"$C\"; do echo '{\"key\": \"" + a +
      "\", \"commit\": \"" + a + "\", \"built\": true}' > \"$d/" + a +
      "/result.json\"; for x in hloc tpusim hlo-run; do echo evil > \"$d/" + a +
      "/bin/$x\"; done; done; ";
  BuilderOptions o;
  o.work_dir = tmp / "work";
  o.cache_dir = tmp / "cache";
  o.output_dir = tmp / "out";
  o.build_command = "O='" + o.output_dir + "' C='" + o.cache_dir + "'; " +
                    fake + testing::FakeBuildCommand();
  CommitBuilder builder(f.repo.get(), o);
  StatusOr<BuildResult> rb = builder.Build(b);
  ASSERT_TRUE(rb.ok() && rb->built) << rb.status().ToString();
  EXPECT_EQ(rb->bin_dir, tmp / "out/" + b + "/bin");  // Staged, not cached.
  EXPECT_FALSE(fs::exists(tmp / "cache/" + b));
  // The daemon installs the key it asked for.
  ASSERT_TRUE(InstallBuild(tmp / "out", b, tmp / "cache").ok());
  EXPECT_TRUE(LookupBuild(tmp / "cache", b).ok());
  StatusOr<BuildResult> poisoned = LookupBuild(tmp / "cache", a);
  EXPECT_EQ(poisoned.status().code(), StatusCode::kFailedPrecondition)
      << poisoned.status().ToString();
}

TEST(BuildCacheTest, RefusesStagedEntriesNoBuildWrites) {
  TempDir tmp;
  const std::string out = tmp / "out", cache = tmp / "cache";
  auto refused = [&](const std::string& key) {
    StatusOr<BuildResult> r = InstallBuild(out, key, cache);
    EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition)
        << key << ": " << r.status().ToString();
    EXPECT_FALSE(fs::exists(cache + "/" + key)) << key;
  };
  // A binary that is a link (to a file of the daemon's, say).
  Stage(out, "link");
  fs::remove(out + "/link/bin/hloc");
  fs::create_symlink("/etc/passwd", out + "/link/bin/hloc");
  refused("link");
  // A FIFO would stall a reader.
  Stage(out, "fifo");
  fs::remove(out + "/fifo/bin/tpusim");
  ASSERT_EQ(::mkfifo((out + "/fifo/bin/tpusim").c_str(), 0644), 0);
  refused("fifo");
  // The staged dir itself a link to another entry.
  Stage(out, "real");
  fs::create_directory_symlink(out + "/real", out + "/alias");
  refused("alias");
  // A record naming another key, a foreign member, an infra failure.
  Stage(out, "k");
  Write(out + "/k/result.json", "{\"key\": \"other\", \"commit\": \"" +
                                    std::string(40, 'a') +
                                    "\", \"built\": true}");
  refused("k");
  Stage(out, "member", true, ", \"bin_dir\": \"/etc\"");
  refused("member");
  Stage(out, "infra", false, ", \"infra\": true");
  refused("infra");
  Stage(out, "missing");
  fs::remove(out + "/missing/bin/hlo-run");
  refused("missing");
  // Nothing staged.
  EXPECT_EQ(InstallBuild(out, "none", cache).status().code(),
            StatusCode::kNotFound);
  // A failed build needs no binaries.
  Stage(out, "failed", false);
  StatusOr<BuildResult> f = InstallBuild(out, "failed", cache);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_FALSE(f->built);
  EXPECT_TRUE(LookupBuild(cache, "failed").ok());
}

}  // namespace
}  // namespace trench::hlo_bisect
