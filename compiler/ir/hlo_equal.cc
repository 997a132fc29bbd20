#include "compiler/ir/hlo_equal.h"

#include <unordered_map>

#include "compiler/ir/hlo_printer.h"

namespace trench {
namespace {

template <typename T>
std::string Names(const std::vector<T*>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) {
    s += (i ? ", " : "") + (v[i] ? v[i]->name() : std::string("<null>"));
  }
  return s + "}";
}

template <typename T>
bool SameNames(const std::vector<T*>& a, const std::vector<T*>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if ((a[i] == nullptr) != (b[i] == nullptr)) return false;
    if (a[i] && a[i]->name() != b[i]->name()) return false;
  }
  return true;
}

std::string AttrText(const HloInstruction& i) {
  // The printed line minus everything up to the operands shows the
  // attributes in a comparable, readable form.
  std::string line = PrintHloInstruction(i);
  const size_t comma = line.find("), ");
  return comma == std::string::npos ? "" : line.substr(comma + 3);
}

// Returns an empty string when equal, else the difference.
std::string DiffInstruction(const HloInstruction& a, const HloInstruction& b) {
  if (a.opcode() != b.opcode()) {
    return "opcode " + std::string(OpcodeName(a.opcode())) + " vs " +
           std::string(OpcodeName(b.opcode()));
  }
  if (!(a.shape() == b.shape())) {
    return "shape " + PrintShape(a.shape()) + " vs " + PrintShape(b.shape());
  }
  if (!SameNames(a.operands(), b.operands())) {
    return "operands " + Names(a.operands()) + " vs " + Names(b.operands());
  }
  if (!SameNames(a.called_computations(), b.called_computations())) {
    return "called computations " + Names(a.called_computations()) + " vs " +
           Names(b.called_computations());
  }
  if (!SameNames(a.control_predecessors(), b.control_predecessors())) {
    return "control predecessors " + Names(a.control_predecessors()) + " vs " +
           Names(b.control_predecessors());
  }
  if (!(a.attrs() == b.attrs())) {
    return "attributes '" + AttrText(a) + "' vs '" + AttrText(b) + "'";
  }
  if (a.opcode() == HloOpcode::kConstant) {
    if (a.has_literal() != b.has_literal()) return "literal presence differs";
    if (!a.has_literal()) return "";
    const Literal& la = a.literal();
    const Literal& lb = b.literal();
    if (!(la == lb) || !(la.shape() == lb.shape())) {
      return "literal " + PrintLiteral(la) + " vs " + PrintLiteral(lb);
    }
  }
  return "";
}

std::string DiffComputation(const HloComputation& a, const HloComputation& b) {
  if (a.instruction_count() != b.instruction_count()) {
    return "instruction count " + std::to_string(a.instruction_count()) +
           " vs " + std::to_string(b.instruction_count());
  }
  const HloInstruction* ra = a.root_instruction();
  const HloInstruction* rb = b.root_instruction();
  if ((ra == nullptr) != (rb == nullptr) || (ra && ra->name() != rb->name())) {
    return "root " + (ra ? ra->name() : "<none>") + " vs " +
           (rb ? rb->name() : "<none>");
  }
  std::unordered_map<std::string, const HloInstruction*> by_name;
  for (const HloInstruction* i : b.instructions()) by_name[i->name()] = i;
  for (const HloInstruction* i : a.instructions()) {
    auto it = by_name.find(i->name());
    if (it == by_name.end()) {
      return "instruction '" + i->name() + "' only in the first";
    }
    std::string d = DiffInstruction(*i, *it->second);
    if (!d.empty()) return "instruction '" + i->name() + "': " + d;
  }
  return "";
}

std::string DiffModules(const HloModule& a, const HloModule& b) {
  if (a.name() != b.name()) {
    return "module name '" + a.name() + "' vs '" + b.name() + "'";
  }
  if (a.header_attrs() != b.header_attrs()) {
    const auto& ha = a.header_attrs();
    const auto& hb = b.header_attrs();
    for (size_t i = 0; i < ha.size() && i < hb.size(); ++i) {
      if (ha[i] != hb[i]) {
        return "header attribute " + ha[i].first + "=" + ha[i].second + " vs " +
               hb[i].first + "=" + hb[i].second;
      }
    }
    return "header attribute count " + std::to_string(ha.size()) + " vs " +
           std::to_string(hb.size());
  }
  if (a.computation_count() != b.computation_count()) {
    return "computation count " + std::to_string(a.computation_count()) +
           " vs " + std::to_string(b.computation_count());
  }
  const HloComputation* ea = a.entry_computation();
  const HloComputation* eb = b.entry_computation();
  if ((ea == nullptr) != (eb == nullptr) || (ea && ea->name() != eb->name())) {
    return "entry computation " + (ea ? ea->name() : "<none>") + " vs " +
           (eb ? eb->name() : "<none>");
  }
  std::unordered_map<std::string, const HloComputation*> by_name;
  for (const HloComputation* c : b.computations()) by_name[c->name()] = c;
  for (const HloComputation* c : a.computations()) {
    auto it = by_name.find(c->name());
    if (it == by_name.end()) {
      return "computation '" + c->name() + "' only in the first";
    }
    std::string d = DiffComputation(*c, *it->second);
    if (!d.empty()) return "computation '" + c->name() + "': " + d;
  }
  return "";
}

}  // namespace

bool ModulesEqual(const HloModule& a, const HloModule& b, std::string* diff) {
  std::string d = DiffModules(a, b);
  if (diff) *diff = d;
  return d.empty();
}

}  // namespace trench
