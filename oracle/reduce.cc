// reduce: N inputs and N scalar inits reduced over any subset of dims
// with a called computation (acc_0..acc_{N-1}, x_0..x_{N-1}) -> N values.
//
// Order: for each output element the accumulators start at the inits and
// take the input elements in row-major order of the reduced dims, as
// XLA's evaluator does (hlo_evaluator.cc, GenerateReduceOutputElement).
//
// Fast path: one input whose to_apply is a single add/multiply/max/min/
// and/or of its parameters runs as a typed loop. Float add accumulates in
// f64 and rounds once to the result type. XLA's evaluator does the same
// for float add (its `use_fast_add` accumulates in double), and it is a
// deliberate choice here: the oracle approximates the exact sum and the
// comparator's tolerance covers the target's own rounding order. Every
// other reducer is applied per step with the op's exact rounding, so it
// matches the general path bit for bit.
#include <algorithm>

#include "oracle/index_util.h"
#include "oracle/kernels.h"

namespace trench::oracle {
namespace {

// The input viewed as alternating runs of kept and reduced dimensions,
// adjacent dims of the same kind merged. out_stride is 0 for reduced dims.
struct ReduceDim {
  int64_t count, in_stride, out_stride;
  bool reduced;
};

std::vector<ReduceDim> MergedDims(std::span<const int64_t> dims,
                                  const std::vector<bool>& reduced) {
  const int64_t rank = dims.size();
  const std::vector<int64_t> in_strides = Strides(dims);
  std::vector<int64_t> out_strides(rank, 0);
  int64_t s = 1;
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (!reduced[d]) {
      out_strides[d] = s;
      s *= dims[d];
    }
  }
  std::vector<ReduceDim> out;  // Built inner to outer.
  for (int64_t d = rank - 1; d >= 0; --d) {
    if (dims[d] == 1) continue;
    if (!out.empty() && out.back().reduced == reduced[d]) {
      out.back().count *= dims[d];  // Row-major: the outer stride follows.
    } else {
      out.push_back({dims[d], in_strides[d], out_strides[d], reduced[d]});
    }
  }
  std::reverse(out.begin(), out.end());
  return out;
}

// Calls run(in_offset, out_offset, inner) for every innermost run; inner is
// the innermost merged dim (count 1 when there is none).
template <typename F>
void ForEachRun(std::vector<ReduceDim> dims, F&& run) {
  ReduceDim inner{1, 1, 0, true};
  if (!dims.empty()) {
    inner = dims.back();
    dims.pop_back();
  }
  std::vector<int64_t> idx(dims.size(), 0);
  int64_t in = 0, out = 0;
  while (true) {
    run(in, out, inner);
    int64_t d = static_cast<int64_t>(dims.size()) - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < dims[d].count) {
        in += dims[d].in_stride;
        out += dims[d].out_stride;
        break;
      }
      in -= dims[d].in_stride * (dims[d].count - 1);
      out -= dims[d].out_stride * (dims[d].count - 1);
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

typedef double v4d __attribute__((vector_size(32)));
typedef float v4f __attribute__((vector_size(16)));

// Sum of a contiguous f32 run in double, 16 lanes of partial sums combined
// in a fixed order (deterministic on every machine and clone).
__attribute__((target_clones("avx2", "default"))) double SumF32(const float* x,
                                                                int64_t n) {
  v4d a0 = {0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    v4f f0, f1, f2, f3;
    std::memcpy(&f0, x + i, 16);
    std::memcpy(&f1, x + i + 4, 16);
    std::memcpy(&f2, x + i + 8, 16);
    std::memcpy(&f3, x + i + 12, 16);
    a0 += __builtin_convertvector(f0, v4d);
    a1 += __builtin_convertvector(f1, v4d);
    a2 += __builtin_convertvector(f2, v4d);
    a3 += __builtin_convertvector(f3, v4d);
  }
  const v4d t = (a0 + a1) + (a2 + a3);
  double s = (t[0] + t[1]) + (t[2] + t[3]);
  for (; i < n; ++i) s += x[i];
  return s;
}

// acc[j] += x[j] for a contiguous f32 run.
__attribute__((target_clones("avx2", "default"))) void AccumulateF32(
    const float* x, double* acc, int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] += static_cast<double>(x[i]);
}

template <typename N>
double SumRun(const N* x, int64_t stride, int64_t n) {
  if constexpr (std::is_same_v<N, float>) {
    if (stride == 1) return SumF32(x, n);
  }
  double s0 = 0, s1 = 0;
  int64_t i = 0;
  for (; i + 2 <= n; i += 2) {
    s0 += ToDouble(x[i * stride]);
    s1 += ToDouble(x[(i + 1) * stride]);
  }
  if (i < n) s0 += ToDouble(x[i * stride]);
  return s0 + s1;
}

// Float add: f64 accumulators, one rounding at the end.
template <typename N>
void ReduceAddFloat(const Literal& in, const std::vector<ReduceDim>& dims,
                    N init, Literal& out) {
  std::vector<double> acc(out.element_count(), ToDouble(init));
  const N* x = in.data<N>().data();
  ForEachRun(dims, [&](int64_t io, int64_t oo, const ReduceDim& inner) {
    if (inner.reduced) {
      acc[oo] += SumRun(x + io, inner.in_stride, inner.count);
    } else if constexpr (std::is_same_v<N, float>) {
      AccumulateF32(x + io, acc.data() + oo, inner.count);
    } else {
      for (int64_t j = 0; j < inner.count; ++j)
        acc[oo + j] += ToDouble(x[io + j]);
    }
  });
  std::span<N> o = out.mutable_data<N>();
  for (size_t i = 0; i < acc.size(); ++i) o[i] = FromDouble<N>(acc[i]);
}

// Any other recognised reducer: per-step application in input order.
template <typename N, ReducerKind K>
void ReduceTyped(const Literal& in, const std::vector<ReduceDim>& dims, N init,
                 Literal& out) {
  std::span<N> acc = out.mutable_data<N>();
  std::fill(acc.begin(), acc.end(), init);
  const N* x = in.data<N>().data();
  ForEachRun(dims, [&](int64_t io, int64_t oo, const ReduceDim& inner) {
    if (inner.reduced) {
      N a = acc[oo];
      for (int64_t j = 0; j < inner.count; ++j) {
        a = ApplyReducer(K, a, x[io + j * inner.in_stride]);
      }
      acc[oo] = a;
    } else {
      for (int64_t j = 0; j < inner.count; ++j) {
        acc[oo + j] = ApplyReducer(K, acc[oo + j], x[io + j]);
      }
    }
  });
}

template <typename N>
void ReduceFast(ReducerKind kind, const Literal& in,
                const std::vector<ReduceDim>& dims, N init, Literal& out) {
  if constexpr (!std::is_integral_v<N>) {
    if (kind == ReducerKind::kAdd) return ReduceAddFloat(in, dims, init, out);
  }
  switch (kind) {
    case ReducerKind::kAdd:
      return ReduceTyped<N, ReducerKind::kAdd>(in, dims, init, out);
    case ReducerKind::kMul:
      return ReduceTyped<N, ReducerKind::kMul>(in, dims, init, out);
    case ReducerKind::kMax:
      return ReduceTyped<N, ReducerKind::kMax>(in, dims, init, out);
    case ReducerKind::kMin:
      return ReduceTyped<N, ReducerKind::kMin>(in, dims, init, out);
    case ReducerKind::kAnd:
      return ReduceTyped<N, ReducerKind::kAnd>(in, dims, init, out);
    case ReducerKind::kOr:
      return ReduceTyped<N, ReducerKind::kOr>(in, dims, init, out);
    default:
      return;
  }
}

// The general path: one Call per input element.
Status ReduceGeneral(const HloInstruction& instr, Operands inputs,
                     Operands inits, std::span<const int64_t> dims,
                     const std::vector<bool>& reduced, CallContext& ctx,
                     std::vector<Literal>& results) {
  const size_t n = inputs.size();
  const int64_t rank = dims.size();
  const std::vector<int64_t> strides = Strides(dims);
  // Offsets of the reduced positions, row-major over the reduced dims.
  std::vector<int64_t> rdims, rstrides, kdims, kstrides;
  for (int64_t d = 0; d < rank; ++d) {
    (reduced[d] ? rdims : kdims).push_back(dims[d]);
    (reduced[d] ? rstrides : kstrides).push_back(strides[d]);
  }
  std::vector<int64_t> roffsets;
  roffsets.reserve(Product(rdims));
  if (Product(rdims) > 0) {
    std::vector<int64_t> idx(rdims.size(), 0);
    do {
      int64_t off = 0;
      for (size_t i = 0; i < idx.size(); ++i) off += idx[i] * rstrides[i];
      roffsets.push_back(off);
    } while (NextIndex(rdims, idx));
  }
  std::vector<Literal> acc, vals;
  std::vector<PrimitiveType> types;
  std::vector<const Literal*> args;
  for (size_t i = 0; i < n; ++i) {
    acc.push_back(MakeScalar(inits[i]->element_type()));
    vals.push_back(MakeScalar(inputs[i]->element_type()));
    types.push_back(inits[i]->element_type());
  }
  for (Literal& a : acc) args.push_back(&a);
  for (Literal& v : vals) args.push_back(&v);
  const int64_t out_count = Product(kdims);
  std::vector<int64_t> kidx(kdims.size(), 0);
  std::vector<Literal> returned;
  const HloComputation& comp = *instr.to_apply();
  for (int64_t o = 0; o < out_count; ++o) {
    int64_t base = 0;
    for (size_t i = 0; i < kidx.size(); ++i) base += kidx[i] * kstrides[i];
    for (size_t i = 0; i < n; ++i) LoadScalar(*inits[i], 0, acc[i]);
    for (int64_t off : roffsets) {
      for (size_t i = 0; i < n; ++i)
        LoadScalar(*inputs[i], base + off, vals[i]);
      RETURN_IF_ERROR(CallScalars(ctx, comp, args, types, &returned));
      for (size_t i = 0; i < n; ++i) acc[i] = std::move(returned[i]);
    }
    for (size_t i = 0; i < n; ++i) StoreScalar(acc[i], results[i], o);
    NextIndex(kdims, kidx);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Literal> EvalReduce(const HloInstruction& instr, Operands ops,
                             CallContext& ctx) {
  ASSIGN_OR_RETURN(const ReduceOperands split,
                   SplitReduceOperands(instr, ops, "reduce"));
  const size_t n = split.inputs.size();
  Operands inputs = split.inputs, inits = split.inits;
  const std::vector<int64_t>& dims = inputs[0]->shape().dims();
  const int64_t rank = dims.size();
  RETURN_IF_ERROR(CheckDimList(instr, instr.dimensions(), rank, "reduce"));
  std::vector<bool> reduced(rank, false);
  for (int64_t d : instr.dimensions()) reduced[d] = true;
  std::vector<int64_t> out_dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) out_dims.push_back(dims[d]);
  }
  // The result: one array, or a tuple of N arrays typed like the inits.
  const Shape& rs = instr.shape();
  std::vector<Shape> leaf_shapes;
  if (rs.IsTuple()) {
    if (rs.tuple_size() != static_cast<int64_t>(n)) {
      return Invalid(instr,
                     "result tuple has " + std::to_string(rs.tuple_size()) +
                         " elements for " + std::to_string(n) + " inputs");
    }
    leaf_shapes = rs.tuple_shapes();
  } else if (n == 1) {
    leaf_shapes.push_back(rs);
  } else {
    return Invalid(instr, "variadic reduce must return a tuple");
  }
  // Mixed precision: XLA's evaluator tests accept a result type wider or
  // narrower than the reducer's (MixedPrecisionReduction: a bf16[] result
  // of an f32 add). We reduce in the reducer's type and convert once at
  // the end. Only float<->float is allowed.
  std::vector<Shape> declared = leaf_shapes;
  for (size_t i = 0; i < n && i < leaf_shapes.size(); ++i) {
    Shape& s = leaf_shapes[i];
    const PrimitiveType init_t = inits[i]->element_type();
    if (s.IsArray() && s.element_type() != init_t && IsFloat(init_t) &&
        IsFloat(s.element_type())) {
      s.set_element_type(init_t);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const Shape& s = leaf_shapes[i];
    if (!s.IsArray() || s.dims() != out_dims ||
        s.element_type() != inits[i]->element_type()) {
      return Invalid(
          instr, "result " + std::to_string(i) + " is " + s.ToString(false) +
                     ", expected " +
                     std::string(PrimitiveTypeName(inits[i]->element_type())) +
                     DimsToString(out_dims));
    }
  }
  std::vector<Literal> results;
  for (const Shape& s : leaf_shapes) results.emplace_back(s);

  const PrimitiveType t = inputs[0]->element_type();
  const ReducerKind kind =
      n == 1 && inits[0]->element_type() == t && !IsComplex(t)
          ? ClassifyReducer(*instr.to_apply(), t)
          : ReducerKind::kNone;
  if (kind != ReducerKind::kNone && kind != ReducerKind::kAssign) {
    const std::vector<ReduceDim> merged = MergedDims(dims, reduced);
    if (inputs[0]->element_count() == 0) {
      // Nothing to reduce: every output is the init.
      FillElements(results[0].mutable_bytes().data(),
                   results[0].element_count(), inits[0]->bytes().data(),
                   ByteWidth(t));
    } else {
      DispatchArrayType(t, [&]<PrimitiveType T>() {
        using N = NativeT<T>;
        if constexpr (T != PrimitiveType::C64 && T != PrimitiveType::C128) {
          ReduceFast<N>(kind, *inputs[0], merged, inits[0]->data<N>()[0],
                        results[0]);
        }
      });
    }
  } else {
    RETURN_IF_ERROR(
        ReduceGeneral(instr, inputs, inits, dims, reduced, ctx, results));
  }
  for (size_t i = 0; i < n; ++i) {
    if (declared[i].element_type() == leaf_shapes[i].element_type()) continue;
    Literal converted(declared[i]);
    for (int64_t j = 0; j < converted.element_count(); ++j) {
      converted.SetFromDouble(j, results[i].GetAsDouble(j));  // Exact, RNE.
    }
    results[i] = std::move(converted);
  }
  if (!rs.IsTuple()) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

}  // namespace trench::oracle
