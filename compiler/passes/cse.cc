#include "compiler/passes/cse.h"

#include <functional>
#include <unordered_map>
#include <unordered_set>

#include "compiler/passes/pass_util.h"

namespace trench {
namespace {

// The raw attributes in order, "metadata" skipped, compared in place
// (no copies: CSE compares every candidate pair that hashes alike).
bool RawAttrsEqualIgnoringMetadata(const HloInstruction& a,
                                   const HloInstruction& b) {
  const auto& x = a.attrs().raw;
  const auto& y = b.attrs().raw;
  auto skip = [](const auto& attrs, size_t i) {
    while (i < attrs.size() && attrs[i].first == "metadata") ++i;
    return i;
  };
  size_t i = skip(x, 0), j = skip(y, 0);
  for (; i < x.size() && j < y.size(); i = skip(x, i + 1), j = skip(y, j + 1)) {
    if (x[i] != y[j]) return false;
  }
  return i == x.size() && j == y.size();
}

// Element types and dims, through tuples: what equal shapes share (the
// layout is left to the comparison), without printing the shape.
template <typename Mix>
void MixShape(const Shape& shape, Mix& mix) {
  if (shape.IsTuple()) {
    mix(shape.tuple_shapes().size());
    for (const Shape& s : shape.tuple_shapes()) MixShape(s, mix);
    return;
  }
  mix(static_cast<size_t>(shape.element_type()));
  for (int64_t d : shape.dims()) mix(static_cast<size_t>(d));
}

bool Identical(const HloInstruction& a, const HloInstruction& b) {
  return a.operands() == b.operands() && a.IdenticalIgnoringOperands(b) &&
         RawAttrsEqualIgnoringMetadata(a, b);
}

size_t HashOf(const HloInstruction& instr) {
  size_t h = std::hash<int>()(static_cast<int>(instr.opcode()));
  auto mix = [&h](size_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  };
  for (const HloInstruction* op : instr.operands()) {
    mix(std::hash<const void*>()(op));
  }
  MixShape(instr.shape(), mix);
  if (instr.opcode() == HloOpcode::kConstant && instr.has_literal()) {
    const auto bytes = instr.literal().bytes();
    mix(std::hash<std::string_view>()(std::string_view(
        reinterpret_cast<const char*>(bytes.data()), bytes.size())));
  }
  return h;
}

bool IsCandidate(const HloInstruction& instr,
                 const std::unordered_set<const HloInstruction*>& ctrl) {
  if (instr.opcode() == HloOpcode::kParameter || HasSideEffect(instr) ||
      !instr.control_predecessors().empty() || ctrl.count(&instr)) {
    return false;
  }
  if (instr.opcode() == HloOpcode::kConstant && !instr.has_literal()) {
    return false;
  }
  // Fusion instructions own their fused computation; two fusions never
  // share one, so comparing called computations by identity keeps them
  // apart anyway.
  return true;
}

StatusOr<bool> RunOnComputation(HloComputation* comp, PassContext* ctx) {
  std::unordered_set<const HloInstruction*> ctrl;
  for (const HloInstruction* i : comp->instructions()) {
    for (const HloInstruction* p : i->control_predecessors()) ctrl.insert(p);
  }
  // Post order: operands are merged before their users are compared, so
  // whole identical expressions collapse in one sweep.
  std::unordered_multimap<size_t, HloInstruction*> seen;
  bool changed = false;
  for (HloInstruction* instr : comp->MakeInstructionPostOrder()) {
    if (!IsCandidate(*instr, ctrl)) continue;
    const size_t h = HashOf(*instr);
    HloInstruction* match = nullptr;
    auto [lo, hi] = seen.equal_range(h);
    for (auto it = lo; it != hi; ++it) {
      if (Identical(*it->second, *instr)) {
        match = it->second;
        break;
      }
    }
    if (match == nullptr) {
      seen.emplace(h, instr);
      continue;
    }
    if (!ctx->ShouldRewrite("cse", "merge-identical", instr->name())) {
      seen.emplace(h, instr);
      continue;
    }
    RETURN_IF_ERROR(ReplaceInstruction(instr, match));
    changed = true;
  }
  return changed;
}

}  // namespace

StatusOr<bool> CommonSubexpressionElimination::Run(HloModule* module,
                                                   PassContext* ctx) {
  bool changed = false;
  for (HloComputation* comp : module->computations()) {
    ASSIGN_OR_RETURN(bool c, RunOnComputation(comp, ctx));
    changed |= c;
  }
  return changed;
}

}  // namespace trench
