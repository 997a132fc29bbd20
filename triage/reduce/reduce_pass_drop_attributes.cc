// drop-attributes: attributes and metadata that rarely matter go, one
// opportunity each, in this order:
//   * per header attribute of the module (entry_computation_layout,
//     is_scheduled, ...);
//   * one: every layout that is the default ({rank-1,...,0}) anywhere;
//   * per instruction (computations in module order, post order): each
//     present key of kDroppableKeys (metadata, sharding, ...), a
//     non-default layout (to none, i.e. the default), a non-default
//     precision_config (to DEFAULT), control predecessors.
#include <algorithm>
#include <array>

#include "triage/reduce/reduce_pass_internal.h"

namespace trench::hlo_reduce {
namespace {

constexpr std::array<const char*, 9> kDroppableKeys = {
    "metadata",
    "frontend_attributes",
    "sharding",
    "backend_config",
    "statistics",
    "parameter_replication",
    "output_to_operand_aliasing",
    "schedule",
    "result_accuracy"};

enum class Kind {
  kHeader,
  kDefaultLayouts,
  kRawKey,
  kLayout,
  kPrecision,
  kControl
};

struct Opportunity {
  Kind kind;
  HloInstruction* instr = nullptr;
  std::string key;  // Header or raw attribute key.
};

bool IsDefaultLayout(const Shape& s) {
  return !s.has_layout() ||
         (s.layout()->tail.empty() &&
          s.layout()->minor_to_major ==
              Shape(s.element_type(), s.dims()).minor_to_major());
}

// Some leaf has a layout that is (`is_default`) or is not the default.
bool HasLayout(const Shape& shape, bool is_default) {
  bool found = false;
  ForEachLeafShape(shape, [&](const Shape& s) {
    if (!s.IsArray() || !s.has_layout()) return;
    found = found || IsDefaultLayout(s) == is_default;
  });
  return found;
}

void ClearDefaultLayouts(Shape& shape) {
  if (shape.IsTuple()) {
    for (Shape& s : shape.mutable_tuple_shapes()) ClearDefaultLayouts(s);
  } else if (shape.IsArray() && IsDefaultLayout(shape)) {
    shape.clear_layout();
  }
}

std::vector<Opportunity> AttributeOpportunities(const HloModule& m) {
  std::vector<Opportunity> out;
  for (const auto& [key, value] : m.header_attrs()) {
    out.push_back({Kind::kHeader, nullptr, key});
  }
  bool default_layouts = false;
  for (const HloComputation* comp : m.computations()) {
    for (const HloInstruction* i : comp->instructions()) {
      default_layouts = default_layouts || HasLayout(i->shape(), true);
    }
  }
  if (default_layouts) out.push_back({Kind::kDefaultLayouts, nullptr, ""});
  for (const HloComputation* comp : m.computations()) {
    for (HloInstruction* i : comp->MakeInstructionPostOrder()) {
      for (const char* key : kDroppableKeys) {
        if (i->attrs().FindRaw(key) != nullptr) {
          out.push_back({Kind::kRawKey, i, key});
        }
      }
      if (HasLayout(i->shape(), false)) out.push_back({Kind::kLayout, i, ""});
      const auto& precision = i->attrs().operand_precision;
      if (std::any_of(precision.begin(), precision.end(),
                      [](Precision p) { return p != Precision::kDefault; })) {
        out.push_back({Kind::kPrecision, i, ""});
      }
      if (!i->control_predecessors().empty()) {
        out.push_back({Kind::kControl, i, ""});
      }
    }
  }
  return out;
}

void ApplyOne(HloModule& m, const Opportunity& o) {
  switch (o.kind) {
    case Kind::kHeader: {
      auto& h = m.mutable_header_attrs();
      h.erase(std::remove_if(h.begin(), h.end(),
                             [&](const auto& kv) { return kv.first == o.key; }),
              h.end());
      return;
    }
    case Kind::kDefaultLayouts:
      for (HloComputation* comp : m.computations()) {
        for (HloInstruction* i : comp->instructions()) {
          ClearDefaultLayouts(*i->mutable_shape());
        }
      }
      return;
    case Kind::kRawKey: {
      auto& raw = o.instr->mutable_attrs().raw;
      raw.erase(
          std::remove_if(raw.begin(), raw.end(),
                         [&](const auto& kv) { return kv.first == o.key; }),
          raw.end());
      return;
    }
    case Kind::kLayout:
      o.instr->mutable_shape()->clear_layout();
      return;
    case Kind::kPrecision:
      o.instr->mutable_attrs().operand_precision.clear();  // All DEFAULT.
      return;
    case Kind::kControl:
      o.instr->DropControlEdges();
      return;
  }
}

class DropAttributesPass : public OpportunityListPass<Opportunity> {
 public:
  DropAttributesPass()
      : OpportunityListPass(
            "drop-attributes",
            "drop metadata, sharding, backend_config, ..., header attributes, "
            "layouts, precision_config, control dependencies") {}

 private:
  std::vector<Opportunity> Opportunities(const hlo_diff::Case&,
                                         const EditableCase& e) const override {
    return AttributeOpportunities(*e.module);
  }

  StatusOr<hlo_diff::Case> ApplyChosen(
      const hlo_diff::Case& c, EditableCase& e,
      const std::vector<Opportunity>& chosen) const override {
    for (const Opportunity& o : chosen) ApplyOne(*e.module, o);
    return FinishCase(e, c);
  }
};

}  // namespace

std::unique_ptr<ReductionPass> MakeDropAttributesPass() {
  return std::make_unique<DropAttributesPass>();
}

}  // namespace trench::hlo_reduce
