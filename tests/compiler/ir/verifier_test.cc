#include "compiler/ir/verifier.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "compiler/ir/hlo_parser.h"

namespace trench {
namespace {

Shape F32(std::vector<int64_t> dims) {
  return Shape(PrimitiveType::F32, std::move(dims));
}

// Parses `hlo` (which must parse) and returns VerifyModule's message, or
// "OK".
std::string Verify(std::string_view hlo) {
  auto module = ParseHloModule(hlo);
  if (!module.ok()) {
    ADD_FAILURE() << "parse error: " << module.status().ToString();
    return "PARSE ERROR";
  }
  Status s = VerifyModule(**module);
  return s.ok() ? "OK" : s.message();
}

std::string Verify(const HloModule& module) {
  Status s = VerifyModule(module);
  return s.ok() ? "OK" : s.message();
}

#define EXPECT_CONTAINS(text, substring)                    \
  do {                                                      \
    const std::string t_ = (text);                          \
    EXPECT_NE(t_.find(substring), std::string::npos) << t_; \
  } while (0)

// An entry computation %e(p0: f32[2], p1: f32[2]) -> add(p0, p1), built
// through the API so tests can break it in ways the parser would refuse.
struct ApiModule {
  std::unique_ptr<HloModule> module = std::make_unique<HloModule>("m");
  HloComputation* entry = nullptr;
  HloInstruction *p0 = nullptr, *p1 = nullptr, *add = nullptr;

  ApiModule() {
    auto comp = std::make_unique<HloComputation>("e");
    p0 = comp->AddInstruction(
        HloInstruction::CreateParameter(0, F32({2}), "p0"));
    p1 = comp->AddInstruction(
        HloInstruction::CreateParameter(1, F32({2}), "p1"));
    add = comp->AddInstruction(
        HloInstruction::Create(HloOpcode::kAdd, F32({2}), {p0, p1}, "add"));
    comp->set_root_instruction(add);
    entry = module->AddComputation(std::move(comp));
    module->set_entry_computation(entry);
  }
};

TEST(Verifier, AcceptsWellFormedModule) {
  EXPECT_EQ(Verify(R"(HloModule m
%sum {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
%fused {
  %fp0 = f32[4,8]{1,0} parameter(0)
  %fp1 = f32[4,8]{1,0} parameter(1)
  ROOT %fm = f32[4,8]{1,0} multiply(%fp0, %fp1)
}
%cond {
  %cs = (s32[], f32[4]) parameter(0)
  %ci = s32[] get-tuple-element(%cs), index=0
  %cn = s32[] constant(3)
  ROOT %clt = pred[] compare(%ci, %cn), direction=LT
}
%body {
  %bs = (s32[], f32[4]) parameter(0)
  %bi = s32[] get-tuple-element(%bs), index=0
  %bv = f32[4] get-tuple-element(%bs), index=1
  %b1 = s32[] constant(1)
  %bj = s32[] add(%bi, %b1)
  %bw = f32[4] add(%bv, %bv)
  ROOT %bt = (s32[], f32[4]) tuple(%bj, %bw)
}
ENTRY %main {
  %a = f32[4,8]{0,1} parameter(0)
  %b = f32[4,8]{1,0} parameter(1)
  %f = f32[4,8]{1,0} fusion(%a, %b), kind=kLoop, calls=%fused
  %z = f32[] constant(0)
  %r = f32[4]{0} reduce(%f, %z), dimensions={1}, to_apply=%sum
  %zero = s32[] constant(0)
  %init = (s32[], f32[4]) tuple(%zero, %r)
  %w = (s32[], f32[4]) while(%init), condition=%cond, body=%body
  ROOT %out = f32[4] get-tuple-element(%w), index=1
}
)"),
            "OK");
}

TEST(Verifier, DeclaredShapeMustMatchInferred) {
  EXPECT_EQ(Verify(R"(HloModule m
ENTRY %e {
  %a = f32[2] parameter(0)
  %b = f32[2] parameter(1)
  ROOT %add.3 = f32[3] add(%a, %b)
})"),
            "5:8: in computation %e: %add.3: add declared shape f32[3] is not "
            "compatible with inferred shape f32[2]");
  EXPECT_EQ(Verify(R"(HloModule m
ENTRY %e {
  %a = f32[2] parameter(0)
  %b = f32[3] parameter(1)
  ROOT %add.3 = f32[2] add(%a, %b)
})"),
            "5:8: in computation %e: %add.3: add operands have different "
            "shapes "
            "f32[2] and f32[3]");
  // Element type counts; layouts do not.
  EXPECT_EQ(Verify(R"(HloModule m
ENTRY %e {
  %a = f32[2,3]{1,0} parameter(0)
  ROOT %n = bf16[2,3]{0,1} negate(%a)
})"),
            "4:8: in computation %e: %n: negate declared shape bf16[2,3] is "
            "not "
            "compatible with inferred shape f32[2,3]");
}

TEST(Verifier, MixedPrecisionOnlyWhenAllowed) {
  auto module = ParseHloModule(R"(HloModule m
%sum {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
ENTRY %e {
  %a = f32[4] parameter(0)
  %z = f32[] constant(0)
  ROOT %r = bf16[] reduce(%a, %z), dimensions={0}, to_apply=%sum
})");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_EQ(VerifyModule(**module).message(),
            "10:8: in computation %e: %r: reduce declared shape bf16[] is not "
            "compatible with inferred shape f32[]");
  VerifyOptions mixed;
  mixed.allow_mixed_precision = true;
  EXPECT_TRUE(VerifyModule(**module, nullptr, mixed).ok());
  // Only floating-point precision is relaxed, not the kind of type.
  (*module)->entry_computation()->root_instruction()->set_shape(
      Shape(PrimitiveType::S32, {}));
  EXPECT_FALSE(VerifyModule(**module, nullptr, mixed).ok());
}

TEST(Verifier, ChecksCalledComputationSignatures) {
  EXPECT_CONTAINS(Verify(R"(HloModule m
%sum {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
ENTRY %e {
  %a = s32[4] parameter(0)
  %z = s32[] constant(0)
  ROOT %r = s32[] reduce(%a, %z), dimensions={0}, to_apply=%sum
})"),
                  "in computation %e: %r: reduce computation %sum has "
                  "signature (f32[], f32[]) -> f32[], expected (s32[], s32[]) "
                  "-> s32[]");
  EXPECT_CONTAINS(Verify(R"(HloModule m
%body {
  %bp = f32[4] parameter(0)
  ROOT %bn = f32[] constant(0)
}
%cond {
  %cp = f32[4] parameter(0)
  ROOT %ct = pred[] constant(true)
}
ENTRY %e {
  %a = f32[4] parameter(0)
  ROOT %w = f32[4] while(%a), condition=%cond, body=%body
})"),
                  "%w: while body computation %body returns f32[], expected "
                  "the loop state f32[4]");
  EXPECT_CONTAINS(Verify(R"(HloModule m
%fused {
  %fp = f32[4] parameter(0)
  ROOT %fn = f32[4] negate(%fp)
}
ENTRY %e {
  %a = f32[5] parameter(0)
  ROOT %f = f32[4] fusion(%a), kind=kLoop, calls=%fused
})"),
                  "%f: fusion fused computation %fused parameter 0 has shape "
                  "f32[4], given f32[5]");
}

TEST(Verifier, TrustsOpsWithoutInferenceRule) {
  auto module = ParseHloModule(R"(HloModule m
%sum {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
ENTRY %e {
  %a = f32[8] parameter(0)
  %ag = f32[16] all-gather(%a), replica_groups={}, dimensions={0}
  ROOT %cc = f32[2,2] custom-call(%ag), custom_call_target="anything"
})");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  VerifyStats stats;
  ASSERT_TRUE(VerifyModule(**module, &stats).ok());
  EXPECT_EQ(stats.instructions, 6);
  ASSERT_EQ(stats.trusted.size(), 2u);
  EXPECT_EQ(stats.trusted[0], "%ag (all-gather)");
  EXPECT_EQ(stats.trusted[1], "%cc (custom-call)");
}

// An all-reduce gives its operand's shape on any mesh: a declared shape
// that differs is an error.
TEST(Verifier, AllReduceKeepsItsOperandsShape) {
  auto module = ParseHloModule(R"(HloModule m
%sum {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
ENTRY %e {
  %a = f32[8] parameter(0)
  ROOT %ar = f32[4] all-reduce(%a), replica_groups={}, to_apply=%sum
})");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  Status s = VerifyModule(**module);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("f32[8]"), std::string::npos) << s.ToString();
}

TEST(Verifier, ModuleStructure) {
  {
    HloModule empty("m");
    EXPECT_EQ(Verify(empty), "module m has no entry computation");
  }
  {
    ApiModule m;
    HloComputation stray("stray");
    m.module->set_entry_computation(&stray);
    EXPECT_EQ(Verify(*m.module),
              "module m: the entry computation is not in the module");
    m.module->set_entry_computation(m.entry);
    EXPECT_EQ(Verify(*m.module), "OK");
  }
  {
    ApiModule m;
    m.entry->set_root_instruction(nullptr);
    EXPECT_EQ(Verify(*m.module), "in computation %e: has no root instruction");
  }
  {
    ApiModule m;
    m.module->AddComputation(std::make_unique<HloComputation>("e"));
    EXPECT_EQ(Verify(*m.module), "computation name %e is used twice");
  }
  {
    ApiModule m;
    auto other = std::make_unique<HloComputation>("other");
    HloInstruction* p = other->AddInstruction(
        HloInstruction::CreateParameter(0, F32({}), "add"));
    other->set_root_instruction(p);
    m.module->AddComputation(std::move(other));
    EXPECT_EQ(Verify(*m.module),
              "in computation %other: instruction name %add is used twice in "
              "the module");
  }
}

TEST(Verifier, InstructionEdges) {
  {
    ApiModule m;
    HloInstruction* neg = m.entry->AddInstruction(HloInstruction::Create(
        HloOpcode::kNegate, F32({2}), {m.p0, m.p1}, "neg"));
    (void)neg;
    EXPECT_EQ(Verify(*m.module),
              "in computation %e: %neg: negate expects 1 operand(s), has 2");
  }
  {
    ApiModule m;
    HloComputation other("other");
    HloInstruction* q =
        other.AddInstruction(HloInstruction::CreateParameter(0, F32({2}), "q"));
    m.add->ReplaceOperandWith(1, q);
    EXPECT_EQ(Verify(*m.module),
              "in computation %e: %add: add operand 1 %q is not in this "
              "computation");
    m.add->ReplaceOperandWith(1, m.p1);
  }
  {
    ApiModule m;
    HloComputation other("other");
    HloInstruction* q =
        other.AddInstruction(HloInstruction::CreateParameter(0, F32({2}), "q"));
    m.add->AddControlPredecessor(q);
    EXPECT_EQ(Verify(*m.module),
              "in computation %e: %add: add has a control predecessor outside "
              "this computation");
  }
  {
    ApiModule m;
    HloComputation stray("stray");
    HloInstruction* call = m.entry->AddInstruction(
        HloInstruction::Create(HloOpcode::kCall, F32({2}), {m.p0}, "call"));
    call->AddCalledComputation(&stray);
    EXPECT_EQ(Verify(*m.module),
              "in computation %e: %call: call calls a computation that is not "
              "in the module");
  }
}

TEST(Verifier, ParameterNumbers) {
  {
    ApiModule m;
    m.entry->AddInstruction(HloInstruction::CreateParameter(3, F32({2}), "p3"));
    EXPECT_EQ(Verify(*m.module),
              "in computation %e: %p3: parameter number 3 is out of range: the "
              "computation has 3 parameters");
  }
  {
    ApiModule m;
    m.entry->AddInstruction(
        HloInstruction::CreateParameter(1, F32({2}), "p1b"));
    m.entry->AddInstruction(HloInstruction::CreateParameter(2, F32({2}), "p2"));
    EXPECT_CONTAINS(Verify(*m.module), "parameter number 1 is used twice");
  }
}

TEST(Verifier, Cycles) {
  {
    ApiModule m;
    HloInstruction* neg = m.entry->AddInstruction(
        HloInstruction::Create(HloOpcode::kNegate, F32({2}), {m.add}, "neg"));
    m.add->ReplaceOperandWith(0, neg);
    EXPECT_CONTAINS(Verify(*m.module), "is part of a cycle");
    m.add->ReplaceOperandWith(0, m.p0);  // Break it before destruction.
  }
  {
    ApiModule m;
    m.p0->AddControlPredecessor(m.add);
    EXPECT_CONTAINS(Verify(*m.module), "is part of a cycle");
  }
  {
    ApiModule m;
    HloInstruction* call = m.entry->AddInstruction(
        HloInstruction::Create(HloOpcode::kCall, F32({2}), {m.p0, m.p1}, "c"));
    call->AddCalledComputation(m.entry);
    EXPECT_EQ(Verify(*m.module), "in computation %e: calls %e recursively");
  }
}

TEST(Verifier, MalformedAttributesAndShapesDoNotCrash) {
  {
    ApiModule m;
    m.add->set_shape(F32({-2}));
    EXPECT_EQ(Verify(*m.module),
              "in computation %e: %add: add declared shape f32[-2] has a "
              "negative dimension");
  }
  {
    ApiModule m;
    HloInstruction* slice = m.entry->AddInstruction(
        HloInstruction::Create(HloOpcode::kSlice, F32({1}), {m.p0}, "sl"));
    slice->mutable_attrs().slice = {{0, 1, 1}, {0, 1, 1}};
    EXPECT_EQ(Verify(*m.module),
              "in computation %e: %sl: slice has 2 slice dimensions for "
              "operand f32[2]");
  }
  {
    ApiModule m;
    HloInstruction* gte = m.entry->AddInstruction(HloInstruction::Create(
        HloOpcode::kGetTupleElement, F32({2}), {m.p0}, "g"));
    gte->mutable_attrs().tuple_index = -1;
    EXPECT_CONTAINS(Verify(*m.module), "operand must be a tuple");
  }
  {
    ApiModule m;
    HloInstruction* rw = m.entry->AddInstruction(HloInstruction::Create(
        HloOpcode::kReduceWindow, F32({2}), {m.p0, m.p1}, "rw"));
    rw->AddCalledComputation(m.entry);  // Also makes the call graph cyclic.
    EXPECT_EQ(Verify(*m.module), "in computation %e: calls %e recursively");
  }
  {
    ApiModule m;
    auto callee = std::make_unique<HloComputation>("callee");
    HloComputation* c = m.module->AddComputation(std::move(callee));
    HloInstruction* call = m.entry->AddInstruction(
        HloInstruction::Create(HloOpcode::kCall, F32({2}), {m.p0}, "call"));
    call->AddCalledComputation(c);
    EXPECT_EQ(Verify(*m.module),
              "in computation %callee: has no root instruction");
  }
  {
    ApiModule m;
    HloInstruction* dot = m.entry->AddInstruction(
        HloInstruction::Create(HloOpcode::kDot, F32({}), {m.p0, m.p1}, "dot"));
    dot->mutable_attrs().dot_dnums = DotDimNumbers{{}, {0}, {}, {7}};
    EXPECT_CONTAINS(Verify(*m.module), "dimension 7 out of range for rank 1");
  }
}

// A module touching most op families, for the mutation tests below.
constexpr char kZoo[] = R"(HloModule zoo
%sum {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
%lt {
  %lx = f32[] parameter(0)
  %ly = f32[] parameter(1)
  ROOT %lc = pred[] compare(%lx, %ly), direction=LT
}
%fused {
  %fp = f32[4,6] parameter(0)
  ROOT %fn = f32[4,6] negate(%fp)
}
ENTRY %e {
  %a = f32[4,6] parameter(0)
  %i = s32[] parameter(1)
  %ids = s32[3,1] parameter(2)
  %img = f32[1,5,5,2] parameter(3)
  %k = f32[3,3,2,4] parameter(4)
  %z = f32[] constant(0)
  %iota = s32[4,6] iota(), iota_dimension=1
  %bc = f32[2,4,6] broadcast(%a), dimensions={1,2}
  %rs = f32[24] reshape(%a)
  %tr = f32[6,4] transpose(%a), dimensions={1,0}
  %sl = f32[2,3] slice(%a), slice={[0:4:2], [0:6:2]}
  %ds = f32[2,2] dynamic-slice(%a, %i, %i), dynamic_slice_sizes={2,2}
  %dus = f32[4,6] dynamic-update-slice(%a, %ds, %i, %i)
  %cat = f32[8,6] concatenate(%a, %dus), dimensions={0}
  %pad = f32[6,12] pad(%a, %z), padding=1_1x0_1_1
  %rev = f32[4,6] reverse(%a), dimensions={0}
  %red = f32[4] reduce(%a, %z), dimensions={1}, to_apply=%sum
  %rw = f32[2,3] reduce-window(%a, %z), window={size=2x2 stride=2x2}, to_apply=%sum
  %dot = f32[4,4] dot(%a, %a), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  %conv = f32[1,3,3,4] convolution(%img, %k), window={size=3x3}, dim_labels=b01f_01io->b01f
  %g = f32[3,6] gather(%a, %ids), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,6}
  %sc = f32[4,6] scatter(%a, %ids, %g), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%sum
  %sort = f32[4,6] sort(%a), dimensions={1}, to_apply=%lt
  %f = f32[4,6] fusion(%a), kind=kLoop, calls=%fused
  %cmp = pred[4,6] compare(%a, %f), direction=GT
  %sel = f32[4,6] select(%cmp, %a, %f)
  %t = (f32[4,6], f32[4]) tuple(%sel, %red)
  ROOT %gte = f32[4] get-tuple-element(%t), index=1
})";

// Every instruction of kZoo except parameters, by name.
std::vector<std::string> ZooInstructions(const HloModule& module) {
  std::vector<std::string> names;
  for (const HloComputation* comp : module.computations()) {
    for (const HloInstruction* instr : comp->instructions()) {
      if (instr->opcode() != HloOpcode::kParameter) {
        names.push_back(instr->name());
      }
    }
  }
  return names;
}

HloInstruction* FindInstruction(const HloModule& module,
                                const std::string& name) {
  for (HloComputation* comp : module.computations()) {
    if (HloInstruction* instr = comp->GetInstructionWithName(name)) {
      return instr;
    }
  }
  return nullptr;
}

TEST(VerifierMutations, WrongDeclaredShapeIsAlwaysCaught) {
  auto module = ParseHloModule(kZoo);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  ASSERT_EQ(Verify(**module), "OK");
  for (const std::string& name : ZooInstructions(**module)) {
    HloInstruction* instr = FindInstruction(**module, name);
    const Shape original = instr->shape();
    const Shape array =
        original.IsArray() ? original : Shape(PrimitiveType::F32, {});
    // An extra dimension. iota and broadcast take their dimensions from the
    // declared shape, so for them that is a different valid instruction.
    if (instr->opcode() != HloOpcode::kIota &&
        instr->opcode() != HloOpcode::kBroadcast) {
      std::vector<int64_t> dims = array.dims();
      dims.push_back(7);
      instr->set_shape(Shape(array.element_type(), dims));
      EXPECT_NE(Verify(**module), "OK") << "%" << name << " extra dim";
    }
    // Another element type (iota may produce any).
    if (instr->opcode() != HloOpcode::kIota) {
      const PrimitiveType other = array.element_type() == PrimitiveType::S8
                                      ? PrimitiveType::U8
                                      : PrimitiveType::S8;
      instr->set_shape(Shape(other, array.dims()));
      EXPECT_NE(Verify(**module), "OK") << "%" << name << " type";
    }
    instr->set_shape(original);
  }
}

// Each mutation puts nonsense into one attribute; the verifier must return
// (OK or not) without crashing, whatever the opcode.
TEST(VerifierMutations, NonsenseAttributesNeverCrash) {
  using Mutation = void (*)(HloAttributes&);
  const Mutation mutations[] = {
      [](HloAttributes& a) { a.dimensions = {-1}; },
      [](HloAttributes& a) {
        a.dimensions = {99, 0};
      },
      [](HloAttributes& a) { a.dimensions.clear(); },
      [](HloAttributes& a) {
        a.slice = {{5, 1, 0}};
      },
      [](HloAttributes& a) { a.slice.clear(); },
      [](HloAttributes& a) { a.dynamic_slice_sizes = {-3}; },
      [](HloAttributes& a) {
        a.padding = {{-100, -100, -1}};
      },
      [](HloAttributes& a) {
        a.window = std::vector<WindowDim>{WindowDim{0, 0}};
      },
      [](HloAttributes& a) { a.window.reset(); },
      [](HloAttributes& a) {
        if (a.conv_dnums) a.conv_dnums->input_spatial = {9, -1};
      },
      [](HloAttributes& a) {
        if (a.conv_dnums) a.conv_dnums->output_batch = 40;
      },
      [](HloAttributes& a) { a.feature_group_count = 0; },
      [](HloAttributes& a) { a.batch_group_count = -2; },
      [](HloAttributes& a) {
        a.dot_dnums = DotDimNumbers{{-1}, {5}, {}, {}};
      },
      [](HloAttributes& a) {
        if (a.gather_dnums) a.gather_dnums->index_vector_dim = 99;
      },
      [](HloAttributes& a) {
        if (a.gather_dnums) a.gather_dnums->offset_dims = {7, 1};
      },
      [](HloAttributes& a) {
        if (a.gather_dnums) a.gather_dnums->operand_batching_dims = {0};
      },
      [](HloAttributes& a) { a.gather_slice_sizes = {1}; },
      [](HloAttributes& a) {
        if (a.scatter_dnums) a.scatter_dnums->index_vector_dim = -4;
      },
      [](HloAttributes& a) {
        if (a.scatter_dnums) a.scatter_dnums->update_window_dims = {0, 5};
      },
      [](HloAttributes& a) {
        if (a.scatter_dnums) a.scatter_dnums->input_batching_dims = {1};
      },
      [](HloAttributes& a) { a.tuple_index = -1; },
      [](HloAttributes& a) { a.tuple_index = 1 << 30; },
      [](HloAttributes& a) { a.iota_dimension = -7; },
      [](HloAttributes& a) { a.exponent_bits = -1; },
      [](HloAttributes& a) { a.operand_precision = {Precision::kHigh}; },
  };
  auto module = ParseHloModule(kZoo);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  int rejected = 0;
  for (const std::string& name : ZooInstructions(**module)) {
    HloInstruction* instr = FindInstruction(**module, name);
    for (Mutation mutate : mutations) {
      const HloAttributes original = instr->attrs();
      mutate(instr->mutable_attrs());
      if (!(instr->attrs() == original)) rejected += Verify(**module) != "OK";
      instr->mutable_attrs() = original;
    }
  }
  // Most mutations touch an attribute the op reads, so most are caught.
  EXPECT_GT(rejected, 40);
  EXPECT_EQ(Verify(**module), "OK");
}

// Operands replaced by ones of the wrong kind (tuple, token, scalar).
TEST(VerifierMutations, WrongOperandKindsNeverCrash) {
  auto module = ParseHloModule(kZoo);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  HloComputation* entry = (*module)->entry_computation();
  HloInstruction* tuple = entry->GetInstructionWithName("t");
  HloInstruction* scalar = entry->GetInstructionWithName("z");
  HloInstruction* token = entry->AddInstruction(
      HloInstruction::Create(HloOpcode::kAfterAll, Shape::Token(), {}, "tok"));
  for (HloInstruction* bad : {tuple, scalar, token}) {
    for (HloInstruction* instr : entry->instructions()) {
      if (instr == bad || instr == tuple) continue;
      for (int64_t i = 0; i < instr->operand_count(); ++i) {
        HloInstruction* original = instr->operand(i);
        if (original == bad) continue;
        instr->ReplaceOperandWith(i, bad);
        EXPECT_NE(Verify(**module), "OK") << "%" << instr->name() << " operand "
                                          << i << " = %" << bad->name();
        instr->ReplaceOperandWith(i, original);
      }
    }
  }
  EXPECT_EQ(Verify(**module), "OK");
}

TEST(Verifier, DimensionSizeOps) {
  EXPECT_EQ(Verify(R"(HloModule m
ENTRY %e {
  %a = f32[8,3] parameter(0)
  %n = s32[] parameter(1)
  %size = s32[] get-dimension-size(%a), dimensions={0}
  %dyn = f32[<=8,3] set-dimension-size(%a, %n), dimensions={0}
  ROOT %neg = f32[<=8,3] negate(%dyn)
})"),
            "OK");
  EXPECT_CONTAINS(Verify(R"(HloModule m
ENTRY %e {
  %a = f32[8,3] parameter(0)
  ROOT %size = s32[] get-dimension-size(%a), dimensions={2}
})"),
                  "out of range for rank 2");
  EXPECT_CONTAINS(Verify(R"(HloModule m
ENTRY %e {
  %a = f32[8,3] parameter(0)
  %n = s32[] parameter(1)
  %dyn = f32[<=8,3] set-dimension-size(%a, %n), dimensions={0}
  ROOT %neg = f32[8,3] negate(%dyn)
})"),
                  "%neg: negate declared shape f32[8,3] is not compatible "
                  "with inferred shape f32[<=8,3]");
}

// Verifier messages name the offending instruction's LINE:COL when it was
// parsed from text, for every kind of instruction error; instructions built
// in memory keep today's messages (the tests above).
TEST(VerifierLocations, ParsedInstructionsAreNamedByLineAndColumn) {
  // Wrong operand count.
  EXPECT_EQ(Verify(R"(HloModule m
ENTRY %e {
  %a = f32[2] parameter(0)
  ROOT %n = f32[2] negate(%a, %a)
})"),
            "4:8: in computation %e: %n: negate expects 1 operand(s), has 2");
  // Declared shape against the inferred one: the report of issue 18.
  EXPECT_EQ(Verify("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
                   "  ROOT a = f32[5] add(p, p)\n}\n"),
            "4:8: in computation %e: %a: add declared shape f32[5] is not "
            "compatible with inferred shape f32[4]");
  // A shape inference failure (an attribute out of range).
  EXPECT_EQ(Verify(R"(HloModule m
ENTRY %e {
  %a = f32[2,3] parameter(0)
    %t = f32[3,2] transpose(%a), dimensions={1,2}
  ROOT %n = f32[3,2] negate(%t)
})"),
            "4:5: in computation %e: %t: transpose dimensions {1,2} has "
            "dimension 2 out of range for rank 2");
  // A recursive call: named by the calling instruction.
  EXPECT_EQ(Verify(R"(HloModule m
%f {
  %x = f32[] parameter(0)
  ROOT %c = f32[] call(%x), to_apply=%f
}
ENTRY %e {
  %a = f32[] parameter(0)
  ROOT %r = f32[] call(%a), to_apply=%f
})"),
            "4:8: in computation %f: calls %f recursively");
  // An unnamed operand instruction is named by where its shape starts.
  EXPECT_EQ(Verify(R"(HloModule m
ENTRY %e {
  %a = f32[2] parameter(0)
  ROOT %r = f32[2] add(%a, f32[3] negate(%a))
})"),
            "4:28: in computation %e: %negate.nested: negate declared shape "
            "f32[3] is not compatible with inferred shape f32[2]");
}

TEST(VerifierLocations, LinesCountFromTheFirstLineGiven) {
  // A piece of a lit-style file that starts on line 20 of that file.
  auto module = ParseHloModule(
      "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT a = f32[5] add(p, p)\n}\n",
      20);
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_EQ(Verify(**module).substr(0, 6), "22:8: ");
  const HloInstruction* p = (*module)->entry_computation()->parameters()[0];
  EXPECT_EQ(p->source_location().ToString(), "21:3");
}

TEST(VerifierLocations, EveryInstructionErrorCarriesTheLocation) {
  const SourceLocation at{7, 3};
  auto expect_located = [](const HloModule& module, const std::string& what) {
    const std::string message = Verify(module);
    EXPECT_EQ(message.rfind("7:3: in computation %", 0), 0u) << message;
    EXPECT_CONTAINS(message, what);
  };
  {  // Negative declared dimension.
    ApiModule m;
    m.add->set_source_location(at);
    m.add->set_shape(F32({-2}));
    expect_located(*m.module,
                   "%add: add declared shape f32[-2] has a "
                   "negative dimension");
  }
  {  // Operand from another computation.
    ApiModule m;
    m.add->set_source_location(at);
    HloComputation other("other");
    HloInstruction* q =
        other.AddInstruction(HloInstruction::CreateParameter(0, F32({2}), "q"));
    m.add->ReplaceOperandWith(1, q);
    expect_located(*m.module, "add operand 1 %q is not in this computation");
    m.add->ReplaceOperandWith(1, m.p1);
  }
  {  // Control predecessor from another computation.
    ApiModule m;
    m.add->set_source_location(at);
    HloComputation other("other");
    HloInstruction* q =
        other.AddInstruction(HloInstruction::CreateParameter(0, F32({2}), "q"));
    m.add->AddControlPredecessor(q);
    expect_located(*m.module, "has a control predecessor outside");
  }
  {  // A callee outside the module.
    ApiModule m;
    HloComputation stray("stray");
    HloInstruction* call = m.entry->AddInstruction(
        HloInstruction::Create(HloOpcode::kCall, F32({2}), {m.p0}, "call"));
    call->set_source_location(at);
    call->AddCalledComputation(&stray);
    expect_located(*m.module, "calls a computation that is not in the module");
  }
  {  // Parameter number out of range, and used twice.
    ApiModule m;
    HloInstruction* p3 = m.entry->AddInstruction(
        HloInstruction::CreateParameter(3, F32({2}), "p3"));
    p3->set_source_location(at);
    expect_located(*m.module, "%p3: parameter number 3 is out of range");
  }
  {
    ApiModule m;
    m.entry->AddInstruction(HloInstruction::CreateParameter(2, F32({2}), "p2"));
    HloInstruction* dup = m.entry->AddInstruction(
        HloInstruction::CreateParameter(1, F32({2}), "p1b"));
    dup->set_source_location(at);
    expect_located(*m.module, "parameter number 1 is used twice");
  }
  {  // A cycle.
    ApiModule m;
    m.add->set_source_location(at);
    m.p0->set_source_location(at);
    m.p0->AddControlPredecessor(m.add);
    expect_located(*m.module, "is part of a cycle");
  }
  {  // An instruction name used in two computations.
    ApiModule m;
    auto other = std::make_unique<HloComputation>("other");
    HloInstruction* p = other->AddInstruction(
        HloInstruction::CreateParameter(0, F32({}), "add"));
    p->set_source_location(at);
    other->set_root_instruction(p);
    m.module->AddComputation(std::move(other));
    expect_located(*m.module, "instruction name %add is used twice");
  }
}

TEST(VerifierLocations, ModuleClonesKeepLocationsPassClonesDoNot) {
  auto module = ParseHloModule(
      "ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT a = f32[4] add(p, p)\n}\n");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  std::unique_ptr<HloModule> clone = (*module)->Clone();
  HloInstruction* root = clone->entry_computation()->root_instruction();
  EXPECT_EQ(root->source_location().ToString(), "3:8");
  root->set_shape(F32({5}));
  EXPECT_EQ(Verify(*clone).substr(0, 5), "3:8: ");
  // An instruction a pass builds (here by cloning) has no location, so its
  // message stays as it was.
  HloComputation* entry = clone->entry_computation();
  HloInstruction* fresh = entry->AddInstruction(root->CloneWithOperands(
      {entry->parameters()[0], entry->parameters()[0]}, ".1"));
  EXPECT_FALSE(fresh->source_location().known());
  root->set_shape(F32({4}));
  fresh->set_shape(F32({5}));
  entry->set_root_instruction(fresh);
  EXPECT_EQ(Verify(*clone).substr(0, 15), "in computation ");
}

}  // namespace
}  // namespace trench
