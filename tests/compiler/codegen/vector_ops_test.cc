// vector_ops.h: the register pool, the op/type checks of EmitVectorOp, the
// emitted text's validity, and map (a chain of EmitVectorOp calls in one
// kernel) against the oracle.
#include "compiler/codegen/vector_ops.h"

#include <string>
#include <vector>

#include "tests/compiler/codegen/elementwise_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracle;
using testing::ExpectMatchesOracleFullRange;

TEST(VRegPoolTest, AllocatesPairsAndRunsOut) {
  VRegPool pool;
  pool.Reserve(0, false);
  auto a = pool.Alloc(true);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(*a, 2);  // v0 taken: the first free even pair is v2:v3.
  auto b = pool.Alloc(false);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, 1);
  int count = 0;
  while (pool.Alloc(false).ok()) ++count;
  EXPECT_EQ(count, 28 - 4);  // v0..v27 only.
  EXPECT_EQ(pool.Alloc(false).status().code(), StatusCode::kResourceExhausted);
  pool.Free(2, true);
  auto c = pool.Alloc(true);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(*c, 2);
}

TEST(VRegPoolTest, IsWide) {
  EXPECT_TRUE(IsWide("f64"));
  EXPECT_TRUE(IsWide("s64"));
  EXPECT_TRUE(IsWide("u64"));
  EXPECT_FALSE(IsWide("f32"));
  EXPECT_FALSE(IsWide("pred"));
}

// The instruction named "r" of a parsed module.
const HloInstruction* Root(const HloModule& m) {
  return m.entry_computation()->root_instruction();
}

TEST(VectorOpsTest, EmitsAssemblableCodeAndFreesScratch) {
  for (std::string text :
       {testing::Binary("power", "s64", "[4]"),
        testing::Unary("convert", "u64", "[4]", "bf16"),
        testing::Unary("convert", "f64", "[4]", "f16"),
        testing::Unary("reduce-precision", "f64", "[4]", "",
                       ", exponent_bits=5, mantissa_bits=10"),
        testing::Binary("compare", "f64", "[4]", "pred",
                        ", direction=LT, type=TOTALORDER")}) {
    auto m = testing::Parse(text);
    ASSERT_NE(m, nullptr);
    const HloInstruction* r = Root(*m);
    EXPECT_TRUE(IsVectorOp(*r));
    KernelBuilder kb("k", 1 << 20);
    VRegPool pool;
    std::vector<int> srcs;
    for (const HloInstruction* op : r->operands()) {
      const bool wide =
          IsWide(std::string(PrimitiveTypeName(op->shape().element_type())));
      srcs.push_back(*pool.Alloc(wide));
    }
    const int dst = *pool.Alloc(true);
    VRegPool before = pool;
    ASSERT_TRUE(EmitVectorOp(kb, pool, *r, dst, srcs).ok()) << text;
    // Every scratch register was returned: the next allocations match.
    EXPECT_EQ(*pool.Alloc(false), *before.Alloc(false));
    auto k = kb.Finish();
    EXPECT_TRUE(k.ok()) << k.status().ToString() << kb.Text();
  }
}

TEST(VectorOpsTest, RejectsUnsupportedOpsClearly) {
  auto m = testing::Parse(testing::Unary("sinh", "f32", "[4]"));
  ASSERT_NE(m, nullptr);
  EXPECT_FALSE(IsVectorOp(*Root(*m)));
  KernelBuilder kb("k", 1 << 20);
  VRegPool pool;
  Status s = EmitVectorOp(kb, pool, *Root(*m), 1, {0});
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_EQ(s.message(), "hloc: cannot compile sinh for f32");
  auto c = testing::Parse(testing::Unary("exponential", "c64", "[4]"));
  ASSERT_NE(c, nullptr);
  s = EmitVectorOp(kb, pool, *Root(*c), 2, {0});
  EXPECT_EQ(s.message(), "hloc: cannot compile exponential for c64");
  auto p =
      testing::Parse(testing::Unary("bitcast-convert", "f32", "[4]", "s32"));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(EmitVectorOp(kb, pool, *Root(*p), 2, {0, 1}).code(),
            StatusCode::kInternal);  // Wrong source count.
}

TEST(VectorOpsTest, SplatScalarEveryType) {
  for (PrimitiveType t :
       {PrimitiveType::PRED, PrimitiveType::S8, PrimitiveType::U16,
        PrimitiveType::BF16, PrimitiveType::F16, PrimitiveType::F32,
        PrimitiveType::S64, PrimitiveType::F64, PrimitiveType::C64,
        PrimitiveType::C128}) {
    KernelBuilder kb("k", 1 << 20);
    Literal l(Shape(t, {}));
    ASSERT_TRUE(EmitSplatScalar(kb, l, 4).ok());
    EXPECT_TRUE(kb.Finish().ok()) << kb.Text();
  }
  KernelBuilder kb("k", 1 << 20);
  std::vector<Literal> leaves;
  leaves.emplace_back(Shape(PrimitiveType::F32, {}));
  EXPECT_FALSE(EmitSplatScalar(kb, Literal::Tuple(std::move(leaves)), 2).ok());
}

// Runs the root of `text` (operands: parameters of 1024 elements) as one
// hand-built kernel whose result register is source `alias` (or a fresh
// register when alias < 0), and compares with the oracle.
void ExpectLaneOpMatches(const std::string& text, int alias) {
  SCOPED_TRACE(text);
  auto m = testing::Parse(text);
  ASSERT_NE(m, nullptr);
  const HloInstruction* r = Root(*m);
  std::vector<Literal> args;
  tpu::Executable exe;
  KernelBuilder kb("k", 1 << 20);
  VRegPool pool;
  std::vector<int> srcs;
  for (int64_t i = 0; i < r->operand_count(); ++i) {
    const Shape& s = r->operand(i)->shape();
    const std::string t(PrimitiveTypeName(s.element_type()));
    args.push_back(
        testing::FullRangeLiteral(s.element_type(), s.dims(), 17 + i));
    tpu::BufferDecl d;
    d.name = "in" + std::to_string(i);
    d.role = tpu::BufferRole::kInput;
    d.index = static_cast<int>(i);
    d.dtype = t;
    d.dims = s.dims();
    d.bytes = static_cast<int64_t>(args.back().bytes().size());
    exe.buffers.push_back(d);
    srcs.push_back(*pool.Alloc(IsWide(t)));
  }
  const std::string out_t(PrimitiveTypeName(r->shape().element_type()));
  tpu::BufferDecl o;
  o.name = "out";
  o.role = tpu::BufferRole::kOutput;
  o.index = 0;
  o.dtype = out_t;
  o.dims = r->shape().dims();
  o.bytes = ByteWidth(r->shape().element_type()) * 1024;
  exe.buffers.push_back(o);
  std::vector<int64_t> regions;
  for (const tpu::BufferDecl& d : exe.buffers) {
    regions.push_back(kb.AllocVmem(d.bytes));
    if (d.role == tpu::BufferRole::kInput) {
      kb.DmaIn(regions.back(), d.name, d.bytes);
    }
  }
  const int dst = alias >= 0 ? srcs[alias] : *pool.Alloc(IsWide(out_t));
  kb.BeginLinearTiles(1024);
  for (size_t i = 0; i < srcs.size(); ++i) {
    kb.LoadTile(srcs[i], exe.buffers[i].dtype, regions[i]);
  }
  ASSERT_TRUE(EmitVectorOp(kb, pool, *r, dst, srcs).ok());
  kb.StoreTile(out_t, regions.back(), dst);
  kb.EndLinearTiles();
  kb.DmaOut("out", regions.back(), o.bytes);
  auto k = kb.Finish();
  ASSERT_TRUE(k.ok()) << k.status().ToString();
  exe.kernels.push_back(*k);
  exe.launches.push_back("k");
  auto expected = Evaluate(*m, args);
  ASSERT_TRUE(expected.ok());
  tpu::RunResult run = testing::Run(exe, args);
  ASSERT_EQ(run.report.status, tpu::RunStatus::kOk) << run.report.message;
  ComparisonResult c = CompareLiterals(testing::ToLiteral(run.outputs.at(0)),
                                       *expected, ComparisonOptions::Exact());
  EXPECT_TRUE(c.ok()) << c.ToText();
}

TEST(VectorOpsTest, DestinationMayBeASource) {
  const std::vector<std::string> texts = {
      testing::Binary("power", "s16", "[1024]"),
      testing::Binary("maximum", "f32", "[1024]"),
      testing::Binary("shift-right-logical", "s8", "[1024]"),
      testing::Binary("compare", "f64", "[1024]", "pred",
                      ", direction=LE, type=TOTALORDER"),
      testing::Unary("convert", "u64", "[1024]", "bf16"),
      testing::Unary("convert", "f64", "[1024]", "f16"),
      testing::Unary("convert", "f32", "[1024]", "s8"),
      testing::Unary("bitcast-convert", "f16", "[1024]", "s16"),
      testing::Unary("reduce-precision", "f32", "[1024]", "",
                     ", exponent_bits=5, mantissa_bits=10"),
      "HloModule m\nENTRY e {\n  lo = f32[1024] parameter(0)\n"
      "  x = f32[1024] parameter(1)\n  hi = f32[1024] parameter(2)\n"
      "  ROOT r = f32[1024] clamp(lo, x, hi)\n}\n"};
  for (const std::string& text : texts) {
    ExpectLaneOpMatches(text, -1);
    ExpectLaneOpMatches(text, 0);
    if (text.find("parameter(1)") != std::string::npos) {
      ExpectLaneOpMatches(text, 1);
    }
  }
}

std::string MapModule(const std::string& t, const std::string& body,
                      const std::string& dims, int arity) {
  std::string text = "HloModule m\n\nf {\n" + body + "}\n\nENTRY e {\n";
  std::string args;
  for (int i = 0; i < arity; ++i) {
    text += "  p" + std::to_string(i) + " = " + t + dims + " parameter(" +
            std::to_string(i) + ")\n";
    args += (i ? ", p" : "p") + std::to_string(i);
  }
  const std::string map_dims =
      dims.find(',') == std::string::npos ? "{0}" : "{0,1}";
  return text + "  ROOT r = " + t + dims + " map(" + args +
         "), dimensions=" + map_dims + ", to_apply=f\n}\n";
}

TEST(VectorOpsTest, MapEmitsItsComputationLaneWise) {
  for (std::string t : {"f32", "bf16", "s8", "u16", "s64", "f64"}) {
    // f(x, y) = max(x * y + c, x - y) with a constant.
    const std::string body =
        "  x = " + t + "[] parameter(0)\n  y = " + t +
        "[] parameter(1)\n  c = " + t + "[] constant(3)\n  m = " + t +
        "[] multiply(x, y)\n  a = " + t + "[] add(m, c)\n  d = " + t +
        "[] subtract(x, y)\n  ROOT r = " + t + "[] maximum(a, d)\n";
    ExpectMatchesOracle(MapModule(t, body, "[1030]", 2), 1,
                        ComparisonOptions::Exact());
  }
  // A unary map returning a parameter, and one with a compare + select.
  ExpectMatchesOracle(
      MapModule("u32", "  x = u32[] parameter(0)\n  ROOT y = u32[] copy(x)\n",
                "[129]", 1),
      2, ComparisonOptions::Exact());
  ExpectMatchesOracleFullRange(
      MapModule("f32",
                "  x = f32[] parameter(0)\n  z = f32[] constant(0)\n"
                "  l = pred[] compare(x, z), direction=LT\n"
                "  n = f32[] negate(x)\n"
                "  ROOT r = f32[] select(l, n, x)\n",
                "[3,130]", 1),
      3);
}

// A map body nested 24 deep, r_k = or(x < c_k, and(y > c_k, r_k+1)):
// emitted operand by operand it held two registers per level (the compare
// and its constant) and ran out of v0..v27; in register order it holds a
// few.
TEST(VectorOpsTest, MapWithADeepBodyFitsTheRegisters) {
  constexpr int kDepth = 24;
  std::string body = "  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n";
  for (int k = 0; k < kDepth; ++k) {
    body += "  c" + std::to_string(k) + " = f32[] constant(" +
            std::to_string((k - kDepth / 2) * 0.25) + ")\n";
  }
  const std::string last = std::to_string(kDepth - 1);
  body += "  r" + last + " = pred[] compare(x, c" + last + "), direction=LT\n";
  for (int k = kDepth - 2; k >= 0; --k) {
    const std::string n = std::to_string(k);
    body += "  lt" + n + " = pred[] compare(x, c" + n +
            "), direction=LT\n  gt" + n + " = pred[] compare(y, c" + n +
            "), direction=GT\n  an" + n + " = pred[] and(gt" + n + ", r" +
            std::to_string(k + 1) + ")\n  r" + n + " = pred[] or(lt" + n +
            ", an" + n + ")\n";
  }
  body += "  ROOT s = f32[] select(r0, x, y)\n";
  ExpectMatchesOracle(MapModule("f32", body, "[1030]", 2), 4,
                      ComparisonOptions::Exact());
}

TEST(VectorOpsTest, NarrowIntegerChainsWrapAfterEachOp) {
  // (a * b) >> 1 on s8: the product wraps to 8 bits before the shift.
  for (std::string t : {"s8", "u8", "s16", "u16"}) {
    const std::string s = t + "[3,130]";
    ExpectMatchesOracleFullRange(
        "HloModule m\nENTRY e {\n  a = " + s + " parameter(0)\n  b = " + s +
            " parameter(1)\n  p = " + s + " multiply(a, b)\n  one = " + t +
            "[] constant(1)\n  k = " + s +
            " broadcast(one), dimensions={}\n  ROOT r = " + s +
            " shift-right-logical(p, k)\n}\n",
        4);
  }
}

}  // namespace
}  // namespace trench::codegen
