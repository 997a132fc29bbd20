// The callee level's probe (triage/localize/callee_probe.h): argument
// samples drawn by each call site's rule, the outlined module's shape and
// names, and what cannot be outlined. The oracle checks that the outlined
// module computes the called computation lane-wise.
#include "triage/localize/callee_probe.h"

#include <gtest/gtest.h>

#include "oracle/evaluator.h"
#include "tests/triage/case/hlo_diff_test_util.h"

namespace trench::hlo_bisect {
namespace {

constexpr char kModule[] = R"(HloModule m

greater {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  x = f32[] parameter(2)
  y = f32[] parameter(3)
  one = s32[] constant(1)
  a1 = s32[] add(a, one)
  ROOT gt = pred[] compare(a1, b), direction=GT
}

sum {
  acc = f32[] parameter(0)
  x = f32[] parameter(1)
  ROOT add = f32[] add(acc, x)
}

ENTRY main {
  k = s32[2,3] parameter(0)
  v = f32[2,3] parameter(1)
  s = (s32[2,3], f32[2,3]) sort(k, v), dimensions={1}, to_apply=greater
  init = f32[] constant(10)
  r = f32[2] reduce(v, init), dimensions={1}, to_apply=sum
  ROOT out = ((s32[2,3], f32[2,3]), f32[2]) tuple(s, r)
}
)";

Literal S32(std::vector<int64_t> dims, std::vector<int> v) {
  Literal l(Shape(PrimitiveType::S32, dims));
  for (size_t i = 0; i < v.size(); ++i) l.SetFromInt64(i, v[i]);
  return l;
}

class CalleeProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto m = hlo_diff::ParseCaseModule(kModule, "m");
    ASSERT_TRUE(m.ok()) << m.status().message();
    module_ = std::move(m).value();
  }
  const HloInstruction& Site(const std::string& name) {
    return *module_->entry_computation()->GetInstructionWithName(name);
  }
  std::unique_ptr<HloModule> module_;
};

TEST_F(CalleeProbeTest, SortComparatorOnPairsOfElements) {
  std::vector<Literal> ops;
  ops.push_back(S32({2, 3}, {5, 1, 4, 2, 6, 3}));
  ops.push_back(hlo_diff::testing::F32({2, 3}, {0, 1, 2, 3, 4, 5}));
  StatusOr<CalleeProbe> p = MakeCalleeProbe(Site("s"), 0, ops);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->samples, 36);  // All of 6 x 6 pairs fit.
  ASSERT_EQ(p->args.size(), 4u);
  // lhs = element t % 6, rhs = element 0 every fourth sample, else
  // (3t + 1) % 6; a key and its value come from the same element.
  EXPECT_EQ(p->args[0].GetAsInt64(1), 1);
  EXPECT_EQ(p->args[1].GetAsInt64(0), 5);
  EXPECT_EQ(p->args[1].GetAsInt64(1), 6);  // Element (3 + 1) % 6.
  EXPECT_EQ(p->args[3].GetAsDouble(1), 4);
  EXPECT_EQ(p->names, (std::vector<std::string>{"one", "a1", "gt"}));
  const HloComputation* e = p->module->entry_computation();
  EXPECT_EQ(e->name(), "greater");
  EXPECT_EQ(e->GetInstructionWithName("gt")->shape().ToString(false),
            "pred[36]");
  EXPECT_EQ(e->GetInstructionWithName("one")->opcode(), HloOpcode::kBroadcast);
  // Lane t computes the comparator on sample t.
  StatusOr<Literal> out = Evaluate(*p->module, p->args);
  ASSERT_TRUE(out.ok()) << out.status().message();
  const Literal& gt = out->tuple_element(2);
  for (int64_t t = 0; t < p->samples; ++t) {
    EXPECT_EQ(gt.GetAsInt64(t),
              p->args[0].GetAsInt64(t) + 1 > p->args[1].GetAsInt64(t) ? 1 : 0);
  }
}

TEST_F(CalleeProbeTest, ReduceBodySeesTheInitAsAccumulator) {
  std::vector<Literal> ops;
  ops.push_back(hlo_diff::testing::F32({2, 3}, {0, 1, 2, 3, 4, 5}));
  Literal init(Shape(PrimitiveType::F32, {}));
  init.SetFromDouble(0, 10);
  ops.push_back(std::move(init));
  StatusOr<CalleeProbe> p = MakeCalleeProbe(Site("r"), 0, ops);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_EQ(p->args[0].GetAsDouble(0), 10);  // acc: the init...
  EXPECT_EQ(p->args[0].GetAsDouble(1), 3);   // ...or input element 3.
  EXPECT_EQ(p->args[1].GetAsDouble(1), 1);   // x: input element 1.
  EXPECT_EQ(p->names, (std::vector<std::string>{"add"}));
}

TEST_F(CalleeProbeTest, WhatCannotBeOutlinedIsUnimplemented) {
  auto m = hlo_diff::ParseCaseModule(R"(HloModule m
inner {
  p = f32[] parameter(0)
  ROOT n = f32[] negate(p)
}
body {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] call(b), to_apply=inner
  ROOT s = f32[] add(a, c)
}
ENTRY main {
  v = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(v, z), dimensions={0}, to_apply=body
}
)",
                                     "m");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const HloInstruction& r =
      *(*m)->entry_computation()->GetInstructionWithName("r");
  std::vector<Literal> ops;
  ops.push_back(hlo_diff::testing::F32({4}, {1, 2, 3, 4}));
  ops.push_back(Literal(Shape(PrimitiveType::F32, {})));
  StatusOr<CalleeProbe> p = MakeCalleeProbe(r, 0, ops);
  EXPECT_EQ(p.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(p.status().message().find("%c (call)"), std::string::npos)
      << p.status().message();
  EXPECT_EQ(MakeCalleeProbe(r, 0, {}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_FALSE(IsCalleeCallSite(HloOpcode::kFusion));
  EXPECT_TRUE(IsCalleeCallSite(HloOpcode::kSelectAndScatter));
}

}  // namespace
}  // namespace trench::hlo_bisect
