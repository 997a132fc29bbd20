#include "compiler/codegen/buffer_plan.h"

#include <algorithm>
#include <cctype>
#include <string_view>
#include <unordered_set>

#include "compiler/ir/dtype.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {
namespace {

// A tpux identifier from an HLO name: other characters become '_'.
std::string Sanitize(const std::string& s) {
  std::string out;
  for (char c : s) {
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.')
               ? c
               : '_';
  }
  return out;
}

tpu::BufferDecl Decl(std::string name, tpu::BufferRole role, int index,
                     const Shape& shape) {
  tpu::BufferDecl d;
  d.name = std::move(name);
  d.role = role;
  d.index = index;
  d.dtype = std::string(PrimitiveTypeName(shape.element_type()));
  d.dims = shape.dims();
  if (role != tpu::BufferRole::kTemp) {
    for (int64_t i = shape.rank() - 1; i >= 0; --i) d.layout.push_back(i);
  }
  d.bytes = shape.byte_size();
  return d;
}

// Token leaves are fine: zero-byte buffers no kernel touches.
Status CheckLeaf(const HloInstruction* instr, const Shape& s) {
  if (s.IsToken()) return Status::Ok();
  if (s.IsArray() && !s.is_dynamic() && SupportedDtype(s.element_type())) {
    return Status::Ok();
  }
  return Unimplemented(
      "hloc: cannot compile " + std::string(OpcodeName(instr->opcode())) +
      " for " +
      (s.IsArray() ? s.ToString(false)
                   : std::string(PrimitiveTypeName(s.element_type()))));
}

// Array leaf shapes of `shape` in flattened order.
std::vector<Shape> LeafShapes(const Shape& shape) {
  std::vector<Shape> out;
  ForEachLeafShape(shape, [&](const Shape& s) { out.push_back(s); });
  return out;
}

Status CheckLeaves(const HloInstruction* instr) {
  for (const Shape& s : LeafShapes(instr->shape())) {
    RETURN_IF_ERROR(CheckLeaf(instr, s));
  }
  return Status::Ok();
}

// Whether emitters.def compiles `op` with EmitElementwise (whose kernels
// DMA every operand into VMEM before writing the result).
bool EmittedElementwise(HloOpcode op) {
  switch (op) {
#define X(opcode, fn)     \
  case HloOpcode::opcode: \
    return std::string_view(#fn) == "EmitElementwise";
#include "compiler/codegen/emitters.def"
#undef X
    default:
      return false;
  }
}

// The code generator's in-place rule (buffer_plan.h).
bool CodegenMayWriteOver(const HloInstruction& instr, int64_t operand) {
  if (!DefaultMayWriteOverOperand(instr, operand)) return false;
  return instr.opcode() == HloOpcode::kDynamicUpdateSlice ||
         EmittedElementwise(instr.opcode());
}

// Plans entry buffers from a BufferAssignment and nested computations'
// buffers of their own.
class Planner {
 public:
  explicit Planner(BufferPlan* plan) : plan_(*plan) {}

  int Add(tpu::BufferDecl d) {
    plan_.buffers.push_back(std::move(d));
    return static_cast<int>(plan_.buffers.size()) - 1;
  }

  std::string Base(const HloInstruction* instr) {
    return Sanitize(instr->name()) + "_" + std::to_string(serial_++);
  }

  // Fresh temp buffers for every leaf of `instr`'s value.
  StatusOr<std::vector<int>> FreshTemps(const HloInstruction* instr,
                                        const std::string& prefix) {
    std::vector<Shape> shapes = LeafShapes(instr->shape());
    const std::string base = prefix + Base(instr);
    std::vector<int> out;
    for (size_t i = 0; i < shapes.size(); ++i) {
      RETURN_IF_ERROR(CheckLeaf(instr, shapes[i]));
      out.push_back(Add(Decl(
          base + (shapes.size() > 1 ? "_" + std::to_string(i) : std::string()),
          tpu::BufferRole::kTemp, -1, shapes[i])));
    }
    return out;
  }

  StatusOr<std::vector<int>> Constants(const HloInstruction* instr) {
    if (!instr->has_literal()) {
      return InvalidArgument("hloc: constant " + instr->name() +
                             " has no value");
    }
    std::vector<Shape> shapes = LeafShapes(instr->shape());
    std::vector<const Literal*> lits = instr->literal().Leaves();
    if (lits.size() != shapes.size()) {
      return InvalidArgument("hloc: constant " + instr->name() +
                             " does not match its shape");
    }
    const std::string base = Base(instr);
    std::vector<int> out;
    for (size_t i = 0; i < shapes.size(); ++i) {
      RETURN_IF_ERROR(CheckLeaf(instr, shapes[i]));
      tpu::BufferDecl d = Decl("c_" + base + "_" + std::to_string(i),
                               tpu::BufferRole::kConstant, -1, shapes[i]);
      d.data.assign(lits[i]->bytes().begin(), lits[i]->bytes().end());
      out.push_back(Add(std::move(d)));
    }
    return out;
  }

  // Leaves of tuple / get-tuple-element / add-dependency / opt-barrier from
  // their operands'.
  void AliasLeaves(const HloInstruction* instr) {
    std::vector<int>& ls = plan_.leaves[instr];
    ls.clear();
    if (instr->opcode() == HloOpcode::kAddDependency ||
        instr->opcode() == HloOpcode::kOptimizationBarrier) {
      ls = plan_.leaves.at(instr->operand(0));
      return;
    }
    if (instr->opcode() == HloOpcode::kTuple) {
      for (const HloInstruction* op : instr->operands()) {
        const std::vector<int>& o = plan_.leaves.at(op);
        ls.insert(ls.end(), o.begin(), o.end());
      }
      return;
    }
    const HloInstruction* op = instr->operand(0);
    const std::vector<int>& o = plan_.leaves.at(op);
    int64_t skip = 0;
    for (int64_t i = 0; i < instr->tuple_index(); ++i) {
      skip += LeafCount(op->shape().tuple_shape(i));
    }
    ls.assign(o.begin() + skip, o.begin() + skip + LeafCount(instr->shape()));
  }

  // Counts inline call sites (EmitsInline) of every computation reachable
  // from `entry` through them.
  void CountCallSites(const HloComputation& entry) {
    std::vector<const HloComputation*> stack{&entry};
    std::unordered_set<const HloComputation*> seen{&entry};
    while (!stack.empty()) {
      const HloComputation* c = stack.back();
      stack.pop_back();
      for (const HloInstruction* instr : c->instructions()) {
        if (!EmitsInline(*instr)) continue;
        for (const HloComputation* callee : instr->called_computations()) {
          ++sites_[callee];
          if (seen.insert(callee).second) stack.push_back(callee);
        }
      }
    }
  }

  // Plans the computations `instr` (while/conditional/call or a fusion
  // emitted inline, its own leaves planned) calls.
  Status PlanCalls(const HloInstruction* instr) {
    if (!EmitsInline(*instr)) return Status::Ok();
    const auto& called = instr->called_computations();
    const std::vector<int>& mine = plan_.leaves.at(instr);
    switch (instr->opcode()) {
      case HloOpcode::kWhile: {
        if (called.size() != 2 || instr->operand_count() != 1) {
          return InvalidArgument("hloc: while " + instr->name() +
                                 " needs one operand, a condition and a body");
        }
        RETURN_IF_ERROR(PlanCallee(instr, called[0], {mine}));
        RETURN_IF_ERROR(PlanCallee(instr, called[1], {mine}));
        const std::vector<int>& root =
            plan_.leaves.at(instr->while_body()->root_instruction());
        if (root.size() != mine.size()) {
          return InvalidArgument("hloc: while " + instr->name() +
                                 ": body result does not match the state");
        }
        std::vector<Shape> shapes = LeafShapes(instr->shape());
        std::vector<int>& staging = plan_.while_staging[instr];
        staging.assign(mine.size(), -1);
        for (size_t k = 0; k < mine.size(); ++k) {
          if (root[k] == mine[k] ||
              std::find(mine.begin(), mine.end(), root[k]) == mine.end()) {
            continue;
          }
          staging[k] = Add(Decl("st_" + Base(instr) + "_" + std::to_string(k),
                                tpu::BufferRole::kTemp, -1, shapes[k]));
        }
        return Status::Ok();
      }
      case HloOpcode::kConditional: {
        if (called.empty() ||
            instr->operand_count() != static_cast<int64_t>(called.size()) + 1) {
          return InvalidArgument("hloc: conditional " + instr->name() +
                                 " needs one operand per branch and a "
                                 "selector");
        }
        for (size_t b = 0; b < called.size(); ++b) {
          RETURN_IF_ERROR(PlanCallee(instr, called[b],
                                     {plan_.leaves.at(instr->operand(b + 1))}));
        }
        return Status::Ok();
      }
      case HloOpcode::kFusion:
      case HloOpcode::kCall: {
        if (called.size() != 1) {
          return InvalidArgument("hloc: " + instr->name() +
                                 " needs one computation");
        }
        std::vector<std::vector<int>> args;
        for (const HloInstruction* op : instr->operands()) {
          args.push_back(plan_.leaves.at(op));
        }
        return PlanCallee(instr, called[0], args);
      }
      default:
        return Status::Ok();
    }
  }

  // Plans `c` (once): parameters alias `args` when `c` has one call site.
  Status PlanCallee(const HloInstruction* caller, const HloComputation* c,
                    const std::vector<std::vector<int>>& args) {
    if (!planned_.insert(c).second) return Status::Ok();
    if (c->num_parameters() != static_cast<int64_t>(args.size())) {
      return InvalidArgument("hloc: " + caller->name() + " passes " +
                             std::to_string(args.size()) + " values to " +
                             c->name() + ", which takes " +
                             std::to_string(c->num_parameters()));
    }
    const bool alias = sites_[c] == 1;
    for (int64_t p = 0; p < c->num_parameters(); ++p) {
      const HloInstruction* param = c->parameter_instruction(p);
      if (alias) {
        if (static_cast<int64_t>(args[p].size()) != LeafCount(param->shape())) {
          return InvalidArgument("hloc: " + caller->name() +
                                 ": operand does not match parameter " +
                                 param->name() + " of " + c->name());
        }
        plan_.leaves[param] = args[p];
      } else {
        ASSIGN_OR_RETURN(plan_.leaves[param], FreshTemps(param, "p_"));
      }
    }
    for (const HloInstruction* instr : c->MakeInstructionPostOrder()) {
      switch (instr->opcode()) {
        case HloOpcode::kParameter:
          continue;
        case HloOpcode::kTuple:
        case HloOpcode::kGetTupleElement:
        case HloOpcode::kAddDependency:
        case HloOpcode::kOptimizationBarrier:
          AliasLeaves(instr);
          continue;
        case HloOpcode::kConstant: {
          ASSIGN_OR_RETURN(plan_.leaves[instr], Constants(instr));
          continue;
        }
        default:
          break;
      }
      ASSIGN_OR_RETURN(plan_.leaves[instr], FreshTemps(instr, "t_"));
      RETURN_IF_ERROR(PlanCalls(instr));
    }
    return Status::Ok();
  }

  // Entry buffers from the assignment.
  void PlanEntry(const BufferAssignment& a) {
    std::vector<int> decl(a.buffers.size(), -1);
    // Inputs first, in parameter order, so indices follow the signature.
    for (const LogicalValue& v : a.values) {
      if (v.kind != ValueKind::kInput) continue;
      const int idx = static_cast<int>(v.input_index);
      decl[v.buffer] = Add(Decl("in" + std::to_string(idx),
                                tpu::BufferRole::kInput, idx, v.shape));
    }
    for (size_t b = 0; b < a.buffers.size(); ++b) {
      if (decl[b] >= 0) continue;
      const LogicalValue& first = a.values[a.buffers[b].values.at(0)];
      if (first.kind == ValueKind::kConstant) {
        const Literal* lit = first.instr->literal().Leaves().at(first.leaf);
        tpu::BufferDecl d =
            Decl("c_" + Base(first.instr) + "_" + std::to_string(first.leaf),
                 tpu::BufferRole::kConstant, -1, first.shape);
        d.data.assign(lit->bytes().begin(), lit->bytes().end());
        decl[b] = Add(std::move(d));
        continue;
      }
      const bool multi = LeafCount(first.instr->shape()) > 1;
      decl[b] = Add(
          Decl("t_" + Base(first.instr) +
                   (multi ? "_" + std::to_string(first.leaf) : std::string()),
               tpu::BufferRole::kTemp, -1, first.shape));
    }
    for (const auto& [instr, ids] : a.leaves) {
      std::vector<int>& ls = plan_.leaves[instr];
      for (int id : ids) ls.push_back(decl[a.values[id].buffer]);
    }
    plan_.stats = a.stats;
  }

 private:
  BufferPlan& plan_;
  int serial_ = 0;
  std::unordered_map<const HloComputation*, int> sites_;
  std::unordered_set<const HloComputation*> planned_;
};

// Leaf `k` of `instr`'s shape (flattened order).
Shape LeafShape(const HloInstruction* instr, int64_t k) {
  std::vector<Shape> shapes = LeafShapes(instr->shape());
  return shapes.at(k);
}

}  // namespace

bool SupportedDtype(PrimitiveType t) { return IsArrayType(t); }

bool IsControlFlow(HloOpcode op) {
  return op == HloOpcode::kWhile || op == HloOpcode::kConditional ||
         op == HloOpcode::kCall;
}

bool EmitsInline(const HloInstruction& instr) {
  return IsControlFlow(instr.opcode()) ||
         (instr.opcode() == HloOpcode::kFusion && !EmitsFusedKernel(instr));
}

ArrayBuffer BufferPlan::LeafArray(const HloInstruction* instr,
                                  int64_t k) const {
  const tpu::BufferDecl& d = buffers[leaves.at(instr).at(k)];
  const Shape s = LeafShape(instr, k);
  ArrayBuffer a{d.name, std::string(PrimitiveTypeName(s.element_type())),
                s.dims(), s.element_count(), s.byte_size()};
  return a;
}

ArrayBuffer BufferPlan::Array(const HloInstruction* instr) const {
  return LeafArray(instr, 0);
}

StatusOr<BufferPlan> PlanBuffers(
    const HloComputation& entry, const std::vector<HloInstruction*>& post_order,
    const std::vector<const HloInstruction*>& tapped,
    const BufferPlanOptions& options) {
  // Unsupported leaves first (parameters in order), as errors to report.
  for (int64_t p = 0; p < entry.num_parameters(); ++p) {
    RETURN_IF_ERROR(CheckLeaves(entry.parameter_instruction(p)));
  }
  for (const HloInstruction* instr : post_order) {
    if (instr->opcode() == HloOpcode::kTuple ||
        instr->opcode() == HloOpcode::kGetTupleElement ||
        instr->opcode() == HloOpcode::kAddDependency ||
        instr->opcode() == HloOpcode::kOptimizationBarrier) {
      continue;
    }
    RETURN_IF_ERROR(CheckLeaves(instr));
    if (instr->opcode() == HloOpcode::kConstant && !instr->has_literal()) {
      return InvalidArgument("hloc: constant " + instr->name() +
                             " has no value");
    }
  }
  BufferAssignmentOptions opts;
  opts.enabled = options.reuse;
  opts.ctx = options.ctx;
  opts.may_write_over = &CodegenMayWriteOver;
  ASSIGN_OR_RETURN(BufferAssignment a,
                   AssignBuffers(entry, post_order, tapped, opts));
  BufferPlan plan;
  Planner planner(&plan);
  planner.PlanEntry(a);
  if (options.ctx != nullptr) {
    options.ctx->Log(std::string(kBufferAssignmentPass) + ": " +
                     (options.reuse ? a.stats.ToString()
                                    : std::string("disabled, no reuse")));
  }
  planner.CountCallSites(entry);
  for (const HloInstruction* instr : post_order) {
    RETURN_IF_ERROR(planner.PlanCalls(instr));
  }
  const HloInstruction* root = entry.root_instruction();
  const std::vector<int> out_leaves = plan.leaves.at(root);
  std::vector<Shape> root_shapes = LeafShapes(root->shape());
  for (size_t k = 0; k < out_leaves.size(); ++k) {
    int dst =
        planner.Add(Decl("out" + std::to_string(k), tpu::BufferRole::kOutput,
                         static_cast<int>(k), root_shapes[k]));
    plan.copies.push_back({out_leaves[k], dst});
  }
  int tap = 0;
  for (const HloInstruction* t : tapped) {
    std::vector<Shape> shapes = LeafShapes(t->shape());
    if (t->parent() != &entry) {
      // Inside a fused computation: the fusion's kernel writes the tap.
      std::vector<int>& fs = plan.fused_taps[t];
      for (size_t k = 0; k < shapes.size(); ++k) {
        RETURN_IF_ERROR(CheckLeaf(t, shapes[k]));
        tpu::BufferDecl td = Decl("tap" + std::to_string(tap),
                                  tpu::BufferRole::kTap, tap, shapes[k]);
        td.label =
            shapes.size() > 1 ? t->name() + "#" + std::to_string(k) : t->name();
        fs.push_back(planner.Add(std::move(td)));
        ++tap;
      }
      continue;
    }
    const std::vector<int> ls = plan.leaves.at(t);
    for (size_t k = 0; k < ls.size(); ++k) {
      tpu::BufferDecl td = Decl("tap" + std::to_string(tap),
                                tpu::BufferRole::kTap, tap, shapes[k]);
      td.label = t->shape().IsTuple() ? t->name() + "#" + std::to_string(k)
                                      : t->name();
      plan.copies.push_back({ls[k], planner.Add(std::move(td))});
      ++tap;
    }
  }
  return plan;
}

}  // namespace trench::codegen
