#include "compiler/passes/layout_assignment.h"

#include <optional>

#include "compiler/ir/hlo_parser.h"
#include "compiler/passes/pass_util.h"

namespace trench {
namespace {

constexpr std::string_view kPass = "layout-assignment";

struct EntryLayout {
  std::vector<Shape> parameters;
  Shape result;
};

// Parses "{(p0, p1, ...)->result}". nullopt when the header has no such
// attribute.
StatusOr<std::optional<EntryLayout>> ParseEntryLayout(const HloModule& m) {
  for (const auto& [key, value] : m.header_attrs()) {
    if (key != "entry_computation_layout") continue;
    std::string_view v = value;
    if (v.size() < 2 || v.front() != '{' || v.back() != '}') {
      return InvalidArgument("entry_computation_layout: expected {...}, got " +
                             value);
    }
    v = v.substr(1, v.size() - 2);
    // The arrow at nesting depth 0 separates parameters and result.
    int depth = 0;
    size_t arrow = std::string_view::npos;
    for (size_t i = 0; i + 1 < v.size(); ++i) {
      if (v[i] == '(' || v[i] == '{' || v[i] == '[') ++depth;
      if (v[i] == ')' || v[i] == '}' || v[i] == ']') --depth;
      if (depth == 0 && v[i] == '-' && v[i + 1] == '>') {
        arrow = i;
        break;
      }
    }
    if (arrow == std::string_view::npos) {
      return InvalidArgument("entry_computation_layout: no '->' in " + value);
    }
    StatusOr<Shape> params = ParseShape(v.substr(0, arrow));
    StatusOr<Shape> result = ParseShape(v.substr(arrow + 2));
    if (!params.ok() || !result.ok() || !params->IsTuple()) {
      return InvalidArgument("entry_computation_layout does not parse: " +
                             value);
    }
    return std::optional<EntryLayout>(
        EntryLayout{params->tuple_shapes(), *result});
  }
  return std::optional<EntryLayout>();
}

std::vector<int64_t> DefaultMinorToMajor(int64_t rank) {
  std::vector<int64_t> m2m;
  for (int64_t d = rank - 1; d >= 0; --d) m2m.push_back(d);
  return m2m;
}

// Fills missing layouts of `shape` from `source` (same structure) or with
// the default. Returns whether anything was added.
bool FillLayouts(Shape* shape, const Shape* source) {
  if (shape->IsTuple()) {
    bool changed = false;
    for (int64_t i = 0; i < shape->tuple_size(); ++i) {
      const Shape* src = source && source->IsTuple() && i < source->tuple_size()
                             ? &source->tuple_shape(i)
                             : nullptr;
      changed |= FillLayouts(&shape->mutable_tuple_shapes()[i], src);
    }
    return changed;
  }
  if (!shape->IsArray() || shape->has_layout()) return false;
  if (source && source->IsArray() && source->has_layout() &&
      source->rank() == shape->rank()) {
    shape->set_layout(*source->layout());
  } else {
    shape->set_layout(Layout{DefaultMinorToMajor(shape->rank()), ""});
  }
  return true;
}

bool NeedsLayout(const Shape& shape) {
  Shape copy = shape;
  return FillLayouts(&copy, nullptr);
}

// Whether both are arrays with layouts that differ.
bool LayoutsDiffer(const Shape& have, const Shape& want) {
  return have.IsArray() && want.IsArray() && have.has_layout() &&
         want.has_layout() && have.Compatible(want) &&
         *have.layout() != *want.layout();
}

StatusOr<bool> FixEntryParameters(HloComputation* entry, const EntryLayout& el,
                                  NameUniquer* names, PassContext* ctx) {
  bool changed = false;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    HloInstruction* p = entry->parameter_instruction(i);
    if (p == nullptr) continue;
    const Shape& want = el.parameters[i];
    if (NeedsLayout(p->shape())) {
      if (!ctx->ShouldRewrite(kPass, "assign-entry-layout", p->name()))
        continue;
      FillLayouts(p->mutable_shape(), &want);
      changed = true;
    } else if (LayoutsDiffer(p->shape(), want)) {
      if (!ctx->ShouldRewrite(kPass, "parameter-layout-copy", p->name())) {
        continue;
      }
      const Shape old = p->shape();
      p->mutable_shape()->set_layout(*want.layout());
      HloInstruction* copy = AddNew(entry, names, HloOpcode::kCopy, old, {p},
                                    p->name() + ".relayout");
      std::vector<HloInstruction*> users = p->users();
      for (HloInstruction* u : users) {
        if (u == copy) continue;
        for (int64_t k = 0; k < u->operand_count(); ++k) {
          if (u->operand(k) == p) u->ReplaceOperandWith(k, copy);
        }
      }
      if (entry->root_instruction() == p) entry->set_root_instruction(copy);
      changed = true;
    }
  }
  return changed;
}

StatusOr<bool> FixEntryResult(HloComputation* entry, const EntryLayout& el,
                              NameUniquer* names, PassContext* ctx) {
  HloInstruction* root = entry->root_instruction();
  if (NeedsLayout(root->shape())) {
    if (!ctx->ShouldRewrite(kPass, "assign-entry-layout", root->name())) {
      return false;
    }
    Shape shape = root->shape();
    FillLayouts(&shape, &el.result);
    SetShapeAndLiteralLayout(root, std::move(shape));
    return true;
  }
  if (!LayoutsDiffer(root->shape(), el.result) ||
      !ctx->ShouldRewrite(kPass, "result-layout-copy", root->name())) {
    return false;
  }
  Shape shape = root->shape();
  shape.set_layout(*el.result.layout());
  entry->set_root_instruction(AddNew(entry, names, HloOpcode::kCopy, shape,
                                     {root}, root->name() + ".relayout"));
  return true;
}

// Why `el` cannot be used for the entry computation, or "" when it can.
std::string MismatchWithEntry(const EntryLayout& el,
                              const HloComputation& entry) {
  if (static_cast<int64_t>(el.parameters.size()) != entry.num_parameters()) {
    return "it has " + std::to_string(el.parameters.size()) +
           " parameters, the entry computation " +
           std::to_string(entry.num_parameters());
  }
  if (!el.result.Compatible(entry.root_instruction()->shape())) {
    return "its result is " + el.result.ToString();
  }
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    const HloInstruction* p = entry.parameter_instruction(i);
    if (p && !el.parameters[i].Compatible(p->shape())) {
      return "its parameter " + std::to_string(i) + " is " +
             el.parameters[i].ToString();
    }
  }
  return "";
}

}  // namespace

StatusOr<bool> LayoutAssignment::Run(HloModule* module, PassContext* ctx) {
  HloComputation* entry = module->entry_computation();
  StatusOr<std::optional<EntryLayout>> parsed = ParseEntryLayout(*module);
  std::optional<EntryLayout> el;
  if (!parsed.ok()) {
    ctx->Log("layout-assignment: ignoring entry_computation_layout: " +
             parsed.status().message());
  } else if (*parsed) {
    const std::string why = MismatchWithEntry(**parsed, *entry);
    if (why.empty()) {
      el = std::move(*parsed);
    } else {
      ctx->Log("layout-assignment: ignoring entry_computation_layout: " + why);
    }
  }
  NameUniquer names(*module);
  bool changed = false;
  if (el) {
    ASSIGN_OR_RETURN(bool c, FixEntryParameters(entry, *el, &names, ctx));
    changed |= c;
    ASSIGN_OR_RETURN(c, FixEntryResult(entry, *el, &names, ctx));
    changed |= c;
  }
  for (HloComputation* comp : module->computations()) {
    for (HloInstruction* instr : comp->instructions()) {
      if (!NeedsLayout(instr->shape()) ||
          !ctx->ShouldRewrite(kPass, "assign-default-layout", instr->name())) {
        continue;
      }
      Shape shape = instr->shape();
      FillLayouts(&shape, nullptr);
      SetShapeAndLiteralLayout(instr, std::move(shape));
      changed = true;
    }
  }
  return changed;
}

}  // namespace trench
