// The trace cutter (triage/fuzz/subgraph.h): components, inputs, outputs,
// cloned constants and computations, control-flow bodies, splitting.
#include "triage/fuzz/subgraph.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer.h"
#include "compiler/ir/verifier.h"

namespace trench {
namespace {

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  if (!m.ok()) return nullptr;
  EXPECT_TRUE(VerifyModule(**m).ok());
  return std::move(m).value();
}

bool NotCustomCall(const HloInstruction& i) {
  return i.opcode() != HloOpcode::kCustomCall;
}

CutResult Cut(const HloModule& m, const CanRunPredicate& p,
              SubgraphOptions o = {}) {
  auto r = CutSubgraphs(m, p, o);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return {};
  for (const Subgraph& s : r->subgraphs) {
    EXPECT_TRUE(s.verified.ok()) << s.verified.ToString() << "\n"
                                 << PrintHloModule(*s.module);
    EXPECT_TRUE(VerifyModule(*s.module).ok());
  }
  return std::move(r).value();
}

using Names = std::vector<std::string>;

constexpr char kChain[] = R"(HloModule chain
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  s = f32[4] add(a, b)
  cc = f32[4] custom-call(s), custom_call_target="x"
  m = f32[4] multiply(cc, a)
  ROOT n = f32[4] negate(m)
}
)";

TEST(SubgraphTest, RejectedInstructionsBecomeInputs) {
  auto m = Parse(kChain);
  CutResult r = Cut(*m, NotCustomCall);
  EXPECT_EQ(r.instructions, 4);
  EXPECT_EQ(r.accepted, 3);
  ASSERT_EQ(r.subgraphs.size(), 2u);
  EXPECT_EQ(r.subgraphs[0].instructions, Names({"s"}));
  EXPECT_EQ(r.subgraphs[0].inputs, Names({"a", "b"}));
  EXPECT_EQ(r.subgraphs[1].instructions, Names({"m", "n"}));
  EXPECT_EQ(r.subgraphs[1].inputs, Names({"cc", "a"}));
  const HloComputation& e = *r.subgraphs[1].module->entry_computation();
  EXPECT_EQ(e.root_instruction()->name(), "n");
  EXPECT_EQ(e.num_parameters(), 2);
  EXPECT_EQ(e.parameter_instruction(0)->shape().ToString(false), "f32[4]");
  EXPECT_EQ(r.subgraphs[1].computation, "e");
}

TEST(SubgraphTest, AcceptingEverythingGivesTheWholeComputation) {
  auto m = Parse(kChain);
  CutResult r = Cut(*m, [](const HloInstruction&) { return true; });
  ASSERT_EQ(r.subgraphs.size(), 1u);
  EXPECT_EQ(r.subgraphs[0].instructions, Names({"s", "cc", "m", "n"}));
  EXPECT_EQ(r.subgraphs[0].inputs, Names({"a", "b"}));
}

TEST(SubgraphTest, RejectingEverythingGivesNothing) {
  auto m = Parse(kChain);
  CutResult r = Cut(*m, [](const HloInstruction&) { return false; });
  EXPECT_TRUE(r.subgraphs.empty());
  EXPECT_EQ(r.accepted, 0);
}

TEST(SubgraphTest, ValuesUsedOutsideAreOutputs) {
  auto m = Parse(R"(HloModule outs
ENTRY e {
  a = f32[4] parameter(0)
  s = f32[4] add(a, a)
  t = f32[4] multiply(s, s)
  cc = f32[4] custom-call(s), custom_call_target="x"
  ROOT u = (f32[4], f32[4]) tuple(t, cc)
}
)");
  CutResult r = Cut(*m, NotCustomCall);
  // s feeds the custom call, t the (rejected-input) tuple: both outputs.
  // The tuple joins the component of t.
  ASSERT_EQ(r.subgraphs.size(), 1u);
  const HloInstruction* root =
      r.subgraphs[0].module->entry_computation()->root_instruction();
  EXPECT_EQ(root->opcode(), HloOpcode::kTuple);
  std::vector<std::string> outs;
  for (const HloInstruction* o : root->operands()) outs.push_back(o->name());
  EXPECT_EQ(outs, Names({"s", "u"}));
  EXPECT_EQ(r.subgraphs[0].inputs, Names({"a", "cc"}));
}

TEST(SubgraphTest, ScalarConstantsAreClonedAndComputationsCopied) {
  auto m = Parse(R"(HloModule red
sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT r = f32[] add(x, y)
}
ENTRY e {
  a = f32[4,8] parameter(0)
  cc = f32[4,8] custom-call(a), custom_call_target="x"
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(cc, z), dimensions={1}, to_apply=sum
}
)");
  CutResult r = Cut(*m, [](const HloInstruction& i) {
    return NotCustomCall(i) && i.opcode() != HloOpcode::kConstant;
  });
  ASSERT_EQ(r.subgraphs.size(), 1u);
  const HloModule& s = *r.subgraphs[0].module;
  EXPECT_EQ(r.subgraphs[0].inputs, Names({"cc"}));
  EXPECT_EQ(s.entry_computation()->num_parameters(), 1);
  EXPECT_NE(s.GetComputationWithName("sum"), nullptr);
  EXPECT_EQ(s.computation_count(), 2);
  const HloInstruction* reduce = s.entry_computation()->root_instruction();
  EXPECT_EQ(reduce->operand(1)->opcode(), HloOpcode::kConstant);
  EXPECT_EQ(reduce->to_apply(), s.GetComputationWithName("sum"));
}

TEST(SubgraphTest, FusionKeepsItsFusedComputation) {
  auto m = Parse(R"(HloModule fus
fused {
  p = f32[4] parameter(0)
  ROOT e = f32[4] exponential(p)
}
ENTRY e {
  a = f32[4] parameter(0)
  cc = f32[4] custom-call(a), custom_call_target="x"
  ROOT f = f32[4] fusion(cc), kind=kLoop, calls=fused
}
)");
  CutResult r = Cut(*m, NotCustomCall);
  ASSERT_EQ(r.subgraphs.size(), 1u);
  const HloModule& s = *r.subgraphs[0].module;
  const HloInstruction* f = s.entry_computation()->root_instruction();
  ASSERT_EQ(f->opcode(), HloOpcode::kFusion);
  EXPECT_EQ(f->fused_computation()->fusion_instruction(), f);
  EXPECT_EQ(f->fused_computation()->parent(), &s);
}

constexpr char kLoop[] = R"(HloModule loop
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  cc = f32[4] custom-call(x), custom_call_target="x"
  x1 = f32[4] add(cc, x)
  ROOT r = (s32[], f32[4]) tuple(i1, x1)
}
cond {
  cp = (s32[], f32[4]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(ci, n), direction=LT
}
ENTRY e {
  a = f32[4] parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[4]) tuple(z, a)
  w = (s32[], f32[4]) while(t), condition=cond, body=body
  ROOT g = f32[4] get-tuple-element(w), index=1
}
)";

// The while is rejected (its body has a custom call) but its body and
// condition are cut on their own; get-tuple-elements of parameters are
// inputs, so no tuple-shaped inputs appear.
TEST(SubgraphTest, ControlFlowBodiesAreCutToo) {
  auto m = Parse(kLoop);
  auto can_run = [](const HloInstruction& i) {
    return NotCustomCall(i) && i.opcode() != HloOpcode::kWhile;
  };
  CutResult r = Cut(*m, can_run);
  std::map<std::string, const Subgraph*> by_comp;
  for (const Subgraph& s : r.subgraphs) {
    EXPECT_EQ(by_comp.count(s.computation), 0u) << s.computation;
    by_comp[s.computation] = &s;
    for (const HloInstruction* p :
         s.module->entry_computation()->parameters()) {
      EXPECT_FALSE(p->shape().IsTuple()) << s.computation << " " << p->name();
    }
  }
  // body: i1 (with the cloned constant), x1 and r form one component;
  // cond: lt; the entry has only aliases and the rejected while.
  ASSERT_EQ(r.subgraphs.size(), 2u);
  ASSERT_TRUE(by_comp.count("body") && by_comp.count("cond"));
  EXPECT_EQ(by_comp["body"]->instructions, Names({"i1", "x1", "r"}));
  EXPECT_EQ(by_comp["body"]->inputs, Names({"i", "cc", "x"}));
  EXPECT_EQ(by_comp["cond"]->inputs, Names({"ci"}));
}

TEST(SubgraphTest, AcceptedWhileKeepsItsComputations) {
  auto m = Parse(kLoop);
  CutResult r = Cut(*m, [](const HloInstruction&) { return true; });
  // body, cond and the entry (which contains the whole loop).
  ASSERT_EQ(r.subgraphs.size(), 3u);
  const HloModule& s = *r.subgraphs[2].module;
  EXPECT_EQ(r.subgraphs[2].computation, "e");
  EXPECT_NE(s.GetComputationWithName("body"), nullptr);
  EXPECT_NE(s.GetComputationWithName("cond"), nullptr);
  EXPECT_EQ(r.subgraphs[2].inputs, Names({"a"}));
}

TEST(SubgraphTest, LargeComponentsAreSplit) {
  auto m = Parse(kChain);
  SubgraphOptions o;
  o.max_instructions = 1;
  CutResult r = Cut(
      *m, [](const HloInstruction&) { return true; }, o);
  ASSERT_EQ(r.subgraphs.size(), 4u);
  EXPECT_EQ(r.subgraphs[2].instructions, Names({"m"}));
  EXPECT_EQ(r.subgraphs[2].inputs, Names({"cc", "a"}));
}

TEST(SubgraphTest, IsolateInstruction) {
  auto m = Parse(kChain);
  const HloInstruction* mul =
      m->entry_computation()->GetInstructionWithName("m");
  std::unique_ptr<HloModule> s = IsolateInstruction(*mul);
  ASSERT_NE(s, nullptr);
  EXPECT_TRUE(VerifyModule(*s).ok());
  EXPECT_EQ(s->entry_computation()->num_parameters(), 2);
  EXPECT_EQ(s->entry_computation()->root_instruction()->opcode(),
            HloOpcode::kMultiply);
}

TEST(SubgraphTest, MaxElementsWithin) {
  auto m = Parse(kChain);
  const HloInstruction* s = m->entry_computation()->GetInstructionWithName("s");
  EXPECT_TRUE(MaxElementsWithin(*s, 4));
  EXPECT_FALSE(MaxElementsWithin(*s, 3));
}

TEST(SubgraphTest, ModuleWithoutEntryIsAnError) {
  HloModule m("empty");
  auto r = CutSubgraphs(m, NotCustomCall);
  EXPECT_FALSE(r.ok());
}

}  // namespace
}  // namespace trench
