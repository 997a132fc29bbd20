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

// A computation and its instructions in print order (post order).
struct Printed {
  const HloComputation* computation;
  std::vector<HloInstruction*> order;
};

// Computations with callees before callers; the entry comes last. Each
// post order is computed once, here, and printed from. Uses an explicit
// stack so long call chains cannot overflow the native stack.
std::vector<Printed> PrintOrder(const HloModule& module) {
  std::vector<Printed> order;
  std::unordered_set<const HloComputation*> done, on_stack;
  struct Frame {
    Printed printed;
    std::vector<const HloComputation*> pending;  // Callees, last first.
  };
  auto visit = [&](const HloComputation* start) {
    if (done.count(start)) return;
    std::vector<Frame> stack;
    auto push = [&](const HloComputation* c) {
      Frame f{{c, c->MakeInstructionPostOrder()}, {}};
      for (const HloInstruction* instr : f.printed.order) {
        for (const HloComputation* callee : instr->called_computations()) {
          if (callee) f.pending.push_back(callee);
        }
      }
      std::reverse(f.pending.begin(), f.pending.end());  // Pop in order.
      stack.push_back(std::move(f));
      on_stack.insert(c);
    };
    push(start);
    while (!stack.empty()) {
      std::vector<const HloComputation*>& pending = stack.back().pending;
      if (!pending.empty()) {
        const HloComputation* next = pending.back();
        pending.pop_back();
        if (!done.count(next) && !on_stack.count(next)) push(next);
        continue;
      }
      const HloComputation* c = stack.back().printed.computation;
      done.insert(c);
      on_stack.erase(c);
      order.push_back(std::move(stack.back().printed));
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

void AppendInstruction(const HloInstruction& instr,
                       const HloPrintOptions& options, std::string* s) {
  const char* pct = options.percent ? "%" : "";
  const HloComputation* parent = instr.parent();
  if (parent && parent->root_instruction() == &instr) *s += "ROOT ";
  *s += pct;
  *s += instr.name();
  *s += " = ";
  hlo_printer_internal::AppendShape(instr.shape(), s);
  *s += ' ';
  *s += OpcodeText(instr);
  *s += '(';
  if (instr.opcode() == HloOpcode::kParameter) {
    *s += std::to_string(instr.parameter_number());
  } else if (instr.opcode() == HloOpcode::kConstant) {
    if (instr.has_literal()) *s += PrintLiteral(instr.literal());
  } else {
    for (int64_t i = 0; i < instr.operand_count(); ++i) {
      if (i) *s += ", ";
      const HloInstruction* op = instr.operand(i);
      if (options.operand_shapes) {
        hlo_printer_internal::AppendShape(op->shape(), s);
        *s += ' ';
      }
      *s += pct;
      *s += op->name();
    }
  }
  *s += ')';
  for (const auto& [k, v] :
       hlo_printer_internal::InstructionAttributes(instr, options.percent)) {
    *s += ", ";
    *s += k;
    *s += '=';
    *s += v;
  }
}

// Appends the computation's text, its instructions in `order`, to *buf,
// handing *buf to `sink` (and clearing it) whenever it reaches kPiece
// bytes; the rest stays in *buf.
constexpr size_t kPiece = 1 << 14;

void EmitComputation(const HloComputation& computation, bool is_entry,
                     const std::vector<HloInstruction*>& order,
                     const HloPrintOptions& options, std::string* buf,
                     const HloTextSink& sink) {
  std::string& s = *buf;
  if (is_entry) s += "ENTRY ";
  if (options.percent) s += '%';
  s += computation.name();
  s += ' ';
  if (options.program_shape) {
    s += "(";
    bool first = true;
    for (const HloInstruction* p : computation.parameters()) {
      if (!p) continue;
      s += first ? "" : ", ";
      s += p->name();
      s += ": ";
      hlo_printer_internal::AppendShape(p->shape(), &s);
      first = false;
    }
    s += ") -> ";
    const HloInstruction* root = computation.root_instruction();
    if (root) {
      hlo_printer_internal::AppendShape(root->shape(), &s);
    } else {
      s += "()";
    }
    s += " ";
  }
  s += "{\n";
  for (const HloInstruction* instr : order) {
    s += "  ";
    AppendInstruction(*instr, options, &s);
    s += '\n';
    if (s.size() >= kPiece) {
      sink(s);
      s.clear();
    }
  }
  s += "}\n";
}

}  // namespace

std::string PrintHloInstruction(const HloInstruction& instr,
                                const HloPrintOptions& options) {
  std::string s;
  AppendInstruction(instr, options, &s);
  return s;
}

std::string PrintHloComputation(const HloComputation& computation,
                                bool is_entry, const HloPrintOptions& options) {
  std::string out, buf;
  EmitComputation(computation, is_entry, computation.MakeInstructionPostOrder(),
                  options, &buf, [&](std::string_view piece) { out += piece; });
  return out + buf;
}

void PrintHloModuleTo(const HloModule& module, const HloTextSink& sink,
                      const HloPrintOptions& options) {
  // A module parsed from text without a header line has no name; it
  // prints without one too.
  std::string buf;
  buf.reserve(2 * kPiece);
  if (!module.name().empty() || !module.header_attrs().empty()) {
    buf = "HloModule " + (module.name().empty() ? "_" : module.name());
    for (const auto& [k, v] : module.header_attrs()) buf += ", " + k + "=" + v;
    buf += "\n";
  }
  for (const Printed& p : PrintOrder(module)) {
    buf += "\n";
    EmitComputation(*p.computation, p.computation == module.entry_computation(),
                    p.order, options, &buf, sink);
  }
  if (!buf.empty()) sink(buf);
}

std::string PrintHloModule(const HloModule& module,
                           const HloPrintOptions& options) {
  std::string s;
  PrintHloModuleTo(
      module, [&](std::string_view piece) { s += piece; }, options);
  return s;
}

}  // namespace trench
