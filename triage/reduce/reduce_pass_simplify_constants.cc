// simplify-constants: per array constant (every computation, post order),
// up to three opportunities: "all zeros", "all ones" (pred: true), "splat
// of the first element". When several of one constant are chosen, the
// first wins. Shapes stay.
//
// Every opportunity strictly lowers the constant's rank (ConstantRank:
// all zeros 0 < all ones 1 < other splat 2 < not a splat 3), so no
// sequence of steps can undo one (a 0 -> 1 -> 0 flip would look like
// progress forever): "zeros" is offered above rank 0, "ones" above rank 1,
// "splat" at rank 3 only.
#include <algorithm>

#include "triage/reduce/reduce_pass_internal.h"

namespace trench::hlo_reduce {
namespace {

enum class Kind { kZero, kOne, kSplat };

struct Opportunity {
  HloInstruction* constant;
  Kind kind;
};

Literal Simplified(const Literal& lit, Kind kind) {
  switch (kind) {
    case Kind::kZero:
      return Literal(lit.shape());
    case Kind::kOne:
      return SplatLiteral(lit.shape(), 1.0);
    case Kind::kSplat:
      break;
  }
  Literal out(lit.shape());
  const int64_t width = ByteWidth(lit.shape().element_type());
  for (int64_t i = 0; i < out.element_count(); ++i) {
    std::copy_n(lit.bytes().begin(), width,
                out.mutable_bytes().begin() + i * width);
  }
  return out;
}

}  // namespace

int ConstantRank(const Literal& lit) {
  if (IsAllZero(lit)) return 0;
  if (lit == SplatLiteral(lit.shape(), 1.0)) return 1;
  const int64_t width = ByteWidth(lit.shape().element_type());
  const auto b = lit.bytes();
  for (int64_t i = width; i + width <= static_cast<int64_t>(b.size());
       i += width) {
    if (!std::equal(b.begin(), b.begin() + width, b.begin() + i)) return 3;
  }
  return 2;
}

namespace {

std::vector<Opportunity> ConstantOpportunities(const HloModule& m) {
  std::vector<Opportunity> out;
  for (const HloComputation* comp : m.computations()) {
    for (HloInstruction* i : comp->MakeInstructionPostOrder()) {
      if (i->opcode() != HloOpcode::kConstant || !i->has_literal() ||
          !i->literal().shape().IsArray() ||
          i->literal().element_count() == 0) {
        continue;
      }
      const int rank = ConstantRank(i->literal());
      if (rank > 0) out.push_back({i, Kind::kZero});
      if (rank > 1) out.push_back({i, Kind::kOne});
      if (rank > 2) out.push_back({i, Kind::kSplat});
    }
  }
  return out;
}

class SimplifyConstantsPass : public OpportunityListPass<Opportunity> {
 public:
  SimplifyConstantsPass()
      : OpportunityListPass(
            "simplify-constants",
            "replace array constants by zeros, ones or a splat") {}

 private:
  std::vector<Opportunity> Opportunities(const hlo_diff::Case&,
                                         const EditableCase& e) const override {
    return ConstantOpportunities(*e.module);
  }

  StatusOr<hlo_diff::Case> ApplyChosen(
      const hlo_diff::Case& c, EditableCase& e,
      const std::vector<Opportunity>& chosen) const override {
    const HloInstruction* last = nullptr;
    for (const Opportunity& o : chosen) {
      if (o.constant == last) continue;  // First wins.
      last = o.constant;
      o.constant->set_literal(Simplified(o.constant->literal(), o.kind));
    }
    return FinishCase(e, c);
  }
};

}  // namespace

std::unique_ptr<ReductionPass> MakeSimplifyConstantsPass() {
  return std::make_unique<SimplifyConstantsPass>();
}

}  // namespace trench::hlo_reduce
