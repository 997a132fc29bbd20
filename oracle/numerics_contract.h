// The numerics contract: how far a correct compiler's output may deviate
// from the oracle's nominal value, per output element.
//
// An optimizing compiler may legitimately change results: it may
// reassociate reductions, keep f32 intermediates inside fusions instead of
// rounding to bf16 after every op, run f32 dots on the matrix unit at the
// requested precision (DEFAULT = 1 bf16 pass, HIGH = 3, HIGHEST = 6, see
// tpu/ISA.md "Matrix unit"), and use the approximate transcendentals of
// tpu/ISA.md. So instead of one fixed rtol, EvaluateWithBounds evaluates the
// module nominally with the oracle (the same kernels, the same values as
// Evaluate) and propagates next to every value x a per-element bound
// E(x) >= 0 (an f64 array; tuples per leaf) meaning "a correct compiler's
// value of x may differ from the oracle's nominal value by up to E(x)".
// E = +inf marks an undetermined element: any value, NaN included, is fine.
//
// The rule, instruction by instruction in topological order:
//   * Parameters and constants: E = 0.
//   * Elementwise float ops: the op is evaluated in f64 at the nominal
//     operands (f(x)) and at the corners x +- E(x) of every operand (2 for
//     unary, 4 binary, 8 ternary; plus 0 for power's base when its interval
//     contains 0; one corner for exp/expm1 (x+E) and log/log1p/sqrt/rsqrt
//     (x-E), whose deviation is largest on that side, unless a nominal
//     result is non-finite: exp(x) may overflow where exp(x-E) does not).
//     add, subtract, multiply, negate, abs, maximum, minimum, clamp and
//     float->float convert use the closed-form interval spread instead (Ea+Eb,
//     |a|Eb+|b|Ea+EaEb, max E). E(y) = S + R with spread S = max over
//     corners |f(corner) - f(x)| and rounding
//       R = |y - f(x)| + u_T (|f(x)| + S) + d_T
//     (the oracle's own rounding error, known exactly below f64 -- for f64
//     results u_T |y| -- plus one rounding for the compiler, which may also
//     round less, keeping wider intermediates), where u_T is the unit
//     roundoff of the result type (2^-8 bf16, 2^-11 f16, 2^-24 f32, 2^-53
//     f64) and d_T its smallest subnormal. R = 0 for exact ops (abs, negate,
//     max, min, clamp, reduce-precision, floor/ceil/round/sign) and when the
//     operands are exact, S = 0 and f(x) is representable (any correct
//     evaluation of a correctly rounded op then gives y). Approximate ops
//     (exp, expm1, log, log1p, tanh, logistic, sin, cos, tan, sqrt, rsqrt,
//     cbrt, erf, atan2, power, divide) add
//     NumericsOptions::transcendental_ulps ulps of y (ulp <= 2 u_T |y|,
//     plus that many subnormal steps). sin/cos use the
//     Lipschitz bound S = min(E(x), 2) instead of corners. Special cases:
//     - undetermined (+inf) when corners disagree with the nominal value on
//       NaN-ness or finiteness (including overflow of the result type), when
//       a divisor / log argument interval reaches a pole, when tan's
//       interval contains a pole, when atan2's box touches the branch cut,
//       and for discontinuous ops (floor, ceil, round-*, sign, remainder's
//       quotient, convert float->int) whose corners give different results;
//       and for power(NaN, +-0) (1 for a quiet NaN, NaN for a signaling
//       one; the payload is not kept in f64).
//     - A non-finite nominal element has E = 0 (the compiler must produce
//       the same NaN-ness / infinity) or +inf. An overflow to infinity in
//       the result type is fixed when every point of the box overflows; an
//       f16 intermediate that a fusion keeps in f32 and that would not
//       overflow there is not modelled (rare with the fuzzer's inputs).
//   * compare: determined iff both operands are exact there, or both are
//     finite and their intervals [x-E, x+E] do not overlap. pred/integer
//     values are exact (E = 0) or undetermined (+inf); integer and bit ops
//     with an undetermined operand are undetermined, except and/or of preds
//     where an exact operand decides the result (false for and, true for
//     or).
//   * select(p, a, b): determined p: the chosen branch's E; undetermined p:
//     E = |a - b| + max(E(a), E(b)) (+inf if a != b and they are not finite
//     floats).
//   * convert float->float: like any elementwise op (identity + rounding to
//     the target type); int->float: rounding only; bitcast-convert: E stays
//     0, else +inf (between widths: per output element, over the input
//     elements it shares bits with).
//   * Sign of zero: a min/max picks one of several equal zeros, so over
//     +0 and -0 the sign of its zero result depends on the order in which
//     a compiler combines them (reduce, reduce-window, scatter's min/max
//     combiner, elementwise max/min/clamp whose operands it may swap or
//     reassociate, select on an undetermined predicate). Such an exact
//     zero result gets the bound -0.0 (0 with the sign bit: "either
//     sign"); data movement carries it like any bound. Every elementwise
//     op with such operand zeros is evaluated again for each combination
//     of their signs: results that differ only by the sign of a zero stay
//     "either sign", finite floats get the difference as their bound, and
//     anything else that sees the sign bit (bitcast-convert's integers,
//     1/x's infinity, a TOTALORDER compare) is undetermined at that
//     element. Float outputs compare -0 == +0, so only what observes the
//     bits is affected.
//   * Data movement (broadcast, reshape, bitcast, transpose, slice,
//     concatenate, pad, reverse, copy, dynamic-slice, dynamic-update-slice,
//     gather, scatter with an overwrite combiner, tuple, get-tuple-element):
//     the same op applied to the E arrays, indices from the nominal values;
//     an undetermined index makes the whole result undetermined.
//   * reduce / reduce-window with add: for any summation order of the n
//     window elements plus the init (n' = n + 1 terms), the classic
//     worst-case bound of any binary summation tree applies:
//     E(y) = sum E(x_i) + n' u_acc sum |x_i| + 2 u_T |y| + d_T, with u_acc
//     the unit roundoff of the accumulator (f32 for bf16/f16/f32
//     reductions, f64 for f64; accumulating bf16 in bf16 is a bug, not a
//     legal choice). Across devices (all-reduce, reduce-scatter) u_acc is
//     max(u_T, that): the partial sums travel between chips in the
//     element type T, and XLA applies the computation in its own type.
//     The order across devices is unspecified: a computation that is not
//     add, multiply, max, min, and or or (one returning an argument, say)
//     gives an undetermined result there.
//     Undetermined once sum |x_i| reaches the overflow threshold: another
//     order's partial sums may overflow. n' u is the classic worst case of
//     recursive summation, and it bounds every binary summation tree (the error
//     is at most u times the sum of the tree's partial sums, each at most sum
//     |x_i|, over n'-1 additions). max/min: E(y) = max E(x_i) (both are
//     1-Lipschitz in the max norm). multiply: E(y) = prod(|x_i| + E_i) - prod
//     |x_i| + 2 n' max(u_T, u_acc) prod(|x_i| + E_i) + R: XLA's evaluator and
//     the oracle round every product to the reducer's type, and a compiler may
//     do so too or keep f32, so both the nominal and the compiled value may lie
//     n' u_T from the exact product. Undetermined when a partial product of
//     some order may overflow (the product of the factors above 1 reaches the
//     overflow threshold) or leave the normal range (that of the factors
//     below 1 is under the smallest normal number). and/or (pred, integers):
//     exact or undetermined. Variadic reduces whose reducer only selects
//     (compare, select, logic ops): exact where the window is exact, else
//     undetermined. Other reducers: exact where all inputs are exact
//     integers/preds, else undetermined.
//   * dot / convolution: E(y) = |A|.E(B) + E(A).|B| + E(A).E(B) +
//     (k' u_acc + p) |A|.|B| + R, computed with the oracle's dot/convolution
//     on f64 copies; k' = contracted size + 6 (the partial sums of up to
//     six passes). p models the matrix unit for f32 and f16 operands:
//     The highest of the operands' precisions governs (XLA gives
//     precision_config a backend-specific meaning, a request for at least
//     that accuracy per operand; its TPU back end, like compiler/codegen,
//     runs the max), so {default,high} runs three passes.
//     DEFAULT rounds both operands to bf16 once: p = 2 u_bf16 + u_bf16^2;
//     HIGH (hi*hi + hi*mid + mid*hi) drops terms of order u_bf16^2:
//     p = 4 u_bf16^2; HIGHEST (six passes) drops order u_bf16^3: p = 6
//     u_bf16^3 (~2.2 u_f32). bf16 operands: products exact, p = 0; f64: p =
//     0. f32 subnormal operands lose up to h = 2^-134 absolutely in each of
//     the P bf16 parts (below bf16's range), so then E also gets
//     P h (|A|.1 + 1.|B|) + K (P h)^2. Integer dots: exact or undetermined.
//     Non-finite results of a multi-pass dot (governing precision HIGH/HIGHEST)
//     with a non-finite operand are undetermined: inf splits into bf16 parts,
//     inf - inf = NaN; a one-pass dot must reproduce them.
//   * sort along a dimension with a comparator compare(LT|GT) of one key
//     operand (the oracle's fast-path form): every sorted key may move by
//     the row's max E (sorting is 1-Lipschitz in the max norm); payloads
//     (and the key itself if it is not exact) are undetermined at positions
//     whose key is within 2 * (row max E) of a neighbour, else carry their
//     row's max E. For unstable sorts, runs of equal keys with different
//     payloads are undetermined. Other comparators: exact if all inputs
//     are exact, else undetermined.
//   * while: the body is propagated alongside the nominal loop; once the
//     condition is undetermined every later value is undetermined.
//     conditional: an undetermined selector makes the result undetermined.
//     call, fusion: propagated through the called computation. map: per
//     element through the applied computation.
//   * Finally every output's E is multiplied by safety_factor and the
//     smallest normal number of its type is added (tpu/ISA.md does not
//     flush subnormals, so this only absorbs underflow noise).
// Anything else (custom-call, rng, ...) fails like Evaluate does or, for ops
// the oracle evaluates but this contract cannot bound, is undetermined with
// a counted reason (BoundedResult::undetermined_reasons).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/ir/literal.h"
#include "oracle/comparator.h"
#include "oracle/evaluator.h"

namespace trench {

struct NumericsOptions {
  // The nominal evaluation (loop limit, threads).
  EvaluatorOptions evaluator;
  // Allowance of approximate ops (transcendentals, divide), in ulps of the
  // result type, on top of the rounding term. The default covers every
  // bound of tpu/ISA.md's transcendental table (at most 4).
  double transcendental_ulps = 4;
  // Multiplies every final bound (slack for second-order terms).
  double safety_factor = 2;
};

// Per flattened output leaf: the oracle's nominal value and the allowed
// absolute deviation of a correct compiler's value from it, per element
// (an f64 literal of the same dims; +inf means the element is
// undetermined: any value, NaN included, is accepted).
struct BoundedOutput {
  Literal nominal;
  Literal allowed;
  int64_t undetermined = 0;  // Elements with allowed = +inf.
};

struct BoundedResult {
  Literal nominal;  // The whole root value (tuple or not), as Evaluate.
  std::vector<BoundedOutput> outputs;
  // Why elements became undetermined at the source (reason -> number of
  // instructions where it happened), e.g. "compare near a tie".
  std::map<std::string, int64_t> undetermined_reasons;
};

// Evaluates `module` on `args` and bounds each output element as described
// above. Errors: exactly those of Evaluate (InvalidArgument for argument
// count/shape mismatches, Unimplemented for unsupported ops,
// ResourceExhausted for runaway loops). Never crashes on a verified module.
StatusOr<BoundedResult> EvaluateWithBounds(const HloModule& module,
                                           std::span<const Literal> args,
                                           const NumericsOptions& options = {});

// Compares the target's value with the bounds. Per element: ok iff the
// element is undetermined, or both are NaN, or both are the same infinity,
// or |actual - nominal| <= allowed (so -0 == +0). Integer and pred outputs
// compare exactly unless undetermined. Leaves whose type or dims differ
// get a shape_error. The result uses mode kNear; each OutputComparison's
// tolerance is {0, 0} and bounded = true, with max_allowed /
// undetermined_count filled and first_mismatch->allowed set.
ComparisonResult CompareWithBounds(const Literal& actual,
                                   const BoundedResult& expected);

}  // namespace trench
