// reduce and dot on the simulator against the oracle.
#include <string>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracle;

std::string Reduce(const std::string& t, const std::string& in,
                   const std::string& out, const std::string& dims,
                   const std::string& op, const std::string& init) {
  return "HloModule m\nr {\n  x = " + t + "[] parameter(0)\n  y = " + t +
         "[] parameter(1)\n  ROOT z = " + t + "[] " + op +
         "(x, y)\n}\nENTRY e {\n  a = " + t + in + " parameter(0)\n  i = " + t +
         "[] constant(" + init + ")\n  ROOT r = " + t + out +
         " reduce(a, i), dimensions={" + dims + "}, to_apply=r\n}\n";
}

TEST(ReduceTest, SumMaxMinOverAnyDims) {
  struct Case {
    std::string in, out, dims;
  };
  const Case cases[] = {{"[1]", "[]", "0"},
                        {"[300]", "[]", "0"},
                        {"[9,129]", "[9]", "1"},
                        {"[9,129]", "[129]", "0"},
                        {"[9,129]", "[]", "0,1"},
                        {"[2,7,300]", "[7]", "0,2"},
                        {"[2,7,128]", "[2,128]", "1"},
                        {"[3,1,8]", "[3,1,8]", ""}};
  ComparisonOptions sum_tol;
  sum_tol.f32 = {1e-4, 1e-5};  // f32 sums in a different order.
  for (const Case& c : cases) {
    ExpectMatchesOracle(Reduce("f32", c.in, c.out, c.dims, "add", "0"), 1,
                        sum_tol);
    ExpectMatchesOracle(Reduce("f32", c.in, c.out, c.dims, "maximum", "-inf"),
                        2, ComparisonOptions::Exact());
    ExpectMatchesOracle(Reduce("s32", c.in, c.out, c.dims, "minimum", "5"), 3,
                        ComparisonOptions::Exact());
    ExpectMatchesOracle(Reduce("s32", c.in, c.out, c.dims, "add", "1"), 4,
                        ComparisonOptions::Exact());
    ExpectMatchesOracle(Reduce("pred", c.in, c.out, c.dims, "and", "true"), 5,
                        ComparisonOptions::Exact());
  }
}

TEST(ReduceTest, UnsupportedReducerIsAClearError) {
  // Reducers are emitted op by op; a call inside one is not (yet).
  std::string text =
      "HloModule m\ninner {\n  p = f32[] parameter(0)\n"
      "  q = f32[] parameter(1)\n  ROOT s = f32[] add(p, q)\n}\n"
      "r {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
      "  ROOT z = f32[] call(x, y), to_apply=inner\n}\n"
      "ENTRY e {\n  a = f32[4] parameter(0)\n  i = f32[] constant(1)\n"
      "  ROOT r = f32[] reduce(a, i), dimensions={0}, to_apply=r\n}\n";
  auto m = testing::Parse(text);
  ASSERT_NE(m, nullptr);
  auto exe = CompileModule(*m, CompileOptions());
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().message(),
            "hloc: cannot compile reduce for computation r with call f32");
}

std::string Dot(const std::string& t, int64_t m, int64_t k, int64_t n,
                const std::string& precision, bool transpose_lhs = false,
                bool transpose_rhs = false) {
  auto shape = [&](int64_t a, int64_t b) {
    return t + "[" + std::to_string(a) + "," + std::to_string(b) + "]";
  };
  return "HloModule m\nENTRY e {\n  a = " +
         (transpose_lhs ? shape(k, m) : shape(m, k)) +
         " parameter(0)\n  b = " + (transpose_rhs ? shape(n, k) : shape(k, n)) +
         " parameter(1)\n  ROOT r = " + shape(m, n) +
         " dot(a, b), lhs_contracting_dims={" + (transpose_lhs ? "0" : "1") +
         "}, rhs_contracting_dims={" + (transpose_rhs ? "1" : "0") +
         "}, operand_precision={" + precision + "," + precision + "}\n}\n";
}

TEST(DotTest, PrecisionModesMeetTheirErrorLevels) {
  // Inputs are in [-4, 4); |a_ik b_kj| sums to about 4 k. Errors relative to
  // that magnitude: DEFAULT bf16-level, HIGH ~2^-16, HIGHEST f32-level.
  struct Mode {
    std::string name;
    double rel;
  };
  const Mode modes[] = {{"DEFAULT", 1e-2}, {"HIGH", 1e-4}, {"HIGHEST", 2e-6}};
  const int64_t sizes[][3] = {{1, 1, 1},   {7, 9, 8},      {8, 128, 128},
                              {9, 129, 7}, {17, 300, 129}, {1, 257, 1}};
  for (const Mode& mode : modes) {
    for (const auto& s : sizes) {
      ComparisonOptions o;
      o.f32 = {mode.rel * 4 * 4 * s[1], 0};
      ExpectMatchesOracle(Dot("f32", s[0], s[1], s[2], mode.name), 9, o);
    }
  }
}

TEST(DotTest, DefaultIsVisiblyLessPreciseThanHighest) {
  // A DEFAULT f32 dot must show bf16 rounding: compared exactly with the
  // oracle's f32 result it mismatches, while HIGHEST is close.
  auto m = testing::Parse(Dot("f32", 8, 128, 128, "DEFAULT"));
  ASSERT_NE(m, nullptr);
  std::vector<Literal> args = RandomArguments(*m->entry_computation(), 3);
  auto expected = Evaluate(*m, args);
  ASSERT_TRUE(expected.ok());
  auto exe = CompileModule(*m, CompileOptions());
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  tpu::RunResult r = testing::Run(*exe, args);
  ASSERT_EQ(r.report.status, tpu::RunStatus::kOk) << r.report.message;
  ComparisonResult c =
      CompareLiterals(testing::ToLiteral(r.outputs[0]), *expected,
                      ComparisonOptions::Near(1e-3, 0));
  EXPECT_FALSE(c.ok());
  EXPECT_GT(r.report.cost.total.matmul_passes, 0);
}

TEST(DotTest, TransposedOperandsAndBf16) {
  ComparisonOptions o;
  o.f32 = {1e-4 * 16 * 129, 0};
  ExpectMatchesOracle(Dot("f32", 9, 129, 7, "HIGHEST", true, false), 2, o);
  ExpectMatchesOracle(Dot("f32", 9, 129, 7, "HIGHEST", false, true), 2, o);
  ExpectMatchesOracle(Dot("f32", 9, 129, 7, "HIGHEST", true, true), 2, o);
  // bf16 operands are exact in one pass; the result rounds to bf16 once.
  ExpectMatchesOracle(Dot("bf16", 9, 129, 130, "DEFAULT"), 2);
}

}  // namespace
}  // namespace trench::codegen
