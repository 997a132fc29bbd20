// sort: N operands of equal dims sorted together along dimensions={d} by a
// comparator of 2N scalars (param 2i / 2i+1 = lhs / rhs of operand i) that
// returns "lhs goes first" (operation_semantics.md, Sort).
//
// Every sort here is stable, also when is_stable=false: XLA leaves the
// order of equivalent elements unspecified then, and the oracle must be
// deterministic. The merge sort is our own so that an inconsistent user
// comparator (e.g. a NaN-unaware LT) can reorder elements but can never
// read out of bounds, which std::sort does not promise.
//
// Fast path: a comparator whose root is one compare(LT|GT) of param(2i)
// and param(2i+1) (either order) is evaluated typed, with XLA's FLOAT
// (IEEE, NaN unordered) or TOTALORDER semantics.
#include <algorithm>
#include <bit>
#include <functional>

#include "oracle/index_util.h"
#include "oracle/kernels.h"

namespace trench::oracle {
namespace {

// Stable bottom-up merge sort of `idx` by less(a, b). Stops early (leaving
// idx a permutation) once less reports an error via `status`.
void MergeSort(std::vector<int64_t>& idx,
               const std::function<bool(int64_t, int64_t)>& less,
               const Status& status) {
  const int64_t n = idx.size();
  std::vector<int64_t> tmp(n);
  for (int64_t width = 1; width < n && status.ok(); width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      const int64_t mid = std::min(n, lo + width),
                    hi = std::min(n, lo + 2 * width);
      int64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        // Take from the right only when strictly first: keeps stability.
        if (status.ok() && less(idx[j], idx[i])) {
          tmp[k++] = idx[j++];
        } else {
          tmp[k++] = idx[i++];
        }
      }
      while (i < mid) tmp[k++] = idx[i++];
      while (j < hi) tmp[k++] = idx[j++];
    }
    idx.swap(tmp);
  }
}

// A typed view of "compare(param(2*operand), param(2*operand+1)), dir".
struct FastComparator {
  int64_t operand = -1;
  bool greater = false;  // GT instead of LT (after undoing a swap).
  bool total_order = false;
};

std::optional<FastComparator> MatchComparator(const HloComputation& comp,
                                              Operands ops) {
  const HloInstruction* root = comp.root_instruction();
  if (root == nullptr || root->opcode() != HloOpcode::kCompare ||
      root->operand_count() != 2 ||
      comp.num_parameters() != static_cast<int64_t>(2 * ops.size())) {
    return std::nullopt;
  }
  const HloInstruction* a = root->operand(0);
  const HloInstruction* b = root->operand(1);
  if (a->opcode() != HloOpcode::kParameter ||
      b->opcode() != HloOpcode::kParameter) {
    return std::nullopt;
  }
  const int64_t pa = a->parameter_number(), pb = b->parameter_number();
  if (pa / 2 != pb / 2 || pa == pb || pa < 0 ||
      pa >= static_cast<int64_t>(2 * ops.size())) {
    return std::nullopt;
  }
  const ComparisonDirection dir = root->attrs().comparison_direction;
  if (dir != ComparisonDirection::kLt && dir != ComparisonDirection::kGt) {
    return std::nullopt;
  }
  FastComparator f;
  f.operand = pa / 2;
  const PrimitiveType t = ops[f.operand]->element_type();
  if (IsComplex(t) || a->shape().element_type() != t) return std::nullopt;
  const ComparisonType ct = root->attrs().comparison_type;
  if (IsFloat(t)) {
    if (ct != ComparisonType::kUnset && ct != ComparisonType::kFloat &&
        ct != ComparisonType::kTotalOrder) {
      return std::nullopt;
    }
    f.total_order = ct == ComparisonType::kTotalOrder;
  } else if (ct != ComparisonType::kUnset &&
             ct != (IsUnsigned(t) || t == PrimitiveType::PRED
                        ? ComparisonType::kUnsigned
                        : ComparisonType::kSigned)) {
    return std::nullopt;
  }
  // compare(rhs, lhs, LT) is "lhs > rhs".
  f.greater = (dir == ComparisonDirection::kGt) == (pa % 2 == 0);
  return f;
}

// Total order key of a float's bits: -NaN < -inf < ... < -0 < +0 < ... <
// +inf < +NaN, as XLA's TOTALORDER comparison.
template <typename N>
int64_t TotalOrderKey(N v) {
  int64_t bits;
  int width;
  if constexpr (std::is_same_v<N, double>) {
    bits = std::bit_cast<int64_t>(v);
    width = 64;
  } else if constexpr (std::is_same_v<N, float>) {
    bits = std::bit_cast<int32_t>(v);
    width = 32;
  } else {
    bits = static_cast<int16_t>(v.bits);
    width = 16;
  }
  const int64_t mag_mask = width == 64 ? std::numeric_limits<int64_t>::max()
                                       : (int64_t{1} << (width - 1)) - 1;
  return bits < 0 ? bits ^ mag_mask : bits;
}

}  // namespace

StatusOr<Literal> EvalSort(const HloInstruction& instr, Operands ops,
                           CallContext& ctx) {
  RETURN_IF_ERROR(CheckOperands(instr, ops, 1, /*at_least=*/true));
  if (instr.called_computations().empty()) {
    return Invalid(instr, "sort has no comparator");
  }
  const std::vector<int64_t>& dims = ops[0]->shape().dims();
  for (const Literal* op : ops) {
    if (op->shape().dims() != dims) {
      return Invalid(instr, "sort operands differ in dimensions");
    }
  }
  const int64_t rank = dims.size();
  if (instr.dimensions().size() != 1) {
    return Invalid(instr, "sort needs exactly one dimension");
  }
  const int64_t sd = instr.dimensions()[0];
  RETURN_IF_ERROR(CheckDim(instr, sd, rank, "sort"));
  const Shape& rs = instr.shape();
  const size_t n = ops.size();
  if (rs.IsTuple() ? rs.tuple_size() != static_cast<int64_t>(n) : n != 1) {
    return Invalid(instr, "result must be one array per operand");
  }
  std::vector<Literal> results;
  for (size_t i = 0; i < n; ++i) {
    const Shape& s = rs.IsTuple() ? rs.tuple_shape(i) : rs;
    if (!s.IsArray() || s.dims() != dims ||
        s.element_type() != ops[i]->element_type()) {
      return Invalid(
          instr, "result " + std::to_string(i) + " does not match its operand");
    }
    results.emplace_back(s);
  }
  const HloComputation& comp = *instr.to_apply();
  const int64_t len = rank == 0 ? 1 : dims[sd];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d < sd) outer *= dims[d];
    if (d > sd) inner *= dims[d];
  }

  // The comparator: typed when recognised, else one Call per comparison.
  Status status;
  std::vector<Literal> scalars, returned;
  std::vector<const Literal*> args;
  for (size_t i = 0; i < n; ++i) {
    scalars.push_back(MakeScalar(ops[i]->element_type()));
    scalars.push_back(MakeScalar(ops[i]->element_type()));
  }
  for (Literal& s : scalars) args.push_back(&s);
  const PrimitiveType pred[] = {PrimitiveType::PRED};
  std::function<bool(int64_t, int64_t)> less = [&](int64_t a, int64_t b) {
    for (size_t i = 0; i < n; ++i) {
      LoadScalar(*ops[i], a, scalars[2 * i]);
      LoadScalar(*ops[i], b, scalars[2 * i + 1]);
    }
    status = CallScalars(ctx, comp, args, pred, &returned);
    return status.ok() && returned[0].data<bool>()[0];
  };
  if (std::optional<FastComparator> f = MatchComparator(comp, ops)) {
    const Literal& key = *ops[f->operand];
    DispatchArrayType(key.element_type(), [&]<PrimitiveType T>() {
      using N = NativeT<T>;
      if constexpr (T != PrimitiveType::C64 && T != PrimitiveType::C128) {
        const N* k = key.data<N>().data();
        const bool gt = f->greater;
        if constexpr (std::is_integral_v<N>) {
          less = [k, gt](int64_t a, int64_t b) {
            return gt ? k[b] < k[a] : k[a] < k[b];
          };
        } else if (f->total_order) {
          less = [k, gt](int64_t a, int64_t b) {
            const int64_t x = TotalOrderKey(k[a]), y = TotalOrderKey(k[b]);
            return gt ? y < x : x < y;
          };
        } else {
          less = [k, gt](int64_t a, int64_t b) {
            const double x = ToDouble(k[a]), y = ToDouble(k[b]);
            return gt ? y < x : x < y;  // NaN: false both ways.
          };
        }
      }
    });
  }

  std::vector<int64_t> idx(len);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * len * inner + i;
      for (int64_t j = 0; j < len; ++j) idx[j] = base + j * inner;
      MergeSort(idx, less, status);
      RETURN_IF_ERROR(status);
      for (size_t r = 0; r < n; ++r) {
        const int64_t w = ByteWidth(ops[r]->element_type());
        const uint8_t* src = ops[r]->bytes().data();
        uint8_t* dst = results[r].mutable_bytes().data();
        for (int64_t j = 0; j < len; ++j) {
          std::memcpy(dst + (base + j * inner) * w, src + idx[j] * w, w);
        }
      }
    }
  }
  if (!rs.IsTuple()) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

}  // namespace trench::oracle
