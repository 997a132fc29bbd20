// EmitVectorOp: register pool, emission context, dispatch, and the
// structural ops (compare, select, clamp, is-finite, copy, map).
#include "compiler/codegen/vector_ops.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

#include "compiler/codegen/emitters.h"
#include "compiler/codegen/vector_ops_internal.h"
#include "compiler/ir/hlo_computation.h"

namespace trench::codegen {

using vops::Ctx;
using vops::Info;
using vops::Kind;
using vops::TypeInfo;
using vops::V;

StatusOr<int> VRegPool::AllocN(int n) {
  const unsigned ones = (1u << n) - 1;
  for (int r = 0; r + n <= 28; r += n) {
    const unsigned bits = ones << r;
    if ((used_ & bits) == 0) {
      used_ |= bits;
      return r;
    }
  }
  return ResourceExhausted("hloc: out of vector registers (v0..v27)");
}

void VRegPool::FreeN(int v, int n) { used_ &= ~(((1u << n) - 1) << v); }

void VRegPool::ReserveN(int v, int n) { used_ |= ((1u << n) - 1) << v; }

StatusOr<int> VRegPool::Alloc(bool wide) { return AllocN(wide ? 2 : 1); }

void VRegPool::Free(int v, bool wide) { FreeN(v, wide ? 2 : 1); }

void VRegPool::Reserve(int v, bool wide) { ReserveN(v, wide ? 2 : 1); }

bool IsWide(const std::string& hlo_type) {
  return hlo_type == "f64" || hlo_type == "s64" || hlo_type == "u64" ||
         hlo_type == "c64";
}

namespace vops {

TypeInfo Info(PrimitiveType t) {
  TypeInfo i;
  i.name = std::string(PrimitiveTypeName(t));
  i.lane = LaneType(i.name);
  if (i.lane.empty()) return i;
  i.bits = BitWidth(t);
  i.wide = IsWide(i.name);
  i.narrow = i.bits < 32 && t != PrimitiveType::PRED;
  switch (KindOf(t)) {
    case TypeKind::kFloat:
      i.kind = Kind::kFloat;
      break;
    case TypeKind::kSigned:
      i.kind = Kind::kSigned;
      break;
    case TypeKind::kUnsigned:
      i.kind = Kind::kUnsigned;
      break;
    case TypeKind::kPred:
      i.kind = Kind::kPred;
      break;
    default:
      i.lane.clear();
      break;
  }
  return i;
}

std::string V(int n) { return "v" + std::to_string(n); }

Ctx::~Ctx() {
  for (const auto& [v, n] : temps_) pool_.FreeN(v, n);
}

StatusOr<int> Ctx::Tmp(bool wide) { return TmpN(wide ? 2 : 1); }

StatusOr<int> Ctx::TmpN(int n) {
  ASSIGN_OR_RETURN(int v, pool_.AllocN(n));
  temps_.push_back({v, n});
  return v;
}

void Ctx::Release(int v) {
  for (auto it = temps_.begin(); it != temps_.end(); ++it) {
    if (it->first == v) {
      pool_.FreeN(v, it->second);
      temps_.erase(it);
      return;
    }
  }
}

void Ctx::MovN(int d, int s, int n) {
  if (d == s) return;
  for (int k = 0; k < n; ++k) E("vmov " + V(d + k) + ", " + V(s + k));
}

void Ctx::Imm(int v, const std::string& type, uint64_t bits) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx",
                static_cast<unsigned long long>(bits));
  E("vimm." + type + " " + V(v) + ", " + buf);
}

void Ctx::Mov(int d, int s, bool wide) {
  if (d == s) return;
  E("vmov " + V(d) + ", " + V(s));
  if (wide) E("vmov " + V(d + 1) + ", " + V(s + 1));
}

void Ctx::Fix(int r, const TypeInfo& t) {
  if (!t.narrow) return;
  E("vpack." + t.name + " " + V(r) + ", " + V(r));
  E("vunpack." + t.name + " " + V(r) + ", " + V(r));
}

Status Ctx::Cannot(const std::string& what) const {
  return CannotCompile(instr_, what);
}

}  // namespace vops

namespace {

const char* CompareMnemonic(ComparisonDirection d) {
  switch (d) {
    case ComparisonDirection::kEq:
      return "vcmpeq";
    case ComparisonDirection::kNe:
      return "vcmpne";
    case ComparisonDirection::kLt:
      return "vcmplt";
    case ComparisonDirection::kLe:
      return "vcmple";
    case ComparisonDirection::kGt:
      return "vcmpgt";
    case ComparisonDirection::kGe:
      return "vcmpge";
  }
  return "vcmpeq";
}

// The total-order key of a float's bits as a signed integer (oracle
// SignMagnitudeKey): key = x ^ ((x >>a (w-1)) >>l 1), so negative values
// get their magnitude bits flipped. bf16/f16 lanes hold exact f32 values,
// whose f32 bit order is the narrow type's bit order.
Status TotalOrderKey(Ctx& c, const TypeInfo& t, int dst, int x) {
  const std::string it = t.wide ? "s64" : "s32";
  ASSIGN_OR_RETURN(int sh, c.Tmp(t.wide));
  ASSIGN_OR_RETURN(int one, c.Tmp(t.wide));
  ASSIGN_OR_RETURN(int s, c.Tmp(t.wide));
  c.Imm(sh, it, t.wide ? 63 : 31);
  c.Imm(one, it, 1);
  c.E("vshra." + it + " " + V(s) + ", " + V(x) + ", " + V(sh));
  c.E("vshrl." + it + " " + V(s) + ", " + V(s) + ", " + V(one));
  c.E("vxor." + it + " " + V(dst) + ", " + V(x) + ", " + V(s));
  return Status::Ok();
}

Status EmitCompare(Ctx& c, int dst, const std::vector<int>& s) {
  const TypeInfo t = Info(c.instr().operand(0)->shape().element_type());
  if (t.lane.empty()) return c.Cannot(t.name);
  const std::string m = CompareMnemonic(c.instr().attrs().comparison_direction);
  std::string lane = t.lane;
  int a = s[0], b = s[1];
  if (t.kind == Kind::kFloat &&
      c.instr().attrs().comparison_type == ComparisonType::kTotalOrder) {
    ASSIGN_OR_RETURN(a, c.Tmp(t.wide));
    ASSIGN_OR_RETURN(b, c.Tmp(t.wide));
    RETURN_IF_ERROR(TotalOrderKey(c, t, a, s[0]));
    RETURN_IF_ERROR(TotalOrderKey(c, t, b, s[1]));
    lane = t.wide ? "s64" : "s32";
  }
  c.E(m + "." + lane + " m1, " + V(a) + ", " + V(b));
  c.E("vmtov " + V(dst) + ", m1");
  return Status::Ok();
}

Status EmitSelect(Ctx& c, int dst, const std::vector<int>& s) {
  const TypeInfo t = Info(c.instr().shape().element_type());
  if (t.lane.empty()) return c.Cannot(t.name);
  c.E("vvtom m1, " + V(s[0]));
  c.E("vsel." + t.lane + " " + V(dst) + ", m1, " + V(s[1]) + ", " + V(s[2]));
  return Status::Ok();
}

// clamp(lo, x, hi) = min(hi, max(x, lo)) as std::min/std::max (oracle):
// max returns x and min returns hi on equal operands (signed zeros), and
// any NaN operand gives NaN (the machine's min/max propagate NaN).
Status EmitClamp(Ctx& c, int dst, const std::vector<int>& s) {
  const TypeInfo t = Info(c.instr().shape().element_type());
  if (t.lane.empty()) return c.Cannot(t.name);
  const int lo = s[0], x = s[1], hi = s[2];
  ASSIGN_OR_RETURN(int r, c.Tmp(t.wide));
  if (t.kind == Kind::kPred) {
    c.E("vor.s32 " + V(r) + ", " + V(x) + ", " + V(lo));
    c.E("vand.s32 " + V(dst) + ", " + V(r) + ", " + V(hi));
    return Status::Ok();
  }
  const std::string L = "." + t.lane + " ";
  c.E("vmax" + L + V(r) + ", " + V(x) + ", " + V(lo));
  if (t.kind == Kind::kFloat) {
    c.E("vcmpeq" + L + "m1, " + V(x) + ", " + V(lo));
    c.E("vsel" + L + V(r) + ", m1, " + V(x) + ", " + V(r));
    c.E("vcmpeq" + L + "m1, " + V(hi) + ", " + V(r));
    c.E("vmin" + L + V(r) + ", " + V(hi) + ", " + V(r));
    c.E("vsel" + L + V(dst) + ", m1, " + V(hi) + ", " + V(r));
  } else {
    c.E("vmin" + L + V(dst) + ", " + V(hi) + ", " + V(r));
  }
  return Status::Ok();
}

// is-finite: the exponent field is not all ones (f64: in the high word).
Status EmitIsFinite(Ctx& c, int dst, int x) {
  const TypeInfo t = Info(c.instr().operand(0)->shape().element_type());
  if (t.kind != Kind::kFloat) return c.Cannot(t.name);
  ASSIGN_OR_RETURN(int k, c.Tmp(false));
  ASSIGN_OR_RETURN(int e, c.Tmp(false));
  c.Imm(k, "u32", t.wide ? 0x7ff00000u : 0x7f800000u);
  c.E("vand.u32 " + V(e) + ", " + V(t.wide ? x + 1 : x) + ", " + V(k));
  c.E("vcmpne.u32 m1, " + V(e) + ", " + V(k));
  c.E("vmtov " + V(dst) + ", m1");
  return Status::Ok();
}

// The lane-form bits of element 0 of a scalar literal.
StatusOr<uint64_t> LaneBits(const Literal& l) {
  const PrimitiveType t = l.element_type();
  const uint8_t* p = l.bytes().data();
  if (l.bytes().size() < static_cast<size_t>(ByteWidth(t)) ||
      ByteWidth(t) == 0) {
    return InvalidArgument("not a scalar array literal");
  }
  auto load = [p]<typename T>(T) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
  };
  float f;
  switch (t) {
    case PrimitiveType::PRED:
      return uint64_t{p[0] != 0};
    case PrimitiveType::S8:
      return static_cast<uint32_t>(int32_t{load(int8_t{})});
    case PrimitiveType::U8:
      return uint64_t{p[0]};
    case PrimitiveType::S16:
      return static_cast<uint32_t>(int32_t{load(int16_t{})});
    case PrimitiveType::U16:
      return uint64_t{load(uint16_t{})};
    case PrimitiveType::S32:
    case PrimitiveType::U32:
    case PrimitiveType::F32:
      return uint64_t{load(uint32_t{})};
    case PrimitiveType::S64:
    case PrimitiveType::U64:
    case PrimitiveType::F64:
      return load(uint64_t{});
    case PrimitiveType::BF16:
      f = Bf16BitsToF32(load(uint16_t{}));
      break;
    case PrimitiveType::F16:
      f = F16BitsToF32(load(uint16_t{}));
      break;
    default:
      return Unimplemented("hloc: cannot compile constant of type " +
                           std::string(PrimitiveTypeName(t)));
  }
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return uint64_t{b};
}

// The instructions `comp`'s root depends on (dead code is neither checked
// nor emitted: it would only take registers).
std::set<const HloInstruction*> Needed(const HloComputation* comp) {
  std::set<const HloInstruction*> needed;
  std::vector<const HloInstruction*> stack = {comp->root_instruction()};
  while (!stack.empty()) {
    const HloInstruction* i = stack.back();
    stack.pop_back();
    if (!needed.insert(i).second) continue;
    for (const HloInstruction* o : i->operands()) stack.push_back(o);
  }
  return needed;
}

// A data-movement op of a one-element array (f32[] -> f32[1,1], a broadcast
// of a scalar to f32[1], ...): the value stays in its register. Map
// computations may hold such values between their scalar parameters and
// root.
bool IsOneElementMove(const HloInstruction& i) {
  switch (i.opcode()) {
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kBroadcast:
    case HloOpcode::kTranspose:
    case HloOpcode::kSlice:
    case HloOpcode::kReverse:
      break;
    default:
      return false;
  }
  const Shape& in = i.operand(0)->shape();
  return i.operand_count() == 1 && i.shape().IsArray() && in.IsArray() &&
         i.shape().element_count() == 1 && in.element_count() == 1 &&
         i.shape().element_type() == in.element_type();
}

}  // namespace

std::vector<const HloInstruction*> RegisterOrder(const HloComputation& comp) {
  std::map<const HloInstruction*, int64_t> need;
  for (const HloInstruction* i : comp.MakeInstructionPostOrder()) {
    std::vector<int64_t> n;
    for (const HloInstruction* o : i->operands()) n.push_back(need.at(o));
    std::sort(n.rbegin(), n.rend());
    int64_t most = 1;
    for (size_t k = 0; k < n.size(); ++k) {
      most = std::max<int64_t>(most, n[k] + static_cast<int64_t>(k));
    }
    need[i] = most;
  }
  std::vector<const HloInstruction*> order;
  std::set<const HloInstruction*> seen;
  // Iterative DFS: (instruction, operands pushed yet).
  std::vector<std::pair<const HloInstruction*, bool>> stack = {
      {comp.root_instruction(), false}};
  while (!stack.empty()) {
    auto [i, expanded] = stack.back();
    stack.pop_back();
    if (expanded) {
      order.push_back(i);
      continue;
    }
    if (!seen.insert(i).second) continue;
    stack.push_back({i, true});
    std::vector<const HloInstruction*> ops(i->operands().begin(),
                                           i->operands().end());
    // Pushed so that the neediest operand is popped (visited) first.
    std::stable_sort(ops.begin(), ops.end(),
                     [&](const HloInstruction* a, const HloInstruction* b) {
                       return need.at(a) < need.at(b);
                     });
    for (const HloInstruction* o : ops) {
      if (!seen.count(o)) stack.push_back({o, false});
    }
  }
  return order;
}

namespace {

// map: the to_apply computation's instructions in RegisterOrder, parameters
// bound to the operands' registers, scalar constants splatted. Tuples,
// get-tuple-element, and fusions/calls (whose computations are emitted the
// same way, e.g. a multi-output fusion inside a map) regroup registers:
// every value is a list of registers, one per scalar leaf. The root's
// single leaf goes to `dst` when dst >= 0.
Status EmitScalarComputation(Ctx& c, const HloComputation* comp,
                             const std::vector<std::vector<int>>& args, int dst,
                             std::vector<int>* out, int depth) {
  if (depth > 16) return c.Cannot("deeply nested to_apply calls");
  const HloInstruction* root = comp->root_instruction();
  std::unordered_map<const HloInstruction*, std::vector<int>> reg;
  // Register pressure: a value's scratch registers go back to the pool after
  // its last reader (a c128 value takes four registers; holding every value
  // of a long map computation would exhaust v0..v27).
  const std::vector<const HloInstruction*> order = RegisterOrder(*comp);
  std::unordered_map<const HloInstruction*, int> uses;  // Readers left.
  std::set<int> owned;  // Scratch registers this invocation took.
  for (const HloInstruction* i : order) {
    for (const HloInstruction* o : i->operands()) ++uses[o];
  }
  auto live = [&](const HloInstruction* v) { return v == root || uses[v] > 0; };
  auto release_dead = [&](const HloInstruction* v) {
    auto it = reg.find(v);
    if (live(v) || it == reg.end()) return;
    for (int r : it->second) {
      if (!owned.count(r)) continue;
      bool shared = false;  // Another live value (tuple, GTE) holds it.
      for (const auto& [other, rs] : reg) {
        if (other != v && live(other) &&
            std::find(rs.begin(), rs.end(), r) != rs.end()) {
          shared = true;
        }
      }
      if (shared) continue;
      c.Release(r);
      owned.erase(r);
    }
  };
  auto retire = [&](const HloInstruction* i) {
    release_dead(i);  // Dead code: nobody reads it.
    for (const HloInstruction* o : i->operands()) {
      --uses[o];
      release_dead(o);
    }
  };
  for (const HloInstruction* i : order) {
    switch (i->opcode()) {
      case HloOpcode::kParameter:
        if (i->parameter_number() >= static_cast<int64_t>(args.size()) ||
            static_cast<int64_t>(args[i->parameter_number()].size()) !=
                LeafCount(i->shape())) {
          return c.Cannot("to_apply parameter " + i->ShortString());
        }
        reg[i] = args[i->parameter_number()];
        continue;
      case HloOpcode::kTuple: {
        std::vector<int>& r = reg[i];
        for (const HloInstruction* o : i->operands()) {
          const std::vector<int>& l = reg.at(o);
          r.insert(r.end(), l.begin(), l.end());
        }
        retire(i);
        continue;
      }
      case HloOpcode::kGetTupleElement: {
        const HloInstruction* o = i->operand(0);
        int64_t skip = 0;
        for (int64_t k = 0; k < i->tuple_index(); ++k) {
          skip += LeafCount(o->shape().tuple_shape(k));
        }
        const std::vector<int>& l = reg.at(o);
        reg[i].assign(l.begin() + skip,
                      l.begin() + skip + LeafCount(i->shape()));
        retire(i);
        continue;
      }
      case HloOpcode::kFusion:
      case HloOpcode::kCall: {
        if (i->called_computations().size() != 1) {
          return c.Cannot("to_apply instruction " + i->ShortString());
        }
        std::vector<std::vector<int>> a;
        for (const HloInstruction* o : i->operands()) a.push_back(reg.at(o));
        RETURN_IF_ERROR(EmitScalarComputation(c, i->called_computations()[0], a,
                                              -1, &reg[i], depth + 1));
        continue;
      }
      default:
        if (IsOneElementMove(*i)) {
          reg[i] = reg.at(i->operand(0));
          retire(i);
          continue;
        }
        break;
    }
    const TypeInfo t = Info(i->shape().element_type());
    const bool cx =
        i->shape().IsArray() && IsComplex(i->shape().element_type());
    if (!i->shape().IsArray() || i->shape().element_count() != 1 ||
        (t.lane.empty() && !cx)) {
      return c.Cannot("to_apply instruction " + i->ShortString());
    }
    int r = dst;
    if (i != root || dst < 0) {
      ASSIGN_OR_RETURN(r, c.TmpN(RegCount(t.name)));
      owned.insert(r);
    }
    if (i->opcode() == HloOpcode::kConstant) {
      if (!i->has_literal()) return c.Cannot("constant without a value");
      RETURN_IF_ERROR(EmitSplatScalar(c.kb(), i->literal(), r));
    } else {
      if (!IsVectorOp(*i)) {
        return c.Cannot("to_apply instruction " + i->ShortString());
      }
      std::vector<int> ops;
      for (const HloInstruction* o : i->operands()) {
        if (reg.at(o).size() != 1) {
          return c.Cannot("to_apply instruction " + i->ShortString());
        }
        ops.push_back(reg.at(o)[0]);
      }
      RETURN_IF_ERROR(EmitVectorOp(c.kb(), c.pool(), *i, r, ops));
    }
    reg[i] = {r};
    retire(i);
  }
  *out = reg.at(root);
  if (dst < 0) return Status::Ok();
  if (out->size() != 1 || !root->shape().IsArray()) {
    return c.Cannot("to_apply root " + root->ShortString());
  }
  if ((*out)[0] != dst) {
    c.MovN(dst, (*out)[0], RegCount(Info(root->shape().element_type()).name));
  }
  return Status::Ok();
}

Status EmitMap(Ctx& c, int dst, const std::vector<int>& s) {
  std::vector<std::vector<int>> args;
  for (int r : s) args.push_back({r});
  std::vector<int> out;
  return EmitScalarComputation(c, c.instr().to_apply(), args, dst, &out, 0);
}

// Whether every instruction of `comp` (and of the computations its fusions
// and calls call) is one EmitScalarComputation handles.
bool ScalarComputationOk(const HloComputation* comp, int depth) {
  if (comp == nullptr || depth > 16) return false;
  for (const HloInstruction* i : Needed(comp)) {
    switch (i->opcode()) {
      case HloOpcode::kParameter:
      case HloOpcode::kConstant:
      case HloOpcode::kTuple:
      case HloOpcode::kGetTupleElement:
        continue;
      case HloOpcode::kFusion:
      case HloOpcode::kCall:
        if (i->called_computations().size() != 1 ||
            !ScalarComputationOk(i->called_computations()[0], depth + 1)) {
          return false;
        }
        continue;
      default:
        if (!IsOneElementMove(*i) && !IsVectorOp(*i)) return false;
    }
  }
  return true;
}

}  // namespace

Status EmitSplatScalar(KernelBuilder& kb, const Literal& value, int dst) {
  const TypeInfo t = Info(value.element_type());
  if (IsComplex(value.element_type()) && value.shape().IsArray()) {
    ASSIGN_OR_RETURN(auto parts, vops::ComplexLaneBits(value));
    const bool c128 = value.element_type() == PrimitiveType::C128;
    const std::string part = c128 ? "f64" : "f32";
    char buf[32];
    std::snprintf(buf, sizeof(buf), "0x%llx",
                  static_cast<unsigned long long>(parts.first));
    kb.Emit("vimm." + part + " " + V(dst) + ", " + buf);
    std::snprintf(buf, sizeof(buf), "0x%llx",
                  static_cast<unsigned long long>(parts.second));
    kb.Emit("vimm." + part + " " + V(dst + (c128 ? 2 : 1)) + ", " + buf);
    return Status::Ok();
  }
  if (t.lane.empty() || !value.shape().IsArray()) {
    return Unimplemented("hloc: cannot compile constant of type " + t.name);
  }
  ASSIGN_OR_RETURN(uint64_t bits, LaneBits(value));
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%llx",
                static_cast<unsigned long long>(bits));
  kb.Emit("vimm." + t.lane + " " + V(dst) + ", " + buf);
  return Status::Ok();
}

bool IsVectorOp(const HloInstruction& instr) {
  switch (instr.opcode()) {
    case HloOpcode::kCompare:
    case HloOpcode::kSelect:
    case HloOpcode::kClamp:
    case HloOpcode::kConvert:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kReducePrecision:
    case HloOpcode::kIsFinite:
    case HloOpcode::kCopy:
    case HloOpcode::kReal:
    case HloOpcode::kImag:
    case HloOpcode::kComplex:
      return true;
    case HloOpcode::kMap:
      return !instr.called_computations().empty() &&
             ScalarComputationOk(instr.to_apply(), 0);
    default:
      return vops::IsArithmeticOp(instr.opcode());
  }
}

Status EmitVectorOp(KernelBuilder& kb, VRegPool& pool,
                    const HloInstruction& instr, int dst,
                    const std::vector<int>& srcs) {
  Ctx c(kb, pool, instr);
  if (instr.opcode() != HloOpcode::kMap &&
      static_cast<int64_t>(srcs.size()) != instr.operand_count()) {
    return Internal("hloc: EmitVectorOp: " + instr.ShortString() + " got " +
                    std::to_string(srcs.size()) + " source registers");
  }
  if (!IsVectorOp(instr)) {
    return c.Cannot(std::string(
        PrimitiveTypeName(instr.shape().IsArray() ? instr.shape().element_type()
                                                  : PrimitiveType::TUPLE)));
  }
  if (vops::IsComplexOp(instr)) return vops::EmitComplexOp(c, dst, srcs);
  const TypeInfo out = Info(instr.shape().element_type());
  const bool complex_map = instr.opcode() == HloOpcode::kMap &&
                           IsComplex(instr.shape().element_type());
  if (out.lane.empty() && !complex_map) return c.Cannot(out.name);
  switch (instr.opcode()) {
    case HloOpcode::kCompare:
      return EmitCompare(c, dst, srcs);
    case HloOpcode::kSelect:
      return EmitSelect(c, dst, srcs);
    case HloOpcode::kClamp:
      return EmitClamp(c, dst, srcs);
    case HloOpcode::kIsFinite:
      return EmitIsFinite(c, dst, srcs[0]);
    case HloOpcode::kCopy:
      c.Mov(dst, srcs[0], out.wide);
      return Status::Ok();
    case HloOpcode::kConvert:
      return vops::EmitConvert(c, dst, srcs[0]);
    case HloOpcode::kBitcastConvert:
      return vops::EmitBitcastConvert(c, dst, srcs[0]);
    case HloOpcode::kReducePrecision:
      return vops::EmitReducePrecision(c, dst, srcs[0]);
    case HloOpcode::kMap:
      if (srcs.size() != instr.to_apply()->parameters().size()) {
        return Internal("hloc: EmitVectorOp: map arity mismatch");
      }
      return EmitMap(c, dst, srcs);
    default:
      return vops::EmitArithmetic(c, dst, srcs);
  }
}

}  // namespace trench::codegen
