// The HLO verifier: checks that a module is well formed before anything
// (a pass, the evaluator, the code generator) relies on it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_module.h"

namespace trench {

// What the verifier did besides finding no problem.
struct VerifyStats {
  int64_t instructions = 0;  // Instructions checked.
  // Instructions whose opcode has no shape inference rule (collectives,
  // custom-call, ...): their declared shape was trusted. "%name (opcode)".
  std::vector<std::string> trusted;
};

struct VerifyOptions {
  // Accept a declared shape whose floating-point element types differ from
  // the inferred ones (bf16[] declared where f32[] is inferred), like XLA's
  // verifier with allow_mixed_precision, which XLA's test harness turns on.
  // Everything else stays strict. Off for modules the compiler produces.
  bool allow_mixed_precision = false;
};

// Checks, in this order, and reports the first problem found:
// - the module has an entry computation, which belongs to it;
// - computation names are unique;
// - then, computation by computation (one walk over its instructions):
//   it has a root that belongs to it; instruction names are unique in the
//   module; every instruction belongs to its computation, has the operand
//   count of its opcode (unless variadic), non-null operands and control
//   predecessors from the same computation, and called computations that
//   are in the module; its parameter numbers are 0..n-1, without gaps or
//   duplicates; its operand/control edges form no cycle;
// - calls form no cycle;
// - declared shapes have no negative dimension, and each instruction's
//   declared shape is compatible (layouts ignored) with the inferred one
//   (InferShape: this covers attribute sanity and the signatures of called
//   computations). Ops with no inference rule keep their declared shape.
// Returns OK or InvalidArgument("in computation %c: %instr: ..."). When the
// problem is an instruction's (its operands, shape, parameter number, name,
// a cycle through it, a recursive call it makes) and the parser recorded
// where that instruction was written (HloInstruction::source_location), the
// message starts with "LINE:COL: " as parser errors do; instructions built
// in memory have no location and their messages no prefix. Never crashes,
// whatever the module holds. If stats is non-null it is filled.
Status VerifyModule(const HloModule& module, VerifyStats* stats = nullptr,
                    const VerifyOptions& options = {});

}  // namespace trench
