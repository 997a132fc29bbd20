// The oracle on a mesh of devices (oracle/spmd.h): each device runs the
// module on its own arguments, and the collectives combine them as XLA's
// operation semantics say; the expected values are worked out by hand
// here. Devices that take different paths to their collectives are an
// error naming them, never a hang.
#include "oracle/spmd.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/oracle/oracle_test_util.h"

namespace trench {
namespace {

using testing::ExpectFloats;
using testing::R1;
using testing::Values;

constexpr PrimitiveType F32 = PrimitiveType::F32;
constexpr PrimitiveType F16 = PrimitiveType::F16;
constexpr PrimitiveType S32 = PrimitiveType::S32;

// Argument lists of one argument each: device d gets args[d].
std::vector<std::vector<Literal>> OnePerDevice(std::vector<Literal> args) {
  std::vector<std::vector<Literal>> out;
  for (Literal& a : args) {
    out.emplace_back();
    out.back().push_back(std::move(a));
  }
  return out;
}

// Each device's root value of `hlo` on `mesh`, device d's one argument
// being args[d].
std::vector<Literal> RunOn(const std::string& hlo, DeviceMesh mesh,
                           std::vector<Literal> args) {
  auto module = ParseHloModule(hlo);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return {};
  std::vector<std::vector<Literal>> per_device = OnePerDevice(std::move(args));
  SpmdOptions options;
  options.mesh = mesh;
  StatusOr<std::vector<Literal>> out =
      EvaluateSpmd(**module, per_device, options);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? std::move(out).value() : std::vector<Literal>();
}

Status StatusOn(const std::string& hlo, DeviceMesh mesh,
                std::vector<Literal> args) {
  auto module = ParseHloModule(hlo);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  std::vector<std::vector<Literal>> per_device = OnePerDevice(std::move(args));
  SpmdOptions options;
  options.mesh = mesh;
  return EvaluateSpmd(**module, per_device, options).status();
}

// Device d's argument: f32[n] with values base + d * 10 + i.
std::vector<Literal> Ramps(int64_t devices, int64_t n, float base = 0) {
  std::vector<Literal> out;
  for (int64_t d = 0; d < devices; ++d) {
    std::vector<float> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(base + d * 10 + i);
    out.push_back(R1(F32, v));
  }
  return out;
}

constexpr char kSum[] = R"(
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

TEST(SpmdTest, AllReduceSumsWithinEachGroup) {
  const std::string hlo = std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(p), channel_id=1, use_global_device_ids=true, replica_groups={{0,2},{1,3}}, to_apply=sum
}
)";
  std::vector<Literal> out = RunOn(hlo, {1, 4}, Ramps(4, 2));
  ASSERT_EQ(out.size(), 4u);
  ExpectFloats<float>(out[0], {20, 22});  // 0,1 + 20,21
  ExpectFloats<float>(out[2], {20, 22});
  ExpectFloats<float>(out[1], {40, 42});  // 10,11 + 30,31
  ExpectFloats<float>(out[3], {40, 42});
}

TEST(SpmdTest, AllReduceWithAComputationOfSeveralOps) {
  // max(a, b) * 1 is not one op: each element goes through the body.
  const std::string hlo = R"(HloModule m
maxone {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  m = f32[] maximum(a, b)
  one = f32[] constant(1)
  ROOT r = f32[] multiply(m, one)
}
ENTRY e {
  p = f32[3] parameter(0)
  ROOT r = f32[3] all-reduce(p), replica_groups={}, to_apply=maxone
}
)";
  std::vector<Literal> out = RunOn(hlo, {3, 1}, Ramps(3, 3));
  ASSERT_EQ(out.size(), 3u);
  for (const Literal& l : out) ExpectFloats<float>(l, {20, 21, 22});
}

TEST(SpmdTest, AllGatherConcatenatesInGroupOrder) {
  const std::string hlo = R"(HloModule m
ENTRY e {
  p = f32[2,1] parameter(0)
  ROOT g = f32[2,2] all-gather(p), channel_id=1, replica_groups=[2,2]<=[4], dimensions={1}, use_global_device_ids=true
}
)";
  std::vector<Literal> args;
  for (int d = 0; d < 4; ++d) {
    args.push_back(testing::Lit(
        F32, {2, 1}, std::vector<float>{float(d * 10), float(d * 10 + 1)}));
  }
  std::vector<Literal> out = RunOn(hlo, {1, 4}, std::move(args));
  ASSERT_EQ(out.size(), 4u);
  ExpectFloats<float>(out[1], {0, 10, 1, 11});  // Group {0,1}.
  ExpectFloats<float>(out[3], {20, 30, 21, 31});
}

TEST(SpmdTest, ReduceScatterGivesEachMemberItsChunkOfTheSum) {
  const std::string hlo = std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  p = f32[4] parameter(0)
  ROOT r = f32[2] reduce-scatter(p), channel_id=1, replica_groups={{1,0}}, use_global_device_ids=true, dimensions={0}, to_apply=sum
}
)";
  std::vector<Literal> out = RunOn(hlo, {1, 2}, Ramps(2, 4));
  ASSERT_EQ(out.size(), 2u);
  // Sum: 10, 12, 14, 16. Device 1 is first in the group: chunk 0.
  ExpectFloats<float>(out[1], {10, 12});
  ExpectFloats<float>(out[0], {14, 16});
}

TEST(SpmdTest, AllToAllSplitsAndConcatenates) {
  const std::string hlo = R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT a = f32[4] all-to-all(p), channel_id=1, replica_groups={{0,1}}, dimensions={0}
}
)";
  std::vector<Literal> out = RunOn(hlo, {1, 2}, Ramps(2, 4));
  ASSERT_EQ(out.size(), 2u);
  // Device 0 gets chunk 0 of each: 0,1 | 10,11; device 1 chunk 1.
  ExpectFloats<float>(out[0], {0, 1, 10, 11});
  ExpectFloats<float>(out[1], {2, 3, 12, 13});
}

TEST(SpmdTest, AllToAllTupleFormExchangesOperands) {
  const std::string hlo = R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  n = f32[2] negate(p)
  ROOT a = (f32[2], f32[2]) all-to-all(p, n), replica_groups={{0,1}}
}
)";
  std::vector<Literal> out = RunOn(hlo, {2, 1}, Ramps(2, 2));
  ASSERT_EQ(out.size(), 2u);
  // Device 1 receives operand 1 (the negation) of each member.
  ASSERT_TRUE(out[1].shape().IsTuple());
  ExpectFloats<float>(out[1].tuple_element(0), {-0.0f, -1});
  ExpectFloats<float>(out[1].tuple_element(1), {-10, -11});
  ExpectFloats<float>(out[0].tuple_element(1), {10, 11});
}

// The form of an unseeded finding (2026-12-06): operands in another layout
// than the results, and a bitcast of a result. The bitcast reads the
// result's own (default) layout, not the operand's the value came from.
TEST(SpmdTest, AllToAllTupleResultsHaveTheirOwnLayout) {
  const std::string hlo = R"(HloModule m
ENTRY e {
  p = f32[2,3] parameter(0)
  c = f32[2,3]{0,1} copy(p)
  q = f32[2,3]{0,1} negate(c)
  a = (f32[2,3], f32[2,3]) all-to-all(c, q), replica_groups={{0,1}}
  g = f32[2,3] get-tuple-element(a), index=1
  ROOT b = f32[6] bitcast(g)
}
)";
  std::vector<Literal> args;
  for (int64_t d = 0; d < 4; ++d) {
    std::vector<float> v;
    for (int64_t i = 0; i < 6; ++i) v.push_back(d * 10 + i);
    args.push_back(testing::Lit(F32, {2, 3}, v));
  }
  std::vector<Literal> out = RunOn(hlo, {2, 2}, std::move(args));
  ASSERT_EQ(out.size(), 4u);
  // Device 0 (replica 0, partition 0) receives p of replica 1 (device 2)
  // as result 1; the bitcast reads it in row-major order.
  ExpectFloats<float>(out[0], {20, 21, 22, 23, 24, 25});
}

TEST(SpmdTest, CollectivePermuteMovesAlongTheRingAndZeroesTheRest) {
  const std::string hlo = R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT c = f32[2] collective-permute(p), channel_id=1, source_target_pairs={{0,1},{1,2}}
}
)";
  std::vector<Literal> out = RunOn(hlo, {1, 3}, Ramps(3, 2));
  ASSERT_EQ(out.size(), 3u);
  ExpectFloats<float>(out[0], {0, 0});  // No pair targets device 0.
  ExpectFloats<float>(out[1], {0, 1});
  ExpectFloats<float>(out[2], {10, 11});
}

TEST(SpmdTest, PartitionAndReplicaIds) {
  const std::string hlo = R"(HloModule m
ENTRY e {
  p = f32[1] parameter(0)
  pid = u32[] partition-id()
  rid = u32[] replica-id()
  ROOT t = (u32[], u32[]) tuple(rid, pid)
}
)";
  std::vector<Literal> out = RunOn(hlo, {2, 3}, Ramps(6, 1));
  ASSERT_EQ(out.size(), 6u);
  EXPECT_EQ(out[5].tuple_element(0).GetAsInt64(0), 1);
  EXPECT_EQ(out[5].tuple_element(1).GetAsInt64(0), 2);
  EXPECT_EQ(out[1].tuple_element(0).GetAsInt64(0), 0);
  EXPECT_EQ(out[1].tuple_element(1).GetAsInt64(0), 1);
}

TEST(SpmdTest, ACollectiveInALoopMeetsOncePerIteration) {
  const std::string hlo = std::string("HloModule m\n") + kSum + R"(
cond {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[2] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  r = f32[2] all-reduce(x), replica_groups={}, to_apply=sum
  ROOT t = (s32[], f32[2]) tuple(i1, r)
}
ENTRY e {
  p = f32[2] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[2]) tuple(z, p)
  w = (s32[], f32[2]) while(init), condition=cond, body=body
  ROOT x = f32[2] get-tuple-element(w), index=1
}
)";
  std::vector<Literal> out = RunOn(hlo, {2, 1}, Ramps(2, 2));
  ASSERT_EQ(out.size(), 2u);
  // 0,1 + 10,11 = 10,12; then doubled twice.
  ExpectFloats<float>(out[0], {40, 48});
  ExpectFloats<float>(out[1], {40, 48});
}

// A module where partition 0 runs `first` and the others `other` (each
// a computation f32[2] -> f32[2] whose root is named in its text).
std::string BranchOnPartition(const std::string& first,
                              const std::string& other) {
  return std::string("HloModule m\n") + kSum + "\nfirst {\n  x = f32[2] " +
         "parameter(0)\n  " + first + "\n}\nother {\n  x = f32[2] " +
         "parameter(0)\n  " + other + R"(
}
ENTRY e {
  p = f32[2] parameter(0)
  pid = u32[] partition-id()
  zero = u32[] constant(0)
  is_first = pred[] compare(pid, zero), direction=EQ
  ROOT out = f32[2] conditional(is_first, p, p), true_computation=first, false_computation=other
}
)";
}

constexpr char kAllReduceA[] =
    "ROOT a = f32[2] all-reduce(x), channel_id=1, use_global_device_ids=true, "
    "replica_groups={{0,1}}, to_apply=sum";

TEST(SpmdTest, DevicesThatMissACollectiveAreAnErrorNotAHang) {
  // Only partition 0 runs the all-reduce.
  const std::string hlo =
      BranchOnPartition(kAllReduceA, "ROOT c = f32[2] copy(x)");
  Status s = StatusOn(hlo, {1, 2}, Ramps(2, 2));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("device 1 ended without reaching all-reduce %a"),
            std::string::npos)
      << s.ToString();
}

TEST(SpmdTest, DevicesWaitingAtDifferentCollectivesAreNamed) {
  // Partition 0 waits at %a, partition 1 at %b: no group completes.
  const std::string hlo = BranchOnPartition(
      kAllReduceA,
      "ROOT b = f32[2] all-reduce(x), channel_id=2, "
      "use_global_device_ids=true, replica_groups={{0,1}}, to_apply=sum");
  Status s = StatusOn(hlo, {1, 2}, Ramps(2, 2));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("wait at collectives no group completes"),
            std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("device 0 at %a"), std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("device 1 at %b"), std::string::npos)
      << s.ToString();
}

TEST(SpmdTest, AnErrorOnOneDeviceIsReportedWithTheDevice) {
  const std::string hlo = std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(p), channel_id=1, use_global_device_ids=true, replica_groups={{0,1},{2}}, to_apply=sum
}
)";
  Status s = StatusOn(hlo, {1, 4}, Ramps(4, 2));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("device 3 is in no group"), std::string::npos)
      << s.ToString();
  EXPECT_EQ(StatusOn(hlo, {1, 2}, Ramps(3, 2)).code(),
            StatusCode::kInvalidArgument);
}

TEST(SpmdTest, OneDeviceAloneIsAPlainEvaluation) {
  // Outside a mesh the groups are the device alone: an all-reduce returns
  // its operand, a permute onto itself too.
  const std::string hlo = std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  p = s32[3] parameter(0)
  r = s32[3] all-reduce(p), replica_groups={}, to_apply=sum
  ROOT c = s32[3] collective-permute(r), source_target_pairs={{0,0}}
}
)";
  Literal out = testing::RunHlo(hlo, {R1(S32, std::vector<int32_t>{4, 5, 6})});
  EXPECT_EQ(Values<int32_t>(out), (std::vector<int32_t>{4, 5, 6}));
}

// ---- The numerics contract across devices.

std::vector<BoundedResult> BoundsOn(const std::string& hlo, DeviceMesh mesh,
                                    std::vector<Literal> args) {
  auto module = ParseHloModule(hlo);
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return {};
  std::vector<std::vector<Literal>> per_device = OnePerDevice(std::move(args));
  StatusOr<std::vector<BoundedResult>> out =
      EvaluateSpmdWithBounds(**module, per_device, mesh);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? std::move(out).value() : std::vector<BoundedResult>();
}

TEST(SpmdBoundsTest, AnAllReduceSumMayAddTheDevicesInAnyOrder) {
  const std::string hlo = std::string("HloModule m\n") + kSum + R"(
ENTRY e {
  p = f32[1] parameter(0)
  ROOT r = f32[1] all-reduce(p), replica_groups={}, to_apply=sum
}
)";
  std::vector<Literal> args;
  for (float x : {1e8f, 1.0f, -1e8f, 1.0f}) {
    args.push_back(R1(F32, std::vector<float>{x}));
  }
  std::vector<BoundedResult> out = BoundsOn(hlo, {4, 1}, std::move(args));
  ASSERT_EQ(out.size(), 4u);
  // In device order the f32 sum is 1; devices 1, 2, 3, 0 give 0.
  const float forward = ((1e8f + 1.0f) + -1e8f) + 1.0f;
  const float other = ((1.0f + -1e8f) + 1.0f) + 1e8f;
  ASSERT_NE(forward, other);
  for (const BoundedResult& r : out) {
    ASSERT_EQ(r.outputs.size(), 1u);
    const double nominal = r.outputs[0].nominal.GetAsDouble(0);
    const double allowed = r.outputs[0].allowed.GetAsDouble(0);
    EXPECT_LE(std::fabs(other - nominal), allowed);
    EXPECT_LE(std::fabs(forward - nominal), allowed);
    // The freedom is of the order of n u sum |x|, not unbounded.
    EXPECT_LT(allowed, 1e3);
  }
}

// Found by the demo (zoo bug 22's history): the slice's ring adds an f16
// all-reduce hop by hop, each partial sum rounded to f16 as it travels;
// 4 devices gave 0.13867 where the f32-accumulated sum rounds to 0.13965.
// Across devices the accumulator may be the element type.
TEST(SpmdBoundsTest, AnF16AllReduceMayRoundEachStepToF16) {
  const std::string hlo = R"(HloModule m
sum16 {
  x = f16[] parameter(0)
  y = f16[] parameter(1)
  ROOT z = f16[] add(x, y)
}
ENTRY e {
  p = f16[1] parameter(0)
  ROOT r = f16[1] all-reduce(p), replica_groups={}, to_apply=sum16
}
)";
  const std::vector<float> xs = {-0.4614f, 0.0f, -1.0f, 1.601f};
  std::vector<Literal> args;
  for (float x : xs) {
    Literal l(Shape(F16, {1}));
    l.SetFromDouble(0, x);
    args.push_back(std::move(l));
  }
  std::vector<BoundedResult> out = BoundsOn(hlo, {4, 1}, std::move(args));
  ASSERT_EQ(out.size(), 4u);
  const double nominal = out[0].outputs[0].nominal.GetAsDouble(0);
  const double allowed = out[0].outputs[0].allowed.GetAsDouble(0);
  EXPECT_NEAR(nominal, 0.13965, 1e-4);
  // The ring's answer: one f16 ulp of the partial sum -1.46 off.
  EXPECT_LE(std::fabs(0.13867188 - nominal), allowed);
  // Still of the order of n u_f16 sum |x| (0.015 here), not unbounded.
  EXPECT_GT(std::fabs(0.2 - nominal), allowed);
}

// Found by the demo (a minimized reduce-scatter): a computation that
// returns its first argument depends on the order of the devices, which
// XLA leaves unspecified: the result is undetermined, not exact.
TEST(SpmdBoundsTest, AnOrderDependentComputationAcrossDevicesIsUndetermined) {
  const std::string hlo = R"(HloModule m
first {
  a = s8[] parameter(0)
  b = s8[] parameter(1)
  ROOT r = s8[] copy(a)
}
ENTRY e {
  p = s8[2] parameter(0)
  ROOT r = s8[2] all-reduce(p), replica_groups={}, to_apply=first
}
)";
  std::vector<Literal> args;
  for (int8_t x : {3, 7}) {
    Literal l(Shape(PrimitiveType::S8, {2}));
    l.SetFromDouble(0, x);
    l.SetFromDouble(1, x);
    args.push_back(std::move(l));
  }
  std::vector<BoundedResult> out = BoundsOn(hlo, {2, 1}, std::move(args));
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(std::isinf(out[0].outputs[0].allowed.GetAsDouble(0)));
}

TEST(SpmdBoundsTest, IntegerSumsAreExactAndGathersCarryTheirBounds) {
  const std::string sum_s32 = R"(HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  p = s32[2] parameter(0)
  ROOT r = s32[2] all-reduce(p), replica_groups={}, to_apply=add
}
)";
  std::vector<Literal> ints;
  for (int d = 0; d < 2; ++d) {
    ints.push_back(R1(S32, std::vector<int32_t>{d + 1, -7 * d}));
  }
  for (const BoundedResult& r : BoundsOn(sum_s32, {2, 1}, std::move(ints))) {
    EXPECT_EQ(Values<int32_t>(r.outputs[0].nominal),
              (std::vector<int32_t>{3, -7}));
    EXPECT_EQ(r.outputs[0].allowed.GetAsDouble(0), 0);
    EXPECT_EQ(r.outputs[0].allowed.GetAsDouble(1), 0);
  }
  // exp's allowance on each device moves with its values.
  const std::string gather = R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  x = f32[2] exponential(p)
  ROOT g = f32[4] all-gather(x), replica_groups={}, dimensions={0}
}
)";
  const std::string alone = R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT x = f32[2] exponential(p)
}
)";
  std::vector<Literal> args = Ramps(2, 2, 0.5f);
  std::vector<double> expected;
  for (const Literal& a : args) {
    auto m = ParseHloModule(alone);
    ASSERT_TRUE(m.ok());
    StatusOr<BoundedResult> one = EvaluateWithBounds(**m, {&a, 1});
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    for (int i = 0; i < 2; ++i) {
      expected.push_back(one->outputs[0].allowed.GetAsDouble(i));
    }
  }
  for (const BoundedResult& r : BoundsOn(gather, {2, 1}, std::move(args))) {
    for (int i = 0; i < 4; ++i) {
      EXPECT_GT(expected[i], 0);
      EXPECT_EQ(r.outputs[0].allowed.GetAsDouble(i), expected[i]) << i;
    }
  }
}

}  // namespace
}  // namespace trench
