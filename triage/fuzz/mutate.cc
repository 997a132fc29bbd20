#include "triage/fuzz/mutate.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/literal.h"
#include "triage/fuzz/interesting_values.h"

namespace trench::fuzz {
namespace {

using O = HloOpcode;
using P = PrimitiveType;

std::vector<HloInstruction*> AllInstructions(const HloModule& m) {
  std::vector<HloInstruction*> out;
  for (HloComputation* c : m.computations()) {
    for (HloInstruction* i : c->MakeInstructionPostOrder()) out.push_back(i);
  }
  return out;
}

// Swap classes: any member may replace any other.
const std::vector<std::vector<O>>& SwapClasses() {
  static const auto* v = new std::vector<std::vector<O>>{
      {O::kAdd, O::kSubtract, O::kMultiply, O::kMaximum, O::kMinimum},
      {O::kAnd, O::kOr, O::kXor},
      {O::kFloor, O::kCeil, O::kRoundNearestAfz, O::kRoundNearestEven},
      {O::kTanh, O::kLogistic, O::kSin, O::kCos, O::kErf},
      {O::kExp, O::kExpm1},
      {O::kSqrt, O::kCbrt},
      {O::kNegate, O::kCopy},
      {O::kShiftLeft, O::kShiftRightArithmetic, O::kShiftRightLogical},
  };
  return *v;
}

// Directed swaps that may leave a bounded domain (exp of large x).
const std::vector<std::vector<O>>& UnboundedClasses() {
  static const auto* v = new std::vector<std::vector<O>>{
      {O::kTanh, O::kLogistic, O::kSin, O::kCos, O::kErf, O::kExp, O::kLog,
       O::kSqrt, O::kRsqrt},
      {O::kAdd, O::kSubtract, O::kMultiply, O::kMaximum, O::kMinimum,
       O::kDivide, O::kPower, O::kRemainder},
  };
  return *v;
}

std::string Name(const HloInstruction& i) { return "%" + i.name(); }

// Whether `to` may replace `i`'s opcode: complex values have no order, so
// no maximum, minimum or remainder of them (XLA rejects those).
bool AppliesTo(O to, const HloInstruction& i) {
  if (!IsComplex(i.shape().element_type())) return true;
  return to != O::kMaximum && to != O::kMinimum && to != O::kRemainder;
}

}  // namespace

std::string SwapOp(HloModule& m, Rng& rng, bool allow_nonfinite) {
  std::vector<std::pair<HloInstruction*, std::vector<O>>> cands;
  const auto& classes = allow_nonfinite ? UnboundedClasses() : SwapClasses();
  for (HloInstruction* i : AllInstructions(m)) {
    if (i->opcode() == O::kCompare) {
      cands.push_back({i, {}});
      continue;
    }
    for (const auto& cls : classes) {
      if (std::find(cls.begin(), cls.end(), i->opcode()) == cls.end()) continue;
      std::vector<O> others;
      for (O o : cls) {
        if (o != i->opcode() && AppliesTo(o, *i)) others.push_back(o);
      }
      if (!others.empty()) cands.push_back({i, others});
    }
    if (!allow_nonfinite && i->opcode() == O::kExp)
      cands.push_back({i, {O::kTanh}});
  }
  if (cands.empty()) return "";
  auto& [instr, others] = cands[rng.Uniform(0, cands.size() - 1)];
  if (instr->opcode() == O::kCompare) {
    auto& a = instr->mutable_attrs();
    const auto old = a.comparison_direction;
    // Complex values are only compared for (in)equality (XLA's rule).
    const bool complex = IsComplex(instr->operand(0)->shape().element_type());
    const auto dir = complex
                         ? (rng.Uniform(0, 1) ? ComparisonDirection::kEq
                                              : ComparisonDirection::kNe)
                         : static_cast<ComparisonDirection>(rng.Uniform(0, 5));
    if (dir == old) return "";
    a.comparison_direction = dir;
    return "swap " + Name(*instr) + ": direction " +
           ComparisonDirectionName(old) + " -> " + ComparisonDirectionName(dir);
  }
  const O to = rng.Pick(others);
  auto repl = HloInstruction::Create(to, instr->shape(), instr->operands(),
                                     instr->name());
  repl->mutable_attrs().raw = instr->attrs().raw;
  HloComputation* c = instr->parent();
  const std::string what = "swap " + Name(*instr) + ": " +
                           std::string(OpcodeName(instr->opcode())) + " -> " +
                           std::string(OpcodeName(to));
  HloInstruction* added = c->AddInstruction(std::move(repl));
  instr->ReplaceAllUsesWith(added);
  if (c->root_instruction() == instr) c->set_root_instruction(added);
  if (!c->RemoveInstruction(instr).ok()) return "";
  return what;
}

namespace {

void RetypeShape(Shape& s, P from, P to) {
  if (s.IsTuple()) {
    for (Shape& e : s.mutable_tuple_shapes()) RetypeShape(e, from, to);
  } else if (s.element_type() == from) {
    s.set_element_type(to);
  }
}

}  // namespace

std::string ChangeDtype(HloModule& m, Rng& rng) {
  std::vector<P> present;
  for (HloInstruction* i : AllInstructions(m)) {
    ForEachLeafShape(i->shape(), [&](const Shape& s) {
      const P t = s.element_type();
      if ((t == P::F32 || t == P::BF16 || t == P::F16) &&
          std::find(present.begin(), present.end(), t) == present.end()) {
        present.push_back(t);
      }
    });
  }
  if (present.empty()) return "";
  std::sort(present.begin(), present.end());
  const P from = rng.Pick(present);
  std::vector<P> to_choices;
  for (P t : {P::F32, P::BF16, P::F16}) {
    if (std::find(present.begin(), present.end(), t) == present.end()) {
      to_choices.push_back(t);
    }
  }
  if (to_choices.empty()) return "";
  const P to = rng.Pick(to_choices);
  for (HloInstruction* i : AllInstructions(m)) {
    Shape s = i->shape();
    RetypeShape(s, from, to);
    if (i->opcode() == O::kConstant && i->has_literal() &&
        i->shape().IsArray() && i->shape().element_type() == from) {
      Literal lit(s);
      for (int64_t k = 0; k < lit.element_count(); ++k) {
        lit.SetFromDouble(k, i->literal().GetAsDouble(k));
      }
      i->set_literal(std::move(lit));
    }
    i->set_shape(std::move(s));
  }
  return "dtype " + std::string(PrimitiveTypeName(from)) + " -> " +
         std::string(PrimitiveTypeName(to));
}

std::string ChangeLayout(HloModule& m, Rng& rng) {
  std::vector<HloInstruction*> cands;
  for (HloInstruction* i : AllInstructions(m)) {
    if (i->shape().IsArray() && i->shape().rank() >= 2) cands.push_back(i);
  }
  if (cands.empty()) return "";
  HloInstruction* i = rng.Pick(cands);
  const int64_t r = i->shape().rank();
  std::vector<int64_t> m2m(r);
  std::iota(m2m.begin(), m2m.end(), 0);
  for (int64_t k = r - 1; k > 0; --k) std::swap(m2m[k], m2m[rng.Uniform(0, k)]);
  i->mutable_shape()->set_layout(Layout{m2m, ""});
  return "layout " + Name(*i) + ": " + ListText(m2m);
}

std::string PerturbConstant(HloModule& m, Rng& rng) {
  std::vector<HloInstruction*> cands;
  for (HloInstruction* i : AllInstructions(m)) {
    if (i->opcode() == O::kConstant && i->has_literal() &&
        i->shape().IsArray() && i->shape().element_count() > 0 &&
        !IsComplex(i->shape().element_type()) &&
        i->shape().element_type() != P::PRED) {
      cands.push_back(i);
    }
  }
  if (cands.empty()) return "";
  HloInstruction* i = rng.Pick(cands);
  Literal lit = i->literal();
  const int64_t n = lit.element_count();
  const int64_t changes = std::min<int64_t>(n, rng.Uniform(1, 3));
  for (int64_t k = 0; k < changes; ++k) {
    const int64_t e = rng.Uniform(0, n - 1);
    const double v = lit.GetAsDouble(e);
    if (!std::isfinite(v)) continue;
    double nv = v;
    switch (rng.Uniform(0, 3)) {
      case 0:
        nv = v * (1 + (rng.Real() - 0.5) / 4);
        break;
      case 1:
        nv = -v;
        break;
      case 2:
        nv = v + (rng.Chance(0.5) ? 1 : -1);
        break;
      default:
        nv = 0;
    }
    if (IsInteger(lit.element_type())) nv = std::trunc(nv);
    lit.SetFromDouble(e, nv);
  }
  i->set_literal(std::move(lit));
  return "constant " + Name(*i) + ": " + std::to_string(changes) + " elements";
}

namespace {

// The interesting values operand k of i may take (see EdgeOperand).
std::vector<InterestingValue> EdgeChoices(const HloInstruction& i, int64_t k,
                                          bool allow_nonfinite) {
  const P t = i.operand(k)->shape().element_type();
  std::vector<InterestingValue> out;
  const bool real = IsFloat(t) || IsComplex(t);
  if (real && !allow_nonfinite && i.opcode() == O::kPower) return out;
  const bool divisor =
      k == 1 && (i.opcode() == O::kDivide || i.opcode() == O::kRemainder);
  for (const InterestingValue& v : InterestingValues(t)) {
    if (real && !allow_nonfinite) {
      if (!v.finite || v.magnitude > 4) continue;
      if (divisor && v.magnitude < 0.5) continue;
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace

std::string EdgeOperand(HloModule& m, Rng& rng, bool allow_nonfinite) {
  HloComputation* entry = m.entry_computation();
  if (!entry) return "";
  std::vector<std::pair<HloInstruction*, int64_t>> cands;
  for (HloInstruction* i : entry->MakeInstructionPostOrder()) {
    if (!HasEdgeSemantics(i->opcode())) continue;
    for (int64_t k = 0; k < i->operand_count(); ++k) {
      const Shape& s = i->operand(k)->shape();
      if (s.IsArray() && !EdgeChoices(*i, k, allow_nonfinite).empty()) {
        cands.push_back({i, k});
      }
    }
  }
  if (cands.empty()) return "";
  auto [instr, k] = rng.Pick(cands);
  const std::vector<InterestingValue> all =
      EdgeChoices(*instr, k, allow_nonfinite);
  std::vector<InterestingValue> values;
  const int n = static_cast<int>(rng.Uniform(1, 3));
  for (int j = 0; j < n; ++j) values.push_back(rng.Pick(all));
  const Shape& s = instr->operand(k)->shape();
  const P t = s.element_type();
  const std::string name = instr->name() + ".edge" + std::to_string(k);
  HloInstruction* repl;
  if (s.element_count() <= 16) {
    Literal lit(s);
    for (int64_t e = 0; e < lit.element_count(); ++e) {
      StoreInteresting(lit, e, rng.Pick(values));
    }
    repl = entry->AddInstruction(
        HloInstruction::CreateConstant(std::move(lit), name));
  } else {
    values.resize(1);
    Literal scalar{Shape(t, {})};
    StoreInteresting(scalar, 0, values[0]);
    HloInstruction* c = entry->AddInstruction(
        HloInstruction::CreateConstant(std::move(scalar), name + ".scalar"));
    repl = entry->AddInstruction(
        HloInstruction::Create(O::kBroadcast, s, {c}, name));
    repl->mutable_attrs().has_dimensions = true;
  }
  instr->ReplaceOperandWith(k, repl);
  std::string what =
      "edge " + Name(*instr) + " operand " + std::to_string(k) + ":";
  for (size_t j = 0; j < values.size(); ++j) {
    what += std::string(j ? ", " : " ") +
            std::string(InterestingKindName(values[j].kind));
  }
  return what;
}

namespace {

using InstrMap = std::unordered_map<const HloInstruction*, HloInstruction*>;
using CompMap = std::unordered_map<const HloComputation*, HloComputation*>;

// Deep-copies `c` and its callees into `dst`, names suffixed.
HloComputation* CopyInto(const HloComputation& c, HloModule& dst, CompMap& done,
                         const std::string& suffix) {
  if (auto it = done.find(&c); it != done.end()) return it->second;
  for (const HloInstruction* i : c.instructions()) {
    for (const HloComputation* callee : i->called_computations()) {
      if (callee) CopyInto(*callee, dst, done, suffix);
    }
  }
  auto nc = std::make_unique<HloComputation>(c.name() + suffix);
  InstrMap map;
  for (HloInstruction* i : c.MakeInstructionPostOrder()) {
    std::vector<HloInstruction*> ops;
    for (HloInstruction* o : i->operands()) ops.push_back(map.at(o));
    HloInstruction* k = nc->AddInstruction(i->CloneWithOperands(ops, suffix));
    for (size_t j = 0; j < k->called_computations().size(); ++j) {
      if (k->called_computations()[j]) {
        k->set_called_computation(j, done.at(k->called_computations()[j]));
      }
    }
    map[i] = k;
  }
  nc->set_root_instruction(map.at(c.root_instruction()));
  HloComputation* added = dst.AddComputation(std::move(nc));
  for (HloInstruction* i : added->instructions()) {
    if (i->opcode() == O::kFusion && !i->called_computations().empty()) {
      i->fused_computation()->set_fusion_instruction(i);
    }
  }
  done[&c] = added;
  return added;
}

}  // namespace

std::string Splice(HloModule& m, const HloModule& donor, Rng& rng) {
  HloComputation* entry = m.entry_computation();
  const HloComputation* dentry = donor.entry_computation();
  if (!entry || !dentry || !dentry->root_instruction()) return "";
  // Donor outputs: the root or the array elements of a root tuple.
  const HloInstruction* droot = dentry->root_instruction();
  std::vector<int64_t> leaves;
  if (droot->shape().IsArray()) {
    leaves.push_back(-1);
  } else if (droot->shape().IsTuple()) {
    for (int64_t k = 0; k < droot->shape().tuple_size(); ++k) {
      if (droot->shape().tuple_shape(k).IsArray()) leaves.push_back(k);
    }
  }
  std::vector<HloInstruction*> params;
  for (HloInstruction* p : entry->parameters()) {
    if (p && p->shape().IsArray() && p->shape().element_count() > 0)
      params.push_back(p);
  }
  if (leaves.empty() || params.empty()) return "";
  HloInstruction* target = rng.Pick(params);
  const int64_t leaf = rng.Pick(leaves);
  const Shape& out_shape =
      leaf < 0 ? droot->shape() : droot->shape().tuple_shape(leaf);
  const Shape& ts = target->shape();
  if (IsComplex(out_shape.element_type()) != IsComplex(ts.element_type()) ||
      out_shape.element_count() == 0) {
    return "";
  }
  const std::string suffix = ".s" + std::to_string(rng.Uniform(0, 1 << 20));
  // Callees of the donor entry, then a new entry: donor instructions (its
  // parameters first), the adapter, then m's entry without `target`.
  CompMap done;
  for (const HloInstruction* i : dentry->instructions()) {
    for (const HloComputation* callee : i->called_computations()) {
      if (callee) CopyInto(*callee, m, done, suffix);
    }
  }
  auto ne = std::make_unique<HloComputation>(entry->name());
  int64_t next_param = 0;
  InstrMap dmap;
  for (const HloInstruction* i : dentry->MakeInstructionPostOrder()) {
    std::vector<HloInstruction*> ops;
    for (HloInstruction* o : i->operands()) ops.push_back(dmap.at(o));
    auto k = i->CloneWithOperands(ops, suffix);
    if (i->opcode() == O::kParameter)
      k->mutable_attrs().parameter_number = next_param++;
    HloInstruction* added = ne->AddInstruction(std::move(k));
    for (size_t j = 0; j < added->called_computations().size(); ++j) {
      if (added->called_computations()[j]) {
        added->set_called_computation(j,
                                      done.at(added->called_computations()[j]));
      }
    }
    dmap[i] = added;
  }
  auto add = [&](HloOpcode op, Shape s, std::vector<HloInstruction*> ops,
                 const std::string& n) {
    return ne->AddInstruction(
        HloInstruction::Create(op, std::move(s), std::move(ops), n + suffix));
  };
  HloInstruction* v = dmap.at(droot);
  if (leaf >= 0) {
    v = add(O::kGetTupleElement, out_shape, {v}, "splice.gte");
    v->mutable_attrs().tuple_index = leaf;
  }
  const P vt = out_shape.element_type();
  const int64_t n = out_shape.element_count(), want = ts.element_count();
  v = add(O::kReshape, Shape(vt, {n}), {v}, "splice.flat");
  if (n > want) {
    v = add(O::kSlice, Shape(vt, {want}), {v}, "splice.slice");
    v->mutable_attrs().slice = {SliceDim{0, want, 1}};
  } else if (n < want) {
    HloInstruction* zero = ne->AddInstruction(HloInstruction::CreateConstant(
        Literal(Shape(vt, {})), "splice.zero" + suffix));
    v = add(O::kPad, Shape(vt, {want}), {v, zero}, "splice.pad");
    v->mutable_attrs().padding = {PaddingDim{0, want - n, 0}};
  }
  v = add(O::kReshape, Shape(vt, ts.dims()), {v}, "splice.shape");
  if (vt != ts.element_type()) {
    v = add(O::kConvert, Shape(ts.element_type(), ts.dims()), {v},
            "splice.convert");
  }
  InstrMap emap;
  emap[target] = v;
  for (HloInstruction* i : entry->MakeInstructionPostOrder()) {
    if (i == target) continue;
    std::vector<HloInstruction*> ops;
    for (HloInstruction* o : i->operands()) ops.push_back(emap.at(o));
    auto k = i->CloneWithOperands(ops, "");
    if (i->opcode() == O::kParameter)
      k->mutable_attrs().parameter_number = next_param++;
    HloInstruction* added = ne->AddInstruction(std::move(k));
    emap[i] = added;
  }
  // Parameters nobody reads (dead in the post order) are kept too.
  for (HloInstruction* p : entry->parameters()) {
    if (p && p != target && !emap.count(p)) {
      auto k = p->CloneWithOperands({}, "");
      k->mutable_attrs().parameter_number = next_param++;
      emap[p] = ne->AddInstruction(std::move(k));
    }
  }
  ne->set_root_instruction(emap.at(entry->root_instruction()));
  for (HloInstruction* i : ne->instructions()) {
    if (i->opcode() == O::kFusion && !i->called_computations().empty()) {
      i->fused_computation()->set_fusion_instruction(i);
    }
  }
  HloComputation* old = entry;
  HloComputation* added = m.AddComputation(std::move(ne));
  m.set_entry_computation(added);
  m.RemoveComputation(old);
  return "splice " + std::string(OpcodeName(droot->opcode())) + " %" +
         droot->name() + (leaf >= 0 ? "#" + std::to_string(leaf) : "") +
         " -> %" + target->name();
}

}  // namespace trench::fuzz
