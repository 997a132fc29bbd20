// Convolution expansion: rewrites every convolution into ops the code
// generator emits (convert, transpose, reshape, broadcast, slice,
// concatenate, dot, clamp/minimum/compare), by im2col.
#pragma once

#include "compiler/passes/pass.h"

namespace trench {

// For each convolution (semantics: XLA operation_semantics "Conv
// (convolution)", oracle/convolution.cc):
//  1. Operands are converted to the result type (as XLA's evaluator does),
//     and for integer results further to a 64-bit accumulation type (s64
//     or u64 by the result's signedness; pred results use s32 0/1).
//  2. The input is transposed to [batch, spatial.., feature], base-dilated
//     (zeros interleaved by reshape + concatenate + slice) and padded
//     (concatenated zeros, or sliced for negative padding) per spatial dim.
//  3. For each kernel position (row-major over the kernel's spatial dims;
//     window reversal reads position size-1-k) a strided slice of the
//     padded input gives the input values that meet that kernel position;
//     the slices are concatenated into patches [batch, out spatial..,
//     positions, feature].
//  4. One dot contracts (positions, feature) with the kernel reshaped to
//     [positions, input feature, output feature]; feature_group_count and
//     batch_group_count become a dot batch dimension over the groups.
//     operand_precision is kept.
//  5. Integer results are clamped to the result type's range (the oracle's
//     and XLA evaluator's 64-bit accumulation then clamp); pred results are
//     "sum != 0"; the result is transposed to the output dim_labels order.
// Padding positions contribute 0 * w (not "nothing"): the same value for
// finite kernels. Convolutions with no output elements or an empty sum
// become a broadcast zero. Rewrite site: "expand-convolution".
class ConvolutionExpander : public HloPass {
 public:
  std::string_view name() const override { return "conv-expander"; }
  StatusOr<bool> Run(HloModule* module, PassContext* ctx) override;
};

}  // namespace trench
