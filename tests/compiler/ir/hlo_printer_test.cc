#include "compiler/ir/hlo_printer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "compiler/ir/hlo_equal.h"
#include "compiler/ir/hlo_parser.h"

namespace trench {
namespace {

std::unique_ptr<HloModule> Parse(std::string_view text) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message() << "\n" << text;
  return m.ok() ? std::move(m).value() : nullptr;
}

// Parses, prints, parses again; expects equal modules and returns the
// printed text.
std::string RoundTrip(std::string_view text) {
  auto m = Parse(text);
  if (!m) return "";
  const std::string printed = PrintHloModule(*m);
  auto again = ParseHloModule(printed);
  EXPECT_TRUE(again.ok()) << again.status().message() << "\n" << printed;
  if (!again.ok()) return printed;
  std::string diff;
  EXPECT_TRUE(ModulesEqual(*m, **again, &diff)) << diff << "\n" << printed;
  EXPECT_EQ(PrintHloModule(**again), printed) << "printing is not stable";
  return printed;
}

TEST(HloPrinterTest, PrintsXlaStyle) {
  const std::string printed = RoundTrip(R"(
HloModule m, is_scheduled=true
ENTRY main {
  p = f32[2]{0} parameter(0)
  ROOT n = f32[2]{0} negate(p), metadata={op_name="n"}
}
add {
  x = f32[] parameter(0)
  ROOT y = f32[] add(x, x)
}
)");
  EXPECT_EQ(printed,
            "HloModule m, is_scheduled=true\n"
            "\n"
            "%add (x: f32[]) -> f32[] {\n"
            "  %x = f32[] parameter(0)\n"
            "  ROOT %y = f32[] add(f32[] %x, f32[] %x)\n"
            "}\n"
            "\n"
            "ENTRY %main (p: f32[2]{0}) -> f32[2]{0} {\n"
            "  %p = f32[2]{0} parameter(0)\n"
            "  ROOT %n = f32[2]{0} negate(f32[2]{0} %p), "
            "metadata={op_name=\"n\"}\n"
            "}\n");
}

TEST(HloPrinterTest, ShortFormIsXlasShortParsableAndRoundTrips) {
  auto m = Parse(R"(
HloModule m, is_scheduled=true
ENTRY main {
  p = f32[2]{0} parameter(0)
  n = f32[2]{0} negate(p), metadata={op_name="n"}
  z = f32[] constant(0)
  ROOT r = f32[] reduce(n, z), dimensions={0}, to_apply=add,
    control-predecessors={p}
}
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
)");
  ASSERT_NE(m, nullptr);
  const std::string printed = PrintHloModule(*m, HloPrintOptions::Short());
  EXPECT_EQ(printed,
            "HloModule m, is_scheduled=true\n"
            "\n"
            "add {\n"
            "  x = f32[] parameter(0)\n"
            "  y = f32[] parameter(1)\n"
            "  ROOT s = f32[] add(x, y)\n"
            "}\n"
            "\n"
            "ENTRY main {\n"
            "  p = f32[2]{0} parameter(0)\n"
            "  n = f32[2]{0} negate(p), metadata={op_name=\"n\"}\n"
            "  z = f32[] constant(0)\n"
            "  ROOT r = f32[] reduce(n, z), dimensions={0}, to_apply=add, "
            "control-predecessors={p}\n"
            "}\n");
  auto again = ParseHloModule(printed);
  ASSERT_TRUE(again.ok()) << again.status().message();
  std::string diff;
  EXPECT_TRUE(ModulesEqual(*m, **again, &diff)) << diff;
  // Each option on its own.
  HloPrintOptions o;
  o.operand_shapes = false;
  EXPECT_NE(PrintHloModule(*m, o).find("ROOT %s = f32[] add(%x, %y)"),
            std::string::npos);
  o = HloPrintOptions();
  o.percent = false;
  EXPECT_NE(PrintHloModule(*m, o).find("ENTRY main (p: f32[2]{0}) -> f32[] {"),
            std::string::npos);
}

TEST(HloPrinterTest, UnusualNamesRoundTrip) {
  const std::string printed = RoundTrip(R"(
HloModule weird.name-1
%0.c (x: f32[]) -> f32[] {
  %-x = f32[] parameter(0)
  ROOT %1 = f32[] negate(%-x)
}
ENTRY %.e {
  %-x = f32[] parameter(0)
  ROOT %2 = f32[] call(%-x), to_apply=%0.c
}
)");
  EXPECT_NE(printed.find("%0.c (-x: f32[]) -> f32[] {"), std::string::npos)
      << printed;
  EXPECT_NE(printed.find("ROOT %2 = f32[] call(f32[] %-x.1), to_apply=%0.c"),
            std::string::npos)
      << printed;
}

TEST(HloPrinterTest, CalleesBeforeCallers) {
  const std::string printed = RoundTrip(R"(
ENTRY e {
  p = f32[] parameter(0)
  ROOT c = f32[] call(p), to_apply=outer
}
outer {
  q = f32[] parameter(0)
  ROOT c2 = f32[] call(q), to_apply=inner
}
inner {
  ROOT r = f32[] parameter(0)
}
)");
  const size_t inner = printed.find("%inner (");
  const size_t outer = printed.find("%outer (");
  const size_t entry = printed.find("ENTRY %e (");
  EXPECT_LT(inner, outer);
  EXPECT_LT(outer, entry);
}

// Each case: an instruction using attribute syntax, with what the printed
// text must contain.
struct AttrCase {
  const char* instr;
  const char* expect;
};

TEST(HloPrinterTest, EveryAttributeSyntaxRoundTrips) {
  const AttrCase cases[] = {
      {"ROOT x = f32[2,3]{1,0} broadcast(p2), dimensions={0}",
       "dimensions={0}"},
      {"ROOT x = f32[] reshape(p), dimensions={}", "dimensions={}"},
      {"ROOT x = f32[1] slice(p2), slice={[0:1]}", "slice={[0:1]}"},
      {"ROOT x = f32[1] slice(p2), slice={[0:2:2]}", "slice={[0:2:2]}"},
      {"ROOT x = f32[5] pad(p2, p), padding=1_2", "padding=1_2"},
      {"ROOT x = f32[5] pad(p2, p), padding=-1_2_1", "padding=-1_2_1"},
      {"ROOT x = f32[5,5] pad(p22, p), padding=0_0_0x1_1_1",
       "padding=0_0_0x1_1_1"},
      {"ROOT x = f32[1,1,1,1] convolution(p4, p4), window={size=2x2 stride=2x1 "
       "pad=0_1x-1_0 lhs_dilate=1x2 rhs_dilate=2x1 rhs_reversal=1x0}, "
       "dim_labels=b01f_01io->b01f, feature_group_count=2, "
       "batch_group_count=3, operand_precision={HIGH,highest}",
       "window={size=2x2 stride=2x1 pad=0_1x-1_0 lhs_dilate=1x2 "
       "rhs_dilate=2x1 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f, "
       "feature_group_count=2, batch_group_count=3, "
       "operand_precision={high,highest}"},
      {"ROOT x = f32[1,1,1,1] convolution(p4, p4), window={size=1x1}, "
       "dim_labels=f10b_i10o->1bf0",
       "dim_labels=f10b_i10o->1bf0"},
      {"ROOT x = f32[2,2] dot(p22, p22), lhs_batch_dims={}, "
       "lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
       "operand_precision={default,default}",
       "lhs_contracting_dims={1}, rhs_contracting_dims={0}"},
      {"ROOT x = f32[2] dot(p22, p22), lhs_batch_dims={0}, "
       "lhs_contracting_dims={1}, rhs_batch_dims={0}, rhs_contracting_dims={1}",
       "lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={0}, "
       "rhs_contracting_dims={1}"},
      {"ROOT x = pred[] compare(p, p), direction=LT, type=TOTALORDER",
       "direction=LT, type=TOTALORDER"},
      {"ROOT x = pred[] compare(p, p), direction=GE", "direction=GE"},
      {"ROOT x = f32[2,2] iota(), iota_dimension=1", "iota_dimension=1"},
      {"ROOT x = f32[] reduce-precision(p), exponent_bits=5, mantissa_bits=10",
       "exponent_bits=5, mantissa_bits=10"},
      {"ROOT x = f32[1] dynamic-slice(p2, i), dynamic_slice_sizes={1}",
       "dynamic_slice_sizes={1}"},
      {"ROOT x = f32[2,1] gather(p22, i2), offset_dims={1}, "
       "collapsed_slice_dims={0}, start_index_map={0}, "
       "operand_batching_dims={}, start_indices_batching_dims={}, "
       "index_vector_dim=1, slice_sizes={1,1}, indices_are_sorted=true",
       "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
       "index_vector_dim=1, slice_sizes={1,1}, indices_are_sorted=true"},
      {"ROOT x = f32[2,2] gather(p22, i2), offset_dims={1}, "
       "collapsed_slice_dims={}, start_index_map={0}, "
       "operand_batching_dims={1}, start_indices_batching_dims={0}, "
       "index_vector_dim=1, slice_sizes={1,1}",
       "operand_batching_dims={1}, start_indices_batching_dims={0}"},
      {"ROOT x = f32[2,2] scatter(p22, i2, p22), update_window_dims={1}, "
       "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
       "input_batching_dims={1}, scatter_indices_batching_dims={0}, "
       "index_vector_dim=1, indices_are_sorted=true, unique_indices=true, "
       "to_apply=add",
       "update_window_dims={1}, inserted_window_dims={0}, "
       "scatter_dims_to_operand_dims={0}, input_batching_dims={1}, "
       "scatter_indices_batching_dims={0}, index_vector_dim=1, "
       "indices_are_sorted=true, unique_indices=true, to_apply=%add"},
      {"ROOT x = f32[2] sort(p2), dimensions={0}, is_stable=true, "
       "to_apply=less",
       "dimensions={0}, is_stable=true, to_apply=%less"},
      {"ROOT x = f32[] fusion(p), kind=kOutput, calls=unary",
       "kind=kOutput, calls=%unary"},
      {"ROOT x = f32[] fusion(p), kind=kCustom, calls=unary", "kind=kCustom"},
      {"ROOT x = f32[] fusion(p), kind=kInput, calls=unary", "kind=kInput"},
      {"ROOT x = f32[] get-tuple-element(t), index=1", "index=1"},
      {"ROOT x = f32[] call(p), to_apply=unary", "to_apply=%unary"},
      {"ROOT x = f32[] map(p), dimensions={}, to_apply=unary",
       "to_apply=%unary"},
      {"ROOT x = f32[] conditional(b, p, p), true_computation=unary, "
       "false_computation=unary2",
       "true_computation=%unary, false_computation=%unary2"},
      {"ROOT x = f32[] conditional(i, p, p), "
       "branch_computations={unary, unary2}",
       "branch_computations={%unary, %unary2}"},
      {"ROOT x = f32[] reduce-window(p, p), window={}, to_apply=add",
       "window={}, to_apply=%add"},
      {"ROOT x = f32[2] reduce-window(p2, p), window={size=2 pad=1_0}, "
       "to_apply=add",
       "window={size=2 pad=1_0}"},
      {"ROOT x = f32[2] select-and-scatter(p2, p2, p), window={size=1}, "
       "select=ge, scatter=add",
       "select=%ge, scatter=%add"},
      {"ROOT x = f32[] custom-call(p), custom_call_target=\"f\", "
       "called_computations={unary, unary2}, api_version=API_VERSION_ORIGINAL",
       "called_computations={%unary, %unary2}, custom_call_target=\"f\", "
       "api_version=API_VERSION_ORIGINAL"},
      {"ROOT x = f32[] all-reduce(p), replica_groups={{0,1},{2,3}}, "
       "channel_id=1, to_apply=add, sharding={replicated}, "
       "frontend_attributes={a=\"b\"}, backend_config=\"{\\\"x\\\":1}\"",
       "to_apply=%add, replica_groups={{0,1},{2,3}}, channel_id=1, "
       "sharding={replicated}, frontend_attributes={a=\"b\"}, "
       "backend_config=\"{\\\"x\\\":1}\""},
      {"c = f32[] negate(p)\n ROOT x = f32[] add(p, c), "
       "control-predecessors={c}",
       "control-predecessors={%c}"},
      {"ROOT x = f32[] while(p), condition=ge2, body=unary",
       "condition=%ge2, body=%unary"},
  };
  const std::string prelude = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = pred[] compare(a, b), direction=GE
}
ge2 {
  a = f32[] parameter(0)
  ROOT s = pred[] compare(a, a), direction=GE
}
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = pred[] compare(a, b), direction=LT
}
unary {
  ROOT a = f32[] parameter(0)
}
unary2 {
  ROOT a = f32[] parameter(0)
}
ENTRY e {
  p = f32[] parameter(0)
  p2 = f32[2] parameter(1)
  p22 = f32[2,2] parameter(2)
  p4 = f32[1,2,2,2] parameter(3)
  i = s32[] parameter(4)
  i2 = s32[2,1] parameter(5)
  b = pred[] parameter(6)
  t = (f32[], f32[]) parameter(7)
)";
  for (const AttrCase& c : cases) {
    SCOPED_TRACE(c.instr);
    const std::string printed = RoundTrip(prelude + "  " + c.instr + "\n}\n");
    EXPECT_NE(printed.find(c.expect), std::string::npos) << printed;
  }
}

TEST(HloPrinterTest, UnknownAndWrappedOpcodeSpellingsSurvive) {
  const std::string printed = RoundTrip(R"(
ENTRY e {
  p = f32[] parameter(0)
  s = ((f32[]), f32[], u32[]) negate-start(p), async_execution_thread="x"
  u = ((f32[]), f32[], u32[]) negate-update(s)
  ROOT d = f32[] negate-done(u)
}
)");
  EXPECT_NE(
      printed.find(" negate-start(f32[] %p), async_execution_thread=\"x\""),
      std::string::npos)
      << printed;
  EXPECT_NE(printed.find(" negate-done("), std::string::npos);
}

TEST(HloPrinterTest, ShapesAndConstants) {
  const std::string printed = RoundTrip(R"(
HloModule m, entry_computation_layout={(s32[<=8]{0})->(f32[2,2]{1,0}, token[])}
ENTRY e {
  p = s32[<=8]{0} parameter(0)
  q = f32[?,2] parameter(1)
  c = f32[2,2]{0,1:T(8,128)} constant({ { 1, 2.5 }, { -inf, nan } })
  d = bf16[3] constant({0.1, -0, 65504})
  e = f16[2] constant({65504, 6e-08})
  f = c64[] constant((1, -1))
  g = (s8[], (u64[2], pred[])) constant((-128, ({18446744073709551615, 0}, true)))
  h = f64[0] constant({})
  tok = token[] after-all()
  ROOT t = (f32[2,2]{0,1:T(8,128)}, token[]) tuple(c, tok)
}
)");
  EXPECT_NE(printed.find("constant({ {1, 2.5}, {-inf, nan} })"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("s32[<=8]{0} parameter(0)"), std::string::npos);
  EXPECT_NE(printed.find("f32[?,2] parameter(1)"), std::string::npos);
  EXPECT_NE(printed.find("constant((1, -1))"), std::string::npos);
  EXPECT_NE(printed.find("constant((-128, ({18446744073709551615, 0}, true)))"),
            std::string::npos);
  EXPECT_NE(printed.find("f64[0] constant({})"), std::string::npos);
}

TEST(HloPrinterTest, PrintLiteralForms) {
  Literal scalar(Shape(PrimitiveType::F32, {}));
  scalar.mutable_data<float>()[0] = 1.5f;
  EXPECT_EQ(PrintLiteral(scalar), "1.5");
  Literal m(Shape(PrimitiveType::S32, {2, 2}));
  for (int i = 0; i < 4; ++i) m.mutable_data<int32_t>()[i] = i + 1;
  EXPECT_EQ(PrintLiteral(m), "{ {1, 2}, {3, 4} }");
  Literal cube(Shape(PrimitiveType::U8, {1, 1, 2}));
  EXPECT_EQ(PrintLiteral(cube), "{ { {0, 0} } }");
  Literal p(Shape(PrimitiveType::PRED, {2}));
  p.mutable_data<bool>()[1] = true;
  EXPECT_EQ(PrintLiteral(p), "{false, true}");
  Literal t = Literal::Tuple({scalar, p});
  EXPECT_EQ(PrintLiteral(t), "(1.5, {false, true})");
  Literal nan(Shape(PrimitiveType::F32, {3}));
  const uint32_t bits[3] = {0x7fc00000u, 0xffc00000u, 0x7f800123u};
  std::memcpy(nan.mutable_bytes().data(), bits, sizeof(bits));
  EXPECT_EQ(PrintLiteral(nan), "{nan, -nan, nan(0x123)}");
}

// Floats of every width print in a form that reads back to the same bits.
TEST(HloPrinterTest, FloatsRoundTripExactly) {
  std::mt19937_64 rng(7);
  const PrimitiveType types[] = {PrimitiveType::F16, PrimitiveType::BF16,
                                 PrimitiveType::F32, PrimitiveType::F64,
                                 PrimitiveType::C64, PrimitiveType::C128};
  for (PrimitiveType t : types) {
    SCOPED_TRACE(std::string(PrimitiveTypeName(t)));
    Literal lit(Shape(t, {2000}));
    for (uint8_t& b : lit.mutable_bytes()) b = static_cast<uint8_t>(rng());
    const std::string text = PrintLiteral(lit);
    auto back = ParseLiteral(text, lit.shape());
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_TRUE(*back == lit);
  }
  Literal f(Shape(PrimitiveType::F32, {3}));
  f.mutable_data<float>()[0] = 0.1f;
  f.mutable_data<float>()[1] = 1e-45f;
  f.mutable_data<float>()[2] = 3.4028235e38f;
  EXPECT_EQ(PrintLiteral(f), "{0.1, 1e-45, 3.4028235e+38}");
}

TEST(HloPrinterTest, ModulesEqualNamesFirstDifference) {
  const char* base = R"(
HloModule m
ENTRY e {
  p = f32[2]{0} parameter(0)
  c = f32[2]{0} constant({1, 2})
  ROOT a = f32[2]{0} add(p, c), metadata={op_name="x"}
}
)";
  auto a = Parse(base);
  struct Variant {
    std::string from, to, diff;
  };
  const Variant variants[] = {
      {"f32[2]{0} parameter", "f32[2] parameter",
       "computation 'e': instruction 'p': shape f32[2]{0} vs f32[2]"},
      {"{1, 2}", "{1, 3}",
       "computation 'e': instruction 'c': literal {1, 2} vs {1, 3}"},
      {"add(p, c)", "add(c, p)",
       "computation 'e': instruction 'a': operands {p, c} vs {c, p}"},
      {"op_name=\"x\"", "op_name=\"y\"",
       "computation 'e': instruction 'a': attributes "
       "'metadata={op_name=\"x\"}' vs 'metadata={op_name=\"y\"}'"},
      {"HloModule m", "HloModule m, k=v", "header attribute count 0 vs 1"},
      {"HloModule m", "HloModule n", "module name 'm' vs 'n'"},
      {"metadata", "control-predecessors={c}, metadata",
       "computation 'e': instruction 'a': control predecessors {} vs {c}"},
  };
  for (const Variant& v : variants) {
    std::string text = base;
    text.replace(text.find(v.from), v.from.size(), v.to);
    auto b = Parse(text);
    std::string diff;
    EXPECT_FALSE(ModulesEqual(*a, *b, &diff)) << text;
    EXPECT_EQ(diff, v.diff);
  }
  std::string diff = "stale";
  auto same = Parse(base);
  EXPECT_TRUE(ModulesEqual(*a, *same, &diff));
  EXPECT_EQ(diff, "");
  EXPECT_TRUE(ModulesEqual(*a, *a->Clone()));
}

}  // namespace
}  // namespace trench
