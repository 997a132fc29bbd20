#include "compiler/ir/hlo_fingerprint.h"

#include <functional>
#include <string_view>

#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer.h"
#include "compiler/ir/hlo_printer_internal.h"

namespace trench {
namespace {

// Mixes values in order; every variable-length part is preceded by its
// length, so that different sequences of parts cannot hash alike by
// shifting a boundary.
class Hasher {
 public:
  void Mix(uint64_t v) {
    h_ = (h_ ^ v) * 0x9e3779b97f4a7c15ull;
    h_ ^= h_ >> 32;
  }
  void Text(std::string_view s) {
    Mix(s.size());
    Mix(std::hash<std::string_view>()(s));
  }
  void Ints(const std::vector<int64_t>& v) {
    Mix(v.size());
    for (int64_t x : v) Mix(static_cast<uint64_t>(x));
  }
  // The state, avalanched (splitmix64's finalizer): summing finals of
  // different parts keeps them apart.
  uint64_t Final() const {
    uint64_t z = h_ + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  uint64_t h_ = 0xcbf29ce484222325ull;
};

void HashShape(const Shape& s, Hasher* h) {
  h->Mix(static_cast<uint64_t>(s.element_type()));
  if (s.IsTuple()) {
    h->Mix(s.tuple_size());
    for (const Shape& e : s.tuple_shapes()) HashShape(e, h);
    return;
  }
  h->Mix(s.rank());
  for (int64_t i = 0; i < s.rank(); ++i) {
    // As printed: "?" (any negative size), "<=N" or "N".
    const bool dynamic = s.is_dynamic_dim(i);
    h->Mix(dynamic ? (s.dim(i) < 0 ? 2 : 1) : 0);
    if (!dynamic || s.dim(i) >= 0) h->Mix(static_cast<uint64_t>(s.dim(i)));
  }
  const bool layout = s.layout() && s.IsArray();
  h->Mix(layout);
  if (layout) {
    h->Ints(s.layout()->minor_to_major);
    h->Text(s.layout()->tail);
  }
}

// The instruction's line: what AppendInstruction prints, field by field.
// Attributes come from the printer itself; they are few and most
// instructions have none.
void HashInstruction(const HloInstruction& instr, Hasher* h) {
  const HloComputation* parent = instr.parent();
  h->Mix(parent && parent->root_instruction() == &instr);
  h->Text(instr.name());
  HashShape(instr.shape(), h);
  const HloOpcode op = instr.opcode();
  h->Mix(static_cast<uint64_t>(op));
  if (op == HloOpcode::kAsyncStart || op == HloOpcode::kAsyncUpdate ||
      op == HloOpcode::kAsyncDone) {
    const std::string* wrapped = instr.attrs().FindRaw(kAsyncWrappedOpcodeKey);
    h->Mix(wrapped != nullptr);
    if (wrapped) h->Text(*wrapped);
  }
  if (op == HloOpcode::kParameter) {
    h->Mix(static_cast<uint64_t>(instr.parameter_number()));
  } else if (op == HloOpcode::kConstant) {
    h->Mix(instr.has_literal());
    if (instr.has_literal()) h->Text(PrintLiteral(instr.literal()));
  } else {
    // The text shows each operand's shape and name. The shape is on the
    // operand's own line too (operands are in the same computation), so
    // the name alone keeps "equal exactly when the texts are".
    h->Mix(instr.operand_count());
    for (const HloInstruction* operand : instr.operands()) {
      h->Text(operand->name());
    }
  }
  const auto attrs = hlo_printer_internal::InstructionAttributes(instr);
  h->Mix(attrs.size());
  for (const auto& [k, v] : attrs) {
    h->Text(k);
    h->Text(v);
  }
}

}  // namespace

uint64_t HloModuleFingerprint(const HloModule& module) {
  Hasher h;
  h.Text(module.name());
  h.Mix(module.header_attrs().size());
  for (const auto& [k, v] : module.header_attrs()) {
    h.Text(k);
    h.Text(v);
  }
  // Lines and computations are summed, each hashed alone: the order the
  // text puts them in (post order, callees first) is left out, which
  // spares a depth-first walk of every computation per fingerprint.
  uint64_t computations = 0;
  for (const HloComputation* c : module.computations()) {
    Hasher ch;
    ch.Mix(c == module.entry_computation());
    ch.Text(c->name());
    // The program shape: the parameters' names and shapes, the root's.
    for (const HloInstruction* param : c->parameters()) {
      if (!param) continue;
      ch.Mix(1);
      ch.Text(param->name());
      HashShape(param->shape(), &ch);
    }
    ch.Mix(0);
    ch.Mix(c->root_instruction() != nullptr);
    if (c->root_instruction()) HashShape(c->root_instruction()->shape(), &ch);
    uint64_t lines = 0, count = 0;
    for (const HloInstruction* instr : c->instructions()) {
      Hasher line;
      HashInstruction(*instr, &line);
      lines += line.Final();
      ++count;
    }
    ch.Mix(count);
    ch.Mix(lines);
    computations += ch.Final();
  }
  h.Mix(computations);
  return h.Final();
}

}  // namespace trench
