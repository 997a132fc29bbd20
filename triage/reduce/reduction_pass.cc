// The pass registry (reduction_passes.def), MeasureCase and
// ValidateCandidate.
#include "triage/reduce/reduction_pass.h"

#include <algorithm>

#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_parser.h"
#include "triage/reduce/reduce_pass_internal.h"

namespace trench::hlo_reduce {

std::vector<std::unique_ptr<ReductionPass>> AllReductionPasses() {
  std::vector<std::unique_ptr<ReductionPass>> passes;
#define X(factory) passes.push_back(factory());
#include "triage/reduce/reduction_passes.def"
#undef X
  return passes;
}

StatusOr<std::vector<std::unique_ptr<ReductionPass>>> ReductionPassesNamed(
    std::string_view names) {
  if (names.empty() || names == "all") return AllReductionPasses();
  std::vector<std::unique_ptr<ReductionPass>> out;
  size_t pos = 0;
  while (pos <= names.size()) {
    size_t comma = names.find(',', pos);
    if (comma == std::string_view::npos) comma = names.size();
    const std::string_view name = names.substr(pos, comma - pos);
    pos = comma + 1;
    std::unique_ptr<ReductionPass> found;
    for (auto& p : AllReductionPasses()) {
      if (p->name() == name) found = std::move(p);
    }
    if (found == nullptr) {
      std::string known;
      for (const auto& p : AllReductionPasses()) {
        known += (known.empty() ? "" : ", ") + std::string(p->name());
      }
      return InvalidArgument("unknown reduction pass '" + std::string(name) +
                             "' (known: " + known + ")");
    }
    out.push_back(std::move(found));
  }
  return out;
}

CaseSize MeasureCase(const hlo_diff::Case& c) {
  CaseSize size;
  size.text_bytes = static_cast<int64_t>(c.module_text.size());
  StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(c.module_text);
  if (!m.ok()) return size;
  for (const HloComputation* comp : (*m)->computations()) {
    for (const HloInstruction* i : comp->instructions()) {
      ++size.instructions;
      ForEachLeafShape(i->shape(), [&](const Shape& s) {
        if (s.IsArray()) size.elements += s.element_count();
      });
    }
  }
  // Every device of an SPMD case holds its arrays.
  size.elements *= std::max<int64_t>(1, c.mesh.size());
  return size;
}

namespace {

// The collectives' shape rules ValidateCandidate checks (see its comment).
Status CollectiveShapesHold(const HloModule& module) {
  for (const HloComputation* comp : module.computations()) {
    for (const HloInstruction* i : comp->instructions()) {
      const HloOpcode op = i->opcode();
      // All-reduce and all-to-all have shape rules: the verifier checks
      // them.
      const bool same = op == HloOpcode::kCollectivePermute;
      const bool along =
          op == HloOpcode::kAllGather || op == HloOpcode::kReduceScatter;
      if (!same && !along) continue;
      std::vector<Shape> results;
      if (i->shape().IsTuple()) {
        results = i->shape().tuple_shapes();
      } else {
        results.push_back(i->shape());
      }
      // Operand and result leaves pair up (else a form left to the target).
      if (results.size() != i->operands().size()) continue;
      const std::vector<int64_t>& dims = i->attrs().dimensions;
      for (size_t k = 0; k < results.size(); ++k) {
        const Shape& in = i->operand(k)->shape();
        const Shape& out = results[k];
        if (!in.IsArray() || !out.IsArray()) continue;
        bool ok =
            in.element_type() == out.element_type() && in.rank() == out.rank();
        for (int64_t d = 0; ok && d < in.rank(); ++d) {
          const bool free = along && dims.size() == 1 && dims[0] == d;
          ok = free || in.dims()[d] == out.dims()[d];
        }
        if (!ok) {
          return InvalidArgument(
              "%" + i->name() + ": " + std::string(OpcodeName(op)) + " of " +
              in.ToString(false) + " cannot give " + out.ToString(false));
        }
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Status ValidateCandidate(const hlo_diff::Case& c) {
  ASSIGN_OR_RETURN(auto module,
                   hlo_diff::ParseCaseModule(c.module_text, "candidate"));
  if (c.mesh.size() > 1) {
    RETURN_IF_ERROR(hlo_diff::DeviceArguments(*module, c).status());
    return CollectiveShapesHold(*module);
  }
  return hlo_diff::CheckInputs(*module, c.inputs);
}

}  // namespace trench::hlo_reduce
