// CheckPassWithoutRunning with the build's own target: an SPMD case's
// module compiled for one device with dumps, the combiner's output judged
// against its input on the SPMD oracle. The combiner here is right, so it
// keeps every device's result; a pass the pipeline does not have does not
// run. (A wrong combiner, zoo bug 24's, is judged on the demo's history:
// bench/RESULTS.md.)
#include "triage/localize/pass_check.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "tests/triage/case/hlo_diff_test_util.h"

namespace trench::hlo_bisect {
namespace {

using hlo_diff::testing::F32;

// Two all-reduces over different groups of the same count and size: the
// combiner must not merge them.
constexpr char kModule[] = R"(HloModule two_all_reduces
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  p = f32[4] parameter(0)
  a = f32[4] all-reduce(p), channel_id=1, replica_groups=[2,2]<=[4], use_global_device_ids=true, to_apply=add
  b = f32[4] all-reduce(p), channel_id=2, replica_groups=[2,2]<=[2,2]T(1,0), use_global_device_ids=true, to_apply=add
  ROOT r = (f32[4], f32[4]) tuple(a, b)
}
)";

hlo_diff::Case Case() {
  std::vector<std::vector<Literal>> per_device;
  for (int d = 0; d < 4; ++d) {
    per_device.push_back({F32({4}, {1.0f * d, 2.0f * d + 1, 0.5f, -1.0f * d})});
  }
  StatusOr<hlo_diff::Case> c =
      hlo_diff::MakeSpmdCase(kModule, DeviceMesh{1, 4}, std::move(per_device));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : hlo_diff::Case();
}

class PassCheckTest : public ::testing::TestWithParam<hlo_diff::TargetMode> {
 protected:
  // `pass` judged on Case() by the build's own target in this mode, in a
  // directory of this test's own (mkdtemp): the modes run as separate
  // processes side by side, and other users may share /tmp.
  StatusOr<PassCheck> Check(const std::string& pass) {
    return CheckPassWithoutRunning(Case(),
                                   hlo_diff::testing::RealTarget(GetParam()),
                                   pass, tmp_ / pass, NumericsOptions());
  }

 private:
  hlo_diff::testing::TempDir tmp_;
};

TEST_P(PassCheckTest, ARightPassKeepsEveryDevicesResult) {
  StatusOr<PassCheck> check = Check("all-reduce-combiner");
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  ASSERT_TRUE(check->changes.has_value()) << check->summary;
  EXPECT_FALSE(*check->changes) << check->summary;
  EXPECT_NE(check->summary.find("keeps the result on every device"),
            std::string::npos)
      << check->summary;
}

TEST_P(PassCheckTest, APassThePipelineDoesNotHaveDoesNotRun) {
  StatusOr<PassCheck> check = Check("no-such-pass");
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  ASSERT_TRUE(check->changes.has_value()) << check->summary;
  EXPECT_FALSE(*check->changes);
  EXPECT_EQ(check->summary, "pass 'no-such-pass' does not run here");
}

// A hostile build: its hloc writes an input dump, an oversized garbage
// dump for the pass and a malformed one after it, then kills itself. The
// check answers "cannot tell" with the parse error, and no error escapes.
TEST(PassCheckHostileTest, GarbageDumpsAndASigkillCannotTell) {
  hlo_diff::testing::TempDir tmp;
  const std::string bin = tmp / "bin";
  std::filesystem::create_directories(bin);
  hlo_diff::testing::WriteScript(
      bin + "/hloc",
      "d=\n"
      "for a in \"$@\"; do case \"$a\" in --dump-dir=*) "
      "d=\"${a#--dump-dir=}\";;"
      " esac; done\n"
      "mkdir -p \"$d/passes\"\n"
      "printf 'HloModule m\\nENTRY e {\\n  ROOT p = f32[4] parameter(0)\\n}\\n'"
      " > \"$d/passes/00.input.hlo\"\n"
      "head -c 3000000 /dev/zero | tr '\\0' 'x' >"
      " \"$d/passes/01.all-reduce-combiner.hlo\"\n"
      "printf 'HloModule m\\nENTRY e {\\n  p = f32[' > "
      "\"$d/passes/02.cse.hlo\"\n"
      "kill -9 $$\n");
  hlo_diff::testing::WriteScript(bin + "/tpusim", "exit 1\n");
  hlo_diff::TargetSpec spec = hlo_diff::TargetSpec::FromBinaryDir(
      bin, hlo_diff::TargetMode::kHlocTpusim);
  spec.timeout_seconds = 60;
  StatusOr<PassCheck> check = CheckPassWithoutRunning(
      Case(), spec, "all-reduce-combiner", tmp / "work", NumericsOptions());
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  EXPECT_FALSE(check->changes.has_value()) << check->summary;
  EXPECT_NE(check->summary.find("does not parse"), std::string::npos)
      << check->summary;
  EXPECT_NE(check->summary.find("01.all-reduce-combiner.hlo:1:"),
            std::string::npos)
      << check->summary;
}

INSTANTIATE_TEST_SUITE_P(Modes, PassCheckTest,
                         ::testing::Values(hlo_diff::TargetMode::kHloRun,
                                           hlo_diff::TargetMode::kHlocTpusim));

}  // namespace
}  // namespace trench::hlo_bisect
