// The levels on real seeded bugs (suite BugZooLocalize, label "slow"): a
// copy of the target side gets one -DTRENCH_TARGET_ONLY=ON build (as
// tests/bugzoo/bugzoo_test.cc makes it); per bug the patch is applied,
// hlo-run rebuilt incrementally, the witness localized through a serve
// worker of the patched hlo-run, and the patch taken out again. The
// localization must name meta.json's pass and opcode, and a rewrite site
// for bugs of a pass.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "tests/bugzoo/zoo_build.h"
#include "triage/localize/localization_report.h"
#include "triage/localize/localize.h"

namespace trench::hlo_bisect {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = TRENCH_SOURCE_DIR;

Json Meta(const fs::path& bug) {
  StatusOr<std::string> text = ReadTextFile((bug / "meta.json").string());
  EXPECT_TRUE(text.ok());
  StatusOr<Json> j = ParseJson(text.ok() ? *text : "{}");
  return j.ok() ? *j : Json::MakeObject();
}

TEST(BugZooLocalize, NamesThePassTheSiteAndTheOpcode) {
  ASSERT_TRUE(bugzoo::HasTool("git") && bugzoo::HasTool("cmake"))
      << "git and cmake are needed";
  char tmpl[] = "/tmp/bisect-zoo-test.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const fs::path tmp = tmpl;
  const bugzoo::ZooBuild zoo(kSource, tmp);
  ASSERT_TRUE(zoo.Configure()) << "see " << zoo.log();
  ASSERT_TRUE(zoo.Build()) << "see " << zoo.log();
  hlo_diff::TargetSpec spec = hlo_diff::TargetSpec::FromBinaryDir(
      zoo.build_dir().string(), hlo_diff::TargetMode::kServe);
  spec.timeout_seconds = 120;
  bool failed = false;
  for (const char* name :
       {"03-algsimp-transpose-compose", "07-cse-compare-direction",
        "10-fused-reduce-max-init"}) {
    SCOPED_TRACE(name);
    const fs::path bug = kSource / "tests" / "bugzoo" / name;
    ASSERT_TRUE(zoo.Patch(bug));
    const bool built = zoo.Build();
    std::optional<StatusOr<Localization>> l;
    StatusOr<hlo_diff::Case> c = hlo_diff::ReadCase((bug / "witness").string());
    if (built && c.ok()) {
      TargetProber prober(*c, spec, (tmp / "runs" / name).string());
      l = Localize(*c, prober);
    }
    ASSERT_TRUE(zoo.Patch(bug, /*reverse=*/true));
    ASSERT_TRUE(built) << "see " << zoo.log();
    ASSERT_TRUE(c.ok()) << c.status().message();
    ASSERT_TRUE(l->ok()) << l->status().message();
    const Json sig = RefinedSignature(**l);
    const Json meta = Meta(bug);
    std::printf("[ localize ] %s: %s (%lld runs, linear scan %lld)\n", name,
                sig.Dump().c_str(), static_cast<long long>((*l)->runs),
                static_cast<long long>((*l)->linear_runs));
    EXPECT_EQ(sig.Find("pass")->Dump(), meta.Find("pass")->Dump())
        << LocalizationText(**l, name);
    EXPECT_EQ(sig.Find("opcode")->Dump(), meta.Find("opcode")->Dump())
        << LocalizationText(**l, name);
    EXPECT_TRUE(sig.Find("site")->is_string()) << LocalizationText(**l, name);
    EXPECT_LT((*l)->runs, (*l)->linear_runs);
    failed |= ::testing::Test::HasFailure();
  }
  if (!failed) fs::remove_all(tmp);
}

}  // namespace
}  // namespace trench::hlo_bisect
