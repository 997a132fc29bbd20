// The trace cutter: cut a module into subgraph modules that a target can
// run, given a predicate saying which instructions it can run.
//
// What is cut: the entry computation and every computation called as
// control flow (while condition/body, call, conditional branches), each
// separately. Computations applied by an instruction (fused computations,
// reduce/sort/scatter/map to_apply, select-and-scatter) belong to that
// instruction and are never cut: the predicate judges the instruction as a
// whole.
//
// How: in one computation, the instructions the predicate accepts
// (parameters and scalar constants excepted) are grouped into connected
// components (operand edges between accepted instructions). A get-tuple-element
// joins only if its operand is in the component (otherwise its value is an
// input, so no tuple-shaped inputs arise from it). A component larger than
// max_instructions is split into consecutive pieces of its post order.
// Each piece becomes one module:
//   * its instructions are cloned in post order into a new entry
//     computation (called computations are deep-copied into the module);
//   * every operand from outside the piece (a rejected instruction, a
//     parameter of the original computation, an instruction of another
//     piece) becomes a parameter of the same shape, named after it, in
//     order of first use; a scalar constant operand is cloned instead, so
//     init values of reductions stay constants;
//   * its outputs are the piece's instructions used outside it, the
//     computation's root, and instructions without users: the root is that
//     value, or a tuple of them in post order;
//   * control dependencies are dropped.
// Pieces with nothing to compute (only parameters, constants, tuples and
// get-tuple-elements) are left out.
//
// Shapes are NOT scaled: the subgraphs keep the trace's shapes. A caller
// that cannot afford large arrays says so in its predicate (see
// MaxElementsWithin).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/hlo_module.h"

namespace trench {

// True if the target can run `instr` (of the module being cut). Called
// once per instruction that is neither a parameter nor a scalar constant.
using CanRunPredicate = std::function<bool(const HloInstruction&)>;

struct SubgraphOptions {
  // Largest number of instructions per subgraph (0: no limit).
  int64_t max_instructions = 0;
};

struct Subgraph {
  std::unique_ptr<HloModule> module;
  std::string computation;  // The cut computation's name.
  // The original instructions the entry computes (parameters and cloned
  // scalar constants excepted), in post order.
  std::vector<std::string> instructions;
  // inputs[i]: the original instruction parameter(i) stands for.
  std::vector<std::string> inputs;
  // VerifyModule's answer on the subgraph (ok for a verified input
  // module; kept rather than dropping the subgraph).
  Status verified;
};

struct CutResult {
  std::vector<Subgraph> subgraphs;
  int64_t instructions = 0;  // Judged instructions (see CanRunPredicate).
  int64_t accepted = 0;      // Those the predicate accepted.
};

// Cuts `module` as described above. Errors: InvalidArgument when the
// module has no entry computation. Never crashes on a parsed module.
StatusOr<CutResult> CutSubgraphs(const HloModule& module,
                                 const CanRunPredicate& can_run,
                                 const SubgraphOptions& options = {});

// A module computing `instr` alone: its operands become parameters (scalar
// constants are cloned), called computations are deep-copied. Used for
// trial compiles (a predicate "does the target compile this instruction").
std::unique_ptr<HloModule> IsolateInstruction(const HloInstruction& instr);

// True if the result and every operand of `instr` (each array leaf) has at
// most `max_elements` elements.
bool MaxElementsWithin(const HloInstruction& instr, int64_t max_elements);

}  // namespace trench
