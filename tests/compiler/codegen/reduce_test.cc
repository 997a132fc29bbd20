// reduce on the simulator against the oracle: every dtype, cross-lane and
// lane-parallel strategies, any reducer computation, variadic (argmax).
#include <string>
#include <vector>

#include "tests/compiler/codegen/codegen_test_util.h"
#include "tpu/assembler.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracle;
using testing::IsFloatType;
using testing::kAllTypes;
using testing::ReducerRoot;
using testing::SumOfSquaresRoot;

// A reduce of t`in` over `dims` with reducer body `body` (on scalars x, y,
// root named z) and init `init`.
std::string Reduce(const std::string& t, const std::string& in,
                   const std::string& out, const std::string& dims,
                   const std::string& body, const std::string& init) {
  return "HloModule m\nr {\n  x = " + t + "[] parameter(0)\n  y = " + t +
         "[] parameter(1)\n" + body + "}\nENTRY e {\n  a = " + t + in +
         " parameter(0)\n  i = " + t + "[] constant(" + init +
         ")\n  ROOT r = " + t + out + " reduce(a, i), dimensions={" + dims +
         "}, to_apply=r\n}\n";
}

struct Case {
  std::string in, out, dims;
};

// Cross-lane (trailing reduced dims: one row per sublane, or whole tiles
// for rows >= 1024) and lane-parallel shapes, ragged everywhere.
const std::vector<Case> kCases = {
    {"[1]", "[]", "0"},         {"[300]", "[]", "0"},
    {"[3,1100]", "[3]", "1"},   {"[9,129]", "[9]", "1"},
    {"[3,4,5]", "[3]", "1,2"},  {"[9,129]", "[129]", "0"},
    {"[2,7,30]", "[7]", "0,2"}, {"[3,1,8]", "[3,1,8]", ""},
    {"[2,0,3]", "[2,3]", "1"},
};

ComparisonOptions SumTolerance() {
  ComparisonOptions o;
  o.f32 = {1e-3, 1e-5};  // f32 partial sums in another order.
  return o;
}

TEST(ReduceTest, AddMaxMinEveryType) {
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    const bool pred = t == "pred";
    for (const Case& c : kCases) {
      ExpectMatchesOracle(
          Reduce(t, c.in, c.out, c.dims, ReducerRoot(t, pred ? "or" : "add"),
                 pred ? "false" : "1"),
          1, SumTolerance());
      ExpectMatchesOracle(
          Reduce(t, c.in, c.out, c.dims,
                 ReducerRoot(t, pred ? "and" : "maximum"), pred ? "true" : "3"),
          2, ComparisonOptions::Exact());
    }
    for (size_t k : {1, 3, 5, 6}) {
      const Case& c = kCases[k];
      ExpectMatchesOracle(
          Reduce(t, c.in, c.out, c.dims,
                 ReducerRoot(t, pred ? "and" : "minimum"), pred ? "true" : "5"),
          3, ComparisonOptions::Exact());
    }
  }
}

TEST(ReduceTest, ComputedReducersEveryType) {
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    // A reducer of several ops: sum of squares (xor for pred), rounded
    // after every op like the oracle's general path.
    const std::string body = SumOfSquaresRoot(t);
    for (size_t k : {0, 3, 5, 6}) {
      const Case& c = kCases[k];
      ExpectMatchesOracle(
          Reduce(t, c.in, c.out, c.dims, body, t == "pred" ? "true" : "0"), 4,
          ComparisonOptions::Exact());
    }
    if (t != "pred") {
      // Product: per-step rounding for bf16/f16 (a plain multiply).
      ExpectMatchesOracle(
          Reduce(t, "[5,6]", "[5]", "1", ReducerRoot(t, "multiply"), "1"), 5,
          ComparisonOptions::Exact());
    }
  }
}

// argmax over dimension 1: (value, index) pairs, first index on ties.
std::string ArgMax(const std::string& t, const std::string& dims_in,
                   const std::string& dims_out) {
  return "HloModule m\nargmax {\n  a = " + t +
         "[] parameter(0)\n"
         "  b = s32[] parameter(1)\n  c = " +
         t +
         "[] parameter(2)\n"
         "  d = s32[] parameter(3)\n"
         "  keep = pred[] compare(a, c), direction=GE\n"
         "  v = " +
         t +
         "[] select(keep, a, c)\n"
         "  i = s32[] select(keep, b, d)\n"
         "  ROOT r = (" +
         t +
         "[], s32[]) tuple(v, i)\n}\n"
         "ENTRY e {\n  x = " +
         t + dims_in +
         " parameter(0)\n"
         "  n = s32" +
         dims_in +
         " iota(), iota_dimension=1\n"
         "  lo = " +
         t + "[] constant(" + (IsFloatType(t) ? "-inf" : "0") +
         ")\n  z = s32[] constant(-1)\n"
         "  ROOT r = (" +
         t + dims_out + ", s32" + dims_out +
         ") reduce(x, n, lo, z), dimensions={1}, to_apply=argmax\n}\n";
}

TEST(ReduceTest, VariadicArgMaxEveryType) {
  for (const std::string& t : kAllTypes) {
    if (t == "pred") continue;
    SCOPED_TRACE(t);
    ExpectMatchesOracle(ArgMax(t, "[5,37]", "[5]"), 6,
                        ComparisonOptions::Exact());
    ExpectMatchesOracle(ArgMax(t, "[3,9,2]", "[3,2]"), 7,
                        ComparisonOptions::Exact());
  }
}

TEST(ReduceTest, UsesTheCrossLaneUnitForMinorReductions) {
  auto m = testing::Parse(
      Reduce("f32", "[16,300]", "[16]", "1", ReducerRoot("f32", "add"), "0"));
  ASSERT_NE(m, nullptr);
  auto exe = CompileModule(*m, CompileOptions());
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  std::string text;
  for (const tpu::Kernel& k : exe->kernels) text += tpu::PrintKernel(k);
  EXPECT_NE(text.find("vlredsum"), std::string::npos) << text;
}

TEST(ReduceTest, LongSumsStayAccurate) {
  // 5000 f32 terms: tiles combined lane-wise, then lanes and sublanes.
  ExpectMatchesOracle(
      Reduce("f32", "[2,5000]", "[2]", "1", ReducerRoot("f32", "add"), "0"), 8,
      SumTolerance());
  ExpectMatchesOracle(
      Reduce("bf16", "[2,5000]", "[2]", "1", ReducerRoot("bf16", "add"), "0"),
      8);
}

}  // namespace
}  // namespace trench::codegen
