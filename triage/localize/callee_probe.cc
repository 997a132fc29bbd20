// The callee level's probe (callee_probe.h): argument samples and the
// outlined module.
#include "triage/localize/callee_probe.h"

#include <algorithm>
#include <cstring>

#include "compiler/ir/opcode.h"

namespace trench::hlo_bisect {
namespace {

// Where one parameter's values come from: the concatenation of `parts`,
// indexed by role A (t) or role B (a different element per t, so that
// pairs vary; element 0, e.g. a reduce's init, every fourth sample).
struct Source {
  std::vector<const Literal*> parts;
  bool role_b = false;

  int64_t size() const {
    int64_t n = 0;
    for (const Literal* l : parts) n += l->element_count();
    return n;
  }
  int64_t Index(int64_t t) const {
    const int64_t n = size();
    if (!role_b) return t % n;
    return t % 4 == 0 ? 0 : (3 * t + 1) % n;
  }
  // Copies element Index(t) into element t of `out`.
  void CopyTo(int64_t t, Literal* out) const {
    int64_t i = Index(t);
    for (const Literal* l : parts) {
      if (i >= l->element_count()) {
        i -= l->element_count();
        continue;
      }
      const size_t w = l->bytes().size() / l->element_count();
      std::memcpy(out->mutable_bytes().data() + t * w,
                  l->bytes().data() + i * w, w);
      return;
    }
  }
};

struct Rule {
  std::string name;
  std::vector<Source> sources;  // One per parameter.
  bool aligned = false;         // map: sample t is element t.
};

// The rule of `site`'s called computation `index`; `ops` are its operand
// values.
StatusOr<Rule> RuleFor(const HloInstruction& site, int64_t index,
                       const std::vector<const Literal*>& ops) {
  const int64_t n = static_cast<int64_t>(ops.size());
  const auto a = [](std::vector<const Literal*> p) { return Source{p, false}; };
  const auto b = [](std::vector<const Literal*> p) { return Source{p, true}; };
  Rule r;
  switch (site.opcode()) {
    case HloOpcode::kMap:
      r.name = "map: element t of every operand";
      r.aligned = true;
      for (const Literal* o : ops) r.sources.push_back(a({o}));
      return r;
    case HloOpcode::kSort:
      r.name = "sort: (lhs, rhs) = (element i, element j) of every operand";
      for (const Literal* o : ops) {
        r.sources.push_back(a({o}));
        r.sources.push_back(b({o}));
      }
      return r;
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow: {
      if (n % 2 != 0) break;
      r.name =
          "reduce: (accumulator, x) = (init or an input element, "
          "an input element)";
      for (int64_t k = 0; k < n / 2; ++k)
        r.sources.push_back(b({ops[n / 2 + k], ops[k]}));
      for (int64_t k = 0; k < n / 2; ++k) r.sources.push_back(a({ops[k]}));
      return r;
    }
    case HloOpcode::kAllReduce:
    case HloOpcode::kReduceScatter:
      if (n < 1) break;
      r.name = "all-reduce: (accumulator, x) = elements of operand 0";
      r.sources = {b({ops[0]}), a({ops[0]})};
      return r;
    case HloOpcode::kScatter: {
      if (n < 3 || n % 2 != 1) break;
      const int64_t m = (n - 1) / 2;
      r.name =
          "scatter: (old, update) = (an operand or update element, "
          "an update element)";
      for (int64_t k = 0; k < m; ++k)
        r.sources.push_back(b({ops[k], ops[m + 1 + k]}));
      for (int64_t k = 0; k < m; ++k) r.sources.push_back(a({ops[m + 1 + k]}));
      return r;
    }
    case HloOpcode::kSelectAndScatter:
      if (n != 3) break;
      if (index == 0) {
        r.name = "select: (a, b) = elements of the operand";
        r.sources = {a({ops[0]}), b({ops[0]})};
      } else {
        r.name =
            "scatter: (accumulator, x) = (init or a source element, "
            "a source element)";
        r.sources = {b({ops[2], ops[1]}), a({ops[1]})};
      }
      return r;
    default:
      break;
  }
  return Unimplemented("no argument rule for %" + site.name() + " (" +
                       std::string(OpcodeName(site.opcode())) + ", " +
                       std::to_string(n) + " operands)");
}

bool Outlinable(const HloInstruction& i) {
  switch (i.opcode()) {
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kCopy:
      return true;
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
      return i.shape().IsArray() && i.shape().rank() == 0 &&
             i.operand(0)->shape().IsArray() &&
             i.operand(0)->shape().rank() == 0;
    default:
      return IsElementwise(i.opcode()) && i.called_computations().empty();
  }
}

// `s` with every array leaf widened to [S].
Shape Widen(const Shape& s, int64_t samples) {
  if (!s.IsTuple()) return Shape(s.element_type(), {samples});
  std::vector<Shape> parts;
  for (const Shape& e : s.tuple_shapes()) parts.push_back(Widen(e, samples));
  return Shape::Tuple(std::move(parts));
}

}  // namespace

bool IsCalleeCallSite(HloOpcode op) {
  switch (op) {
    case HloOpcode::kSort:
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
    case HloOpcode::kMap:
    case HloOpcode::kScatter:
    case HloOpcode::kSelectAndScatter:
    case HloOpcode::kAllReduce:
    case HloOpcode::kReduceScatter:
      return true;
    default:
      return false;
  }
}

StatusOr<CalleeProbe> MakeCalleeProbe(const HloInstruction& call_site,
                                      int64_t index,
                                      const std::vector<Literal>& operands) {
  if (index < 0 ||
      index >= static_cast<int64_t>(call_site.called_computations().size())) {
    return InvalidArgument("%" + call_site.name() + " has no computation " +
                           std::to_string(index));
  }
  if (operands.size() != static_cast<size_t>(call_site.operand_count())) {
    return InvalidArgument("%" + call_site.name() + " has " +
                           std::to_string(call_site.operand_count()) +
                           " operands, got " + std::to_string(operands.size()) +
                           " values");
  }
  const HloComputation& comp = *call_site.called_computations()[index];
  std::vector<const Literal*> ops;
  for (const Literal& l : operands) {
    if (!l.shape().IsArray() || l.element_count() == 0) {
      return Unimplemented("an operand of %" + call_site.name() +
                           " is no non-empty array");
    }
    ops.push_back(&l);
  }
  ASSIGN_OR_RETURN(Rule rule, RuleFor(call_site, index, ops));
  if (rule.sources.size() != static_cast<size_t>(comp.num_parameters())) {
    return Unimplemented("%" + comp.name() + " has " +
                         std::to_string(comp.num_parameters()) +
                         " parameters; the rule for %" + call_site.name() +
                         " gives " + std::to_string(rule.sources.size()));
  }
  int64_t samples = rule.aligned ? kMaxCalleeSamples : 1;
  for (const Source& s : rule.sources) {
    samples = rule.aligned ? std::min(samples, s.size())
                           : std::max(samples, s.size() * s.size());
  }
  samples = std::min(samples, kMaxCalleeSamples);

  CalleeProbe probe;
  probe.samples = samples;
  probe.rule = rule.name;
  probe.module = std::make_unique<HloModule>("callee_" + comp.name());
  auto entry = std::make_unique<HloComputation>(comp.name());
  std::map<const HloInstruction*, HloInstruction*> map;
  for (int64_t k = 0; k < comp.num_parameters(); ++k) {
    const HloInstruction* p = comp.parameter_instruction(k);
    const Source& s = rule.sources[k];
    if (!p->shape().IsArray() || p->shape().rank() != 0 ||
        p->shape().element_type() != s.parts[0]->element_type()) {
      return Unimplemented("parameter %" + p->name() + " of %" + comp.name() +
                           " (" + p->shape().ToString(false) +
                           ") does not take scalars of its operand");
    }
    Literal arg(Shape(p->shape().element_type(), {samples}));
    for (int64_t t = 0; t < samples; ++t) s.CopyTo(t, &arg);
    probe.args.push_back(std::move(arg));
    map[p] = entry->AddInstruction(HloInstruction::CreateParameter(
        k, Shape(p->shape().element_type(), {samples}), p->name()));
  }
  std::vector<HloInstruction*> values;
  std::vector<Shape> shapes;
  for (const HloInstruction* i : comp.MakeInstructionPostOrder()) {
    if (i->opcode() == HloOpcode::kParameter) continue;
    HloInstruction* made = nullptr;
    if (i->opcode() == HloOpcode::kConstant && i->shape().IsArray() &&
        i->shape().rank() == 0) {
      HloInstruction* scalar = entry->AddInstruction(
          HloInstruction::CreateConstant(i->literal(), i->name() + ".scalar"));
      made = entry->AddInstruction(HloInstruction::Create(
          HloOpcode::kBroadcast, Shape(i->shape().element_type(), {samples}),
          {scalar}, i->name()));
    } else if (Outlinable(*i)) {
      std::vector<HloInstruction*> new_ops;
      for (const HloInstruction* o : i->operands())
        new_ops.push_back(map.at(o));
      std::unique_ptr<HloInstruction> clone = i->CloneWithOperands(new_ops, "");
      clone->set_name(i->name());
      clone->set_shape(Widen(i->shape(), samples));
      made = entry->AddInstruction(std::move(clone));
    } else {
      return Unimplemented("%" + i->name() + " (" +
                           std::string(OpcodeName(i->opcode())) + ") in %" +
                           comp.name() + " cannot be applied lane-wise");
    }
    map[i] = made;
    if (made->shape().IsArray()) {
      values.push_back(made);
      shapes.push_back(made->shape());
      probe.names.push_back(i->name());
    }
  }
  if (values.empty()) {
    return Unimplemented("%" + comp.name() + " computes nothing");
  }
  HloInstruction* root = entry->AddInstruction(HloInstruction::Create(
      HloOpcode::kTuple, Shape::Tuple(shapes), values, "__hlo_bisect_values"));
  entry->set_root_instruction(root);
  HloComputation* e = probe.module->AddComputation(std::move(entry));
  probe.module->set_entry_computation(e);
  return probe;
}

}  // namespace trench::hlo_bisect
