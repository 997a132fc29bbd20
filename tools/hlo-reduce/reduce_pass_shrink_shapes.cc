// shrink-shapes: smaller arrays at their sources in the entry computation
// (parameters, whose inputs are sliced to their leading corner; array
// constants, likewise; iotas), and everything downstream follows by shape
// inference (PropagateShapes). Opportunities: first per distinct dim size
// S > 1 of the sources (ascending): "every source dim of size S to 1",
// then, for S > 2, "halve them" (a size shared by several sources usually
// is one dimension flowing through the graph, so they must shrink
// together); then per source (post order) and dim of size > 1: "dim to
// 1", then, for sizes > 2, "halve the dim" (rounding up). The smallest
// size chosen for a dim wins. Then sizes carried by attributes (entry, post
// order): per broadcast and dim not taken from its operand, of size > 1:
// "to 1", then (> 2) "halve"; per pad and dim with positive padding:
// "zero its positive padding (low, high, interior)", then, when one of
// them is > 1, "halve them" (rounding down; negative padding stays).
// Every opportunity strictly shrinks something, so none undoes another.
#include <algorithm>
#include <map>
#include <set>

#include "compiler/ir/shape_inference.h"
#include "tools/hlo-reduce/reduce_pass_internal.h"

namespace trench::hlo_reduce {
namespace {

struct Opportunity {
  HloInstruction* source;  // Null: every source dim of size `dim`.
  int64_t dim;
  bool to_one;  // Pads: zero the padding (else halve it).
};

bool IsFreeBroadcastDim(const HloInstruction& i, int64_t d) {
  const auto& map = i.attrs().dimensions;
  return std::find(map.begin(), map.end(), d) == map.end() &&
         !i.shape().is_dynamic_dim(d) && i.shape().dim(d) > 1;
}

int64_t PositivePart(int64_t v) { return std::max<int64_t>(v, 0); }

// The pad amounts after the opportunity (negative amounts stay).
void ShrinkPadding(PaddingDim& p, bool to_zero) {
  auto shrink = [&](int64_t& v) {
    if (v > 0) v = to_zero ? 0 : v / 2;
  };
  shrink(p.lo);
  shrink(p.hi);
  shrink(p.interior);
}

int64_t NewSize(int64_t n, bool to_one) { return to_one ? 1 : (n + 1) / 2; }

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

std::vector<Opportunity> Opportunities(const HloModule& m) {
  std::vector<Opportunity> out;
  std::set<int64_t> sizes;
  for (HloInstruction* i : Sources(m)) {
    for (int64_t d = 0; d < i->shape().rank(); ++d) {
      if (!i->shape().is_dynamic_dim(d)) sizes.insert(i->shape().dim(d));
    }
  }
  for (int64_t n : sizes) {
    if (n > 1) out.push_back({nullptr, n, true});
    if (n > 2) out.push_back({nullptr, n, false});
  }
  for (HloInstruction* i : Sources(m)) {
    for (int64_t d = 0; d < i->shape().rank(); ++d) {
      const int64_t n = i->shape().dim(d);
      if (i->shape().is_dynamic_dim(d) || n <= 1) continue;
      out.push_back({i, d, true});
      if (n > 2) out.push_back({i, d, false});
    }
  }
  for (HloInstruction* i : m.entry_computation()->MakeInstructionPostOrder()) {
    if (i->opcode() == HloOpcode::kBroadcast && i->shape().IsArray()) {
      for (int64_t d = 0; d < i->shape().rank(); ++d) {
        if (!IsFreeBroadcastDim(*i, d)) continue;
        out.push_back({i, d, true});
        if (i->shape().dim(d) > 2) out.push_back({i, d, false});
      }
    } else if (i->opcode() == HloOpcode::kPad) {
      const auto& padding = i->attrs().padding;
      for (int64_t d = 0; d < static_cast<int64_t>(padding.size()); ++d) {
        const PaddingDim& p = padding[d];
        const int64_t most = std::max(
            {PositivePart(p.lo), PositivePart(p.hi), PositivePart(p.interior)});
        if (most == 0) continue;
        out.push_back({i, d, true});
        if (most > 1) out.push_back({i, d, false});
      }
    }
  }
  return out;
}

class ShrinkShapesPass : public ReductionPass {
 public:
  std::string_view name() const override { return "shrink-shapes"; }
  std::string_view description() const override {
    return "shrink dims of parameters (and their inputs), constants and "
           "iotas; users follow by shape inference";
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
    // New dims per source, in post order.
    std::vector<std::pair<HloInstruction*, std::vector<int64_t>>> sources;
    for (HloInstruction* i : Sources(*e.module)) {
      sources.push_back({i, i->shape().dims()});
    }
    std::unordered_map<const HloInstruction*, Shape> changed;
    std::map<HloInstruction*, std::vector<int64_t>> broadcasts;
    std::vector<HloInstruction*> pads;
    for (int64_t k : chosen) {
      const Opportunity& o = ops[k];
      if (o.source != nullptr && o.source->opcode() == HloOpcode::kPad) {
        if (changed.emplace(o.source, o.source->shape()).second) {
          pads.push_back(o.source);
        }
        ShrinkPadding(o.source->mutable_attrs().padding[o.dim], o.to_one);
        continue;
      }
      if (o.source != nullptr && o.source->opcode() == HloOpcode::kBroadcast) {
        auto it = broadcasts.emplace(o.source, o.source->shape().dims()).first;
        it->second[o.dim] = std::min(
            it->second[o.dim], NewSize(o.source->shape().dim(o.dim), o.to_one));
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
            dims[d] = std::min(dims[d], NewSize(shape.dim(d), o.to_one));
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
        Literal& input = e.param_inputs[source->parameter_number()].at(0);
        input = SliceLeadingCorner(input, dims);
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
