// Taps: tapped instructions' values equal the oracle's values of the same
// instructions; a bad tap name is a compile error.
#include <algorithm>
#include <string>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

constexpr char kModule[] = R"(
HloModule taps
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[9,129] parameter(0)
  b = s32[300] parameter(1)
  e = f32[9,129] exponential(a)
  m = f32[9,129] multiply(e, a)
  c = f32[300] convert(b)
  z = f32[] constant(0)
  r = f32[9] reduce(m, z), dimensions={1}, to_apply=sum
  t = (f32[9], f32[300]) tuple(r, c)
  ROOT o = f32[300] get-tuple-element(t), index=1
}
)";

TEST(TapsTest, TappedValuesEqualOracleValues) {
  auto m = testing::Parse(kModule);
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args = RandomArguments(*m->entry_computation(), 5);
  std::vector<std::string> names = {"e", "m", "c", "r", "a", "z"};
  auto expected = EvaluateWithTaps(*m, args, names);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  CompileOptions options;
  options.taps = names;
  auto exe = CompileModule(*m, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  tpu::RunResult r = testing::Run(*exe, args);
  ASSERT_EQ(r.report.status, tpu::RunStatus::kOk) << r.report.message;
  ASSERT_EQ(r.taps.size(), names.size());
  ComparisonOptions tol;
  tol.f32 = {1e-4, 4e-6};
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(r.taps[i].label, names[i]);
    const Literal* want = nullptr;
    for (const auto& [name, lit] : expected->taps) {
      if (name == names[i]) want = &lit;
    }
    ASSERT_NE(want, nullptr) << names[i];
    ComparisonResult c =
        CompareLiterals(testing::ToLiteral(r.taps[i]), *want, tol);
    EXPECT_TRUE(c.ok()) << names[i] << ": " << c.ToText();
  }
}

TEST(TapsTest, AllTapsCoverTupleLeaves) {
  auto m = testing::Parse(kModule);
  ASSERT_NE(m, nullptr);
  CompileOptions options;
  options.taps_all = true;
  auto exe = CompileModule(*m, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  std::vector<std::string> labels;
  for (const tpu::BufferDecl* d : exe->BuffersWithRole(tpu::BufferRole::kTap)) {
    labels.push_back(d->label);
  }
  // 8 array-valued instructions plus the tuple's two leaves.
  EXPECT_EQ(labels.size(), 10u);
  EXPECT_NE(std::find(labels.begin(), labels.end(), "t#0"), labels.end());
  EXPECT_NE(std::find(labels.begin(), labels.end(), "t#1"), labels.end());
  std::vector<Literal> args = RandomArguments(*m->entry_computation(), 6);
  tpu::RunResult r = testing::Run(*exe, args);
  EXPECT_EQ(r.report.status, tpu::RunStatus::kOk) << r.report.message;
}

TEST(TapsTest, UnknownTapIsNotFound) {
  auto m = testing::Parse(kModule);
  ASSERT_NE(m, nullptr);
  CompileOptions options;
  options.taps = {"nope"};
  auto exe = CompileModule(*m, options);
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace trench::codegen
