// Module, computation and instruction text. Attributes are in
// hlo_printer_attributes.cc, literals and shapes in hlo_printer_literal.cc.
#include "compiler/ir/hlo_printer.h"

#include <algorithm>
#include <unordered_set>

#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer_internal.h"

namespace trench {
namespace {

std::string OpcodeText(const HloInstruction& instr) {
  const HloOpcode op = instr.opcode();
  const char* suffix = op == HloOpcode::kAsyncStart    ? "-start"
                       : op == HloOpcode::kAsyncUpdate ? "-update"
                       : op == HloOpcode::kAsyncDone   ? "-done"
                                                       : nullptr;
  if (suffix) {
    if (const std::string* w = instr.attrs().FindRaw(kAsyncWrappedOpcodeKey)) {
      return *w + suffix;
    }
  }
  return std::string(OpcodeName(op));
}

// Computations with callees before callers; the entry comes last. Uses an
// explicit stack so long call chains cannot overflow the native stack.
std::vector<const HloComputation*> PrintOrder(const HloModule& module) {
  std::vector<const HloComputation*> order;
  std::unordered_set<const HloComputation*> done, on_stack;
  auto visit = [&](const HloComputation* start) {
    if (done.count(start)) return;
    std::vector<
        std::pair<const HloComputation*, std::vector<const HloComputation*>>>
        stack;
    auto push = [&](const HloComputation* c) {
      std::vector<const HloComputation*> callees;
      for (const HloInstruction* instr : c->MakeInstructionPostOrder()) {
        for (const HloComputation* callee : instr->called_computations()) {
          if (callee) callees.push_back(callee);
        }
      }
      std::reverse(callees.begin(), callees.end());  // Pop in order.
      stack.emplace_back(c, std::move(callees));
      on_stack.insert(c);
    };
    push(start);
    while (!stack.empty()) {
      auto& [c, pending] = stack.back();
      if (!pending.empty()) {
        const HloComputation* next = pending.back();
        pending.pop_back();
        if (!done.count(next) && !on_stack.count(next)) push(next);
        continue;
      }
      done.insert(c);
      on_stack.erase(c);
      order.push_back(c);
      stack.pop_back();
    }
  };
  const HloComputation* entry = module.entry_computation();
  for (const HloComputation* c : module.computations()) {
    if (c != entry) visit(c);
  }
  if (entry) visit(entry);
  return order;
}

}  // namespace

std::string PrintHloInstruction(const HloInstruction& instr,
                                const HloPrintOptions& options) {
  const std::string pct = options.percent ? "%" : "";
  const HloComputation* parent = instr.parent();
  std::string s;
  if (parent && parent->root_instruction() == &instr) s += "ROOT ";
  s += pct + instr.name() + " = " + PrintShape(instr.shape()) + " " +
       OpcodeText(instr) + "(";
  if (instr.opcode() == HloOpcode::kParameter) {
    s += std::to_string(instr.parameter_number());
  } else if (instr.opcode() == HloOpcode::kConstant) {
    if (instr.has_literal()) s += PrintLiteral(instr.literal());
  } else {
    for (int64_t i = 0; i < instr.operand_count(); ++i) {
      if (i) s += ", ";
      const HloInstruction* op = instr.operand(i);
      if (options.operand_shapes) s += PrintShape(op->shape()) + " ";
      s += pct + op->name();
    }
  }
  s += ")";
  for (const auto& [k, v] :
       hlo_printer_internal::InstructionAttributes(instr, options.percent)) {
    s += ", " + k + "=" + v;
  }
  return s;
}

std::string PrintHloComputation(const HloComputation& computation,
                                bool is_entry, const HloPrintOptions& options) {
  std::string s = is_entry ? "ENTRY " : "";
  s += (options.percent ? "%" : "") + computation.name() + " ";
  if (options.program_shape) {
    s += "(";
    bool first = true;
    for (const HloInstruction* p : computation.parameters()) {
      if (!p) continue;
      s += (first ? "" : ", ") + p->name() + ": " + PrintShape(p->shape());
      first = false;
    }
    s += ") -> ";
    const HloInstruction* root = computation.root_instruction();
    s += root ? PrintShape(root->shape()) : "()";
    s += " ";
  }
  s += "{\n";
  for (const HloInstruction* instr : computation.MakeInstructionPostOrder()) {
    s += "  " + PrintHloInstruction(*instr, options) + "\n";
  }
  return s + "}\n";
}

std::string PrintHloModule(const HloModule& module,
                           const HloPrintOptions& options) {
  // A module parsed from text without a header line has no name; it
  // prints without one too.
  std::string s;
  if (!module.name().empty() || !module.header_attrs().empty()) {
    s = "HloModule " + (module.name().empty() ? "_" : module.name());
    for (const auto& [k, v] : module.header_attrs()) s += ", " + k + "=" + v;
    s += "\n";
  }
  for (const HloComputation* c : PrintOrder(module)) {
    s += "\n" +
         PrintHloComputation(*c, c == module.entry_computation(), options);
  }
  return s;
}

}  // namespace trench
