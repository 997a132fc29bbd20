// Complex element types (c64, c128) through the whole compiler (Compile():
// pass pipeline + back end) on the simulator, against the oracle: the
// complex ops of vector_ops.h (elementwise, fused chains, map), every data
// movement op, sort with real/imag comparators, reduce with complex
// reducers, scatter with a complex combiner, while/conditional carrying
// complex values; ops the oracle refuses on complex (dot) are refused.
#include <string>
#include <vector>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

const std::vector<std::string> kComplex = {"c64", "c128"};

// The real part type of a complex type.
std::string Part(const std::string& t) { return t == "c64" ? "f32" : "f64"; }

std::string Entry(const std::string& body) {
  return "HloModule m\nENTRY e {\n" + body + "}\n";
}

TEST(ComplexTest, BinaryOps) {
  for (const std::string& t : kComplex) {
    for (std::string op : {"add", "subtract", "multiply", "divide"}) {
      for (std::string d : {"[3,5]", "[1029]"}) {
        SCOPED_TRACE(t + " " + op + " " + d);
        const bool exact =
            std::string(op) == "add" || std::string(op) == "subtract";
        testing::ExpectCompiledMatchesOracle(
            Entry("  a = " + t + d + " parameter(0)\n  b = " + t + d +
                  " parameter(1)\n  ROOT r = " + t + d + " " + op + "(a, b)\n"),
            7, exact ? ComparisonOptions::Exact() : ComparisonOptions());
      }
    }
  }
}

TEST(ComplexTest, UnaryOpsAndParts) {
  for (const std::string& t : kComplex) {
    SCOPED_TRACE(t);
    const std::string p = Part(t);
    testing::ExpectCompiledMatchesOracle(
        Entry("  a = " + t + "[9,130] parameter(0)\n  n = " + t +
              "[9,130] negate(a)\n  re = " + p +
              "[9,130] real(n)\n  im = " + p + "[9,130] imag(a)\n  ab = " + p +
              "[9,130] abs(a)\n  c = " + t +
              "[9,130] complex(im, re)\n  ROOT r = (" + t + "[9,130], " + p +
              "[9,130], " + t + "[9,130]) tuple(n, ab, c)\n"),
        3);
    // real/imag of a real float: the value and zero.
    testing::ExpectCompiledMatchesOracle(
        Entry("  a = " + p + "[37] parameter(0)\n  re = " + p +
              "[37] real(a)\n  im = " + p + "[37] imag(a)\n  ROOT r = (" + p +
              "[37], " + p + "[37]) tuple(re, im)\n"),
        4, ComparisonOptions::Exact());
  }
}

TEST(ComplexTest, AbsAvoidsOverflowAndKeepsInfinity) {
  // |3e30 + 4e30i| = 5e30 overflows a naive f32 sum of squares.
  testing::ExpectCompiledMatchesOracle(
      Entry("  a = c64[4] constant({(3e30, 4e30), (inf, nan), (0, 0), "
            "(-3, 4)})\n  p = c64[4] parameter(0)\n  s = c64[4] add(a, p)\n"
            "  ROOT r = f32[4] abs(s)\n"),
      1);
  testing::ExpectCompiledMatchesOracle(
      Entry("  a = c128[4] constant({(3e300, 4e300), (nan, -inf), (0, 0), "
            "(-3, 4)})\n  p = c128[4] parameter(0)\n  s = c128[4] add(a, p)\n"
            "  ROOT r = f64[4] abs(s)\n"),
      1);
}

TEST(ComplexTest, CompareSelectConvert) {
  for (const std::string& t : kComplex) {
    SCOPED_TRACE(t);
    const std::string o = t == "c64" ? "c128" : "c64";
    testing::ExpectCompiledMatchesOracle(
        Entry("  a = " + t + "[200] parameter(0)\n  b = " + t +
              "[200] parameter(1)\n  q = pred[200] parameter(2)\n  z = " + t +
              "[200] select(q, a, b)\n"
              "  eq = pred[200] compare(a, z), direction=EQ\n"
              "  ne = pred[200] compare(b, z), direction=NE\n"
              "  cv = " +
              o +
              "[200] convert(a)\n"
              "  ROOT r = (pred[200], pred[200], " +
              o + "[200]) tuple(eq, ne, cv)\n"),
        5, ComparisonOptions::Exact());
    for (std::string from : {"f32", "f64", "s32", "u8", "pred", "bf16"}) {
      SCOPED_TRACE(from);
      testing::ExpectCompiledMatchesOracle(
          Entry("  a = " + std::string(from) +
                "[40] parameter(0)\n  ROOT r = " + t + "[40] convert(a)\n"),
          6, ComparisonOptions::Exact());
    }
  }
}

TEST(ComplexTest, FusableChainsAndMap) {
  for (const std::string& t : kComplex) {
    SCOPED_TRACE(t);
    const std::string p = Part(t);
    testing::ExpectCompiledMatchesOracle(
        Entry("  a = " + t + "[2,3,129] parameter(0)\n  b = " + t +
              "[2,3,129] parameter(1)\n  m = " + t +
              "[2,3,129] multiply(a, b)\n  s = " + t +
              "[2,3,129] add(m, a)\n  n = " + t +
              "[2,3,129] negate(s)\n  x = " + p + "[2,3,129] real(n)\n  y = " +
              p + "[2,3,129] abs(b)\n  ROOT r = " + t +
              "[2,3,129] complex(x, y)\n"),
        8);
    testing::ExpectCompiledMatchesOracle(
        "HloModule m\nf {\n  x = " + t + "[] parameter(0)\n  y = " + t +
            "[] parameter(1)\n  k = " + t + "[] constant((1.5, -2))\n  m = " +
            t + "[] multiply(x, k)\n  ROOT r = " + t +
            "[] subtract(m, y)\n}\nENTRY e {\n  a = " + t +
            "[300] parameter(0)\n  b = " + t +
            "[300] parameter(1)\n  ROOT r = " + t +
            "[300] map(a, b), dimensions={0}, to_apply=f\n}\n",
        9);
  }
}

TEST(ComplexTest, DataMovement) {
  for (const std::string& t : kComplex) {
    SCOPED_TRACE(t);
    testing::ExpectCompiledMatchesOracle(
        Entry("  a = " + t + "[5,7] parameter(0)\n  s = " + t +
              "[] parameter(1)\n  b = " + t +
              "[3,5,7] broadcast(a), dimensions={1,2}\n  tr = " + t +
              "[7,5] transpose(a), dimensions={1,0}\n  sl = " + t +
              "[2,3] slice(a), slice={[1:5:2], [0:7:3]}\n  rv = " + t +
              "[5,7] reverse(a), dimensions={0,1}\n  cc = " + t +
              "[10,7] concatenate(a, rv), dimensions={0}\n  pd = " + t +
              "[8,15] pad(a, s), padding=1_2x2_0_1\n  rs = " + t +
              "[35] reshape(a)\n  ROOT r = (" + t + "[3,5,7], " + t +
              "[7,5], " + t + "[2,3], " + t + "[10,7], " + t + "[8,15], " + t +
              "[35]) tuple(b, tr, sl, cc, pd, rs)\n"),
        10, ComparisonOptions::Exact());
    testing::ExpectCompiledMatchesOracle(
        Entry("  a = " + t + "[6,9] parameter(0)\n  u = " + t +
              "[2,3] parameter(1)\n  i = s32[] parameter(2)\n  j = s32[] "
              "parameter(3)\n  ds = " +
              t +
              "[2,3] dynamic-slice(a, i, j), dynamic_slice_sizes={2,3}\n"
              "  du = " +
              t +
              "[6,9] dynamic-update-slice(a, u, j, i)\n"
              "  ROOT r = (" +
              t + "[2,3], " + t + "[6,9]) tuple(ds, du)\n"),
        11, ComparisonOptions::Exact());
    testing::ExpectCompiledMatchesOracle(
        Entry("  a = " + t +
              "[8,6] parameter(0)\n  i = s32[5,1] parameter(1)\n"
              "  ROOT g = " +
              t +
              "[5,6] gather(a, i), offset_dims={1}, "
              "collapsed_slice_dims={0}, start_index_map={0}, "
              "index_vector_dim=1, slice_sizes={1,6}\n"),
        12, ComparisonOptions::Exact());
  }
}

TEST(ComplexTest, ScatterWithComplexCombiner) {
  for (const std::string& t : kComplex) {
    SCOPED_TRACE(t);
    testing::ExpectCompiledMatchesOracle(
        "HloModule m\nadd {\n  x = " + t + "[] parameter(0)\n  y = " + t +
            "[] parameter(1)\n  ROOT r = " + t +
            "[] add(x, y)\n}\nENTRY e {\n  a = " + t +
            "[8,4] parameter(0)\n  i = s32[6] parameter(1)\n  u = " + t +
            "[6,4] parameter(2)\n  ROOT s = " + t +
            "[8,4] scatter(a, i, u), update_window_dims={1}, "
            "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
            "index_vector_dim=1, to_apply=add\n}\n",
        13);
  }
}

TEST(ComplexTest, SortByRealAndImag) {
  for (const std::string& t : kComplex) {
    for (std::string part : {"real", "imag"}) {
      SCOPED_TRACE(t + " " + part);
      const std::string p = Part(t);
      testing::ExpectCompiledMatchesOracle(
          "HloModule m\nless {\n  a = " + t + "[] parameter(0)\n  b = " + t +
              "[] parameter(1)\n  c = s32[] parameter(2)\n  d = s32[] "
              "parameter(3)\n  x = " +
              p + "[] " + part + "(a)\n  y = " + p + "[] " + part +
              "(b)\n  ROOT r = pred[] compare(x, y), direction=LT\n}\n"
              "ENTRY e {\n  k = " +
              t +
              "[4,37] parameter(0)\n  v = s32[4,37] iota(), "
              "iota_dimension=1\n  ROOT r = (" +
              t +
              "[4,37], s32[4,37]) sort(k, v), dimensions={1}, "
              "is_stable=true, to_apply=less\n}\n",
          14, ComparisonOptions::Exact());
    }
  }
}

TEST(ComplexTest, ReduceWithComplexReducers) {
  for (const std::string& t : kComplex) {
    for (std::string op : {"add", "multiply"}) {
      SCOPED_TRACE(t + " " + op);
      testing::ExpectCompiledMatchesOracle(
          "HloModule m\nf {\n  x = " + t + "[] parameter(0)\n  y = " + t +
              "[] parameter(1)\n  ROOT r = " + t + "[] " + op +
              "(x, y)\n}\nENTRY e {\n  a = " + t +
              "[6,5] parameter(0)\n  z = " + t +
              "[] constant((1, 0))\n  ROOT r = " + t +
              "[6] reduce(a, z), dimensions={1}, to_apply=f\n}\n",
          15);
    }
  }
}

TEST(ComplexTest, WhileAndConditionalCarryComplex) {
  for (const std::string& t : kComplex) {
    SCOPED_TRACE(t);
    testing::ExpectCompiledMatchesOracle(
        "HloModule m\ncond {\n  p = (s32[], " + t +
            "[33]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
            "  n = s32[] constant(4)\n  ROOT c = pred[] compare(i, n), "
            "direction=LT\n}\nbody {\n  p = (s32[], " +
            t +
            "[33]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
            "  x = " +
            t +
            "[33] get-tuple-element(p), index=1\n"
            "  one = s32[] constant(1)\n  j = s32[] add(i, one)\n  y = " +
            t + "[33] multiply(x, x)\n  h = " + t +
            "[] constant((0.5, 0.25))\n  hb = " + t +
            "[33] broadcast(h), dimensions={}\n  z = " + t +
            "[33] multiply(y, hb)\n  ROOT r = (s32[], " + t +
            "[33]) tuple(j, z)\n}\nb0 {\n  x = " + t +
            "[33] parameter(0)\n  ROOT n = " + t +
            "[33] negate(x)\n}\nb1 {\n"
            "  x = " +
            t + "[33] parameter(0)\n  ROOT c = " + t +
            "[33] copy(x)\n}\nENTRY e {\n  a = " + t +
            "[33] parameter(0)\n  q = pred[] parameter(1)\n  z = s32[] "
            "constant(0)\n  t0 = (s32[], " +
            t + "[33]) tuple(z, a)\n  w = (s32[], " + t +
            "[33]) while(t0), condition=cond, body=body\n  v = " + t +
            "[33] get-tuple-element(w), index=1\n  ROOT c = " + t +
            "[33] conditional(q, v, a), true_computation=b0, "
            "false_computation=b1\n}\n",
        16);
  }
}

TEST(ComplexTest, DotIsRefusedLikeTheOracle) {
  std::unique_ptr<HloModule> m = testing::Parse(
      Entry("  a = c64[4,3] parameter(0)\n  b = c64[3,2] parameter(1)\n"
            "  ROOT d = c64[4,2] dot(a, b), lhs_contracting_dims={1}, "
            "rhs_contracting_dims={0}\n"));
  ASSERT_NE(m, nullptr);
  auto compiled = Compile(*m, CompileOptions());
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kUnimplemented)
      << compiled.status().ToString();
}

}  // namespace
}  // namespace trench::codegen
