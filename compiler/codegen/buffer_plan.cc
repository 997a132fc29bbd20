#include "compiler/codegen/buffer_plan.h"

#include <algorithm>
#include <cctype>

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

Status CheckLeaf(const HloInstruction* instr, const Shape& s) {
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

}  // namespace

bool SupportedDtype(PrimitiveType t) { return IsArrayType(t) && !IsComplex(t); }

ArrayBuffer BufferPlan::Array(const HloInstruction* instr) const {
  const tpu::BufferDecl& d = buffers[leaves.at(instr).at(0)];
  ArrayBuffer a{d.name, d.dtype, d.dims, 1, d.bytes};
  for (int64_t x : d.dims) a.elements *= x;
  return a;
}

StatusOr<BufferPlan> PlanBuffers(
    const HloComputation& entry, const std::vector<HloInstruction*>& post_order,
    const std::vector<const HloInstruction*>& tapped) {
  BufferPlan plan;
  auto add = [&](tpu::BufferDecl d) {
    plan.buffers.push_back(std::move(d));
    return static_cast<int>(plan.buffers.size()) - 1;
  };
  // Inputs first, in parameter order, so indices follow the entry signature.
  int input = 0;
  for (int64_t p = 0; p < entry.num_parameters(); ++p) {
    const HloInstruction* param = entry.parameter_instruction(p);
    std::vector<int>& ls = plan.leaves[param];
    for (const Shape& s : LeafShapes(param->shape())) {
      RETURN_IF_ERROR(CheckLeaf(param, s));
      ls.push_back(add(Decl("in" + std::to_string(input),
                            tpu::BufferRole::kInput, input, s)));
      ++input;
    }
  }
  int serial = 0;
  for (const HloInstruction* instr : post_order) {
    if (instr->opcode() == HloOpcode::kParameter) continue;
    std::vector<int>& ls = plan.leaves[instr];
    if (instr->opcode() == HloOpcode::kTuple) {
      for (const HloInstruction* op : instr->operands()) {
        const std::vector<int>& o = plan.leaves.at(op);
        ls.insert(ls.end(), o.begin(), o.end());
      }
      continue;
    }
    if (instr->opcode() == HloOpcode::kGetTupleElement) {
      const HloInstruction* op = instr->operand(0);
      const std::vector<int>& o = plan.leaves.at(op);
      int64_t skip = 0;
      for (int64_t i = 0; i < instr->tuple_index(); ++i) {
        skip += LeafCount(op->shape().tuple_shape(i));
      }
      int64_t n = LeafCount(instr->shape());
      ls.assign(o.begin() + skip, o.begin() + skip + n);
      continue;
    }
    std::string base = Sanitize(instr->name()) + "_" + std::to_string(serial++);
    std::vector<Shape> shapes = LeafShapes(instr->shape());
    if (instr->opcode() == HloOpcode::kConstant) {
      std::vector<const Literal*> lits = instr->literal().Leaves();
      for (size_t i = 0; i < shapes.size(); ++i) {
        RETURN_IF_ERROR(CheckLeaf(instr, shapes[i]));
        tpu::BufferDecl d = Decl("c_" + base + "_" + std::to_string(i),
                                 tpu::BufferRole::kConstant, -1, shapes[i]);
        d.data.assign(lits[i]->bytes().begin(), lits[i]->bytes().end());
        ls.push_back(add(std::move(d)));
      }
      continue;
    }
    for (size_t i = 0; i < shapes.size(); ++i) {
      RETURN_IF_ERROR(CheckLeaf(instr, shapes[i]));
      ls.push_back(add(Decl(
          "t_" + base +
              (shapes.size() > 1 ? "_" + std::to_string(i) : std::string()),
          tpu::BufferRole::kTemp, -1, shapes[i])));
    }
  }
  const HloInstruction* root = entry.root_instruction();
  const std::vector<int> out_leaves = plan.leaves.at(root);
  for (size_t k = 0; k < out_leaves.size(); ++k) {
    tpu::BufferDecl d = plan.buffers[out_leaves[k]];
    Shape s(*PrimitiveTypeFromName(d.dtype), d.dims);
    int dst = add(Decl("out" + std::to_string(k), tpu::BufferRole::kOutput,
                       static_cast<int>(k), s));
    plan.copies.push_back({out_leaves[k], dst});
  }
  int tap = 0;
  for (const HloInstruction* t : tapped) {
    if (t->parent() != &entry) {
      // Inside a fused computation: the fusion's kernel writes the tap.
      std::vector<Shape> shapes = LeafShapes(t->shape());
      std::vector<int>& fs = plan.fused_taps[t];
      for (size_t k = 0; k < shapes.size(); ++k) {
        RETURN_IF_ERROR(CheckLeaf(t, shapes[k]));
        tpu::BufferDecl td = Decl("tap" + std::to_string(tap),
                                  tpu::BufferRole::kTap, tap, shapes[k]);
        td.label =
            shapes.size() > 1 ? t->name() + "#" + std::to_string(k) : t->name();
        fs.push_back(add(std::move(td)));
        ++tap;
      }
      continue;
    }
    const std::vector<int> ls = plan.leaves.at(t);
    for (size_t k = 0; k < ls.size(); ++k) {
      tpu::BufferDecl d = plan.buffers[ls[k]];
      Shape s(*PrimitiveTypeFromName(d.dtype), d.dims);
      tpu::BufferDecl td =
          Decl("tap" + std::to_string(tap), tpu::BufferRole::kTap, tap, s);
      td.label = t->shape().IsTuple() ? t->name() + "#" + std::to_string(k)
                                      : t->name();
      plan.copies.push_back({ls[k], add(std::move(td))});
      ++tap;
    }
  }
  return plan;
}

}  // namespace trench::codegen
