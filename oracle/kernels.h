// Per-op kernels of the reference evaluator. Internal to oracle/.
//
// Each kernel computes one instruction from its operand values. Kernels
// that call computations (reduce's to_apply, sort's comparator, ...) use
// the CallContext to evaluate them. Kernels check what they rely on and
// return InvalidArgument/Unimplemented instead of crashing.
#pragma once

#include <span>

#include "base/status.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/literal.h"
#include "oracle/evaluator.h"

namespace trench::oracle {

// Lets a kernel evaluate a called computation on scalar or array args.
class CallContext {
 public:
  virtual ~CallContext() = default;
  virtual StatusOr<Literal> Call(const HloComputation& computation,
                                 std::span<const Literal* const> args) = 0;
  virtual const EvaluatorOptions& options() const = 0;
};

using Operands = std::span<const Literal* const>;

// Elementwise (oracle/elementwise*.cc): every op for which
// IsElementwise(opcode) holds, plus iota.
StatusOr<Literal> EvalElementwise(const HloInstruction& instr, Operands ops);
StatusOr<Literal> EvalIota(const HloInstruction& instr);

// Data movement (oracle/data_movement.cc).
StatusOr<Literal> EvalBroadcast(const HloInstruction& instr, Operands ops);
StatusOr<Literal> EvalReshape(const HloInstruction& instr, Operands ops);
// The operand's layout is operand_shape's, or the operand instruction's
// when null (the default when it names none); never the literal's own.
StatusOr<Literal> EvalBitcast(const HloInstruction& instr, Operands ops,
                              const Shape* operand_shape = nullptr);
StatusOr<Literal> EvalTranspose(const HloInstruction& instr, Operands ops);
StatusOr<Literal> EvalSlice(const HloInstruction& instr, Operands ops);
StatusOr<Literal> EvalDynamicSlice(const HloInstruction& instr, Operands ops);
StatusOr<Literal> EvalDynamicUpdateSlice(const HloInstruction& instr,
                                         Operands ops);
StatusOr<Literal> EvalConcatenate(const HloInstruction& instr, Operands ops);
StatusOr<Literal> EvalPad(const HloInstruction& instr, Operands ops);
StatusOr<Literal> EvalReverse(const HloInstruction& instr, Operands ops);

// Reductions (oracle/reduce*.cc).
StatusOr<Literal> EvalReduce(const HloInstruction& instr, Operands ops,
                             CallContext& ctx);
StatusOr<Literal> EvalReduceWindow(const HloInstruction& instr, Operands ops,
                                   CallContext& ctx);
StatusOr<Literal> EvalSelectAndScatter(const HloInstruction& instr,
                                       Operands ops, CallContext& ctx);

// Contractions (oracle/dot.cc, oracle/convolution.cc).
StatusOr<Literal> EvalDot(const HloInstruction& instr, Operands ops,
                          const EvaluatorOptions& options);
StatusOr<Literal> EvalConvolution(const HloInstruction& instr, Operands ops,
                                  const EvaluatorOptions& options);

// Indexing (oracle/gather.cc, oracle/scatter.cc, oracle/sort.cc).
StatusOr<Literal> EvalGather(const HloInstruction& instr, Operands ops);
StatusOr<Literal> EvalScatter(const HloInstruction& instr, Operands ops,
                              CallContext& ctx);
StatusOr<Literal> EvalSort(const HloInstruction& instr, Operands ops,
                           CallContext& ctx);

}  // namespace trench::oracle
