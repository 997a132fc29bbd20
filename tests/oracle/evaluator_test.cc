// The evaluator core: parameters, tuples, calls, fusion, map, while,
// conditional, taps and error paths.
#include "oracle/evaluator.h"

#include <gtest/gtest.h>

#include "tests/oracle/oracle_test_util.h"

namespace trench {
namespace {

using testing::ExpectFloats;
using testing::R0;
using testing::R1;
using testing::RunHlo;
using testing::RunStatus;
using testing::Values;

constexpr PrimitiveType F32 = PrimitiveType::F32;
constexpr PrimitiveType S32 = PrimitiveType::S32;
constexpr PrimitiveType PRED = PrimitiveType::PRED;

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? std::move(m).value() : nullptr;
}

TEST(EvaluatorTest, TupleAndGetTupleElement) {
  Literal r = RunHlo(R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  c = s32[] constant(7)
  t = (f32[2], s32[]) tuple(p, c)
  g = s32[] get-tuple-element(t), index=1
  ROOT out = (s32[], (f32[2], s32[])) tuple(g, t)
}
)",
                     {R1(F32, std::vector<float>{1.0f, 2.0f})});
  ASSERT_TRUE(r.shape().IsTuple());
  EXPECT_EQ(Values<int32_t>(r.tuple_element(0)), (std::vector<int32_t>{7}));
  ExpectFloats<float>(r.tuple_element(1).tuple_element(0), {1.0f, 2.0f});
}

TEST(EvaluatorTest, SharedValuesSurviveBufferReuse) {
  // t feeds three elementwise users; only its last user may overwrite it.
  Literal r = RunHlo(R"(
HloModule m
ENTRY e {
  p = f32[3] parameter(0)
  t = f32[3] negate(p)
  a = f32[3] add(t, p)
  b = f32[3] multiply(t, t)
  c = f32[3] add(b, b)
  ROOT out = (f32[3], f32[3], f32[3]) tuple(a, c, t)
}
)",
                     {R1(F32, std::vector<float>{1.0f, -2.0f, 3.0f})});
  ExpectFloats<float>(r.tuple_element(0), {0.0f, 0.0f, 0.0f});
  ExpectFloats<float>(r.tuple_element(1), {2.0f, 8.0f, 18.0f});
  ExpectFloats<float>(r.tuple_element(2), {-1.0f, 2.0f, -3.0f});
}

TEST(EvaluatorTest, CallAndFusionEvaluateTheirComputations) {
  Literal r = RunHlo(R"(
HloModule m
square {
  x = f32[2] parameter(0)
  ROOT y = f32[2] multiply(x, x)
}
fused {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  s = f32[2] subtract(a, b)
  ROOT e = f32[2] exponential(s)
}
ENTRY e {
  p = f32[2] parameter(0)
  q = f32[2] parameter(1)
  c = f32[2] call(p), to_apply=square
  ROOT f = f32[2] fusion(c, q), kind=kLoop, calls=fused
}
)",
                     {R1(F32, std::vector<float>{2.0f, 3.0f}),
                      R1(F32, std::vector<float>{4.0f, 9.0f})});
  ExpectFloats<float>(r, {1.0f, 1.0f});
}

TEST(EvaluatorTest, MapFastAndGeneralPaths) {
  const std::string hlo = R"(
HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] subtract(y, x)
}
poly {
  x = f32[] parameter(0)
  one = f32[] constant(1)
  sq = f32[] multiply(x, x)
  ROOT r = f32[] add(sq, one)
}
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[3] parameter(1)
  m1 = f32[3] map(a, b), dimensions={0}, to_apply=add
  ROOT m2 = f32[3] map(m1), dimensions={0}, to_apply=poly
}
)";
  const std::vector<Literal> args = {
      R1(F32, std::vector<float>{1.0f, 2.0f, 3.0f}),
      R1(F32, std::vector<float>{2.0f, 4.0f, 8.0f})};
  // (b - a)^2 + 1 with the parameters of `add` used in swapped order.
  ExpectFloats<float>(RunHlo(hlo, args), {2.0f, 5.0f, 26.0f});
  // Tapping inside `add` forces the per-element path; same result, and the
  // tap holds the last element's value.
  auto module = Parse(hlo);
  ASSERT_NE(module, nullptr);
  const std::vector<std::string> taps = {"s", "m1"};
  auto tapped = EvaluateWithTaps(*module, args, taps);
  ASSERT_TRUE(tapped.ok()) << tapped.status().ToString();
  ExpectFloats<float>(tapped->result, {2.0f, 5.0f, 26.0f});
  ASSERT_EQ(tapped->taps.size(), 2u);
  EXPECT_EQ(tapped->taps[0].first, "s");
  ExpectFloats<float>(tapped->taps[0].second, {5.0f});
  ExpectFloats<float>(tapped->taps[1].second, {1.0f, 2.0f, 5.0f});
}

const char kCountingLoop[] = R"(
HloModule m
cond {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  fi = f32[] convert(i)
  acc1 = f32[] add(acc, fi)
  ROOT t = (s32[], f32[]) tuple(i1, acc1)
}
ENTRY e {
  z = s32[] parameter(0)
  a = f32[] constant(0.5)
  init = (s32[], f32[]) tuple(z, a)
  ROOT w = (s32[], f32[]) while(init), condition=cond, body=body
}
)";

TEST(EvaluatorTest, WhileLoopRunsUntilConditionFails) {
  Literal r = RunHlo(kCountingLoop, {R0<int32_t>(S32, 0)});
  EXPECT_EQ(Values<int32_t>(r.tuple_element(0)), (std::vector<int32_t>{10}));
  ExpectFloats<float>(r.tuple_element(1), {45.5f});
  // Starting past the bound: zero iterations.
  Literal none = RunHlo(kCountingLoop, {R0<int32_t>(S32, 20)});
  EXPECT_EQ(Values<int32_t>(none.tuple_element(0)), (std::vector<int32_t>{20}));
  ExpectFloats<float>(none.tuple_element(1), {0.5f});
}

TEST(EvaluatorTest, WhileLoopIterationGuard) {
  Status ok = RunStatus(kCountingLoop, {R0<int32_t>(S32, 0)},
                        {.max_while_iterations = 10});
  EXPECT_TRUE(ok.ok()) << ok.ToString();
  Status st = RunStatus(kCountingLoop, {R0<int32_t>(S32, 0)},
                        {.max_while_iterations = 9});
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.ToString();
  EXPECT_NE(st.message().find("%w"), std::string::npos) << st.ToString();
}

TEST(EvaluatorTest, ConditionalPredAndIndexedForms) {
  const std::string pred_form = R"(
HloModule m
neg {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
dbl {
  x = f32[] parameter(0)
  ROOT d = f32[] add(x, x)
}
ENTRY e {
  p = pred[] parameter(0)
  v = f32[] parameter(1)
  ROOT c = f32[] conditional(p, v, v), true_computation=neg, false_computation=dbl
}
)";
  ExpectFloats<float>(RunHlo(pred_form, {R0<uint8_t>(PRED, 1), R0(F32, 3.0f)}),
                      {-3.0f});
  ExpectFloats<float>(RunHlo(pred_form, {R0<uint8_t>(PRED, 0), R0(F32, 3.0f)}),
                      {6.0f});
  const std::string indexed = R"(
HloModule m
b0 {
  x = s32[] parameter(0)
  ROOT c = s32[] constant(100)
}
b1 {
  x = s32[] parameter(0)
  ROOT n = s32[] negate(x)
}
b2 {
  x = s32[] parameter(0)
  ROOT m = s32[] multiply(x, x)
}
ENTRY e {
  i = s32[] parameter(0)
  v = s32[] parameter(1)
  ROOT c = s32[] conditional(i, v, v, v), branch_computations={b0, b1, b2}
}
)";
  auto run = [&](int32_t index) {
    return Values<int32_t>(
        RunHlo(indexed, {R0<int32_t>(S32, index), R0<int32_t>(S32, 7)}))[0];
  };
  EXPECT_EQ(run(0), 100);
  EXPECT_EQ(run(1), -7);
  EXPECT_EQ(run(2), 49);
  // Out of range selects the last branch, as XLA does.
  EXPECT_EQ(run(3), 49);
  EXPECT_EQ(run(-1), 49);
}

TEST(EvaluatorTest, IdentityLikeOps) {
  Literal r = RunHlo(R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  tok = token[] after-all()
  c = f32[2] copy(p)
  d = f32[2] add-dependency(c, tok)
  b = f32[2] opt-barrier(d)
  ROOT t = (f32[2], token[]) tuple(b, tok)
}
)",
                     {R1(F32, std::vector<float>{1.5f, -2.0f})});
  ExpectFloats<float>(r.tuple_element(0), {1.5f, -2.0f});
  EXPECT_TRUE(r.tuple_element(1).shape().IsToken());
}

TEST(EvaluatorTest, TapsInsideFusionAndErrors) {
  const std::string hlo = R"(
HloModule m
fused {
  a = f32[2] parameter(0)
  inner = f32[2] multiply(a, a)
  ROOT o = f32[2] negate(inner)
}
ENTRY e {
  p = f32[2] parameter(0)
  unused = f32[2] exponential(p)
  ROOT f = f32[2] fusion(p), kind=kLoop, calls=fused
}
)";
  auto module = Parse(hlo);
  ASSERT_NE(module, nullptr);
  const std::vector<Literal> args = {R1(F32, std::vector<float>{2.0f, 3.0f})};
  const std::vector<std::string> taps = {"inner", "p", "unused"};
  auto r = EvaluateWithTaps(*module, args, taps);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ExpectFloats<float>(r->result, {-4.0f, -9.0f});
  ASSERT_EQ(r->taps.size(), 3u);
  ExpectFloats<float>(r->taps[0].second, {4.0f, 9.0f});
  ExpectFloats<float>(r->taps[1].second, {2.0f, 3.0f});
  // A tapped dead instruction is evaluated for the tap.
  EXPECT_NEAR(Values<float>(r->taps[2].second)[0], 7.389056f, 1e-5f);
  const std::vector<std::string> missing = {"nope"};
  EXPECT_EQ(EvaluateWithTaps(*module, args, missing).status().code(),
            StatusCode::kNotFound);
}

TEST(EvaluatorTest, ArgumentChecks) {
  auto module = Parse(R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT n = f32[2] negate(p)
}
)");
  ASSERT_NE(module, nullptr);
  auto none = Evaluate(*module, {});
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(none.status().message().find("1 parameter"), std::string::npos)
      << none.status().ToString();
  const std::vector<Literal> wrong = {R1(F32, std::vector<float>{1, 2, 3})};
  auto bad = Evaluate(*module, wrong);
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("f32[3]"), std::string::npos)
      << bad.status().ToString();
  const std::vector<Literal> type = {R1<int32_t>(S32, {1, 2})};
  EXPECT_EQ(Evaluate(*module, type).status().code(),
            StatusCode::kInvalidArgument);
  // EvaluateComputation checks too.
  const Literal* no_args[] = {nullptr};
  EXPECT_EQ(EvaluateComputation(*module->entry_computation(), {no_args, 0})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(EvaluatorTest, UnsupportedOpIsUnimplementedAndNamesTheInstruction) {
  const std::string hlo = R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT cc = f32[2] custom-call(p), custom_call_target="foo"
}
)";
  Status st = RunStatus(hlo, {R1(F32, std::vector<float>{1, 2})});
  EXPECT_EQ(st.code(), StatusCode::kUnimplemented);
  EXPECT_NE(st.message().find("unsupported op custom-call"), std::string::npos)
      << st.ToString();
  EXPECT_NE(st.message().find("%cc"), std::string::npos) << st.ToString();
  // Dead unsupported code is not evaluated.
  Literal r = RunHlo(R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  dead = f32[2] custom-call(p), custom_call_target="foo"
  ROOT n = f32[2] negate(p)
}
)",
                     {R1(F32, std::vector<float>{1, 2})});
  ExpectFloats<float>(r, {-1.0f, -2.0f});
}

TEST(EvaluatorTest, DispatchesStructuralKernels) {
  Literal r = RunHlo(R"(
HloModule m
ENTRY e {
  s = f32[] parameter(0)
  b = f32[3] broadcast(s), dimensions={}
  i = f32[3] iota(), iota_dimension=0
  ROOT a = f32[3] add(b, i)
}
)",
                     {R0(F32, 10.0f)});
  ExpectFloats<float>(r, {10.0f, 11.0f, 12.0f});
}

}  // namespace
}  // namespace trench
