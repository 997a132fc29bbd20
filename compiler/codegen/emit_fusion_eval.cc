// The per-tile evaluator of fused computations (emit_fusion_internal.h).
#include <memory>

#include "compiler/codegen/emit_dot_internal.h"
#include "compiler/codegen/emit_fusion_internal.h"
#include "compiler/ir/opcode.h"
#include "compiler/passes/fusion_support.h"

namespace trench::codegen::fusion_internal {
namespace {

std::string V(int r) { return "v" + std::to_string(r); }

std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d) {
    s[d] = s[d + 1] * dims[d + 1];
  }
  return s;
}

std::string TypeName(const HloInstruction* i) {
  return std::string(PrimitiveTypeName(i->shape().element_type()));
}

}  // namespace

TileEvaluator::TileEvaluator(
    KernelBuilder& kb, VRegPool& pool,
    const std::unordered_map<const HloInstruction*, Staged>& staged,
    const std::unordered_map<const HloInstruction*, TapRegion>& taps,
    int tile_reg)
    : kb_(kb), pool_(pool), staged_(staged), taps_(taps), tile_reg_(tile_reg) {
  Position own;
  own.reg = tile_reg;
  positions_.push_back(own);
}

StatusOr<int> TileEvaluator::Alloc(bool wide) {
  if (dry_) return -1;
  while (true) {
    StatusOr<int> r = pool_.Alloc(wide);
    if (r.ok() || !SpillOne()) return r;
  }
}

bool TileEvaluator::SpillOne() {
  Value* victim = nullptr;
  for (auto& [key, v] : values_) {
    if (v.reg < 0 || !v.spillable || pinned_.count(key)) continue;
    if (victim == nullptr || v.last < victim->last) victim = &v;
  }
  if (victim == nullptr) return false;
  const std::string mem = victim->wide ? "u64" : "u32";
  if (victim->slot < 0) {
    victim->slot = TakeSlot(victim->wide);
    kb_.Emit("vst." + mem + " vmem[" + std::to_string(victim->slot) + "], " +
             V(victim->reg));
    ++spills_;
  }
  pool_.Free(victim->reg, victim->wide);
  victim->reg = -1;
  return true;
}

int64_t TileEvaluator::TakeSlot(bool wide) {
  std::vector<int64_t>& free = free_slots_[wide ? 1 : 0];
  if (free.empty()) return kb_.AllocVmem(wide ? 8 * 1024 : 4 * 1024);
  const int64_t slot = free.back();
  free.pop_back();
  return slot;
}

Status TileEvaluator::EmitVectorOpSpilling(const HloInstruction& instr, int dst,
                                           const std::vector<int>& srcs) {
  while (true) {
    const VRegPool before = pool_;
    const size_t lines = kb_.line_count();
    Status s = EmitVectorOp(kb_, pool_, instr, dst, srcs);
    if (s.ok() || s.code() != StatusCode::kResourceExhausted) return s;
    pool_ = before;  // Forget the attempt, spill one more value, retry.
    kb_.TruncateLines(lines);
    if (!SpillOne()) return s;
  }
}

void TileEvaluator::Pin(const Key& key) {
  if (!dry_) ++pinned_[key];
}

void TileEvaluator::Unpin(const Key& key) {
  if (dry_) return;
  auto it = pinned_.find(key);
  if (it != pinned_.end() && --it->second == 0) pinned_.erase(it);
}

StatusOr<const HloInstruction*> TileEvaluator::Resolve(
    const HloInstruction* instr, int* pos) {
  while (!staged_.count(instr)) {
    const FusedOpClass c = ClassifyFusedOp(*instr);
    if (c == FusedOpClass::kReshape || instr->opcode() == HloOpcode::kCopy) {
      instr = instr->operand(0);
    } else if (c == FusedOpClass::kIndexMap) {
      ASSIGN_OR_RETURN(*pos, MapPosition(instr, *pos));
      instr = instr->operand(0);
    } else if (c == FusedOpClass::kUnsupported || c == FusedOpClass::kReduce ||
               c == FusedOpClass::kDot ||
               instr->opcode() == HloOpcode::kParameter) {
      return CannotCompile(*instr, "inside a fused kernel");
    } else {
      break;
    }
  }
  return instr;
}

StatusOr<int> TileEvaluator::MapPosition(const HloInstruction* op, int pos) {
  auto key = std::make_pair(op, pos);
  if (auto it = position_ids_.find(key); it != position_ids_.end()) {
    return it->second;
  }
  Position p;
  p.op = op;
  p.parent = pos;
  positions_.push_back(p);
  const int id = static_cast<int>(positions_.size()) - 1;
  position_ids_[key] = id;
  return id;
}

StatusOr<int> TileEvaluator::PositionReg(int pos) {
  Position& p = positions_[pos];
  if (dry_) {
    if (++p.uses == 1 && p.op != nullptr) {
      RETURN_IF_ERROR(PositionReg(p.parent).status());
      ReleasePosition(p.parent);
    }
    return -1;
  }
  if (p.reg >= 0) return p.reg;
  if (p.op == nullptr) {  // The tile's own position: s20 + lane index.
    ASSIGN_OR_RETURN(int r, Alloc(false));
    kb_.LinearIndex();
    kb_.Emit("vmov " + V(r) + ", v31");
    positions_[pos].reg = r;
    return r;
  }
  ASSIGN_OR_RETURN(int parent, PositionReg(p.parent));
  const HloInstruction* op = positions_[pos].op;
  const std::vector<int64_t>& dims = op->shape().dims();
  const std::vector<int64_t> ost = Strides(op->operand(0)->shape().dims());
  const std::vector<int64_t> st = Strides(dims);
  const int rank = static_cast<int>(dims.size());
  std::vector<int64_t> coeff(rank, 0);
  int64_t offset = 0;
  if (op->opcode() == HloOpcode::kBroadcast) {
    for (size_t i = 0; i < op->dimensions().size(); ++i) {
      coeff[op->dimensions()[i]] = ost[i];
    }
  } else if (op->opcode() == HloOpcode::kTranspose) {
    for (int d = 0; d < rank; ++d) coeff[d] = ost[op->dimensions()[d]];
  } else {  // Slice.
    for (int d = 0; d < rank; ++d) {
      coeff[d] = op->attrs().slice[d].stride * ost[d];
      offset += op->attrs().slice[d].start * ost[d];
    }
  }
  ASSIGN_OR_RETURN(int out, Alloc(false));
  ASSIGN_OR_RETURN(int c, Alloc(false));
  ASSIGN_OR_RETURN(int k, Alloc(false));
  kb_.Splat(out, "s32", std::to_string(offset));
  for (int d = 0; d < rank; ++d) {
    if (coeff[d] == 0) continue;
    if (st[d] == 1) {
      kb_.Emit("vmov " + V(c) + ", " + V(parent));
    } else {
      kb_.Splat(k, "s32", std::to_string(st[d]));
      kb_.Emit("vdiv.s32 " + V(c) + ", " + V(parent) + ", " + V(k));
    }
    if (d > 0) {
      kb_.Splat(k, "s32", std::to_string(dims[d]));
      kb_.Emit("vrem.s32 " + V(c) + ", " + V(c) + ", " + V(k));
    }
    if (coeff[d] != 1) {
      kb_.Splat(k, "s32", std::to_string(coeff[d]));
      kb_.Emit("vmul.s32 " + V(c) + ", " + V(c) + ", " + V(k));
    }
    kb_.Emit("vadd.s32 " + V(out) + ", " + V(out) + ", " + V(c));
  }
  pool_.Free(c, false);
  pool_.Free(k, false);
  ReleasePosition(positions_[pos].parent);
  positions_[pos].reg = out;
  return out;
}

void TileEvaluator::ReleasePosition(int pos) {
  if (dry_) return;
  Position& p = positions_[pos];
  if (--p.uses > 0 || p.reg < 0) return;
  if (p.op == nullptr && tile_reg_ >= 0) return;  // The driver's register.
  pool_.Free(p.reg, false);
  p.reg = -1;
}

StatusOr<int> TileEvaluator::Get(const HloInstruction* instr) {
  int pos = 0;
  ASSIGN_OR_RETURN(const HloInstruction* v, Resolve(instr, &pos));
  ASSIGN_OR_RETURN(int r, Eval(v, pos));
  Pin({v, pos});
  return r;
}

void TileEvaluator::Release(const HloInstruction* instr) {
  int pos = 0;
  auto v = Resolve(instr, &pos);
  if (!v.ok()) return;
  Unpin({*v, pos});
  ReleaseKey(*v, pos);
}

StatusOr<int> TileEvaluator::Eval(const HloInstruction* instr, int pos) {
  Value& v = values_[{instr, pos}];
  if (dry_) {
    if (v.uses++ == 0) RETURN_IF_ERROR(Compute(instr, pos).status());
    return -1;
  }
  v.last = ++tick_;
  if (v.reg >= 0) return v.reg;
  if (v.slot >= 0) {  // Spilled: reload.
    const bool wide = v.wide;
    const int64_t slot = v.slot;
    ASSIGN_OR_RETURN(int r, Alloc(wide));
    kb_.Emit(std::string(wide ? "vld.u64 " : "vld.u32 ") + V(r) + ", vmem[" +
             std::to_string(slot) + "]");
    values_[{instr, pos}].reg = r;
    return r;
  }
  ASSIGN_OR_RETURN(int r, Compute(instr, pos));
  Value& after = values_[{instr, pos}];
  const std::string type = TypeName(instr);
  after.reg = r;
  after.wide = IsWide(type);
  after.spillable = type != "c128";
  after.last = ++tick_;
  return r;
}

void TileEvaluator::ReleaseKey(const HloInstruction* instr, int pos) {
  if (dry_) return;
  auto it = values_.find({instr, pos});
  if (it == values_.end()) return;
  if (--it->second.uses > 0) return;
  if (it->second.reg >= 0) pool_.Free(it->second.reg, it->second.wide);
  if (it->second.slot >= 0) {
    free_slots_[it->second.wide ? 1 : 0].push_back(it->second.slot);
  }
  values_.erase(it);
}

StatusOr<int> TileEvaluator::Compute(const HloInstruction* instr, int pos) {
  const std::string type = TypeName(instr);
  const bool wide = IsWide(type);
  int dst = -1;
  if (auto it = staged_.find(instr); it != staged_.end()) {
    ASSIGN_OR_RETURN(dst, Alloc(wide));
    if (it->second.stream >= 0) {
      if (pos != 0 || !stream_load_) {
        return Internal("hloc: streamed operand %" + instr->name() +
                        " read at a mapped position");
      }
      if (!dry_) stream_load_(dst, it->second.stream);
    } else if (pos == 0 && tile_reg_ < 0) {
      if (!dry_) kb_.LoadTile(dst, it->second.mem, it->second.vmem);
    } else {
      ASSIGN_OR_RETURN(int r, PositionReg(pos));
      if (!dry_) {
        kb_.Emit("vgather." + it->second.mem + " " + V(dst) + ", vmem[" +
                 std::to_string(it->second.vmem) + "], " + V(r) + " @m0");
      }
      ReleasePosition(pos);
    }
  } else if (instr->opcode() == HloOpcode::kConstant) {
    ASSIGN_OR_RETURN(dst, Alloc(wide));
    if (!dry_) RETURN_IF_ERROR(EmitSplatScalar(kb_, instr->literal(), dst));
  } else if (instr->opcode() == HloOpcode::kIota) {
    ASSIGN_OR_RETURN(int r, PositionReg(pos));
    ASSIGN_OR_RETURN(int c, Alloc(false));
    ASSIGN_OR_RETURN(int k, Alloc(false));
    if (!dry_) {
      const std::vector<int64_t>& dims = instr->shape().dims();
      const int64_t d = instr->attrs().iota_dimension;
      const int64_t stride = Strides(dims)[d];
      kb_.Splat(k, "s32", std::to_string(stride));
      kb_.Emit("vdiv.s32 " + V(c) + ", " + V(r) + ", " + V(k));
      kb_.Splat(k, "s32", std::to_string(dims[d]));
      kb_.Emit("vrem.s32 " + V(c) + ", " + V(c) + ", " + V(k));
      pool_.Free(k, false);
    }
    ReleasePosition(pos);
    if (type == "s32") {
      dst = c;
    } else {
      ASSIGN_OR_RETURN(dst, Alloc(wide));
      if (!dry_) {
        auto index = HloInstruction::CreateParameter(
            0, Shape(PrimitiveType::S32, instr->shape().dims()), "iota_index");
        auto cvt = HloInstruction::Create(HloOpcode::kConvert, instr->shape(),
                                          {index.get()}, "iota_convert");
        Status s = EmitVectorOp(kb_, pool_, *cvt, dst, {c});
        cvt.reset();
        RETURN_IF_ERROR(s);
        pool_.Free(c, false);
      }
    }
  } else if (ClassifyFusedOp(*instr) == FusedOpClass::kElementwise) {
    std::vector<int> srcs;
    std::vector<std::pair<const HloInstruction*, int>> keys;
    for (const HloInstruction* o : instr->operands()) {
      int p = pos;
      ASSIGN_OR_RETURN(const HloInstruction* ov, Resolve(o, &p));
      ASSIGN_OR_RETURN(int r, Eval(ov, p));
      Pin({ov, p});
      srcs.push_back(r);
      keys.emplace_back(ov, p);
    }
    ASSIGN_OR_RETURN(dst, Alloc(wide));
    if (!dry_) RETURN_IF_ERROR(EmitVectorOpSpilling(*instr, dst, srcs));
    for (auto [ov, p] : keys) {
      Unpin({ov, p});
      ReleaseKey(ov, p);
    }
  } else {
    return CannotCompile(*instr, type + " inside a fused kernel");
  }
  if (auto t = taps_.find(instr); t != taps_.end()) {
    if (pos == 0 && tile_reg_ < 0) {
      if (!dry_) kb_.StoreTile(t->second.mem, t->second.vmem, dst);
    } else {
      ASSIGN_OR_RETURN(int r, PositionReg(pos));
      if (!dry_) {
        kb_.Emit("vscatter." + t->second.mem + " vmem[" +
                 std::to_string(t->second.vmem) + "], " + V(r) + ", " + V(dst) +
                 " @m0");
      }
      ReleasePosition(pos);
    }
  }
  return dst;
}

void TileEvaluator::End() {
  if (!dry_) {
    for (size_t i = 0; i < positions_.size(); ++i) {
      const Position& p = positions_[i];
      if (p.reg >= 0 && !(i == 0 && tile_reg_ >= 0)) pool_.Free(p.reg, false);
    }
    for (const auto& [key, v] : values_) {
      if (v.reg >= 0) pool_.Free(v.reg, v.wide);
      if (v.slot >= 0) free_slots_[v.wide ? 1 : 0].push_back(v.slot);
    }
  }
  pinned_.clear();
  positions_.resize(1);
  positions_[0].uses = 0;
  positions_[0].reg = tile_reg_;
  position_ids_.clear();
  values_.clear();
}

}  // namespace trench::codegen::fusion_internal
