// Shared helpers of the oracle's structural kernels (data movement,
// reductions, contractions, indexing). Internal to oracle/.
//
// Literals store arrays densely in logical row-major order, so every kernel
// here works on (base offset, per-dimension stride) views of those bytes.
// The copy helpers take byte strides and move whole contiguous runs where
// they can; no helper recomputes a multi-index per element.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "base/status.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/literal.h"
#include "oracle/kernels.h"

namespace trench::oracle {

// Product of `dims` (1 for none).
int64_t Product(std::span<const int64_t> dims);
// Row-major strides of `dims`, in elements.
std::vector<int64_t> Strides(std::span<const int64_t> dims);

// Advances `index` to the next row-major position within `dims`. Returns
// false (index reset to zeros) after the last position.
// REQUIRES: index.size() == dims.size().
inline bool NextIndex(std::span<const int64_t> dims, std::span<int64_t> index) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

// Copies a box of `counts` elements of `elem_bytes` bytes each. Element at
// box index i is read from src + sum(i[d] * src_strides[d]) and written to
// dst + sum(i[d] * dst_strides[d]); strides are in bytes and may be zero
// (broadcast) or negative (reverse). Merges dimensions that are contiguous
// in both views, uses memcpy for contiguous runs and a tiled loop when the
// source's unit-stride dimension is not the destination's (transposes).
// REQUIRES: every addressed byte is inside the respective buffers; the
// regions do not overlap.
void StridedCopy(const uint8_t* src, std::span<const int64_t> src_strides,
                 uint8_t* dst, std::span<const int64_t> dst_strides,
                 std::span<const int64_t> counts, int64_t elem_bytes);

// Returns `in` (row-major with `dims`) permuted so that result dim i is
// input dim perm[i]. REQUIRES: perm is a permutation; in.size() ==
// Product(dims).
template <typename E>
std::vector<E> Permute(const std::vector<E>& in, std::span<const int64_t> dims,
                       std::span<const int64_t> perm) {
  std::vector<E> out(in.size());
  if (in.empty()) return out;
  const std::vector<int64_t> s = Strides(dims);
  std::vector<int64_t> counts(perm.size()), src(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    counts[i] = dims[perm[i]];
    src[i] = s[perm[i]] * static_cast<int64_t>(sizeof(E));
  }
  std::vector<int64_t> dst = Strides(counts);
  for (int64_t& v : dst) v *= sizeof(E);
  StridedCopy(reinterpret_cast<const uint8_t*>(in.data()), src,
              reinterpret_cast<uint8_t*>(out.data()), dst, counts, sizeof(E));
  return out;
}

// Fills `n` elements of `elem_bytes` at dst with the element at `value`.
void FillElements(uint8_t* dst, int64_t n, const uint8_t* value,
                  int64_t elem_bytes);

// Runs fn(begin, end) over [0, n) split into contiguous chunks on up to
// `threads` threads (0 = hardware concurrency). Chunks are at least
// `min_chunk` long; with one chunk, runs inline. fn must be thread-safe
// for disjoint ranges.
void ParallelFor(int64_t n, int threads, int64_t min_chunk,
                 const std::function<void(int64_t, int64_t)>& fn);

// ---- Validation. Each returns InvalidArgument naming `instr`. ----

// ops.size() == n (or >= n when at_least) and every listed operand is an
// array literal (tuples are rejected).
Status CheckOperands(const HloInstruction& instr, Operands ops, int64_t n,
                     bool at_least = false);
// 0 <= d < rank.
Status CheckDim(const HloInstruction& instr, int64_t d, int64_t rank,
                const char* what);
// Every entry in [0, rank) and no repeats.
Status CheckDimList(const HloInstruction& instr, std::span<const int64_t> dims,
                    int64_t rank, const char* what);
// instr.shape() is an array whose dims equal `dims`.
Status CheckResultDims(const HloInstruction& instr,
                       std::span<const int64_t> dims);
// `lit` is a rank-0 array.
Status CheckScalar(const HloInstruction& instr, const Literal& lit,
                   const char* what);
// The operands of a (variadic) reduce or reduce-window: N inputs of equal
// dimensions followed by N scalar inits, and a to_apply computation.
// Returns InvalidArgument (naming `op_name`) when that does not hold.
struct ReduceOperands {
  Operands inputs, inits;
};
StatusOr<ReduceOperands> SplitReduceOperands(const HloInstruction& instr,
                                             Operands ops,
                                             const std::string& op_name);
// Fails with Unimplemented for complex element types.
Status CheckNotComplex(const HloInstruction& instr, PrimitiveType t);
// "%name: message" with InvalidArgument.
Status Invalid(const HloInstruction& instr, const std::string& message);
std::string DimsToString(std::span<const int64_t> dims);

// A scalar literal's value as int64 for any integer type; unsigned values
// above INT64_MAX saturate (so clamping against sizes stays correct).
int64_t ScalarIndexValue(const Literal& lit);

// ---- Element conversion for the numeric kernels. ----

// Value of a native element as a double (exact for every float type and
// for integers of magnitude < 2^53).
template <typename N>
inline double ToDouble(N v) {
  if constexpr (std::is_same_v<N, bf16> || std::is_same_v<N, f16>) {
    return static_cast<double>(static_cast<float>(v));
  } else {
    return static_cast<double>(v);
  }
}

// Rounds d once to the float type N (nearest even).
template <typename N>
inline N FromDouble(double d) {
  if constexpr (std::is_same_v<N, bf16>) {
    return bf16::FromBits(F64ToBf16Bits(d));
  } else if constexpr (std::is_same_v<N, f16>) {
    return f16::FromBits(F64ToF16Bits(d));
  } else {
    return static_cast<N>(d);
  }
}

// Converts every element of `lit` to double after first converting it to
// the element type `as` the way XLA's convert does (XLA's evaluator
// converts mixed-type dot/convolution operands to the result type before
// multiplying: hlo_evaluator_typed_visitor.h, HandleDotSlowPath).
// REQUIRES: `as` is a float type; `lit` is a real array.
std::vector<double> ToDoubles(const Literal& lit, PrimitiveType as);
// Converts every element of `lit` to the integer type `as` (wrapping for
// integers, saturating for floats, NaN -> 0) and widens it to 64 bits
// (sign- or zero-extended). REQUIRES: `as` is an integer type.
std::vector<uint64_t> ToWrappedInts(const Literal& lit, PrimitiveType as);

// ---- Binary reducers recognised for typed fast paths. ----

enum class ReducerKind { kNone, kAssign, kAdd, kMul, kMax, kMin, kAnd, kOr };

// Classifies a computation of two scalar parameters of type t whose root
// is one op applied to (param 0, param 1): add/multiply/and/or in either
// operand order; maximum/minimum only in that order (XLA's max/min return
// lhs on ties and for a NaN lhs, so order matters). kAssign: the root is
// parameter 1 (scatter's "overwrite"). kNone otherwise. Pred add/multiply
// are left to the general path.
ReducerKind ClassifyReducer(const HloComputation& comp, PrimitiveType t);

// Applies the reducer to (a, b) exactly as the HLO op would in type N:
// floats round once (double holds f32/bf16/f16 sums and products exactly
// enough that one rounding is correct), integers wrap, max/min follow
// XLA's evaluator: NaN lhs wins, then NaN rhs, then std::max/std::min
// (hlo_evaluator_typed_visitor.h, HandleMaximum/HandleMinimum).
template <typename N>
inline N ApplyReducer(ReducerKind k, N a, N b) {
  if constexpr (std::is_same_v<N, bool>) {
    switch (k) {
      case ReducerKind::kAssign:
        return b;
      case ReducerKind::kMax:
      case ReducerKind::kOr:
        return a || b;
      case ReducerKind::kMin:
      case ReducerKind::kAnd:
        return a && b;
      default:
        return a;
    }
  } else if constexpr (std::is_integral_v<N>) {
    using U = std::make_unsigned_t<N>;
    switch (k) {
      case ReducerKind::kAssign:
        return b;
      case ReducerKind::kAdd:
        return static_cast<N>(
            static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
      case ReducerKind::kMul:
        // Promote to at least unsigned int so u16*u16 cannot overflow int.
        return static_cast<N>(
            static_cast<U>(static_cast<uint64_t>(static_cast<U>(a)) *
                           static_cast<uint64_t>(static_cast<U>(b))));
      case ReducerKind::kMax:
        return a < b ? b : a;
      case ReducerKind::kMin:
        return b < a ? b : a;
      case ReducerKind::kAnd:
        return static_cast<N>(a & b);
      case ReducerKind::kOr:
        return static_cast<N>(a | b);
      default:
        return a;
    }
  } else {
    const double x = ToDouble(a), y = ToDouble(b);
    switch (k) {
      case ReducerKind::kAssign:
        return b;
      case ReducerKind::kAdd:
        return FromDouble<N>(x + y);
      case ReducerKind::kMul:
        return FromDouble<N>(x * y);
      case ReducerKind::kMax:
        if (x != x) return a;
        if (y != y) return b;
        return x < y ? b : a;
      case ReducerKind::kMin:
        if (x != x) return a;
        if (y != y) return b;
        return y < x ? b : a;
      default:
        return a;
    }
  }
}

// A reusable rank-0 literal for CallContext::Call arguments.
Literal MakeScalar(PrimitiveType t);
// Copies element `i` (bytes) of array `src` into scalar `dst`.
// REQUIRES: same element type.
inline void LoadScalar(const Literal& src, int64_t i, Literal& dst) {
  const int64_t w = ByteWidth(src.element_type());
  std::memcpy(dst.mutable_bytes().data(), src.bytes().data() + i * w, w);
}
// Copies scalar `src` into element `i` of `dst` (converting if the types
// differ, which a verified module never has).
void StoreScalar(const Literal& src, Literal& dst, int64_t i);

// Calls `comp` on scalar args and returns its leaves: one scalar for an
// array root, N for a tuple root. Checks the count and that each leaf is
// a scalar of the expected type.
Status CallScalars(CallContext& ctx, const HloComputation& comp,
                   std::span<const Literal* const> args,
                   std::span<const PrimitiveType> result_types,
                   std::vector<Literal>* results);

// The windows of reduce-window / select-and-scatter over an input of
// `input_dims`, from instr.attrs().window. For output position o and
// window position k of dimension d the input coordinate is
// (o * stride - pad_lo + k * window_dilation) / base_dilation when that
// division is exact and the coordinate is inside the input; other window
// positions fall on padding or dilation holes and are skipped, as XLA's
// evaluator does (hlo_evaluator_typed_visitor.h, IterateThroughWindow).
class WindowPlan {
 public:
  // Validates the window (one entry per input dim, positive size, stride
  // and dilations, no window reversal), computes the output dims and
  // checks them against `expected_output_dims` (the instruction's) before
  // allocating anything, so absurd paddings fail instead of exhausting
  // memory.
  static StatusOr<WindowPlan> Make(
      const HloInstruction& instr, std::span<const int64_t> input_dims,
      std::span<const int64_t> expected_output_dims);

  const std::vector<int64_t>& output_dims() const { return out_dims_; }

  // Calls fn(output_linear_index, offsets) for every output position in
  // row-major order. `offsets` are the row-major input offsets of the valid
  // window positions, in row-major window order.
  template <typename F>
  void ForEachOutput(F&& fn) const {
    const int64_t rank = out_dims_.size();
    const int64_t count = Product(out_dims_);
    std::vector<int64_t> o(rank, 0), offsets, next;
    for (int64_t oi = 0; oi < count; ++oi) {
      // Cartesian product of the per-dim valid offsets, row-major.
      offsets.assign(1, 0);
      for (int64_t d = 0; d < rank; ++d) {
        const std::vector<int64_t>& valid = valid_[d][o[d]];
        next.clear();
        for (int64_t base : offsets) {
          for (int64_t v : valid) next.push_back(base + v);
        }
        offsets.swap(next);
      }
      fn(oi, std::span<const int64_t>(offsets));
      NextIndex(out_dims_, o);
    }
  }

 private:
  std::vector<int64_t> out_dims_;
  // valid_[d][o]: input offsets (coordinate * row-major stride) of the
  // window positions of dim d that are valid for output coordinate o.
  std::vector<std::vector<std::vector<int64_t>>> valid_;
};

}  // namespace trench::oracle
