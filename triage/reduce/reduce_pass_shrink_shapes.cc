// shrink-shapes: smaller arrays at their sources in the entry computation
// (parameters, whose inputs are sliced to their leading corner; array
// constants, likewise; iotas), and everything downstream follows by shape
// inference (PropagateShapes). Opportunities: first per distinct dim size
// S > 1 of the sources (ascending): "every source dim of size S to 1",
// then its steps (below) (a size shared by several sources usually is one
// dimension flowing through the graph, so they must shrink together); then
// per source (post order) and dim of size > 1: "dim to 1", then its steps.
// The smallest size chosen for a dim wins. Then sizes carried by
// attributes (entry, post order): per broadcast and dim not taken from its
// operand, of size > 1: "to 1", then its steps; per pad and dim with
// positive padding: "zero its positive padding (low, high, interior)",
// then the steps of the largest of them (negative padding stays).
//
// The steps of a size n are "divide by d" (dims round up, padding down)
// for d = 16^j, j >= 1, while n / d >= 2, coarsest first, then d = 2 when
// n > 2 (dims) or n > 1 (padding). The coarse steps come first because a
// test's cost grows with the case: a huge dim falls to its order of
// magnitude in one step, and the tests of the steps that go too far run
// on small modules (halving alone pays one slow test per halving).
// Every opportunity strictly shrinks something, so none undoes another.
#include <algorithm>
#include <map>
#include <set>

#include "compiler/ir/shape_inference.h"
#include "triage/reduce/reduce_pass_internal.h"

namespace trench::hlo_reduce {
namespace {

struct Opportunity {
  HloInstruction* source;  // Null: every source dim of size `dim`.
  int64_t dim;
  int64_t divisor;  // 0: to 1 (pads: zero the padding).
};

inline constexpr int64_t kCoarseStep = 16;

// "To 1" and the steps of a size (or padding) n, in order (see above);
// `min_half`: the least n that "divide by 2" is offered for.
void AddSteps(std::vector<Opportunity>& out, HloInstruction* source,
              int64_t dim, int64_t n, int64_t min_half) {
  out.push_back({source, dim, 0});
  std::vector<int64_t> coarse;
  for (int64_t d = kCoarseStep; n / d >= 2; d *= kCoarseStep) {
    coarse.push_back(d);
    if (d > n / kCoarseStep) break;  // The next d would overflow n.
  }
  for (auto it = coarse.rbegin(); it != coarse.rend(); ++it) {
    out.push_back({source, dim, *it});
  }
  if (n >= min_half) out.push_back({source, dim, 2});
}

bool IsFreeBroadcastDim(const HloInstruction& i, int64_t d) {
  const auto& map = i.attrs().dimensions;
  return std::find(map.begin(), map.end(), d) == map.end() &&
         !i.shape().is_dynamic_dim(d) && i.shape().dim(d) > 1;
}

int64_t PositivePart(int64_t v) { return std::max<int64_t>(v, 0); }

// The pad amounts after the opportunity (negative amounts stay).
void ShrinkPadding(PaddingDim& p, int64_t divisor) {
  auto shrink = [&](int64_t& v) {
    if (v > 0) v = divisor == 0 ? 0 : v / divisor;
  };
  shrink(p.lo);
  shrink(p.hi);
  shrink(p.interior);
}

int64_t NewSize(int64_t n, int64_t divisor) {
  return divisor == 0 ? 1 : (n + divisor - 1) / divisor;
}

bool IsSource(const HloInstruction& i) {
  if (!i.shape().IsArray() || i.shape().rank() == 0) return false;
  switch (i.opcode()) {
    case HloOpcode::kParameter:
    case HloOpcode::kIota:
      return true;
    case HloOpcode::kConstant:
      return i.has_literal();
    default:
      return false;
  }
}

std::vector<HloInstruction*> Sources(const HloModule& m) {
  std::vector<HloInstruction*> out;
  for (HloInstruction* i : m.entry_computation()->MakeInstructionPostOrder()) {
    if (IsSource(*i)) out.push_back(i);
  }
  return out;
}

std::vector<Opportunity> ShrinkOpportunities(const HloModule& m) {
  std::vector<Opportunity> out;
  std::set<int64_t> sizes;
  for (HloInstruction* i : Sources(m)) {
    for (int64_t d = 0; d < i->shape().rank(); ++d) {
      if (!i->shape().is_dynamic_dim(d)) sizes.insert(i->shape().dim(d));
    }
  }
  for (int64_t n : sizes) {
    if (n > 1) AddSteps(out, nullptr, n, n, 3);
  }
  for (HloInstruction* i : Sources(m)) {
    for (int64_t d = 0; d < i->shape().rank(); ++d) {
      const int64_t n = i->shape().dim(d);
      if (i->shape().is_dynamic_dim(d) || n <= 1) continue;
      AddSteps(out, i, d, n, 3);
    }
  }
  for (HloInstruction* i : m.entry_computation()->MakeInstructionPostOrder()) {
    if (i->opcode() == HloOpcode::kBroadcast && i->shape().IsArray()) {
      for (int64_t d = 0; d < i->shape().rank(); ++d) {
        if (IsFreeBroadcastDim(*i, d)) {
          AddSteps(out, i, d, i->shape().dim(d), 3);
        }
      }
    } else if (i->opcode() == HloOpcode::kPad) {
      const auto& padding = i->attrs().padding;
      for (int64_t d = 0; d < static_cast<int64_t>(padding.size()); ++d) {
        const PaddingDim& p = padding[d];
        const int64_t most = std::max(
            {PositivePart(p.lo), PositivePart(p.hi), PositivePart(p.interior)});
        if (most > 0) AddSteps(out, i, d, most, 2);
      }
    }
  }
  return out;
}

class ShrinkShapesPass : public OpportunityListPass<Opportunity> {
 public:
  ShrinkShapesPass()
      : OpportunityListPass(
            "shrink-shapes",
            "shrink dims of parameters (and their inputs), constants and "
            "iotas; users follow by shape inference") {}

 private:
  std::vector<Opportunity> Opportunities(const hlo_diff::Case&,
                                         const EditableCase& e) const override {
    return ShrinkOpportunities(*e.module);
  }

  StatusOr<hlo_diff::Case> ApplyChosen(
      const hlo_diff::Case& c, EditableCase& e,
      const std::vector<Opportunity>& chosen) const override {
    // New dims per source, in post order.
    std::vector<std::pair<HloInstruction*, std::vector<int64_t>>> sources;
    for (HloInstruction* i : Sources(*e.module)) {
      sources.push_back({i, i->shape().dims()});
    }
    std::unordered_map<const HloInstruction*, Shape> changed;
    std::map<HloInstruction*, std::vector<int64_t>> broadcasts;
    std::vector<HloInstruction*> pads;
    for (const Opportunity& o : chosen) {
      if (o.source != nullptr && o.source->opcode() == HloOpcode::kPad) {
        if (changed.emplace(o.source, o.source->shape()).second) {
          pads.push_back(o.source);
        }
        ShrinkPadding(o.source->mutable_attrs().padding[o.dim], o.divisor);
        continue;
      }
      if (o.source != nullptr && o.source->opcode() == HloOpcode::kBroadcast) {
        auto it = broadcasts.emplace(o.source, o.source->shape().dims()).first;
        it->second[o.dim] =
            std::min(it->second[o.dim],
                     NewSize(o.source->shape().dim(o.dim), o.divisor));
        continue;
      }
      for (auto& [source, dims] : sources) {
        const Shape& shape = source->shape();
        for (int64_t d = 0; d < shape.rank(); ++d) {
          const bool match =
              o.source == nullptr
                  ? shape.dim(d) == o.dim && !shape.is_dynamic_dim(d)
                  : source == o.source && d == o.dim;
          if (match) {
            dims[d] = std::min(dims[d], NewSize(shape.dim(d), o.divisor));
          }
        }
      }
    }
    std::erase_if(sources, [](const auto& s) {
      return s.first->shape().dims() == s.second;
    });
    for (auto& [source, dims] : sources) {
      changed.emplace(source, source->shape());
      Shape s = source->shape();
      for (int64_t d = 0; d < s.rank(); ++d) s.set_dim(d, dims[d]);
      source->set_shape(s);
      if (source->opcode() == HloOpcode::kConstant) {
        Literal lit = SliceLeadingCorner(source->literal(), dims);
        lit.set_layout(s.layout());
        source->set_literal(std::move(lit));
      } else if (source->opcode() == HloOpcode::kParameter) {
        // An array parameter: one leaf per device.
        for (Literal& input : e.param_inputs[source->parameter_number()]) {
          input = SliceLeadingCorner(input, dims);
        }
      }
    }
    for (auto& [b, dims] : broadcasts) {
      changed.emplace(b, b->shape());
      Shape s = b->shape();
      for (int64_t d = 0; d < s.rank(); ++d) s.set_dim(d, dims[d]);
      b->set_shape(s);
    }
    // A pad whose operand shrank too is re-inferred again by propagation.
    for (HloInstruction* pad : pads) {
      StatusOr<Shape> inferred = InferShape(*pad);
      if (!inferred.ok()) return FailedPrecondition("padding does not infer");
      Shape s = *inferred;
      if (pad->shape().has_layout()) s.set_layout(*pad->shape().layout());
      pad->set_shape(s);
    }
    PropagateShapes(e, *e.module->entry_computation(), std::move(changed));
    return FinishCase(e, c);
  }
};

}  // namespace

std::unique_ptr<ReductionPass> MakeShrinkShapesPass() {
  return std::make_unique<ShrinkShapesPass>();
}

}  // namespace trench::hlo_reduce
