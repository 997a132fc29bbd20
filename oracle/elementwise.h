// Elementwise kernels, split by concern. Internal to oracle/.
//
// EvalElementwiseInto is the evaluator's entry point (kernels.h's
// EvalElementwise is the single-threaded form of it). The per-concern
// functions below write into an output literal that already has the result
// shape; their operands have been checked by the dispatcher (arrays with the
// output's dimensions, or rank 0 where the op allows a scalar). They return
// InvalidArgument/Unimplemented for element types the op does not take.
#pragma once

#include "base/status.h"
#include "compiler/ir/hlo_attributes.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/literal.h"
#include "compiler/ir/opcode.h"
#include "oracle/kernels.h"

namespace trench::oracle {

// Evaluates the elementwise op `instr` (IsElementwise(instr.opcode())) on
// `ops` into a result of `out_shape` (normally instr.shape(); map's fast
// path passes the map's shape with the applied computation's root as
// instr). When `reuse` is non-null and its shape is Compatible with
// out_shape, its buffer is taken over (moved from) as the output, and any
// operand pointer equal to `reuse` reads from that same buffer: the caller
// donates a dead operand. `threads` > 1 splits large arrays.
StatusOr<Literal> EvalElementwiseInto(const HloInstruction& instr,
                                      const Shape& out_shape, Operands ops,
                                      Literal* reuse, int threads);

// Unary float math (elementwise_unary_float.cc): abs, negate, sign, floor,
// ceil, round-nearest-afz, round-nearest-even, exponential,
// exponential-minus-one, log, log-plus-one, sqrt, rsqrt, cbrt, tanh,
// logistic, sine, cosine, tan, erf, is-finite.
Status UnaryFloat(HloOpcode op, const Literal& x, Literal* out, int threads);

// Unary integer/bit ops (elementwise_unary_int.cc): abs, negate, sign, not,
// count-leading-zeros, popcnt on integers; not on pred.
Status UnaryInt(HloOpcode op, const Literal& x, Literal* out, int threads);

// Binary arithmetic and bit ops (elementwise_binary.cc): add, subtract,
// multiply, divide, remainder, maximum, minimum, power, atan2, and, or,
// xor, shift-left, shift-right-logical, shift-right-arithmetic.
Status BinaryOp(HloOpcode op, const Literal& a, const Literal& b, Literal* out,
                int threads);

// Complex numbers (elementwise_complex.cc): real, imag, complex, and the
// ops that are plain complex arithmetic (negate, abs, add, subtract,
// multiply, divide). Others are Unimplemented for complex types.
Status ComplexOp(HloOpcode op, Operands ops, Literal* out, int threads);

// compare, select, clamp (elementwise_compare.cc).
Status CompareOp(ComparisonDirection dir, ComparisonType type, const Literal& a,
                 const Literal& b, Literal* out, int threads);
Status SelectOp(const Literal& pred, const Literal& on_true,
                const Literal& on_false, Literal* out, int threads);
Status ClampOp(const Literal& lo, const Literal& x, const Literal& hi,
               Literal* out, int threads);

// convert, bitcast-convert, reduce-precision (elementwise_convert.cc).
Status ConvertOp(const Literal& x, Literal* out, int threads);
// REQUIRES: out has the result shape of bitcast-convert of x (checked
// again here: same total byte size and the minor-dimension rule).
Status BitcastConvertOp(const Literal& x, Literal* out);
Status ReducePrecisionOp(const Literal& x, int64_t exponent_bits,
                         int64_t mantissa_bits, Literal* out, int threads);

}  // namespace trench::oracle
