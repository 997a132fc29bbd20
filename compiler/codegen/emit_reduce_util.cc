#include "compiler/codegen/emit_reduce_util.h"

#include <cstdio>
#include <cstring>
#include <map>

#include "compiler/codegen/emitters.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {

std::string VReg(int r) { return "v" + std::to_string(r); }

std::vector<ArrayBuffer> LeafBuffers(const BufferPlan& plan,
                                     const HloInstruction* instr) {
  // The value's shape, not the buffer's (a buffer may be shared by values
  // of different shapes, buffer_plan.h).
  std::vector<ArrayBuffer> out;
  const size_t n = plan.leaves.at(instr).size();
  for (size_t k = 0; k < n; ++k) {
    out.push_back(plan.LeafArray(instr, static_cast<int64_t>(k)));
  }
  return out;
}

std::string ReducerIdentity(const std::string& op, const std::string& lane) {
  const bool is_float = lane == "f32" || lane == "f64";
  if (op == "vadd") return "0";
  if (op == "vmax") {
    if (is_float) return "-inf";
    if (lane == "s32") return "0x80000000";
    if (lane == "s64") return "0x8000000000000000";
    return "0";
  }
  if (is_float) return "inf";
  if (lane == "s32") return "0x7fffffff";
  if (lane == "s64") return "0x7fffffffffffffff";
  if (lane == "u32") return "0xffffffff";
  return "0xffffffffffffffff";
}

std::string ScalarType(const HloInstruction& instr) {
  return std::string(PrimitiveTypeName(instr.shape().element_type()));
}

namespace {

bool IsAliasOp(HloOpcode op) {
  return op == HloOpcode::kReshape || op == HloOpcode::kBitcast ||
         op == HloOpcode::kCopy || op == HloOpcode::kBroadcast;
}

bool IsScalarArray(const Shape& s) { return s.IsArray() && s.dims().empty(); }

// The lane bits of a scalar literal of type `t`, as an immediate for
// vimm.<LaneType(t)>.
std::string LaneBits(const Literal& lit, const std::string& t) {
  const std::string lane = LaneType(t);
  const std::span<const uint8_t> b = lit.bytes();
  char buf[40];
  if (lane == "f32") {
    const float f = static_cast<float>(lit.GetAsDouble(0));
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    std::snprintf(buf, sizeof(buf), "0x%x", bits);
    return buf;
  }
  if (t == "f64" || t == "s64" || t == "u64") {
    uint64_t bits = 0;
    std::memcpy(&bits, b.data(), 8);
    std::snprintf(buf, sizeof(buf), "0x%llx",
                  static_cast<unsigned long long>(bits));
    return buf;
  }
  int64_t v = 0;
  if (t == "pred") {
    v = b[0] != 0;
  } else if (t == "s8") {
    v = static_cast<int8_t>(b[0]);
  } else if (t == "u8") {
    v = b[0];
  } else if (t == "s16" || t == "u16") {
    uint16_t h;
    std::memcpy(&h, b.data(), 2);
    v = t == "s16" ? static_cast<int16_t>(h) : h;
  } else {
    uint32_t w;
    std::memcpy(&w, b.data(), 4);
    v = w;  // s32/u32: the bit pattern.
  }
  const uint32_t bits = static_cast<uint32_t>(v);
  std::snprintf(buf, sizeof(buf), "0x%x", bits);
  return buf;
}

}  // namespace

Status CheckScalarComputation(const HloInstruction& instr,
                              const HloComputation& comp) {
  for (const HloInstruction* i : comp.MakeInstructionPostOrder()) {
    const HloOpcode op = i->opcode();
    if (op == HloOpcode::kParameter) {
      if (!IsScalarArray(i->shape())) {
        return CannotCompile(instr, "a non-scalar computation parameter");
      }
      continue;
    }
    if (op == HloOpcode::kTuple && i == comp.root_instruction()) continue;
    if (!IsScalarArray(i->shape()) || (LaneType(ScalarType(*i)).empty() &&
                                       !IsComplex(i->shape().element_type()))) {
      return CannotCompile(instr, "computation " + comp.name() + " with " +
                                      i->shape().ToString(false) + " value");
    }
    if (op == HloOpcode::kConstant) {
      if (!i->has_literal()) return CannotCompile(instr, "a bad constant");
      continue;
    }
    if (IsAliasOp(op) && i->operand_count() == 1 &&
        IsScalarArray(i->operand(0)->shape()) &&
        i->operand(0)->shape().element_type() == i->shape().element_type()) {
      continue;
    }
    if (!IsVectorOp(*i)) {
      return CannotCompile(instr, "computation " + comp.name() + " with " +
                                      std::string(OpcodeName(op)) + " " +
                                      ScalarType(*i));
    }
  }
  return Status::Ok();
}

void EmitOffsetLanes(KernelBuilder& kb, int reg, const std::string& scalar,
                     bool subtract) {
  if (scalar.empty()) return;
  kb.Emit("vbcast.s32 v28, " + scalar);
  kb.Emit(std::string(subtract ? "vsub" : "vadd") + ".s32 " + VReg(reg) + ", " +
          VReg(reg) + ", v28");
}

void EmitMove(KernelBuilder& kb, int dst, int src, bool wide) {
  if (dst == src) return;
  kb.Emit("vmov " + VReg(dst) + ", " + VReg(src));
  if (wide) kb.Emit("vmov " + VReg(dst + 1) + ", " + VReg(src + 1));
}

void EmitSelect(KernelBuilder& kb, const std::string& lane, int dst, int mask,
                int a, int b) {
  kb.Emit("vsel." + lane + " " + VReg(dst) + ", m" + std::to_string(mask) +
          ", " + VReg(a) + ", " + VReg(b));
}

Status EmitScalarComputation(KernelBuilder& kb, VRegPool& pool,
                             const HloInstruction& instr,
                             const HloComputation& comp,
                             const std::vector<int>& params,
                             const std::vector<int>& outs,
                             const ParamLoader& load) {
  const std::vector<const HloInstruction*> order = RegisterOrder(comp);
  std::map<const HloInstruction*, int> reg;   // Value register.
  std::map<const HloInstruction*, int> uses;  // Remaining readers.
  std::map<int, int> owned;                   // Scratch reg -> count.
  const HloInstruction* root = comp.root_instruction();
  for (const HloInstruction* i : order) {
    for (const HloInstruction* o : i->operands()) ++uses[o];
  }
  auto release = [&](const HloInstruction* v) {
    if (--uses[v] > 0 || v == root) return;
    auto it = reg.find(v);
    if (it == reg.end()) return;
    auto own = owned.find(it->second);
    if (own == owned.end()) return;
    // Free only when no other live value aliases this register.
    for (const auto& [other, r] : reg) {
      if (other != v && r == it->second && uses[other] > 0) return;
    }
    pool.FreeN(it->second, own->second);
    owned.erase(own);
  };
  for (const HloInstruction* i : order) {
    const HloOpcode op = i->opcode();
    if (op == HloOpcode::kTuple) continue;  // The root; handled below.
    const std::string t = ScalarType(*i);
    const int count = RegCount(t);
    if (op == HloOpcode::kParameter) {
      const int given = params.at(i->parameter_number());
      if (given >= 0 || !load || (uses[i] == 0 && i != root)) {
        reg[i] = given;
        continue;
      }
      ASSIGN_OR_RETURN(int dst, pool.AllocN(count));
      owned[dst] = count;
      RETURN_IF_ERROR(load(i->parameter_number(), dst));
      reg[i] = dst;
      continue;
    }
    if (IsAliasOp(op)) {
      reg[i] = reg.at(i->operand(0));
      continue;  // Operand stays alive through the alias (same register).
    }
    ASSIGN_OR_RETURN(int dst, pool.AllocN(count));
    owned[dst] = count;
    if (op == HloOpcode::kConstant && IsComplex(i->shape().element_type())) {
      RETURN_IF_ERROR(EmitSplatScalar(kb, i->literal(), dst));
    } else if (op == HloOpcode::kConstant) {
      kb.Splat(dst, LaneType(t), LaneBits(i->literal(), t));
    } else {
      std::vector<int> srcs;
      for (const HloInstruction* o : i->operands()) srcs.push_back(reg.at(o));
      RETURN_IF_ERROR(EmitVectorOp(kb, pool, *i, dst, srcs));
    }
    reg[i] = dst;
    for (const HloInstruction* o : i->operands()) release(o);
    if (uses[i] == 0 && i != root) {  // Dead code: nobody reads it.
      pool.FreeN(dst, count);
      owned.erase(dst);
    }
  }
  // Leaves of the root, then copies into `outs` through scratch when a
  // leaf sits in a register some out overwrites first.
  std::vector<const HloInstruction*> leaves;
  if (root->opcode() == HloOpcode::kTuple) {
    for (const HloInstruction* o : root->operands()) leaves.push_back(o);
  } else {
    leaves.push_back(root);
  }
  auto width = [&](size_t k) { return RegCount(ScalarType(*leaves[k])); };
  std::vector<int> src(leaves.size());
  std::vector<std::pair<int, int>> temps;
  for (size_t k = 0; k < leaves.size(); ++k) {
    src[k] = reg.at(leaves[k]);
    bool clobbered = false;  // An earlier out overlaps this leaf's register.
    for (size_t j = 0; j < k; ++j) {
      if (outs[j] < src[k] + width(k) && src[k] < outs[j] + width(j)) {
        clobbered = true;
      }
    }
    if (clobbered) {
      ASSIGN_OR_RETURN(int t, pool.AllocN(width(k)));
      for (int h = 0; h < width(k); h += 2) {  // c128: two pairs.
        EmitMove(kb, t + h, src[k] + h, width(k) > 1);
      }
      src[k] = t;
      temps.push_back({t, width(k)});
    }
  }
  for (size_t k = 0; k < leaves.size(); ++k) {
    for (int h = 0; h < width(k); h += 2) {
      EmitMove(kb, outs[k] + h, src[k] + h, width(k) > 1);
    }
  }
  for (auto [t, n] : temps) pool.FreeN(t, n);
  for (auto [r, n] : owned) pool.FreeN(r, n);
  return Status::Ok();
}

std::string SimpleReducer(const HloComputation& c, const std::string& t) {
  const HloInstruction* root = c.root_instruction();
  if (c.num_parameters() != 2 || root->operand_count() != 2) return "";
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if (a->opcode() != HloOpcode::kParameter ||
      b->opcode() != HloOpcode::kParameter || a == b ||
      ScalarType(*root) != t || ScalarType(*a) != t || ScalarType(*b) != t) {
    return "";
  }
  const bool is_float = LaneType(t) == "f32" || t == "f64";
  const bool pred = t == "pred";
  if (t == "c64" || t == "c128") return "";  // No lane op: the general path.
  switch (root->opcode()) {
    case HloOpcode::kAdd:
      return pred ? "" : "vadd";
    case HloOpcode::kMultiply:
      return pred ? "" : "vmul";
    case HloOpcode::kMaximum:
      return pred ? "" : "vmax";
    case HloOpcode::kMinimum:
      return pred ? "" : "vmin";
    case HloOpcode::kAnd:
      return is_float ? "" : "vand";
    case HloOpcode::kOr:
      return is_float ? "" : "vor";
    default:
      return "";
  }
}

void EmitCoordinate(KernelBuilder& kb, int lin,
                    const std::vector<int64_t>& dims, size_t d, int dst) {
  const std::vector<int64_t> st = RowMajorStrides(dims);
  if (st[d] == 1) {
    EmitMove(kb, dst, lin, false);
  } else {
    kb.Splat(29, "s32", std::to_string(st[d]));
    kb.Emit("vdiv.s32 " + VReg(dst) + ", " + VReg(lin) + ", v29");
  }
  if (d > 0) {
    kb.Splat(29, "s32", std::to_string(dims[d]));
    kb.Emit("vrem.s32 " + VReg(dst) + ", " + VReg(dst) + ", v29");
  }
}

void EmitIndexFromLinear(KernelBuilder& kb, int lin,
                         const std::vector<int64_t>& dims,
                         const std::vector<int64_t>& coeff, int64_t offset,
                         int dst, int tmp) {
  kb.Splat(dst, "s32", std::to_string(offset));
  for (size_t d = 0; d < dims.size(); ++d) {
    if (coeff[d] == 0 || dims[d] == 1) continue;
    EmitCoordinate(kb, lin, dims, d, tmp);
    if (coeff[d] != 1) {
      kb.Splat(29, "s32", std::to_string(coeff[d]));
      kb.Emit("vmul.s32 " + VReg(tmp) + ", " + VReg(tmp) + ", v29");
    }
    kb.Emit("vadd.s32 " + VReg(dst) + ", " + VReg(dst) + ", " + VReg(tmp));
  }
}

Status EmitNestedLoops(KernelBuilder& kb, const std::vector<LoopDim>& dims,
                       const std::function<Status()>& body) {
  std::vector<std::string> labels;
  for (size_t j = 0; j < dims.size(); ++j) {
    kb.Emit("simm s" + std::to_string(10 + j) + ", " +
            std::to_string(dims[j].start));
    kb.Emit("simm s" + std::to_string(1 + j) + ", " +
            std::to_string(dims[j].count));
    labels.push_back(kb.NewLabel("loop"));
    kb.PlaceLabel(labels.back());
  }
  RETURN_IF_ERROR(body());
  for (size_t j = dims.size(); j-- > 0;) {
    kb.Emit("sadd s" + std::to_string(10 + j) + ", s" + std::to_string(10 + j) +
            ", " + std::to_string(dims[j].step));
    kb.Emit("sloop s" + std::to_string(1 + j) + ", " + labels[j]);
  }
  return Status::Ok();
}

}  // namespace trench::codegen

namespace trench::codegen {

StatusOr<ReductionOperands> GetReductionOperands(const HloInstruction& instr,
                                                 const BufferPlan& plan) {
  ReductionOperands r;
  r.n = instr.operand_count() / 2;
  if (r.n == 0 || instr.operand_count() % 2 != 0) {
    return CannotCompile(instr, "an odd operand count");
  }
  for (int64_t i = 0; i < r.n; ++i) {
    r.ins.push_back(plan.Array(instr.operand(i)));
    r.inits.push_back(plan.Array(instr.operand(r.n + i)));
  }
  r.outs = LeafBuffers(plan, &instr);
  if (static_cast<int64_t>(r.outs.size()) != r.n) {
    return CannotCompile(instr, "a nested tuple result");
  }
  for (int64_t i = 0; i < r.n; ++i) {
    // Complex values: reduce's lane-parallel path only (vector_ops.h).
    auto ok = [&](const std::string& t) {
      return !LaneType(t).empty() || ((t == "c64" || t == "c128") &&
                                      instr.opcode() == HloOpcode::kReduce);
    };
    if (!ok(r.ins[i].dtype) || !ok(r.inits[i].dtype)) {
      return CannotCompile(instr, r.ins[i].dtype);
    }
    if (r.outs[i].dtype != r.inits[i].dtype) {
      return CannotCompile(instr, r.outs[i].dtype + " result of a " +
                                      r.inits[i].dtype + " reducer");
    }
  }
  return r;
}

StatusOr<Reducer> ChooseReducer(const HloInstruction& instr,
                                const ReductionOperands& ops) {
  const HloComputation& comp = *instr.to_apply();
  const std::string& t = ops.ins[0].dtype;
  Reducer r;
  if (ops.n == 1 && ops.inits[0].dtype == t) r.simple = SimpleReducer(comp, t);
  r.direct =
      !r.simple.empty() && !(r.simple == "vmul" && (t == "bf16" || t == "f16"));
  if (!r.direct) RETURN_IF_ERROR(CheckScalarComputation(instr, comp));
  return r;
}

ReductionVmem StageReduction(KernelBuilder& kb, const ReductionOperands& ops) {
  ReductionVmem v;
  for (int64_t i = 0; i < ops.n; ++i) {
    v.ins.push_back(kb.AllocVmem(ops.ins[i].bytes));
    kb.DmaIn(v.ins.back(), ops.ins[i].name, ops.ins[i].bytes);
    v.inits.push_back(kb.AllocVmem(ops.inits[i].bytes));
    kb.DmaIn(v.inits.back(), ops.inits[i].name, ops.inits[i].bytes);
  }
  for (int64_t i = 0; i < ops.n; ++i) {
    v.outs.push_back(kb.AllocVmem(ops.outs[i].bytes));
  }
  return v;
}

void EmitLoadInits(KernelBuilder& kb, const ReductionOperands& ops,
                   const ReductionVmem& vmem, const std::vector<int>& acc,
                   int idx) {
  kb.Splat(idx, "s32", "0");
  for (int64_t i = 0; i < ops.n; ++i) {
    kb.Gather(acc[i], ops.inits[i].dtype,
              "vmem[" + std::to_string(vmem.inits[i]) + "]", idx, "m0");
  }
}

void EmitGatherInputs(KernelBuilder& kb, const ReductionOperands& ops,
                      const ReductionVmem& vmem, const std::vector<int>& x,
                      int idx, int mask) {
  for (int64_t i = 0; i < ops.n; ++i) {
    kb.Gather(x[i], ops.ins[i].dtype,
              "vmem[" + std::to_string(vmem.ins[i]) + "]", idx,
              "m" + std::to_string(mask));
  }
}

void EmitStoreResults(KernelBuilder& kb, const ReductionOperands& ops,
                      const ReductionVmem& vmem, const std::vector<int>& acc) {
  for (int64_t i = 0; i < ops.n; ++i) {
    kb.StoreTile(ops.outs[i].dtype, vmem.outs[i], acc[i]);
  }
  kb.EndLinearTiles();
  for (int64_t i = 0; i < ops.n; ++i) {
    kb.DmaOut(ops.outs[i].name, vmem.outs[i], ops.outs[i].bytes);
  }
}

}  // namespace trench::codegen
