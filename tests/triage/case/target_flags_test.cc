// The target flags shared by hlo-diff, hlo-bisect and hlo-reduce.
#include "triage/case/target_flags.h"

#include <gtest/gtest.h>

namespace trench::hlo_diff {
namespace {

TEST(TargetFlagsTest, ModeFromFlagsAndTheToolsDefault) {
  TargetFlags f;
  EXPECT_EQ(f.Spec(TargetMode::kHlocTpusim).mode, TargetMode::kHlocTpusim);
  EXPECT_EQ(f.Spec(TargetMode::kServe).mode, TargetMode::kServe);
  ASSERT_TRUE(*f.Apply("hlo-run", "/x/hlo-run"));
  // --hlo-run P: one process per case where the default is two-step ...
  EXPECT_EQ(f.Spec(TargetMode::kHlocTpusim).mode, TargetMode::kHloRun);
  // ... and just the binary where the default is a serve worker.
  EXPECT_EQ(f.Spec(TargetMode::kServe).mode, TargetMode::kServe);
  EXPECT_EQ(f.Spec(TargetMode::kServe).hlo_run, "/x/hlo-run");
  EXPECT_TRUE(f.ApplySwitch("--serve"));
  EXPECT_EQ(f.Spec(TargetMode::kHlocTpusim).mode, TargetMode::kServe);
  ASSERT_TRUE(*f.Apply("target", "hloc-tpusim"));
  EXPECT_EQ(f.Spec(TargetMode::kServe).mode, TargetMode::kHlocTpusim);
  EXPECT_TRUE(f.Check().ok());
  ASSERT_TRUE(*f.Apply("tpusim", "/y/tpusim"));
  EXPECT_FALSE(f.Check().ok());  // --hlo-run with --tpusim.

  TargetFlags two;
  ASSERT_TRUE(*two.Apply("bin-dir", "/b"));
  ASSERT_TRUE(*two.Apply("hloc", "/h/hloc"));
  ASSERT_TRUE(*two.Apply("timeout", "2.5"));
  const TargetSpec s = two.Spec(TargetMode::kServe);
  EXPECT_EQ(s.mode, TargetMode::kHlocTpusim);
  EXPECT_EQ(s.hloc, "/h/hloc");
  EXPECT_EQ(s.tpusim, "/b/tpusim");
  EXPECT_EQ(s.timeout_seconds, 2.5);
}

TEST(TargetFlagsTest, BadValuesAndOtherNames) {
  TargetFlags f;
  EXPECT_FALSE(f.Apply("timeout", "0").ok());
  EXPECT_FALSE(f.Apply("timeout", "soon").ok());
  StatusOr<bool> bad = f.Apply("target", "gpu");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'gpu'"), std::string::npos);
  EXPECT_FALSE(*f.Apply("levels", "pass"));
  EXPECT_FALSE(f.ApplySwitch("--json"));
}

// (Was TakeFlag's test; the flags are now parsed by base/flags.h, with the
// same spellings and message.)
TEST(TargetFlagsTest, TakeFlagSplitsBothSpellings) {
  std::string out, jobs, seed;
  FlagParser p("tool", "");
  p.String("out", "DIR", &out, "");
  p.String("jobs", "N", &jobs, "");
  p.String("seed", "N", &seed, "");
  Status c = p.Parse({"--out=a", "--jobs", "2", "--seed"});
  EXPECT_EQ(out, "a");
  EXPECT_EQ(jobs, "2");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.message().find("--seed needs a value"), std::string::npos);
}

TEST(TargetFlagsTest, RegisteredOnAParserAndForwarded) {
  TargetFlags f;
  FlagParser p("tool", "");
  f.Register(&p);
  ASSERT_TRUE(p.Parse({"--hlo-run", "/x/hlo-run", "--serve", "--timeout=2.5",
                       "--bin-dir=/b"})
                  .ok());
  EXPECT_EQ(f.hlo_run, "/x/hlo-run");
  EXPECT_EQ(f.mode, TargetMode::kServe);
  EXPECT_EQ(f.timeout, 2.5);
  EXPECT_EQ(f.ToArgs(p),
            (std::vector<std::string>{"--bin-dir=/b", "--hlo-run=/x/hlo-run",
                                      "--target=serve", "--timeout=2.5"}));
  TargetFlags g;
  FlagParser q("tool", "");
  g.Register(&q);
  Status bad = q.Parse({"--target", "gpu"});
  EXPECT_NE(bad.message().find("--target expects"), std::string::npos)
      << bad.message();
  EXPECT_TRUE(g.ToArgs(q).empty());
}

}  // namespace
}  // namespace trench::hlo_diff
