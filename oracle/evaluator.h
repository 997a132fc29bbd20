// The reference evaluator: the trusted oracle. It interprets an HloModule
// directly, op by op, following XLA's HloEvaluator semantics where XLA
// defines them. It uses compiler/ir only (never passes or codegen), so it
// shares no code with the compiler under test.
//
// Numerics: bf16/f16 elementwise ops compute in f32 and round once (RNE);
// dot, convolution and reductions of floats accumulate in f64 and round
// once to the result type (at least f32, as the contract requires).
#pragma once

#include <span>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/ir/literal.h"

namespace trench {

struct EvaluatorOptions {
  // Upper bound on while-loop iterations before failing with
  // ResourceExhausted (guards against non-terminating programs).
  int64_t max_while_iterations = 1'000'000;
  // Threads for the heavy kernels (dot, convolution, large elementwise);
  // 0 = hardware concurrency.
  int threads = 0;
};

// Evaluates the entry computation of `module` on `args` (one literal per
// entry parameter, in parameter order). Returns the root's value.
// Errors: InvalidArgument when args do not match the parameters' shapes;
// Unimplemented("unsupported op X") for ops outside the supported list;
// ResourceExhausted for runaway loops. Never crashes on a verified module.
StatusOr<Literal> Evaluate(const HloModule& module,
                           std::span<const Literal> args,
                           const EvaluatorOptions& options = {});

// Evaluates one computation on argument values (used for called
// computations and by tests).
StatusOr<Literal> EvaluateComputation(const HloComputation& computation,
                                      std::span<const Literal* const> args,
                                      const EvaluatorOptions& options = {});

// Evaluates the entry computation and also returns the value of every
// instruction named in `taps` (including instructions inside called
// computations, e.g. fused computations; for those, the value from the
// last evaluation of the computation). Used by the graph/fusion bisector.
struct TappedResult {
  Literal result;
  std::vector<std::pair<std::string, Literal>> taps;
};
StatusOr<TappedResult> EvaluateWithTaps(const HloModule& module,
                                        std::span<const Literal> args,
                                        std::span<const std::string> taps,
                                        const EvaluatorOptions& options = {});

}  // namespace trench
