// ComputeVerdict on SPMD cases: the target runs them on a slice when its
// capabilities list the collectives, each device's outputs are compared
// with the SPMD oracle's, and the first device that diverges is named.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/triage/case/hlo_diff_test_util.h"
#include "triage/case/verdict.h"

namespace trench::hlo_diff {
namespace {

using testing::F32;
using testing::TempDir;

// Output 0 is the same on every device (an all-reduce), output 1 is not
// (the device's partition id added).
constexpr char kSpmdModule[] = R"(HloModule spmd_case

sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}

ENTRY main {
  p = f32[2,3] parameter(0)
  id = u32[] partition-id()
  f = f32[] convert(id)
  b = f32[2,3] broadcast(f), dimensions={}
  x = f32[2,3] add(p, b)
  r = f32[2,3] all-reduce(x), channel_id=1, replica_groups=[1,2]<=[2],
      use_global_device_ids=true, to_apply=sum
  ROOT out = (f32[2,3], f32[2,3]) tuple(r, x)
}
)";

Case SpmdCase() {
  std::vector<std::vector<Literal>> per_device;
  for (int d = 0; d < 2; ++d) {
    per_device.push_back({F32({2, 3}, {1, 2, 3, 4, 5, float(d)})});
  }
  StatusOr<Case> c =
      MakeSpmdCase(kSpmdModule, DeviceMesh{1, 2}, std::move(per_device));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : Case();
}

TEST(VerdictSpmdTest, PassesOnTheSliceInEveryMode) {
  for (TargetMode mode :
       {TargetMode::kHlocTpusim, TargetMode::kHloRun, TargetMode::kServe}) {
    TempDir tmp;
    TargetRunner runner(testing::RealTarget(mode));
    StatusOr<Verdict> v = ComputeVerdict(SpmdCase(), runner, tmp / "work");
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_EQ(v->status, VerdictStatus::kPass)
        << int(mode) << ": " << v->message;
  }
}

// A wrong target: its simulator gives device 1 device 0's second output.
TEST(VerdictSpmdTest, NamesTheFirstDeviceThatDiverges) {
  TempDir tmp;
  TargetSpec spec = testing::RealTarget(TargetMode::kHlocTpusim);
  spec.tpusim = testing::WriteScript(
      tmp / "tpusim",
      "\"" + testing::BinaryDir() +
          "/tpusim\" \"$@\"; rc=$?\n"
          "out=; prev=\n"
          "for a in \"$@\"; do [ \"$prev\" = --outputs ] && out=$a; prev=$a; "
          "done\n"
          "cp \"$out/0/1.npy\" \"$out/1/1.npy\"\nexit $rc\n");
  TargetRunner runner(spec);
  StatusOr<Verdict> v = ComputeVerdict(SpmdCase(), runner, tmp / "work");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(v->status, VerdictStatus::kMismatch) << v->message;
  EXPECT_EQ(v->message, "device 1: output 1 differs");
}

}  // namespace
}  // namespace trench::hlo_diff
