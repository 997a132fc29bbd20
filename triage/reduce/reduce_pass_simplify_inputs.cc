// simplify-inputs: simpler input arrays, each change offered separately so
// that the engine keeps only what still reproduces the failure (an Inf
// that a numerics bug needs survives: the candidates that lose it are not
// interesting). Per input array (flattened order), each only when it
// changes something:
//   "zeros", "ones", "round to integers" (floats; Inf/NaN stay),
//   then "zero chunk r" for r < min(n, kChunks) (consecutive ranges).
// Applied in that order per array ("zeros" or "ones" make the rest moot).
// Then per used entry parameter of an array shape of at most
// kMaxInlinedElements: "becomes a constant holding its input" (in an SPMD
// case, only when every device has the same input; each device's input
// arrays are offered apart above).
//
// Every opportunity strictly lowers a well-founded order, so no sequence of
// steps can undo one: per array, (class: 0 all zeros, 1 all ones, 2 other;
// finite non-integers; elements with a nonzero byte), lexicographically.
// An all-zero array offers nothing, an all-ones array only "zeros"; the
// rest only when they change something. "To a constant" drops a parameter
// (no pass turns a constant back into one).
#include <algorithm>
#include <cmath>

#include "triage/reduce/reduce_pass_internal.h"

namespace trench::hlo_reduce {
namespace {

inline constexpr int64_t kChunks = 8;
inline constexpr int64_t kMaxInlinedElements = 16;

enum class Kind { kZero, kOne, kRound, kChunk, kToConstant };

struct Opportunity {
  int64_t param;  // Entry parameter number.
  int64_t leaf;   // Its array leaf.
  Kind kind;
  int64_t chunk = 0;
};

std::pair<int64_t, int64_t> ChunkRange(int64_t n, int64_t r) {
  const int64_t chunks = std::min(n, kChunks);
  return {r * n / chunks, (r + 1) * n / chunks};
}

void Simplify(Literal& lit, const Opportunity& o) {
  const int64_t n = lit.element_count();
  switch (o.kind) {
    case Kind::kZero:
      lit = Literal(lit.shape());
      return;
    case Kind::kOne:
      lit = SplatLiteral(lit.shape(), 1.0);
      return;
    case Kind::kRound:
      for (int64_t i = 0; i < n; ++i) {
        const double v = lit.GetAsDouble(i);
        if (std::isfinite(v)) lit.SetFromDouble(i, std::nearbyint(v));
      }
      return;
    case Kind::kChunk: {
      const auto [lo, hi] = ChunkRange(n, o.chunk);
      const int64_t width = ByteWidth(lit.element_type());
      std::fill(lit.mutable_bytes().begin() + lo * width,
                lit.mutable_bytes().begin() + hi * width, 0);
      return;
    }
    case Kind::kToConstant:
      return;
  }
}

bool Changes(const Literal& lit, const Opportunity& o) {
  Literal copy = lit;
  Simplify(copy, o);
  return !(copy == lit);
}

std::vector<Opportunity> InputOpportunities(const EditableCase& e) {
  std::vector<Opportunity> out;
  const int64_t params = static_cast<int64_t>(e.param_inputs.size());
  for (int64_t p = 0; p < params; ++p) {
    for (size_t l = 0; l < e.param_inputs[p].size(); ++l) {
      const Literal& lit = e.param_inputs[p][l];
      const int64_t n = lit.element_count();
      if (n == 0 || IsAllZero(lit)) continue;
      if (lit == SplatLiteral(lit.shape(), 1.0)) {
        out.push_back({p, int64_t(l), Kind::kZero});
        continue;
      }
      std::vector<Opportunity> all = {{p, int64_t(l), Kind::kZero},
                                      {p, int64_t(l), Kind::kOne}};
      if (IsFloat(lit.element_type())) {
        all.push_back({p, int64_t(l), Kind::kRound});
      }
      for (int64_t r = 0; n > 1 && r < std::min(n, kChunks); ++r) {
        all.push_back({p, int64_t(l), Kind::kChunk, r});
      }
      for (const Opportunity& o : all) {
        if (Changes(lit, o)) out.push_back(o);
      }
    }
  }
  const HloComputation* entry = e.module->entry_computation();
  for (int64_t p = 0; p < params; ++p) {
    const HloInstruction* param = entry->parameter_instruction(p);
    // A constant is the same on every device: an SPMD case's devices must
    // all have this input.
    const std::vector<Literal>& leaves = e.param_inputs[p];
    const bool same_everywhere =
        std::all_of(leaves.begin(), leaves.end(),
                    [&](const Literal& l) { return l == leaves.front(); });
    if (param->user_count() > 0 && param->shape().IsArray() &&
        param->shape().element_count() <= kMaxInlinedElements &&
        !leaves.empty() && same_everywhere) {
      out.push_back({p, 0, Kind::kToConstant});
    }
  }
  return out;
}

class SimplifyInputsPass : public OpportunityListPass<Opportunity> {
 public:
  SimplifyInputsPass()
      : OpportunityListPass(
            "simplify-inputs",
            "input arrays to zeros, ones, integers or partly zero; small "
            "inputs to constants") {}

 private:
  std::vector<Opportunity> Opportunities(const hlo_diff::Case&,
                                         const EditableCase& e) const override {
    return InputOpportunities(e);
  }

  StatusOr<hlo_diff::Case> ApplyChosen(
      const hlo_diff::Case& c, EditableCase& e,
      const std::vector<Opportunity>& chosen) const override {
    HloComputation* entry = e.module->entry_computation();
    std::pair<int64_t, int64_t> splatted = {-1, -1};
    for (const Opportunity& o : chosen) {
      if (o.kind == Kind::kToConstant) {
        HloInstruction* param = entry->parameter_instruction(o.param);
        Literal value = e.param_inputs[o.param].at(0);
        value.set_layout(param->shape().layout());
        HloInstruction* constant =
            entry->AddInstruction(HloInstruction::CreateConstant(
                std::move(value), FreshName(e, param->name() + ".constant")));
        constant->set_shape(param->shape());
        param->ReplaceAllUsesWith(constant);
        if (entry->root_instruction() == param) {
          entry->set_root_instruction(constant);
        }
        continue;
      }
      if (splatted == std::pair{o.param, o.leaf}) continue;  // Moot.
      if (o.kind == Kind::kZero || o.kind == Kind::kOne) {
        splatted = {o.param, o.leaf};
      }
      Simplify(e.param_inputs[o.param][o.leaf], o);
    }
    return FinishCase(e, c);
  }
};

}  // namespace

std::unique_ptr<ReductionPass> MakeSimplifyInputsPass() {
  return std::make_unique<SimplifyInputsPass>();
}

}  // namespace trench::hlo_reduce
