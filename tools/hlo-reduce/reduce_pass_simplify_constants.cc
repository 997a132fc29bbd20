// simplify-constants: per array constant (every computation, post order),
// up to three opportunities, each offered only when it changes the value:
// "all zeros", "all ones" (pred: true), "splat of the first element". When
// several of one constant are chosen, the first wins. Shapes stay.
#include "tools/hlo-reduce/reduce_pass_internal.h"

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

std::vector<Opportunity> Opportunities(const HloModule& m) {
  std::vector<Opportunity> out;
  for (const HloComputation* comp : m.computations()) {
    for (HloInstruction* i : comp->MakeInstructionPostOrder()) {
      if (i->opcode() != HloOpcode::kConstant || !i->has_literal() ||
          !i->literal().shape().IsArray() ||
          i->literal().element_count() == 0) {
        continue;
      }
      for (Kind k : {Kind::kZero, Kind::kOne, Kind::kSplat}) {
        if (!(Simplified(i->literal(), k) == i->literal())) {
          out.push_back({i, k});
        }
      }
    }
  }
  return out;
}

class SimplifyConstantsPass : public ReductionPass {
 public:
  std::string_view name() const override { return "simplify-constants"; }
  std::string_view description() const override {
    return "replace array constants by zeros, ones or a splat";
  }

  int64_t Count(const hlo_diff::Case& c) const override {
    StatusOr<EditableCase> e = OpenCase(c);
    return e.ok() ? static_cast<int64_t>(Opportunities(*e->module).size()) : 0;
  }

  StatusOr<hlo_diff::Case> Apply(
      const hlo_diff::Case& c, std::span<const int64_t> chosen) const override {
    ASSIGN_OR_RETURN(EditableCase e, OpenCase(c));
    const std::vector<Opportunity> ops = Opportunities(*e.module);
    RETURN_IF_ERROR(CheckChosen(chosen, static_cast<int64_t>(ops.size())));
    const HloInstruction* last = nullptr;
    for (int64_t k : chosen) {
      if (ops[k].constant == last) continue;  // First wins.
      last = ops[k].constant;
      ops[k].constant->set_literal(
          Simplified(ops[k].constant->literal(), ops[k].kind));
    }
    return FinishCase(e, c);
  }
};

}  // namespace

std::unique_ptr<ReductionPass> MakeSimplifyConstantsPass() {
  return std::make_unique<SimplifyConstantsPass>();
}

}  // namespace trench::hlo_reduce
