// HloInstruction's attributes live out of line, made only when set: an
// instruction without any reads the shared defaults, setting one gives it
// its own, clones copy them, and structural equality ignores only the raw
// ones.
#include "compiler/ir/hlo_instruction.h"

#include <gtest/gtest.h>

namespace trench {
namespace {

std::unique_ptr<HloInstruction> Add(const std::string& name) {
  return HloInstruction::Create(HloOpcode::kAdd, Shape(PrimitiveType::F32, {4}),
                                {}, name);
}

TEST(HloInstructionTest, AttributesAreMadeOnlyWhenSet) {
  auto a = Add("a");
  auto b = Add("b");
  // Both read the defaults: one shared object.
  EXPECT_EQ(&a->attrs(), &b->attrs());
  EXPECT_TRUE(a->dimensions().empty());
  a->mutable_attrs().dimensions = {1, 0};
  EXPECT_NE(&a->attrs(), &b->attrs());
  EXPECT_EQ(a->dimensions(), (std::vector<int64_t>{1, 0}));
  EXPECT_TRUE(b->dimensions().empty());  // The defaults are untouched.
  EXPECT_FALSE(a->IdenticalIgnoringOperands(*b));
  b->mutable_attrs().dimensions = {1, 0};
  EXPECT_TRUE(a->IdenticalIgnoringOperands(*b));
  // Raw attributes (metadata and the like) do not count.
  a->mutable_attrs().raw.emplace_back("metadata", "{op_name=\"x\"}");
  EXPECT_TRUE(a->IdenticalIgnoringOperands(*b));
  EXPECT_EQ(a->attrs().raw.size(), 1u);
}

TEST(HloInstructionTest, ClonesCopyTheirAttributes) {
  auto a = Add("a");
  a->mutable_attrs().dimensions = {0};
  auto c = a->CloneWithOperands({}, ".clone");
  EXPECT_NE(&c->attrs(), &a->attrs());
  EXPECT_EQ(c->dimensions(), a->dimensions());
  c->mutable_attrs().dimensions = {3};
  EXPECT_EQ(a->dimensions(), (std::vector<int64_t>{0}));
  // A clone of an instruction without attributes has none either.
  auto plain = Add("p");
  EXPECT_EQ(&plain->CloneWithOperands({}, "")->attrs(), &plain->attrs());
  auto param =
      HloInstruction::CreateParameter(3, Shape(PrimitiveType::S32, {}), "p3");
  EXPECT_EQ(param->parameter_number(), 3);
}

}  // namespace
}  // namespace trench
