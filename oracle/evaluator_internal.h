// The evaluator's machinery, shared by evaluator.cc (walking computations,
// dispatch) and evaluator_control_flow.cc (while, conditional, map).
// Internal to oracle/.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/ir/literal.h"
#include "oracle/evaluator.h"
#include "oracle/kernels.h"

namespace trench::oracle {

// Tap requests and the values recorded so far (the last evaluation of each
// named instruction wins).
struct TapSet {
  std::unordered_set<std::string> names;
  std::unordered_map<std::string, Literal> values;
};

// The operand values of the instruction being evaluated. Values that this
// instruction is the last user of may be moved out (Take) or have their
// buffer reused as the output (Donor); all others are copied / left alone.
class OperandValues {
 public:
  // ptrs[k]: operand k's value. movable[k]: operand k's owned storage when
  // this instruction is its last user, else null. unique[k]: operand k
  // appears once among the operands (so moving it cannot disturb another).
  // The spans are the caller's scratch buffers and must outlive this.
  OperandValues(std::span<const Literal*> ptrs, std::span<Literal*> movable,
                std::span<const char> unique)
      : ptrs_(ptrs), movable_(movable), unique_(unique) {}

  int64_t size() const { return ptrs_.size(); }
  const Literal& operator[](int64_t k) const { return *ptrs_[k]; }
  Operands ptrs() const { return {ptrs_.data(), ptrs_.size()}; }
  // Operand k's value, moved when possible, else copied. After Take(k),
  // operand k must not be read again.
  Literal Take(int64_t k);
  // Whether Take(k) moves rather than copies.
  bool CanTake(int64_t k) const;
  // A dead operand buffer of exactly `shape`'s type and dimensions whose
  // contents may be overwritten in place by an elementwise kernel, or null.
  Literal* Donor(const Shape& shape) const;

 private:
  std::span<const Literal*> ptrs_;
  std::span<Literal*> movable_;
  std::span<const char> unique_;
};

// A device's side of the collectives (spmd.cc): the evaluator of an SPMD
// evaluation hands each collective, partition-id and replica-id to it.
class DeviceCollectives {
 public:
  virtual ~DeviceCollectives() = default;
  virtual StatusOr<Literal> Evaluate(const HloInstruction& instr, Operands ops,
                                     CallContext& ctx, int threads) = 0;
};

// The same ops on the one device of a plain evaluation (a 1 x 1 mesh:
// every group is that device alone). spmd.cc.
StatusOr<Literal> EvaluateCollectiveAlone(const HloInstruction& instr,
                                          Operands ops, CallContext& ctx,
                                          int threads);

// Evaluates computations; kernels call back into it through CallContext.
// Not thread-safe: one Evaluator per evaluation.
class Evaluator final : public CallContext {
 public:
  // `taps` may be null (no taps); `collectives` null: a plain evaluation
  // (EvaluateCollectiveAlone). REQUIRES: all outlive the Evaluator.
  Evaluator(const EvaluatorOptions& options, TapSet* taps,
            DeviceCollectives* collectives = nullptr);

  // Evaluates `computation` on `args` (checked against its parameters).
  StatusOr<Literal> Call(const HloComputation& computation,
                         std::span<const Literal* const> args) override;
  const EvaluatorOptions& options() const override { return options_; }

 private:
  // Per-computation evaluation order and use counts, built once.
  struct Plan {
    std::vector<const HloInstruction*> order;  // Operands before users.
    std::vector<std::vector<int>> operands;    // Slot index per operand.
    // Per operand: 1 when that slot appears once among the operands.
    std::vector<std::vector<char>> unique;
    // The distinct operand slots of each instruction.
    std::vector<std::vector<int>> distinct;
    std::vector<int> uses;   // Distinct live users of each slot.
    std::vector<bool> live;  // Reachable from the root or tapped.
    int root = -1;
  };
  struct Slot;

  StatusOr<const Plan*> GetPlan(const HloComputation& computation);
  Status CheckArgs(const HloComputation& computation,
                   std::span<const Literal* const> args) const;
  void RecordTap(const HloInstruction& instr, const Literal& value);
  // Evaluates a non-parameter, non-constant instruction.
  StatusOr<Literal> EvalInstruction(const HloInstruction& instr,
                                    OperandValues& ops);
  StatusOr<Literal> EvalStructural(const HloInstruction& instr,
                                   OperandValues& ops);
  StatusOr<Literal> EvalTupleOp(const HloInstruction& instr,
                                OperandValues& ops);
  StatusOr<Literal> EvalCopy(const HloInstruction& instr, OperandValues& ops);
  StatusOr<Literal> EvalCalled(const HloInstruction& instr, OperandValues& ops);

  // evaluator_control_flow.cc
  StatusOr<Literal> EvalWhile(const HloInstruction& instr, OperandValues& ops);
  StatusOr<Literal> EvalConditional(const HloInstruction& instr,
                                    OperandValues& ops);
  StatusOr<Literal> EvalMap(const HloInstruction& instr, OperandValues& ops);
  // The map fast path, when to_apply is one elementwise op of its
  // parameters. Sets *used to false (and returns an empty literal) when the
  // computation does not have that form.
  StatusOr<Literal> EvalMapFast(const HloInstruction& instr,
                                const HloComputation& fn, OperandValues& ops,
                                bool* used);
  // Whether any instruction of `computation` is tapped.
  bool HasTapIn(const HloComputation& computation) const;

  const EvaluatorOptions& options_;
  TapSet* taps_;
  DeviceCollectives* collectives_;
  int threads_;
  std::unordered_map<const HloComputation*, std::unique_ptr<Plan>> plans_;
};

// Evaluates `computation` with a fresh Evaluator, turning exceptions
// (std::bad_alloc on huge shapes, ...) into Status values.
StatusOr<Literal> GuardedCall(const HloComputation& computation,
                              std::span<const Literal* const> args,
                              const EvaluatorOptions& options, TapSet* taps,
                              DeviceCollectives* collectives = nullptr);

// Evaluates `module`'s entry on `args` (checked against its parameters)
// as one device whose collectives go to `collectives` (null: alone).
StatusOr<Literal> EvaluateEntryOn(const HloModule& module,
                                  std::span<const Literal> args,
                                  const EvaluatorOptions& options, TapSet* taps,
                                  DeviceCollectives* collectives);

}  // namespace trench::oracle
