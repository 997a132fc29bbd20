#include "compiler/ir/verifier.h"

#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "compiler/ir/shape_inference.h"

namespace trench {
namespace {

std::string Num(int64_t v) { return std::to_string(v); }

// The module's computations, each with its index in module.computations().
using ComputationIndex = std::unordered_map<const HloComputation*, size_t>;

// "in computation %c: what", prefixed with "LINE:COL: " of `at` when the
// parser recorded where `at` was written.
Status InComputation(const HloComputation& comp, const std::string& what,
                     const HloInstruction* at = nullptr) {
  std::string message = "in computation %" + comp.name() + ": " + what;
  if (at != nullptr && at->source_location().known()) {
    message = at->source_location().ToString() + ": " + message;
  }
  return InvalidArgument(message);
}

Status InInstruction(const HloComputation& comp, const HloInstruction& instr,
                     const std::string& what) {
  return InComputation(comp,
                       "%" + instr.name() + ": " +
                           std::string(OpcodeName(instr.opcode())) + " " + what,
                       &instr);
}

Status CheckComputationNames(const std::vector<HloComputation*>& all) {
  // Views of names the module owns; nothing changes them meanwhile.
  std::unordered_set<std::string_view> names;
  names.reserve(all.size());
  for (const HloComputation* comp : all) {
    if (!names.insert(comp->name()).second) {
      return InvalidArgument("computation name %" + comp->name() +
                             " is used twice");
    }
  }
  return Status::Ok();
}

// Edges of one instruction: parent, operands, control predecessors, callees.
Status CheckEdges(const HloComputation& comp, const HloInstruction& instr,
                  const ComputationIndex& comps) {
  if (instr.parent() != &comp) {
    return InInstruction(comp, instr,
                         "does not record this computation as "
                         "its parent");
  }
  const int arity = OpcodeArity(instr.opcode());
  if (arity != kVariadic && instr.operand_count() != arity) {
    return InInstruction(comp, instr,
                         "expects " + Num(arity) + " operand(s), has " +
                             Num(instr.operand_count()));
  }
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    const HloInstruction* op = instr.operand(i);
    if (op == nullptr) {
      return InInstruction(comp, instr, "operand " + Num(i) + " is null");
    }
    if (op->parent() != &comp) {
      return InInstruction(comp, instr,
                           "operand " + Num(i) + " %" + op->name() +
                               " is not in this computation");
    }
  }
  for (const HloInstruction* p : instr.control_predecessors()) {
    if (p == nullptr || p->parent() != &comp) {
      return InInstruction(comp, instr,
                           "has a control predecessor outside "
                           "this computation");
    }
  }
  for (const HloComputation* callee : instr.called_computations()) {
    if (callee == nullptr || comps.count(callee) == 0) {
      return InInstruction(comp, instr,
                           "calls a computation that is not in "
                           "the module");
    }
  }
  return Status::Ok();
}

Status CheckParameters(const HloComputation& comp) {
  std::vector<const HloInstruction*> params;
  for (const HloInstruction* instr : comp.instructions()) {
    if (instr->opcode() == HloOpcode::kParameter) params.push_back(instr);
  }
  std::vector<bool> seen(params.size(), false);
  for (const HloInstruction* p : params) {
    const int64_t n = p->parameter_number();
    if (n < 0 || n >= static_cast<int64_t>(params.size())) {
      return InInstruction(comp, *p,
                           "number " + Num(n) +
                               " is out of range: the computation "
                               "has " +
                               Num(params.size()) + " parameters");
    }
    if (seen[n]) {
      return InInstruction(comp, *p, "number " + Num(n) + " is used twice");
    }
    seen[n] = true;
  }
  return Status::Ok();
}

// A call edge: the calling instruction and the computation it calls.
using Call = std::pair<const HloInstruction*, const HloComputation*>;

// The structure of one computation, in one walk over its instructions
// while they are in cache: its root, each instruction's name (unique in
// the module: `instr_names`) and edges, its parameter numbers and that
// its edges form no cycle. Appends its calls to `calls`.
Status CheckComputation(const HloComputation& comp,
                        const ComputationIndex& comps,
                        std::unordered_set<std::string_view>* instr_names,
                        std::vector<Call>* calls) {
  const HloInstruction* root = comp.root_instruction();
  if (root == nullptr) return InComputation(comp, "has no root instruction");
  if (root->parent() != &comp) {
    return InComputation(
        comp, "root %" + root->name() + " is not in this computation");
  }
  for (const HloInstruction* instr : comp.instructions()) {
    if (!instr_names->insert(instr->name()).second) {
      return InComputation(
          comp,
          "instruction name %" + instr->name() + " is used twice in the module",
          instr);
    }
    RETURN_IF_ERROR(CheckEdges(comp, *instr, comps));
    for (const HloComputation* callee : instr->called_computations()) {
      calls->push_back({instr, callee});
    }
  }
  RETURN_IF_ERROR(CheckParameters(comp));
  if (const HloInstruction* at = comp.FindCycle()) {
    return InInstruction(comp, *at, "is part of a cycle");
  }
  return Status::Ok();
}

// Calls must not recurse: DFS over the call graph, whose edges are each
// computation's calls (calls[i] for all[i], as CheckComputation found them).
Status CheckCallGraphAcyclic(const std::vector<HloComputation*>& all,
                             const ComputationIndex& index,
                             const std::vector<std::vector<Call>>& calls) {
  enum Color : uint8_t { kWhite, kGrey, kBlack };
  std::vector<Color> color(all.size(), kWhite);
  // Per computation on the path: the next of its calls to follow.
  std::vector<std::pair<size_t, size_t>> stack;
  for (size_t start = 0; start < all.size(); ++start) {
    if (color[start] != kWhite) continue;
    color[start] = kGrey;
    stack.push_back({start, 0});
    while (!stack.empty()) {
      auto& [c, next] = stack.back();
      if (next == calls[c].size()) {
        color[c] = kBlack;
        stack.pop_back();
        continue;
      }
      const auto [caller, callee] = calls[c][next++];
      const size_t k = index.at(callee);  // CheckEdges: in the module.
      if (color[k] == kGrey) {
        return InComputation(
            *all[c], "calls %" + callee->name() + " recursively", caller);
      }
      if (color[k] == kWhite) {
        color[k] = kGrey;
        stack.push_back({k, 0});
      }
    }
  }
  return Status::Ok();
}

bool HasNegativeDim(const Shape& shape) {
  bool negative = false;
  ForEachLeafShape(shape, [&](const Shape& s) {
    for (int64_t d : s.dims()) negative |= d < 0;
  });
  return negative;
}

// Shape::Compatible, except that floating-point element types may differ.
bool CompatibleIgnoringFpPrecision(const Shape& a, const Shape& b) {
  if (a.IsTuple() || b.IsTuple()) {
    if (!a.IsTuple() || !b.IsTuple() || a.tuple_size() != b.tuple_size()) {
      return false;
    }
    for (int64_t i = 0; i < a.tuple_size(); ++i) {
      if (!CompatibleIgnoringFpPrecision(a.tuple_shape(i), b.tuple_shape(i))) {
        return false;
      }
    }
    return true;
  }
  const bool same_type =
      a.element_type() == b.element_type() ||
      (IsFloat(a.element_type()) && IsFloat(b.element_type()));
  return same_type && a.SameDimensions(b);
}

Status CheckShape(const HloComputation& comp, const HloInstruction& instr,
                  VerifyStats* stats, const VerifyOptions& options) {
  if (HasNegativeDim(instr.shape())) {
    return InInstruction(comp, instr,
                         "declared shape " + instr.shape().ToString(false) +
                             " has a negative dimension");
  }
  if (!HasShapeInferenceRule(instr.opcode())) {
    if (stats) {
      stats->trusted.push_back("%" + instr.name() + " (" +
                               std::string(OpcodeName(instr.opcode())) + ")");
    }
    return Status::Ok();
  }
  StatusOr<Shape> inferred = InferShape(instr);
  if (!inferred.ok()) {
    return InComputation(comp, inferred.status().message(), &instr);
  }
  const bool compatible =
      options.allow_mixed_precision
          ? CompatibleIgnoringFpPrecision(instr.shape(), *inferred)
          : instr.shape().Compatible(*inferred);
  if (!compatible) {
    return InInstruction(comp, instr,
                         "declared shape " + instr.shape().ToString(false) +
                             " is not compatible with inferred "
                             "shape " +
                             inferred->ToString(false));
  }
  return Status::Ok();
}

}  // namespace

Status VerifyModule(const HloModule& module, VerifyStats* stats,
                    const VerifyOptions& options) {
  const std::vector<HloComputation*> all = module.computations();
  ComputationIndex comps;
  comps.reserve(all.size());
  for (size_t i = 0; i < all.size(); ++i) comps.emplace(all[i], i);
  if (module.entry_computation() == nullptr) {
    return InvalidArgument("module " + module.name() +
                           " has no entry computation");
  }
  if (comps.count(module.entry_computation()) == 0) {
    return InvalidArgument("module " + module.name() +
                           ": the entry computation is not in the module");
  }
  RETURN_IF_ERROR(CheckComputationNames(all));
  std::unordered_set<std::string_view> instr_names;
  instr_names.reserve(module.instruction_count());
  std::vector<std::vector<Call>> calls(all.size());
  for (size_t i = 0; i < all.size(); ++i) {
    RETURN_IF_ERROR(CheckComputation(*all[i], comps, &instr_names, &calls[i]));
  }
  RETURN_IF_ERROR(CheckCallGraphAcyclic(all, comps, calls));
  for (const HloComputation* comp : all) {
    for (const HloInstruction* instr : comp->instructions()) {
      if (stats) ++stats->instructions;
      RETURN_IF_ERROR(CheckShape(*comp, *instr, stats, options));
    }
  }
  return Status::Ok();
}

}  // namespace trench
