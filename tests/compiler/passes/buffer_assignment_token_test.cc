// Buffer assignment with tokens: add-dependency defines nothing (its
// leaves are its operand 0's), token leaves are zero-byte values that
// never share a buffer.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "compiler/passes/buffer_assignment.h"
#include "tests/compiler/passes/pass_test_util.h"

namespace trench {
namespace {

constexpr char kTokens[] = R"(
HloModule tokens
ENTRY e {
  p = f32[64] parameter(0)
  a = f32[64] exponential(p)
  t = token[] after-all(a)
  u = token[] after-all()
  d = f32[64] add-dependency(a, t)
  tup = (f32[64], token[]) tuple(a, u)
  dt = (f32[64], token[]) add-dependency(tup, t)
  g = f32[64] get-tuple-element(dt), index=0
  n = f32[64] negate(d)
  ROOT r = f32[64] add(n, g)
}
)";

const HloInstruction* Named(const HloComputation* c, const std::string& n) {
  return c->GetInstructionWithName(n);
}

TEST(BufferAssignmentTokenTest, AddDependencyAliasesItsOperand) {
  auto m = testing::Parse(kTokens);
  ASSERT_NE(m, nullptr);
  const HloComputation* entry = m->entry_computation();
  auto a = AssignBuffers(*entry, entry->MakeInstructionPostOrder(), {},
                         BufferAssignmentOptions());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->leaves.at(Named(entry, "d")), a->leaves.at(Named(entry, "a")));
  EXPECT_EQ(a->leaves.at(Named(entry, "dt")),
            a->leaves.at(Named(entry, "tup")));
  for (const LogicalValue& v : a->values) {
    EXPECT_NE(v.instr->opcode(), HloOpcode::kAddDependency) << v.instr->name();
  }
  // `a` is used through d and dt (by n and g): live until r's operands.
  const LogicalValue& av = a->values[a->leaves.at(Named(entry, "a"))[0]];
  const std::vector<HloInstruction*> order = entry->MakeInstructionPostOrder();
  int64_t g_pos = -1;
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i]->name() == "g") g_pos = static_cast<int64_t>(i);
  }
  EXPECT_GE(av.last_use, g_pos);
}

TEST(BufferAssignmentTokenTest, TokensAreZeroByteUnsharedValues) {
  auto m = testing::Parse(kTokens);
  ASSERT_NE(m, nullptr);
  const HloComputation* entry = m->entry_computation();
  auto a = AssignBuffers(*entry, entry->MakeInstructionPostOrder(), {},
                         BufferAssignmentOptions());
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  std::set<int> token_buffers;
  int tokens = 0;
  for (const LogicalValue& v : a->values) {
    if (!v.shape.IsToken()) continue;
    ++tokens;
    EXPECT_EQ(v.bytes, 0) << v.instr->name();
    EXPECT_EQ(a->buffers[v.buffer].values.size(), 1u) << v.instr->name();
    token_buffers.insert(v.buffer);
  }
  EXPECT_EQ(tokens, 2);  // t and u.
  EXPECT_EQ(token_buffers.size(), 2u);
}

}  // namespace
}  // namespace trench
