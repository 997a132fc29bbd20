#include "triage/fuzz/subgraph.h"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "compiler/ir/collective_groups.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/opcode.h"
#include "compiler/ir/verifier.h"

namespace trench {
namespace {

using CompMap = std::unordered_map<const HloComputation*, HloComputation*>;

// Deep-copies `c` (and, first, everything it calls) into `dst`, once.
HloComputation* CloneComputationInto(const HloComputation& c, HloModule& dst,
                                     CompMap& done) {
  if (auto it = done.find(&c); it != done.end()) return it->second;
  for (const HloInstruction* instr : c.instructions()) {
    for (const HloComputation* callee : instr->called_computations()) {
      if (callee != nullptr) CloneComputationInto(*callee, dst, done);
    }
  }
  auto nc = std::make_unique<HloComputation>(c.name());
  std::unordered_map<const HloInstruction*, HloInstruction*> map;
  for (HloInstruction* instr : c.MakeInstructionPostOrder()) {
    std::vector<HloInstruction*> ops;
    for (HloInstruction* op : instr->operands()) ops.push_back(map.at(op));
    HloInstruction* clone =
        nc->AddInstruction(instr->CloneWithOperands(std::move(ops), ""));
    for (size_t i = 0; i < clone->called_computations().size(); ++i) {
      const HloComputation* callee = clone->called_computations()[i];
      if (callee != nullptr) clone->set_called_computation(i, done.at(callee));
    }
    map[instr] = clone;
  }
  if (c.root_instruction() != nullptr) {
    nc->set_root_instruction(map.at(c.root_instruction()));
  }
  HloComputation* added = dst.AddComputation(std::move(nc));
  done[&c] = added;
  for (HloInstruction* instr : added->instructions()) {
    if (instr->opcode() == HloOpcode::kFusion &&
        !instr->called_computations().empty()) {
      instr->fused_computation()->set_fusion_instruction(instr);
    }
  }
  return added;
}

bool IsScalarConstant(const HloInstruction& i) {
  return i.opcode() == HloOpcode::kConstant && i.shape().IsArray() &&
         i.shape().dims().empty() && i.has_literal();
}

// Nothing to compute: aliases of other values.
bool IsAliasOnly(HloOpcode op) {
  return op == HloOpcode::kParameter || op == HloOpcode::kConstant ||
         op == HloOpcode::kTuple || op == HloOpcode::kGetTupleElement;
}

// A name not in `used` (which it joins), from `base`.
std::string FreshName(const std::string& base,
                      std::unordered_set<std::string>& used) {
  std::string name = base;
  for (int k = 1; used.count(name); ++k) name = base + "." + std::to_string(k);
  used.insert(name);
  return name;
}

// Builds the module computing `piece` (instructions of one computation, in
// its post order). Costs O(size of the new module): names are made unique
// against the new module only.
Subgraph BuildSubgraph(const HloModule& module, const HloComputation& comp,
                       const std::vector<const HloInstruction*>& piece) {
  Subgraph sg;
  sg.computation = comp.name();
  auto m = std::make_unique<HloModule>(module.name() + "_subgraph");
  CompMap done;
  std::unordered_set<const HloInstruction*> in_piece(piece.begin(),
                                                     piece.end());
  auto entry = std::make_unique<HloComputation>("subgraph");
  std::unordered_map<const HloInstruction*, HloInstruction*> map;
  int64_t next_param = 0;
  auto operand_of = [&](const HloInstruction* op) -> HloInstruction* {
    if (auto it = map.find(op); it != map.end()) return it->second;
    HloInstruction* v;
    if (IsScalarConstant(*op)) {
      v = entry->AddInstruction(op->CloneWithOperands({}, ""));
    } else {
      v = entry->AddInstruction(HloInstruction::CreateParameter(
          next_param++, op->shape(), op->name()));
      sg.inputs.push_back(op->name());
    }
    map[op] = v;
    return v;
  };
  for (const HloInstruction* instr : piece) {
    std::vector<HloInstruction*> ops;
    for (const HloInstruction* op : instr->operands()) {
      ops.push_back(operand_of(op));
    }
    HloInstruction* clone =
        entry->AddInstruction(instr->CloneWithOperands(std::move(ops), ""));
    for (size_t i = 0; i < clone->called_computations().size(); ++i) {
      const HloComputation* callee = clone->called_computations()[i];
      if (callee == nullptr) continue;
      clone->set_called_computation(i, CloneComputationInto(*callee, *m, done));
    }
    if (clone->opcode() == HloOpcode::kFusion &&
        !clone->called_computations().empty()) {
      clone->fused_computation()->set_fusion_instruction(clone);
    }
    map[instr] = clone;
    sg.instructions.push_back(instr->name());
  }
  std::vector<HloInstruction*> outputs;
  for (const HloInstruction* instr : piece) {
    bool out = instr == comp.root_instruction() || instr->users().empty();
    for (const HloInstruction* u : instr->users()) {
      out = out || !in_piece.count(u);
    }
    if (out) outputs.push_back(map.at(instr));
  }
  if (outputs.size() == 1) {
    entry->set_root_instruction(outputs[0]);
  } else {
    std::unordered_set<std::string> used;
    for (const HloInstruction* i : entry->instructions())
      used.insert(i->name());
    for (const HloComputation* c : m->computations()) {
      for (const HloInstruction* i : c->instructions()) used.insert(i->name());
    }
    std::vector<Shape> shapes;
    for (const HloInstruction* o : outputs) shapes.push_back(o->shape());
    entry->set_root_instruction(entry->AddInstruction(HloInstruction::Create(
        HloOpcode::kTuple, Shape::Tuple(std::move(shapes)), outputs,
        FreshName("subgraph_outputs", used))));
  }
  std::unordered_set<std::string> comp_names;
  for (const HloComputation* c : m->computations()) {
    comp_names.insert(c->name());
  }
  entry->set_name(FreshName("subgraph", comp_names));
  m->set_entry_computation(m->AddComputation(std::move(entry)));
  sg.verified = VerifyModule(*m);
  sg.module = std::move(m);
  return sg;
}

bool HasDeviceOps(const HloModule& m) {
  for (const HloComputation* c : m.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      if (IsDeviceOp(i->opcode())) return true;
    }
  }
  return false;
}

// Scales `sg` in place to arrays of at most max_elements and, when it has
// device ops, from mesh `trace` to at most max_devices devices; false if
// no scaling works (sg unchanged).
bool ScaleInto(Subgraph& sg, int64_t max_elements, const DeviceMesh& trace,
               int64_t max_devices) {
  if (!HasDeviceOps(*sg.module)) {
    auto scaled = ScaleShapes(*sg.module, max_elements);
    if (!scaled.ok()) return false;
    sg.module = std::move(scaled->module);
    sg.scale_factor = scaled->factor;
    return true;
  }
  const DeviceMesh mesh = fuzz::ScaledMesh(trace, max_devices);
  std::unique_ptr<HloModule> m = sg.module->Clone();
  ScaleConstraints c;
  if (!fuzz::ScaleCollectiveGroups(m.get(), mesh, &c.ratios).ok()) {
    return false;
  }
  c.check = [mesh](const HloModule& scaled) {
    return fuzz::CheckCollectives(scaled, mesh);
  };
  auto scaled = ScaleShapes(*m, max_elements, c);
  if (!scaled.ok()) return false;
  sg.module = std::move(scaled->module);
  sg.scale_factor = scaled->factor;
  sg.mesh = mesh;
  return true;
}

// Adds the subgraph of `piece` scaled within max_elements to `result`;
// if it cannot be scaled (or does not verify), each half of the piece (in
// post order) recursively; a single instruction that cannot be scaled is
// dropped and counted in result.unscalable. Pieces with nothing to
// compute are left out.
void CutScaled(const HloModule& module, const HloComputation& comp,
               const std::vector<const HloInstruction*>& piece,
               const SubgraphOptions& options, const DeviceMesh& trace,
               CutResult& result) {
  const int64_t max_elements = options.max_elements;
  if (std::none_of(piece.begin(), piece.end(), [](const HloInstruction* i) {
        return !IsAliasOnly(i->opcode());
      })) {
    return;
  }
  Subgraph sg = BuildSubgraph(module, comp, piece);
  if (sg.verified.ok() &&
      ScaleInto(sg, max_elements, trace, options.max_devices)) {
    result.subgraphs.push_back(std::move(sg));
    return;
  }
  if (piece.size() == 1) {
    ++result.unscalable;
    return;
  }
  const size_t half = piece.size() / 2;
  CutScaled(module, comp, {piece.begin(), piece.begin() + half}, options, trace,
            result);
  CutScaled(module, comp, {piece.begin() + half, piece.end()}, options, trace,
            result);
}

// Computations cut separately: the entry and control-flow bodies.
std::vector<const HloComputation*> CutComputations(const HloModule& module) {
  std::unordered_set<const HloComputation*> control;
  for (const HloComputation* caller : module.computations()) {
    for (const HloInstruction* i : caller->instructions()) {
      const HloOpcode op = i->opcode();
      if (op != HloOpcode::kWhile && op != HloOpcode::kCall &&
          op != HloOpcode::kConditional) {
        continue;
      }
      for (const HloComputation* callee : i->called_computations()) {
        control.insert(callee);
      }
    }
  }
  std::vector<const HloComputation*> out;
  for (const HloComputation* c : module.MakeComputationPostOrder()) {
    if (c != module.entry_computation() && control.count(c)) out.push_back(c);
  }
  out.push_back(module.entry_computation());
  return out;
}

// Union-find over post-order positions.
int64_t Find(std::vector<int64_t>& parent, int64_t x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

}  // namespace

StatusOr<CutResult> CutSubgraphs(const HloModule& module,
                                 const CanRunPredicate& can_run,
                                 const SubgraphOptions& options) {
  if (module.entry_computation() == nullptr) {
    return InvalidArgument("subgraph: module has no entry computation");
  }
  CutResult result;
  const DeviceMesh trace = fuzz::TraceMesh(module);
  for (const HloComputation* comp : CutComputations(module)) {
    const std::vector<HloInstruction*> order = comp->MakeInstructionPostOrder();
    std::unordered_map<const HloInstruction*, int64_t> pos;
    for (size_t i = 0; i < order.size(); ++i) pos[order[i]] = i;
    std::vector<bool> accepted(order.size(), false);
    std::vector<int64_t> parent(order.size());
    std::iota(parent.begin(), parent.end(), 0);
    for (size_t i = 0; i < order.size(); ++i) {
      const HloInstruction* instr = order[i];
      // Parameters are inputs; scalar constants are cloned where used.
      if (instr->opcode() == HloOpcode::kParameter ||
          IsScalarConstant(*instr)) {
        continue;
      }
      ++result.instructions;
      bool ok = can_run(*instr);
      if (instr->opcode() == HloOpcode::kGetTupleElement) {
        ok = ok && accepted[pos.at(instr->operand(0))];
      }
      if (ok) ++result.accepted;
      accepted[i] = ok;
      if (!ok) continue;
      for (const HloInstruction* op : instr->operands()) {
        const int64_t j = pos.at(op);
        if (accepted[j]) parent[Find(parent, i)] = Find(parent, j);
      }
    }
    std::unordered_map<int64_t, std::vector<const HloInstruction*>> comps;
    std::vector<int64_t> roots;
    for (size_t i = 0; i < order.size(); ++i) {
      if (!accepted[i]) continue;
      const int64_t r = Find(parent, i);
      if (!comps.count(r)) roots.push_back(r);
      comps[r].push_back(order[i]);
    }
    for (int64_t r : roots) {
      const std::vector<const HloInstruction*>& all = comps[r];
      const size_t step = options.max_instructions > 0
                              ? static_cast<size_t>(options.max_instructions)
                              : all.size();
      for (size_t b = 0; b < all.size(); b += step) {
        std::vector<const HloInstruction*> piece(
            all.begin() + b, all.begin() + std::min(all.size(), b + step));
        const bool computes = std::any_of(
            piece.begin(), piece.end(),
            [](const HloInstruction* i) { return !IsAliasOnly(i->opcode()); });
        if (!computes) continue;
        if (options.max_elements <= 0) {
          result.subgraphs.push_back(BuildSubgraph(module, *comp, piece));
          Subgraph& sg = result.subgraphs.back();
          if (HasDeviceOps(*sg.module)) sg.mesh = trace;
        } else {
          CutScaled(module, *comp, piece, options, trace, result);
        }
      }
    }
  }
  return result;
}

std::unique_ptr<HloModule> IsolateInstruction(const HloInstruction& instr) {
  const HloComputation& comp = *instr.parent();
  Subgraph sg = BuildSubgraph(*comp.parent(), comp, {&instr});
  return std::move(sg.module);
}

bool MaxElementsWithin(const HloInstruction& instr, int64_t max_elements) {
  bool ok = true;
  auto check = [&](const Shape& shape) {
    ForEachLeafShape(shape, [&](const Shape& s) {
      if (s.IsArray() && s.element_count() > max_elements) ok = false;
    });
  };
  check(instr.shape());
  for (const HloInstruction* op : instr.operands()) check(op->shape());
  return ok;
}

}  // namespace trench
