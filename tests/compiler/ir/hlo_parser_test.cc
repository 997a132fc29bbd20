#include "compiler/ir/hlo_parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>

#include "compiler/ir/hlo_equal.h"
#include "compiler/ir/hlo_printer.h"
#include "compiler/ir/hlo_text_file.h"

namespace trench {
namespace {

std::unique_ptr<HloModule> Parse(std::string_view text) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? std::move(m).value() : nullptr;
}

std::string ParseError(std::string_view text) {
  auto m = ParseHloModule(text);
  EXPECT_FALSE(m.ok());
  return m.ok() ? "" : m.status().message();
}

const HloInstruction* Find(const HloModule& m, const std::string& name) {
  for (const HloComputation* c : m.computations()) {
    if (const HloInstruction* i = c->GetInstructionWithName(name)) return i;
  }
  return nullptr;
}

TEST(HloParserTest, BasicModule) {
  auto m = Parse(R"(
HloModule basic, entry_computation_layout={(f32[2]{0})->f32[2]{0}}

%add_f32 (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %sum = f32[] add(f32[] %x, f32[] %y)
}

ENTRY %main (p: f32[2]) -> f32[2] {
  %p = f32[2]{0} parameter(0)
  %neg = f32[2]{0} negate(%p)
  ROOT %r = f32[2]{0} add(f32[2]{0} %p, %neg)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name(), "basic");
  ASSERT_EQ(m->header_attrs().size(), 1u);
  EXPECT_EQ(m->header_attrs()[0].first, "entry_computation_layout");
  EXPECT_EQ(m->header_attrs()[0].second, "{(f32[2]{0})->f32[2]{0}}");
  EXPECT_EQ(m->computation_count(), 2);
  const HloComputation* entry = m->entry_computation();
  EXPECT_EQ(entry->name(), "main");
  EXPECT_EQ(entry->root_instruction()->name(), "r");
  EXPECT_EQ(entry->num_parameters(), 1);
  const HloInstruction* r = entry->root_instruction();
  EXPECT_EQ(r->opcode(), HloOpcode::kAdd);
  ASSERT_EQ(r->operand_count(), 2);
  EXPECT_EQ(r->operand(0)->name(), "p");
  EXPECT_EQ(r->operand(1)->name(), "neg");
  EXPECT_EQ(r->shape().layout()->minor_to_major, std::vector<int64_t>{0});
}

TEST(HloParserTest, DefaultsWithoutHeaderRootOrEntry) {
  auto m = Parse(R"(
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  sum = f32[] add(x, y)
}
main {
  a = f32[] parameter(0)
  r = f32[] multiply(a, a)
  last = f32[] negate(r)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name(), "");
  EXPECT_EQ(m->entry_computation()->name(), "main");
  EXPECT_EQ(m->entry_computation()->root_instruction()->name(), "last");
  EXPECT_EQ(m->GetComputationWithName("add")->root_instruction()->name(),
            "sum");
}

TEST(HloParserTest, CommentsAnywhere) {
  auto m = Parse(R"(
// A leading comment.
HloModule c /* after the name */
ENTRY e { // trailing
  p = (f32[], /*index=1*/s32[], /*index=2*/pred[]) parameter(0) // comment
  /* block
     comment */ g = s32[] get-tuple-element(/*x*/p), index=1
}
)");
  ASSERT_NE(m, nullptr);
  const HloInstruction* g = Find(*m, "g");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->tuple_index(), 1);
  EXPECT_EQ(Find(*m, "p")->shape().tuple_size(), 3);
}

TEST(HloParserTest, Shapes) {
  auto s = ParseShape("s32[<=8,3]{0,1}");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(s->is_dynamic_dim(0));
  EXPECT_FALSE(s->is_dynamic_dim(1));
  EXPECT_EQ(s->dim(0), 8);
  EXPECT_EQ(PrintShape(*s), "s32[<=8,3]{0,1}");

  s = ParseShape("f32[?,2]");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(s->is_dynamic_dim(0));
  EXPECT_EQ(PrintShape(*s), "f32[?,2]");

  s = ParseShape("bf16[8,128]{1,0:T(8,128)(2,1)S(1)}");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->layout()->tail, "T(8,128)(2,1)S(1)");
  EXPECT_EQ(PrintShape(*s), "bf16[8,128]{1,0:T(8,128)(2,1)S(1)}");

  s = ParseShape("(f32[], (token[], /*index=1*/u64[2]{0}), ())");
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->tuple_size(), 3);
  EXPECT_TRUE(s->tuple_shape(1).tuple_shape(0).IsToken());
  EXPECT_TRUE(s->tuple_shape(2).IsTuple());
  EXPECT_EQ(s->tuple_shape(2).tuple_size(), 0);
  EXPECT_EQ(PrintShape(*s), "(f32[], (token[], u64[2]{0}), ())");

  for (const char* t : {"pred[1]", "s8[1]", "s16[1]", "s32[1]", "s64[1]",
                        "u8[1]", "u16[1]", "u32[1]", "u64[1]", "f16[1]",
                        "bf16[1]", "f32[1]", "f64[1]", "c64[1]", "c128[1]"}) {
    auto p = ParseShape(t);
    ASSERT_TRUE(p.ok()) << t << ": " << p.status().message();
    EXPECT_EQ(PrintShape(*p), t);
  }
}

TEST(HloParserTest, ShapeErrors) {
  EXPECT_EQ(ParseShape("f33[2]").status().message(),
            "1:1: unknown element type 'f33'");
  EXPECT_EQ(ParseShape("f32[2").status().message(),
            "1:6: expected ']', got end of input");
  EXPECT_EQ(ParseShape("f32[2,3]{0,0}").status().message(),
            "1:12: layout dimension 0 is out of range or repeated for rank 2");
  EXPECT_EQ(ParseShape("f32[2,3]{0}").status().message(),
            "1:9: layout has 1 dimensions, shape has rank 2");
  EXPECT_EQ(ParseShape("f32[-1]").status().message(),
            "1:5: negative dimension size");
  EXPECT_EQ(ParseShape("f32[2] x").status().message(),
            "1:8: expected end of shape, got 'x'");
  EXPECT_FALSE(ParseShape("f32[4294967296,4294967296,4]").ok());
}

TEST(HloParserTest, Literals) {
  auto l =
      ParseLiteral("{ {1, 2}, {3, 4} }", Shape(PrimitiveType::S32, {2, 2}));
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->data<int32_t>()[3], 4);

  l = ParseLiteral("{inf, -inf, nan, -nan, nan(0x1), -0, 1.5e-3}",
                   Shape(PrimitiveType::F32, {7}));
  ASSERT_TRUE(l.ok()) << l.status().message();
  auto f = l->data<float>();
  EXPECT_EQ(f[0], INFINITY);
  EXPECT_EQ(f[1], -INFINITY);
  EXPECT_TRUE(std::isnan(f[2]) && !std::signbit(f[2]));
  EXPECT_TRUE(std::isnan(f[3]) && std::signbit(f[3]));
  uint32_t bits;
  std::memcpy(&bits, &f[4], 4);
  EXPECT_EQ(bits, 0x7f800001u);
  EXPECT_TRUE(std::signbit(f[5]));
  EXPECT_EQ(f[6], 1.5e-3f);

  l = ParseLiteral("{true, false}", Shape(PrimitiveType::PRED, {2}));
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->data<bool>()[0], true);

  l = ParseLiteral("18446744073709551615", Shape(PrimitiveType::U64, {}));
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->data<uint64_t>()[0], 18446744073709551615ull);

  l = ParseLiteral("-128", Shape(PrimitiveType::S8, {}));
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->data<int8_t>()[0], -128);

  l = ParseLiteral("(1.5, -2)", Shape(PrimitiveType::C64, {}));
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->data<c64>()[0], c64(1.5f, -2.0f));

  l = ParseLiteral("0.1", Shape(PrimitiveType::BF16, {}));
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->data<bf16>()[0].bits, bf16(0.1f).bits);

  Shape tuple = Shape::Tuple(
      {Shape(PrimitiveType::F32, {2}), Shape(PrimitiveType::S32, {})});
  l = ParseLiteral("( {1, 2}, 3 )", tuple);
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->tuple_element(1).data<int32_t>()[0], 3);
  l = ParseLiteral("(f32[2] {1, 2}, s32[] 3)", tuple);
  ASSERT_TRUE(l.ok()) << l.status().message();

  l = ParseLiteral("{ {}, {} }", Shape(PrimitiveType::F32, {2, 0}));
  ASSERT_TRUE(l.ok()) << l.status().message();
  // A bare scalar fills an array (XLA accepts `constant(1)` for arrays).
  l = ParseLiteral("7", Shape(PrimitiveType::S32, {2, 2}));
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->data<int32_t>()[3], 7);
}

TEST(HloParserTest, LiteralErrors) {
  Shape s2(PrimitiveType::S32, {2});
  EXPECT_EQ(ParseLiteral("{1, 2, 3}", s2).status().message(),
            "1:6: expected '}' (dimension 0 has 2 elements), got ','");
  EXPECT_EQ(ParseLiteral("{1}", s2).status().message(),
            "1:3: expected ',' (dimension 0 has 2 elements), got '}'");
  EXPECT_EQ(ParseLiteral("{1, 99999999999}", s2).status().message(),
            "1:5: expected s32 value, got '99999999999'");
  EXPECT_EQ(ParseLiteral("-1", Shape(PrimitiveType::U8, {})).status().message(),
            "1:1: expected u8 value, got '-1'");
  EXPECT_EQ(
      ParseLiteral("maybe", Shape(PrimitiveType::PRED, {})).status().message(),
      "1:1: expected true or false, got 'maybe'");
  EXPECT_EQ(ParseLiteral("nan(0x0)", Shape(PrimitiveType::F32, {}))
                .status()
                .message(),
            "1:5: NaN payload 0x0 does not fit a nonzero 23-bit mantissa");
  EXPECT_EQ(
      ParseLiteral("1e999", Shape(PrimitiveType::F32, {})).status().message(),
      "1:1: value 1e999 is out of range for f32");
  // Refused before allocating a huge literal.
  EXPECT_EQ(ParseLiteral("{1}", Shape(PrimitiveType::F32, {1 << 30}))
                .status()
                .message(),
            "1:1: literal text is too short for shape f32[1073741824] "
            "(1073741824 elements)");
}

TEST(HloParserTest, ConstantsInModule) {
  auto m = Parse(R"(
ENTRY e {
  a = f32[2,2]{1,0} constant({ { 1, -2.5 }, { inf, nan } })
  b = u64[] constant(18446744073709551615)
  c = pred[3] constant({true, false, true})
  d = (f32[], s32[2]) constant((1, {2, 3}))
  ROOT t = (f32[2,2]{1,0}, u64[], pred[3], (f32[], s32[2])) tuple(a, b, c, d)
}
)");
  ASSERT_NE(m, nullptr);
  const Literal& a = Find(*m, "a")->literal();
  EXPECT_EQ(a.data<float>()[1], -2.5f);
  EXPECT_EQ(a.shape().layout()->minor_to_major, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(Find(*m, "d")->literal().tuple_element(1).data<int32_t>()[1], 3);
}

TEST(HloParserTest, RawAttributesPreserved) {
  auto m = Parse(R"(
ENTRY e {
  p = f32[2] parameter(0), sharding={devices=[2]0,1}
  ROOT c = f32[2] custom-call(p), custom_call_target="foo\"bar", metadata={op_type="Add" op_name="a/b" source_file="x.py" source_line=3}, backend_config={"k": [1, {"v": "}"}]}, frontend_attributes={_xla="1"}, statistics=(a, [b, {c}])
}
)");
  ASSERT_NE(m, nullptr);
  const auto& raw = Find(*m, "c")->attrs().raw;
  ASSERT_EQ(raw.size(), 5u);
  EXPECT_EQ(raw[0], std::make_pair(std::string("custom_call_target"),
                                   std::string("\"foo\\\"bar\"")));
  EXPECT_EQ(raw[1].second,
            "{op_type=\"Add\" op_name=\"a/b\" source_file=\"x.py\" "
            "source_line=3}");
  EXPECT_EQ(raw[2].second, "{\"k\": [1, {\"v\": \"}\"}]}");
  EXPECT_EQ(raw[3].first, "frontend_attributes");
  EXPECT_EQ(raw[4].second, "(a, [b, {c}])");
  EXPECT_EQ(*Find(*m, "p")->attrs().FindRaw("sharding"), "{devices=[2]0,1}");
}

TEST(HloParserTest, ControlPredecessorsBecomeEdges) {
  auto m = Parse(R"(
ENTRY e {
  a = f32[] constant(1)
  b = f32[] constant(2), control-predecessors={a}
  ROOT c = f32[] add(a, b), control-predecessors={%a, b}
}
)");
  ASSERT_NE(m, nullptr);
  const HloInstruction* c = Find(*m, "c");
  ASSERT_EQ(c->control_predecessors().size(), 2u);
  EXPECT_EQ(c->control_predecessors()[1]->name(), "b");
  EXPECT_TRUE(c->attrs().raw.empty());
}

TEST(HloParserTest, CalledComputationsAndFusion) {
  auto m = Parse(R"(
HloModule m
%fused (p0: f32[4]) -> f32[4] {
  %p0 = f32[4] parameter(0)
  ROOT %n = f32[4] negate(%p0)
}
cond {
  c = (s32[]) parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  ROOT b = (s32[]) parameter(0)
}
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = f32[4] parameter(0)
  f = f32[4] fusion(p), kind=kLoop, calls=%fused
  z = f32[] constant(0)
  r = f32[] reduce(f, z), dimensions={0}, to_apply=add
  i = (s32[]) parameter(1)
  ROOT w = (s32[]) while(i), body=body, condition=cond
}
)");
  ASSERT_NE(m, nullptr);
  const HloInstruction* f = Find(*m, "f");
  EXPECT_EQ(f->fused_computation()->name(), "fused");
  EXPECT_EQ(f->fused_computation()->fusion_instruction(), f);
  EXPECT_EQ(f->attrs().fusion_kind, FusionKind::kLoop);
  const HloInstruction* w = Find(*m, "w");
  EXPECT_EQ(w->while_condition()->name(), "cond");
  EXPECT_EQ(w->while_body()->name(), "body");
  EXPECT_EQ(Find(*m, "r")->to_apply()->name(), "add");
}

TEST(HloParserTest, ComputationsMayBeDefinedAfterUse) {
  auto m = Parse(R"(
ENTRY e {
  p = f32[4] parameter(0)
  ROOT c = f32[4] call(p), to_apply=callee
}
callee {
  ROOT q = f32[4] parameter(0)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry_computation()->name(), "e");
}

TEST(HloParserTest, AsyncWrappedForms) {
  auto m = Parse(R"(
ENTRY AsyncOps {
  init = f32[] constant(42.0)
  async-start = ((f32[]), f32[], u32[]) negate-start(init)
  async-update = ((f32[]), f32[], u32[]) negate-update(async-start)
  ROOT async-done = f32[] negate-done(async-update)
}
)");
  ASSERT_NE(m, nullptr);
  const HloInstruction* s = Find(*m, "async-start");
  EXPECT_EQ(s->opcode(), HloOpcode::kAsyncStart);
  EXPECT_EQ(*s->attrs().FindRaw(kAsyncWrappedOpcodeKey), "negate");
  EXPECT_EQ(Find(*m, "async-done")->opcode(), HloOpcode::kAsyncDone);
  EXPECT_NE(PrintHloModule(*m).find("negate-update(("), std::string::npos);
  // Real *-start opcodes stay themselves.
  auto m2 = Parse(R"(
ENTRY e {
  p = f32[4] parameter(0)
  s = (f32[4], f32[4]) copy-start(p)
  ROOT d = f32[4] copy-done(s)
}
)");
  ASSERT_NE(m2, nullptr);
  EXPECT_EQ(Find(*m2, "s")->opcode(), HloOpcode::kCopyStart);
}

TEST(HloParserTest, NestedOperandInstructions) {
  auto m = Parse(R"(
ENTRY e {
  ROOT add = s32[] add(s32[] parameter(0), s32[] negate(s32[] constant(1)))
}
)");
  ASSERT_NE(m, nullptr);
  const HloComputation* c = m->entry_computation();
  EXPECT_EQ(c->instruction_count(), 4);
  EXPECT_EQ(c->root_instruction()->operand(1)->opcode(), HloOpcode::kNegate);
  EXPECT_EQ(c->root_instruction()->operand(1)->name(), "negate.nested");
  EXPECT_EQ(c->root_instruction()->operand(0)->name(), "parameter.nested");
  EXPECT_EQ(c->num_parameters(), 1);
}

TEST(HloParserTest, NamesAreMadeUniqueAcrossComputations) {
  auto m = Parse(R"(
f {
  p0 = f32[] parameter(0)
  ROOT n = f32[] negate(p0)
}
ENTRY e {
  p0 = f32[] parameter(0)
  p0.1 = f32[] negate(p0)
  ROOT n = f32[] call(p0.1), to_apply=f
}
)");
  ASSERT_NE(m, nullptr);
  const HloComputation* e = m->entry_computation();
  const HloInstruction* root = e->root_instruction();
  EXPECT_EQ(root->name(), "n.1");
  EXPECT_EQ(root->operand(0)->name(), "p0.1.1");
  EXPECT_EQ(root->operand(0)->operand(0)->name(), "p0.1");
  EXPECT_EQ(m->GetComputationWithName("f")->root_instruction()->name(), "n");
}

// Every opcode of the registry parses and round-trips.
TEST(HloParserTest, EveryOpcodeParses) {
  for (int k = 0; k < kNumOpcodes; ++k) {
    const HloOpcode op = static_cast<HloOpcode>(k);
    const int arity = OpcodeArity(op) == kVariadic ? 1 : OpcodeArity(op);
    std::string body;
    if (op == HloOpcode::kParameter) {
      body = "parameter(1)";
    } else if (op == HloOpcode::kConstant) {
      body = "constant(1)";
    } else {
      body = std::string(OpcodeName(op)) + "(";
      for (int i = 0; i < arity; ++i) body += i ? ", p" : "p";
      body += ")";
    }
    if (op == HloOpcode::kWhile) body += ", condition=c, body=c";
    if (op == HloOpcode::kSelectAndScatter) body += ", select=c, scatter=c";
    if (op == HloOpcode::kFusion || op == HloOpcode::kAsyncStart) {
      body += ", calls=c";
    }
    if (op == HloOpcode::kCall || op == HloOpcode::kConditional ||
        op == HloOpcode::kReduce || op == HloOpcode::kReduceWindow ||
        op == HloOpcode::kMap || op == HloOpcode::kSort ||
        op == HloOpcode::kScatter || op == HloOpcode::kAllReduce ||
        op == HloOpcode::kAllReduceStart || op == HloOpcode::kReduceScatter) {
      body += ", to_apply=c";
    }
    const std::string text =
        "c {\n  ROOT a = f32[] parameter(0)\n}\n"
        "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT x = f32[] " +
        body + "\n}\n";
    auto m = ParseHloModule(text);
    ASSERT_TRUE(m.ok()) << OpcodeName(op) << ": " << m.status().message();
    const HloInstruction* x = (*m)->entry_computation()->root_instruction();
    EXPECT_EQ(x->opcode(), op) << text;
    auto again = ParseHloModule(PrintHloModule(**m));
    ASSERT_TRUE(again.ok()) << again.status().message();
    std::string diff;
    EXPECT_TRUE(ModulesEqual(**m, **again, &diff)) << OpcodeName(op) << diff;
  }
}

TEST(HloParserTest, ErrorMessages) {
  EXPECT_EQ(ParseError("ENTRY e {\n  p = f32[] parameter(0)\n"
                       "  ROOT x = f32[] frobnicate(p)\n}"),
            "3:18: unknown opcode 'frobnicate'");
  EXPECT_EQ(ParseError("ENTRY e {\n  ROOT x = f32[] negate(q)\n}"),
            "2:25: operand 'q' is not defined before its use in computation "
            "'e'");
  EXPECT_EQ(ParseError("ENTRY e {\n  p = f32[] parameter(0)\n"
                       "  p = f32[] negate(p)\n}"),
            "3:3: duplicate instruction name 'p' in computation 'e'");
  EXPECT_EQ(ParseError("ENTRY e {\n  p = f32[] parameter(0)\n"
                       "  ROOT c = f32[] call(p), to_apply=nowhere\n}"),
            "3:36: computation 'nowhere' is not defined");
  EXPECT_EQ(ParseError("a {\n ROOT p = f32[] parameter(0)\n}\n"
                       "a {\n ROOT p = f32[] parameter(0)\n}"),
            "4:1: duplicate computation name 'a'");
  EXPECT_EQ(ParseError("ENTRY e {\n  p = f32[] parameter(0)\n"
                       "  ROOT x = f32[] negate(p\n}"),
            "4:1: expected ')', got '}'");
  EXPECT_EQ(ParseError("ENTRY e {\n  p = f32[] parameter(0)\n"),
            "3:1: expected '}' closing computation 'e', got end of input");
  EXPECT_EQ(ParseError(""), "1:1: expected computation, got end of input");
  EXPECT_EQ(ParseError("HloModule m\n"),
            "2:1: expected computation, got end of input");
  EXPECT_EQ(ParseError("ENTRY e {\n  /* never closed\n}"),
            "2:3: expected instruction name, got unterminated comment");
  EXPECT_EQ(
      ParseError("ENTRY e {\n  p = f32[] parameter(0), metadata={a=\"x}\n}"),
      "2:39: unterminated string");
  EXPECT_EQ(ParseError("ENTRY e {\n  ROOT p = f32[] parameter(0)\n"
                       "  ROOT q = f32[] parameter(1)\n}"),
            "3:3: computation 'e' has more than one ROOT");
  EXPECT_EQ(ParseError("ENTRY e {\n  p = f32[] parameter(1)\n}"),
            "1:7: computation 'e' has no parameter(0) but has parameter(1)");
  EXPECT_EQ(ParseError("ENTRY e {\n  p = f32[] parameter(0)\n"
                       "  q = f32[] parameter(0)\n}"),
            "3:23: duplicate parameter(0) in computation 'e'");
  EXPECT_EQ(ParseError("b {\n ROOT p = f32[] parameter(0)\n}\nENTRY e {\n"
                       "  p = f32[] parameter(0)\n"
                       "  ROOT w = f32[] while(p), body=b\n}"),
            "6:3: instruction 'w' needs both computations of a pair "
            "(condition/body, true_computation/false_computation, "
            "select/scatter) and no other called computation");
  EXPECT_EQ(ParseError("ENTRY e {\n  p = f32[] parameter(0)\n"
                       "  ROOT r = f32[] reduce(p, p), dimensions={}\n}"),
            "3:3: reduce 'r' needs 1 called computation(s), e.g. to_apply=");
  EXPECT_EQ(
      ParseError("ENTRY e {\n  p = f32[] parameter(0)\n"
                 "  ROOT x = f32[] negate(p), channel_id=1, channel_id=2\n}"),
      "3:43: duplicate attribute 'channel_id'");
  EXPECT_EQ(ParseError("ENTRY e {\n  p = f32[] parameter(0)\n"
                       "  ROOT x = f32[] negate(p), channel_id=, k=1\n}"),
            "3:40: expected attribute value, got ','");
  EXPECT_EQ(ParseError("ENTRY e {\n  p = f32[] parameter(0)\n"
                       "  ROOT x = pred[] compare(p, p), direction=XX\n}"),
            "3:44: expected comparison direction (EQ, NE, LT, LE, GT, GE), "
            "got 'XX'");
  EXPECT_EQ(ParseError("ENTRY e {\n  p = f32[2] parameter(0)\n"
                       "  ROOT x = f32[2] slice(p), slice={[0:2}\n}"),
            "3:40: expected ']', got '}'");
  EXPECT_EQ(ParseError("ENTRY e {\n  p = f32[] parameter(0)\n"
                       "  ROOT x = f32[] negate(p), dimensions={0}}\n}"),
            "4:1: expected computation name, got '}'");
  EXPECT_EQ(ParseError("ENTRY e { ROOT c = f32[2] constant({1, x}) }"),
            "1:40: expected floating-point number, got 'x'");
  EXPECT_EQ(ParseError("ENTRY a {\n ROOT p = f32[] parameter(0)\n}\n"
                       "ENTRY b {\n ROOT p = f32[] parameter(0)\n}"),
            "4:1: more than one ENTRY computation");
}

// XLA's parser refuses attribute names it does not know; so does this one
// (issue 18: `bogus_attr=1` and a misspelled custom_call_target passed).
TEST(HloParserTest, UnknownAttributesAreRefused) {
  const std::string head =
      "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT x = f32[] negate(p), ";
  EXPECT_EQ(ParseError(head + "bogus_attr=1\n}"),
            "3:29: unknown attribute 'bogus_attr'");
  EXPECT_EQ(ParseError(head + "custom_Kall_target=\"f\"\n}"),
            "3:29: unknown attribute 'custom_Kall_target'; did you mean "
            "'custom_call_target'?");
  EXPECT_EQ(ParseError(head + "Metadata={}\n}"),
            "3:29: unknown attribute 'Metadata'; did you mean 'metadata'?");
  EXPECT_EQ(ParseError(head + "dimension={0}\n}"),
            "3:29: unknown attribute 'dimension'; did you mean 'dimensions'?");
  // Named after the known ones, and on a later attribute.
  EXPECT_EQ(ParseError(head + "metadata={}, sharding={replicated}, " +
                       "to_aply=c\n}"),
            "3:65: unknown attribute 'to_aply'; did you mean 'to_apply'?");
  // Too short, or as close to two names, to guess.
  EXPECT_EQ(ParseError(head + "kk=1\n}"), "3:29: unknown attribute 'kk'");
}

// Every attribute XLA's parser accepts on some opcode (but which this IR
// does not model) is kept raw, on any opcode.
TEST(HloParserTest, XlaAttributeNamesAreAccepted) {
  for (const char* key : {"sharding",
                          "frontend_attributes",
                          "statistics",
                          "parameter_replication",
                          "origin",
                          "metadata",
                          "backend_config",
                          "replica_groups",
                          "channel_id",
                          "constrain_layout",
                          "use_global_device_ids",
                          "mode",
                          "source_target_pairs",
                          "slice_sizes",
                          "is_host_transfer",
                          "async_execution_thread",
                          "output_to_operand_aliasing",
                          "cross_program_prefetch_index",
                          "is_composite",
                          "inferred_dimension",
                          "k",
                          "largest",
                          "num_carries",
                          "is_reverse",
                          "is_associative",
                          "result_accuracy",
                          "conv_kind",
                          "algorithm",
                          "lhs_ragged_dims",
                          "rhs_group_dims",
                          "fft_type",
                          "fft_length",
                          "left_side",
                          "lower",
                          "unit_diagonal",
                          "transpose_a",
                          "epsilon",
                          "feature_index",
                          "domain",
                          "infeed_config",
                          "outfeed_config",
                          "outfeed_shape",
                          "distribution",
                          "delta",
                          "custom_call_target",
                          "operand_layout_constraints",
                          "custom_call_has_side_effect",
                          "padding_type",
                          "literal",
                          "schedule",
                          "api_version"}) {
    auto m = ParseHloModule(
        "ENTRY e {\n  p = f32[] parameter(0)\n  ROOT x = f32[] negate(p), " +
        std::string(key) + "={x}\n}\n");
    ASSERT_TRUE(m.ok()) << key << ": " << m.status().message();
    EXPECT_EQ(
        *(*m)->entry_computation()->root_instruction()->attrs().FindRaw(key),
        "{x}");
  }
}

TEST(HloParserTest, InstructionsRecordWhereTheyWereWritten) {
  auto m = Parse(
      "HloModule m\nc {\n  ROOT q = f32[] parameter(0)\n}\n"
      "ENTRY e {\n  p = f32[] parameter(0)\n"
      "  ROOT x = f32[] add(p, f32[] negate(p)), metadata={}\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Find(*m, "q")->source_location().ToString(), "3:8");
  EXPECT_EQ(Find(*m, "p")->source_location().ToString(), "6:3");
  EXPECT_EQ(Find(*m, "x")->source_location().ToString(), "7:8");
  EXPECT_EQ(Find(*m, "negate.nested")->source_location().ToString(), "7:25");
  // The printer does not print locations; the re-parsed module has its own.
  auto again = Parse(PrintHloModule(*m));
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(Find(*again, "x")->source_location().known());
}

TEST(HloParserTest, FirstLineOffsetsMessages) {
  auto m = ParseHloModule("ENTRY e {\n  ROOT x = f32[] bogus()\n}", 100);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "101:18: unknown opcode 'bogus'");
}

TEST(HloParserTest, DeepNestingIsRefused) {
  std::string shape(300, '(');
  shape += std::string(300, ')');
  auto s = ParseShape(shape);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("nesting deeper than 256 levels"),
            std::string::npos)
      << s.status().message();
  std::string dims = "1";
  for (int i = 0; i < 299; ++i) dims += ",1";
  auto lit = ParseHloModule("ENTRY e { ROOT c = f32[" + dims + "] constant(" +
                            std::string(300, '{') + "1" +
                            std::string(300, '}') + ") }");
  ASSERT_FALSE(lit.ok());
  EXPECT_NE(lit.status().message().find("nesting deeper"), std::string::npos)
      << lit.status().message();
  // A deep chain of nested operand instructions.
  std::string nested = "p";
  for (int i = 0; i < 400; ++i) nested = "f32[] negate(" + nested + ")";
  auto m = ParseHloModule(
      "ENTRY e {\n p = f32[] parameter(0)\n ROOT r = " + nested + "\n}");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("nesting deeper"), std::string::npos);
}

TEST(HloTextFileTest, SplitsLitFiles) {
  const std::string file =
      "// RUN: tool %s | FileCheck %s\n"
      "HloModule a\n"
      "// CHECK: foo\n"
      "ENTRY e { ROOT p = f32[] parameter(0) }\n"
      "// -----\n"
      "// CHECK-LABEL: bar\n"
      "\n"
      "  // -----\n"
      "HloModule b\n"
      "// CHECK-NEXT: x\n"
      "ENTRY e { ROOT p = f32[] bogus(0) }\n";
  std::vector<HloTextPiece> pieces = SplitHloTextFile(file);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(pieces[0].first_line, 1);
  EXPECT_EQ(pieces[0].text,
            "\nHloModule a\n\nENTRY e { ROOT p = f32[] parameter(0) }\n");
  EXPECT_EQ(pieces[1].first_line, 9);
  auto m = ParseHloModule(pieces[1].text, pieces[1].first_line);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "11:26: unknown opcode 'bogus'");
  EXPECT_TRUE(SplitHloTextFile("// RUN: x\n// -----\n  \n").empty());
}

}  // namespace
}  // namespace trench
