// The numerics contract's machinery (oracle/numerics_contract.h has the
// rule). Internal to oracle/: the walker that evaluates computations
// nominally with the oracle's own kernels and propagates the per-element
// bounds, and the per-op bound rules it dispatches to.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/ir/collective_groups.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/literal.h"
#include "oracle/collectives.h"
#include "oracle/evaluator_internal.h"
#include "oracle/kernels.h"
#include "oracle/numerics_contract.h"

namespace trench::oracle::numerics {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// A value and its bound. `e` mirrors `v`'s tuple structure; each array leaf
// of `e` is an F64 array of the leaf's dimensions (tokens stay tokens).
struct Bounded {
  Literal v;
  Literal e;
};
using BoundedOps = std::span<const Bounded* const>;

// Per-type constants (0 for non-float types): unit roundoff 2^-p, smallest
// subnormal, smallest normal, and the magnitude from which round-to-nearest
// overflows to infinity.
double UnitRoundoff(PrimitiveType t);
double MinSubnormal(PrimitiveType t);
double MinNormal(PrimitiveType t);
double OverflowThreshold(PrimitiveType t);
// The unit roundoff of the accumulator a correct compiler uses for sums and
// dot products of type t: f32's for bf16/f16/f32, f64's for f64.
double AccumulatorRoundoff(PrimitiveType t);

// |v| + E elementwise as an f64 array (|v| when e is null); v an array.
Literal AbsPlus(const Literal& v, const Literal* e);
// min(x, hi) or max(x, lo) of every element of an f64 array, in place.
void ClampAbove(Literal& v, double hi);
void ClampBelow(Literal& v, double lo);

// `shape` with every array leaf's element type replaced by F64 (layouts
// dropped).
Shape F64Shape(const Shape& shape);
// Bounds of `shape`'s structure filled with `value` (0 or +inf).
Literal FilledBound(const Shape& shape, double value);
// Whether every element of every leaf of `e` is 0.
bool AllZero(const Literal& e);
// Sets every element of every leaf of `e` to +inf.
void MakeUndetermined(Literal& e);
// The elements of a real array as doubles (exact for floats).
std::vector<double> AsDoubles(const Literal& lit);
// An F64 array of `dims` holding `values`.
Literal F64Array(const std::vector<int64_t>& dims,
                 std::span<const double> values);

class BoundsEvaluator;

// A device's collectives, partition-id and replica-id under the contract
// (numerics_collectives.cc): the values as the plain oracle's, each
// result's bound from its members' values and bounds.
class BoundedCollectives {
 public:
  virtual ~BoundedCollectives() = default;
  virtual StatusOr<Bounded> Evaluate(BoundsEvaluator& ev,
                                     const HloInstruction& instr,
                                     BoundedOps ops) = 0;
};
// Device `device` of `mesh` meeting the others at `rendezvous` (null: the
// device alone, a 1 x 1 mesh).
std::unique_ptr<BoundedCollectives> MakeBoundedDevice(int64_t device,
                                                      const DeviceMesh& mesh,
                                                      Rendezvous* rendezvous);

// Walks computations like the oracle's Evaluator, keeping (value, bound)
// per instruction. Not thread-safe: one per evaluation.
class BoundsEvaluator final : public CallContext {
 public:
  // `collectives` null: the device alone. REQUIRES: it outlives this.
  explicit BoundsEvaluator(const NumericsOptions& options,
                           BoundedCollectives* collectives = nullptr);

  // Evaluates `computation` on bounded args (checked against its
  // parameters).
  StatusOr<Bounded> Run(const HloComputation& computation, BoundedOps args);

  // CallContext for the nominal kernels (reducers, comparators, ...): the
  // plain oracle.
  StatusOr<Literal> Call(const HloComputation& computation,
                         std::span<const Literal* const> args) override {
    return plain_.Call(computation, args);
  }
  const EvaluatorOptions& options() const override {
    return options_.evaluator;
  }
  const NumericsOptions& numerics() const { return options_; }
  int threads() const { return threads_; }

  // Counts one instruction where elements became undetermined for `why`.
  void Note(const std::string& why) { ++reasons_[why]; }
  std::map<std::string, int64_t>& reasons() { return reasons_; }

  // A copy of `instr` without operands whose array leaves are F64 (for
  // running a kernel on bound arrays). When `reducer` is not kNone, its
  // called computation 0 is replaced by the f64 scalar computation
  // "p0 <reducer> p1" (kParameter: the overwrite computation returning p1).
  // Cached; valid while this evaluator lives.
  const HloInstruction& F64Clone(const HloInstruction& instr,
                                 HloOpcode reducer = HloOpcode::kAfterAll);

  // The f64 scalar computation "p0 <op> p1" (kParameter: returns p1).
  const HloComputation& F64Reducer(HloOpcode op);

  // A reduce over dimension 0 of the members' operand `k` of the
  // collective `instr` stacked [n, ...] into `shape` (its to_apply), for
  // the reduction bound rules. Cached; valid while this evaluator lives.
  const HloInstruction& ReduceOverDevices(const HloInstruction& instr,
                                          int64_t k, const Shape& shape);

  // Evaluates the elementwise `instr` on `ops` into `out_shape`.
  StatusOr<Literal> Elementwise(const HloInstruction& instr,
                                const Shape& out_shape, Operands ops);

 private:
  StatusOr<Bounded> EvalInstruction(const HloInstruction& instr,
                                    BoundedOps ops);
  StatusOr<Bounded> EvalWhile(const HloInstruction& instr, BoundedOps ops);
  StatusOr<Bounded> EvalConditional(const HloInstruction& instr,
                                    BoundedOps ops);
  StatusOr<Bounded> EvalMap(const HloInstruction& instr, BoundedOps ops);

  const NumericsOptions& options_;
  int threads_;
  Evaluator plain_;
  std::map<std::string, int64_t> reasons_;
  std::map<std::pair<const HloInstruction*, HloOpcode>,
           std::unique_ptr<HloInstruction>>
      clones_;
  std::map<HloOpcode, std::unique_ptr<HloComputation>> reducers_;
  std::map<std::pair<const HloInstruction*, int64_t>,
           std::unique_ptr<HloInstruction>>
      device_reduces_;
  BoundedCollectives* collectives_;
  std::unique_ptr<BoundedCollectives> alone_;  // When none is given.
};

// ---- Bound rules (each returns the bound of the instruction's result,
// given the nominal result `y`). ----

// numerics_elementwise.cc: every elementwise opcode.
StatusOr<Literal> ElementwiseBound(BoundsEvaluator& ev,
                                   const HloInstruction& instr, BoundedOps ops,
                                   const Literal& y);

// numerics_movement.cc: broadcast, reshape, bitcast, transpose, slice,
// concatenate, pad, reverse, copy, dynamic-slice, dynamic-update-slice,
// gather, scatter. Returns the bound, or nullopt-like Unimplemented when
// the op is not a data movement op.
StatusOr<Literal> MovementBound(BoundsEvaluator& ev,
                                const HloInstruction& instr, BoundedOps ops,
                                const Literal& y);

// numerics_reduce.cc: reduce, reduce-window, sort, select-and-scatter.
// `across_devices`: the reduction runs over the devices of a collective,
// whose partial results travel between chips in the element type, so
// each step may round to it (XLA applies the computation in its own
// type); a reduce on one chip accumulates 16-bit floats in f32.
StatusOr<Literal> ReduceBound(BoundsEvaluator& ev, const HloInstruction& instr,
                              BoundedOps ops, const Literal& y,
                              bool across_devices = false);
StatusOr<Literal> SortBound(BoundsEvaluator& ev, const HloInstruction& instr,
                            BoundedOps ops, const Literal& y);

// numerics_zero_sign.cc: zeros of unspecified sign. A bound of -0.0 (0
// with the sign bit set) marks an exact zero whose sign a correct compiler
// may choose (a min/max over zeros of both signs in another order).
inline constexpr double kAnySign = -0.0;
inline bool IsSignUnspecified(double e) { return e == 0 && std::signbit(e); }
// After an elementwise op's bound `e` (of result y): marks the zeros that
// min/max/clamp (or select on an undetermined predicate) pick among zeros
// of both signs, and propagates marked operand zeros: the op is evaluated
// again for every combination of their signs; results that differ only
// by a zero's sign stay marked, finite float ones get the difference as
// bound, others (integers of a bitcast-convert, infinities, preds) become
// undetermined.
Status ZeroSignElementwise(BoundsEvaluator& ev, const HloInstruction& instr,
                           BoundedOps ops, const Literal& y, Literal& e);
// Per element of an exact float array: 1 where it is +0 (pos), -0 (neg) or
// a marked zero (marked), else 0, as F64 arrays of its dims.
struct ZeroSigns {
  Literal pos, neg, marked;
  bool any_pos = false, any_neg = false, any_marked = false;
};
ZeroSigns ZeroSignIndicators(const Bounded& b);
// Whether combining a and b can meet zeros of both signs or a marked one
// (else no result of theirs needs a mark).
bool MayMixZeroSigns(const ZeroSigns& a, const ZeroSigns& b);
// Given the max of those indicators over what an order-dependent min/max
// combines into each element: marks the exact zero elements of y that saw
// zeros of both signs or a marked zero, and clears every other mark in e.
void MarkCombinedZeros(const Literal& y, const Literal& pos, const Literal& neg,
                       const Literal& marked, Literal& e);
// Clears marks of e on nonzero (or non-float) elements of the array y.
void ClearZeroSignMarks(const Literal& y, Literal& e);

// numerics_dot.cc: dot and convolution.
StatusOr<Literal> ContractionBound(BoundsEvaluator& ev,
                                   const HloInstruction& instr, BoundedOps ops,
                                   const Literal& y);
// The matrix unit's relative product error p for operands of type t at
// precision `precision` (the rule in numerics_contract.h).
double MatrixUnitError(PrimitiveType t, Precision precision);

}  // namespace trench::oracle::numerics
