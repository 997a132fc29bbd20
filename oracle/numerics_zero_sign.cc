// Zero signs in the numerics contract (rule in oracle/numerics_contract.h):
// a bound of -0.0 marks an exact zero whose sign a correct compiler may
// choose (min/max of zeros of both signs in an order of its choosing).
// Elementwise ops propagate the mark by evaluating the op again with the
// marked zeros of each subset of operands negated: results that differ
// only by the sign of zero stay marked, finite float results that differ
// get the difference as their bound, and anything else that sees the sign
// (a bitcast-convert's integer, 1/x's infinity, a total-order compare)
// becomes undetermined at that element only. Approximate ops (atan2,
// divide, ...) keep their ulp allowance on top of the difference.
#include <cmath>
#include <cstring>

#include "oracle/numerics_internal.h"

namespace trench::oracle::numerics {
namespace {

bool FloatArray(const Literal& v) {
  return v.shape().IsArray() && IsFloat(v.element_type());
}

// Whether element i of `v` is a zero marked as of unspecified sign.
bool MarkedZero(const Literal& v, std::span<const double> e, size_t i) {
  return IsSignUnspecified(e[i]) && v.GetAsDouble(i) == 0;
}

bool AnyMarkedZero(const Bounded& b) {
  if (!FloatArray(b.v)) return false;
  const auto e = b.e.data<double>();
  for (size_t i = 0; i < e.size(); ++i) {
    if (MarkedZero(b.v, e, i)) return true;
  }
  return false;
}

// `v` with every marked zero negated.
Literal FlipMarkedZeros(const Bounded& b) {
  Literal out = b.v;
  const auto e = b.e.data<double>();
  for (size_t i = 0; i < e.size(); ++i) {
    if (MarkedZero(b.v, e, i)) out.SetFromDouble(i, -b.v.GetAsDouble(i));
  }
  return out;
}

bool SameBytes(const Literal& a, const Literal& b, size_t i, size_t w) {
  return std::memcmp(a.bytes().data() + i * w, b.bytes().data() + i * w, w) ==
         0;
}

// Min/max/clamp, and select on an undetermined predicate, may return any
// of their zero operands: mark exact zero results when those zeros have
// both signs or one is already marked.
void MarkChoiceZeros(const HloInstruction& instr, BoundedOps ops,
                     const Literal& y, std::span<double> d) {
  const HloOpcode op = instr.opcode();
  const bool is_select = op == HloOpcode::kSelect;
  if (!is_select && op != HloOpcode::kMaximum && op != HloOpcode::kMinimum &&
      op != HloOpcode::kClamp) {
    return;
  }
  if (!FloatArray(y)) return;
  const size_t first = is_select ? 1 : 0;
  for (size_t k = first; k < ops.size(); ++k) {
    if (!FloatArray(ops[k]->v)) return;
  }
  const int64_t n = y.element_count();
  auto at = [&](const Bounded& b, int64_t i) -> int64_t {
    return b.v.shape().rank() == 0 && n != 1 ? 0 : i;
  };
  for (int64_t i = 0; i < n; ++i) {
    if (d[i] != 0 || y.GetAsDouble(i) != 0) continue;
    if (is_select && ops[0]->e.data<double>()[at(*ops[0], i)] == 0) continue;
    bool pos = false, neg = false, marked = false;
    for (size_t k = first; k < ops.size(); ++k) {
      const int64_t j = at(*ops[k], i);
      const double x = ops[k]->v.GetAsDouble(j);
      if (x != 0) continue;
      if (IsSignUnspecified(ops[k]->e.data<double>()[j])) {
        marked = true;
      } else if (std::signbit(x)) {
        neg = true;
      } else {
        pos = true;
      }
    }
    if (marked || (pos && neg)) d[i] = kAnySign;
  }
}

}  // namespace

Status ZeroSignElementwise(BoundsEvaluator& ev, const HloInstruction& instr,
                           BoundedOps ops, const Literal& y, Literal& e) {
  if (!y.shape().IsArray() || e.element_type() != PrimitiveType::F64) {
    return Status::Ok();
  }
  for (const Bounded* b : ops) {
    if (!b->v.shape().IsArray() || IsComplex(b->v.element_type())) {
      return Status::Ok();
    }
  }
  if (IsComplex(y.element_type())) return Status::Ok();
  auto d = e.mutable_data<double>();
  // The op's own bound rule may have carried a mark (e.g. |x| of a marked
  // zero); the rules below decide the marks afresh.
  for (double& x : d) {
    if (x == 0) x = 0.0;
  }
  MarkChoiceZeros(instr, ops, y, d);
  std::vector<size_t> marked;
  for (size_t k = 0; k < ops.size(); ++k) {
    if (AnyMarkedZero(*ops[k])) marked.push_back(k);
  }
  if (marked.empty()) return Status::Ok();
  const size_t n = d.size();
  const size_t w = ByteWidth(y.element_type());
  const bool is_float = IsFloat(y.element_type());
  std::vector<double> spread(n, 0);
  std::vector<char> any_sign(n, 0), lost(n, 0);
  std::vector<Literal> flipped;
  for (size_t k : marked) flipped.push_back(FlipMarkedZeros(*ops[k]));
  // Every combination of signs of the marked operands.
  for (size_t mask = 1; mask < (size_t{1} << marked.size()); ++mask) {
    std::vector<const Literal*> values;
    for (const Bounded* b : ops) values.push_back(&b->v);
    for (size_t j = 0; j < marked.size(); ++j) {
      if (mask & (size_t{1} << j)) values[marked[j]] = &flipped[j];
    }
    ASSIGN_OR_RETURN(Literal alt, ev.Elementwise(instr, y.shape(), values));
    for (size_t i = 0; i < n; ++i) {
      if (std::isinf(d[i]) || SameBytes(y, alt, i, w)) continue;
      const double a = is_float ? y.GetAsDouble(i) : 0;
      const double b = is_float ? alt.GetAsDouble(i) : 0;
      if (is_float && a == 0 && b == 0) {
        any_sign[i] = 1;
      } else if (is_float && std::isfinite(a) && std::isfinite(b)) {
        spread[i] = std::max(spread[i], std::fabs(a - b));
      } else {
        lost[i] = 1;
      }
    }
  }
  bool noted = false;
  for (size_t i = 0; i < n; ++i) {
    if (lost[i]) {
      d[i] = kInf;
      noted = true;
    } else if (spread[i] > 0) {
      // On top of the op's own allowance (approximate ops have one).
      d[i] += spread[i];
    } else if (any_sign[i] && d[i] == 0) {
      d[i] = kAnySign;
    }
  }
  if (noted) ev.Note("sign of an order-dependent zero observed");
  return Status::Ok();
}

ZeroSigns ZeroSignIndicators(const Bounded& b) {
  ZeroSigns z;
  const std::vector<int64_t>& dims = b.v.shape().dims();
  const size_t n = b.v.element_count();
  std::vector<double> pos(n, 0), neg(n, 0), marked(n, 0);
  if (FloatArray(b.v)) {
    const auto e = b.e.data<double>();
    for (size_t i = 0; i < n; ++i) {
      const double x = b.v.GetAsDouble(i);
      if (x != 0 || e[i] != 0) continue;
      if (IsSignUnspecified(e[i])) {
        marked[i] = 1;
        z.any_marked = true;
      } else if (std::signbit(x)) {
        neg[i] = 1;
        z.any_neg = true;
      } else {
        pos[i] = 1;
        z.any_pos = true;
      }
    }
  }
  z.pos = F64Array(dims, pos);
  z.neg = F64Array(dims, neg);
  z.marked = F64Array(dims, marked);
  return z;
}

bool MayMixZeroSigns(const ZeroSigns& a, const ZeroSigns& b) {
  return a.any_marked || b.any_marked ||
         ((a.any_pos || b.any_pos) && (a.any_neg || b.any_neg));
}

void MarkCombinedZeros(const Literal& y, const Literal& pos, const Literal& neg,
                       const Literal& marked, Literal& e) {
  auto d = e.mutable_data<double>();
  const auto p = pos.data<double>(), m = neg.data<double>(),
             k = marked.data<double>();
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i] != 0) continue;
    const bool any =
        y.GetAsDouble(i) == 0 && (k[i] > 0 || (p[i] > 0 && m[i] > 0));
    d[i] = any ? kAnySign : 0.0;
  }
}

void ClearZeroSignMarks(const Literal& y, Literal& e) {
  if (!y.shape().IsArray() || e.element_type() != PrimitiveType::F64) return;
  auto d = e.mutable_data<double>();
  for (size_t i = 0; i < d.size(); ++i) {
    if (d[i] == 0 && (!IsFloat(y.element_type()) || y.GetAsDouble(i) != 0)) {
      d[i] = 0.0;
    }
  }
}

}  // namespace trench::oracle::numerics
