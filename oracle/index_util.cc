#include "oracle/index_util.h"

#include <algorithm>
#include <limits>
#include <thread>

namespace trench::oracle {

int64_t Product(std::span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::vector<int64_t> Strides(std::span<const int64_t> dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i) {
    s[i] = s[i + 1] * dims[i + 1];
  }
  return s;
}

namespace {

struct CopyDim {
  int64_t count, src, dst;
};

// Copies `n` elements of W bytes with the given byte strides.
template <int W>
void CopyRun(const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds,
             int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst + i * ds, src + i * ss, W);
  }
}

void CopyRunAny(const uint8_t* src, int64_t ss, uint8_t* dst, int64_t ds,
                int64_t n, int64_t w) {
  switch (w) {
    case 1:
      return CopyRun<1>(src, ss, dst, ds, n);
    case 2:
      return CopyRun<2>(src, ss, dst, ds, n);
    case 4:
      return CopyRun<4>(src, ss, dst, ds, n);
    case 8:
      return CopyRun<8>(src, ss, dst, ds, n);
    case 16:
      return CopyRun<16>(src, ss, dst, ds, n);
    default:
      for (int64_t i = 0; i < n; ++i)
        std::memcpy(dst + i * ds, src + i * ss, w);
  }
}

// A rows x cols plane where the source is unit-stride along rows (stride
// `w` between rows) and the destination is unit-stride along cols. Small
// tiles keep both sides' cache lines live: with power-of-two strides every
// line of a tile maps to the same L1 set, so a tile must touch no more
// lines than the cache has ways (8x8 measured 3x faster than 32x32 on a
// 1024x1024 f32 transpose).
template <int W>
void CopyPlaneTiled(const uint8_t* src, int64_t src_col_stride, uint8_t* dst,
                    int64_t dst_row_stride, int64_t rows, int64_t cols) {
  constexpr int64_t kTile = 8;
  for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
    const int64_t r1 = std::min(rows, r0 + kTile);
    for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
      const int64_t c1 = std::min(cols, c0 + kTile);
      for (int64_t r = r0; r < r1; ++r) {
        const uint8_t* s = src + r * W + c0 * src_col_stride;
        uint8_t* d = dst + r * dst_row_stride + c0 * W;
        for (int64_t c = c0; c < c1; ++c) {
          std::memcpy(d, s, W);
          s += src_col_stride;
          d += W;
        }
      }
    }
  }
}

void CopyPlane(const uint8_t* src, int64_t src_col_stride, uint8_t* dst,
               int64_t dst_row_stride, int64_t rows, int64_t cols, int64_t w) {
  switch (w) {
    case 1:
      return CopyPlaneTiled<1>(src, src_col_stride, dst, dst_row_stride, rows,
                               cols);
    case 2:
      return CopyPlaneTiled<2>(src, src_col_stride, dst, dst_row_stride, rows,
                               cols);
    case 4:
      return CopyPlaneTiled<4>(src, src_col_stride, dst, dst_row_stride, rows,
                               cols);
    case 8:
      return CopyPlaneTiled<8>(src, src_col_stride, dst, dst_row_stride, rows,
                               cols);
    default:
      for (int64_t r = 0; r < rows; ++r) {
        CopyRunAny(src + r * w, src_col_stride, dst + r * dst_row_stride, w,
                   cols, w);
      }
  }
}

// Calls fn(src_offset, dst_offset) for every position of `outer` (row-major)
// with the offsets accumulated incrementally.
template <typename F>
void ForEachOuter(const std::vector<CopyDim>& outer, F&& fn) {
  const size_t n = outer.size();
  std::vector<int64_t> idx(n, 0);
  int64_t so = 0, doff = 0;
  while (true) {
    fn(so, doff);
    size_t d = n;
    while (d > 0) {
      --d;
      if (++idx[d] < outer[d].count) {
        so += outer[d].src;
        doff += outer[d].dst;
        break;
      }
      so -= outer[d].src * (outer[d].count - 1);
      doff -= outer[d].dst * (outer[d].count - 1);
      idx[d] = 0;
      if (d == 0) return;
    }
    if (n == 0) return;
  }
}

}  // namespace

void StridedCopy(const uint8_t* src, std::span<const int64_t> src_strides,
                 uint8_t* dst, std::span<const int64_t> dst_strides,
                 std::span<const int64_t> counts, int64_t w) {
  std::vector<CopyDim> dims;
  for (size_t i = 0; i < counts.size(); ++i) {
    if (counts[i] == 0) return;
    if (counts[i] == 1) continue;
    dims.push_back({counts[i], src_strides[i], dst_strides[i]});
  }
  // Merge an outer dimension into its inner neighbour when both views step
  // over it as one longer run. Built inner to outer, then reversed.
  std::vector<CopyDim> merged;
  for (int64_t i = static_cast<int64_t>(dims.size()) - 1; i >= 0; --i) {
    const CopyDim& d = dims[i];
    if (!merged.empty() && d.src == merged.back().src * merged.back().count &&
        d.dst == merged.back().dst * merged.back().count) {
      merged.back().count *= d.count;
    } else {
      merged.push_back(d);
    }
  }
  dims.swap(merged);
  std::reverse(dims.begin(), dims.end());  // Outer to inner again.
  if (dims.empty()) {
    std::memcpy(dst, src, w);
    return;
  }
  const CopyDim inner = dims.back();
  if (inner.src == w && inner.dst == w) {
    dims.pop_back();
    const int64_t run = inner.count * w;
    ForEachOuter(dims, [&](int64_t so, int64_t doff) {
      std::memcpy(dst + doff, src + so, run);
    });
    return;
  }
  if (inner.dst == w && dims.size() >= 2) {
    // Find a dimension along which the source is unit-stride: a transpose.
    for (size_t k = 0; k + 1 < dims.size(); ++k) {
      if (dims[k].src != w) continue;
      const CopyDim rows = dims[k];
      dims.pop_back();
      dims.erase(dims.begin() + k);
      ForEachOuter(dims, [&](int64_t so, int64_t doff) {
        CopyPlane(src + so, inner.src, dst + doff, rows.dst, rows.count,
                  inner.count, w);
      });
      return;
    }
  }
  dims.pop_back();
  ForEachOuter(dims, [&](int64_t so, int64_t doff) {
    CopyRunAny(src + so, inner.src, dst + doff, inner.dst, inner.count, w);
  });
}

void FillElements(uint8_t* dst, int64_t n, const uint8_t* value, int64_t w) {
  if (n <= 0) return;
  std::memcpy(dst, value, w);
  int64_t done = 1;
  // Doubling copies: log(n) memcpy calls.
  while (done < n) {
    const int64_t chunk = std::min(done, n - done);
    std::memcpy(dst + done * w, dst, chunk * w);
    done += chunk;
  }
}

void ParallelFor(int64_t n, int threads, int64_t min_chunk,
                 const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  int64_t t =
      threads > 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
  t = std::min<int64_t>(t,
                        (n + min_chunk - 1) / std::max<int64_t>(1, min_chunk));
  if (t <= 1) {
    fn(0, n);
    return;
  }
  std::vector<std::thread> workers;
  const int64_t per = (n + t - 1) / t;
  for (int64_t i = 1; i < t; ++i) {
    const int64_t b = i * per, e = std::min(n, b + per);
    if (b >= e) break;
    workers.emplace_back([&fn, b, e] { fn(b, e); });
  }
  fn(0, std::min(n, per));
  for (std::thread& w : workers) w.join();
}

Status Invalid(const HloInstruction& instr, const std::string& message) {
  return InvalidArgument("%" + instr.name() + " (" +
                         std::string(OpcodeName(instr.opcode())) +
                         "): " + message);
}

std::string DimsToString(std::span<const int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "]";
}

Status CheckOperands(const HloInstruction& instr, Operands ops, int64_t n,
                     bool at_least) {
  const int64_t have = static_cast<int64_t>(ops.size());
  if (at_least ? have < n : have != n) {
    return Invalid(instr, "expected " + std::string(at_least ? ">= " : "") +
                              std::to_string(n) + " operands, got " +
                              std::to_string(have));
  }
  for (int64_t i = 0; i < have; ++i) {
    if (ops[i] == nullptr || !ops[i]->shape().IsArray()) {
      return Invalid(instr,
                     "operand " + std::to_string(i) + " is not an array value");
    }
  }
  if (!instr.shape().IsArray() && !instr.shape().IsTuple()) {
    return Invalid(instr, "result shape is not an array or tuple");
  }
  return Status::Ok();
}

Status CheckDim(const HloInstruction& instr, int64_t d, int64_t rank,
                const char* what) {
  if (d < 0 || d >= rank) {
    return Invalid(instr, std::string(what) + " dimension " +
                              std::to_string(d) + " out of range for rank " +
                              std::to_string(rank));
  }
  return Status::Ok();
}

Status CheckDimList(const HloInstruction& instr, std::span<const int64_t> dims,
                    int64_t rank, const char* what) {
  std::vector<bool> seen(rank, false);
  for (int64_t d : dims) {
    RETURN_IF_ERROR(CheckDim(instr, d, rank, what));
    if (seen[d]) {
      return Invalid(instr, std::string(what) + " dimension " +
                                std::to_string(d) + " repeated");
    }
    seen[d] = true;
  }
  return Status::Ok();
}

Status CheckResultDims(const HloInstruction& instr,
                       std::span<const int64_t> dims) {
  const Shape& s = instr.shape();
  if (!s.IsArray() ||
      !std::equal(s.dims().begin(), s.dims().end(), dims.begin(), dims.end())) {
    return Invalid(instr, "result shape " + s.ToString(false) +
                              " does not match the computed dimensions " +
                              DimsToString(dims));
  }
  return Status::Ok();
}

StatusOr<ReduceOperands> SplitReduceOperands(const HloInstruction& instr,
                                             Operands ops,
                                             const std::string& op_name) {
  RETURN_IF_ERROR(CheckOperands(instr, ops, 2, /*at_least=*/true));
  if (ops.size() % 2 != 0) {
    return Invalid(instr, op_name + " needs as many inits as inputs");
  }
  if (instr.called_computations().empty()) {
    return Invalid(instr, op_name + " has no to_apply computation");
  }
  const size_t n = ops.size() / 2;
  ReduceOperands r{ops.subspan(0, n), ops.subspan(n, n)};
  const std::vector<int64_t>& dims = r.inputs[0]->shape().dims();
  for (size_t i = 0; i < n; ++i) {
    if (r.inputs[i]->shape().dims() != dims) {
      return Invalid(instr, op_name + " inputs differ in dimensions");
    }
    RETURN_IF_ERROR(CheckScalar(instr, *r.inits[i], "init value"));
  }
  return r;
}

Status CheckScalar(const HloInstruction& instr, const Literal& lit,
                   const char* what) {
  if (!lit.shape().IsArray() || lit.shape().rank() != 0) {
    return Invalid(instr, std::string(what) + " must be a scalar, got " +
                              lit.shape().ToString(false));
  }
  return Status::Ok();
}

Status CheckNotComplex(const HloInstruction& instr, PrimitiveType t) {
  if (IsComplex(t)) {
    return Unimplemented(
        "%" + instr.name() + " (" + std::string(OpcodeName(instr.opcode())) +
        "): complex element type " + std::string(PrimitiveTypeName(t)) +
        " is not supported by the oracle");
  }
  return Status::Ok();
}

int64_t ScalarIndexValue(const Literal& lit) {
  if (lit.element_type() == PrimitiveType::U64) {
    const uint64_t u = lit.data<uint64_t>()[0];
    return u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())
               ? std::numeric_limits<int64_t>::max()
               : static_cast<int64_t>(u);
  }
  return lit.GetAsInt64(0);
}

std::vector<double> ToDoubles(const Literal& lit, PrimitiveType as) {
  const int64_t n = lit.element_count();
  std::vector<double> out(n);
  const PrimitiveType from = lit.element_type();
  DispatchArrayType(from, [&]<PrimitiveType T>() {
    using N = NativeT<T>;
    if constexpr (T == PrimitiveType::C64 || T == PrimitiveType::C128) {
      // Callers reject complex first; real part keeps this total.
      for (int64_t i = 0; i < n; ++i) out[i] = lit.data<N>()[i].real();
    } else {
      std::span<const N> d = lit.data<N>();
      for (int64_t i = 0; i < n; ++i) out[i] = ToDouble(d[i]);
    }
  });
  // Widening to f64 or a narrower-to-wider float conversion is exact; only
  // a conversion into a narrower float type (or of wide integers) rounds.
  auto exact = [&]() {
    if (as == PrimitiveType::F64) return BitWidth(from) <= 32 || IsFloat(from);
    if (from == as || from == PrimitiveType::PRED) return true;
    if (as == PrimitiveType::F32) {
      return from == PrimitiveType::BF16 || from == PrimitiveType::F16 ||
             (IsInteger(from) && BitWidth(from) <= 16);
    }
    if (as == PrimitiveType::F16 || as == PrimitiveType::BF16) {
      return from == PrimitiveType::S8 || from == PrimitiveType::U8;
    }
    return false;
  };
  if (exact()) return out;
  for (double& v : out) {
    switch (as) {
      case PrimitiveType::F32:
        v = static_cast<float>(v);
        break;
      case PrimitiveType::BF16:
        v = ToDouble(FromDouble<bf16>(v));
        break;
      case PrimitiveType::F16:
        v = ToDouble(FromDouble<f16>(v));
        break;
      default:
        break;
    }
  }
  return out;
}

std::vector<uint64_t> ToWrappedInts(const Literal& lit, PrimitiveType as) {
  const int64_t n = lit.element_count();
  std::vector<uint64_t> out(n);
  Literal tmp(Shape(as, {}));
  const PrimitiveType from = lit.element_type();
  const bool from_int = IsInteger(from) || from == PrimitiveType::PRED;
  for (int64_t i = 0; i < n; ++i) {
    // Integer sources wrap (SetFromInt64 truncates); floats saturate and
    // map NaN to 0 (SetFromDouble), as XLA's convert does.
    if (from_int) {
      tmp.SetFromInt64(0, lit.GetAsInt64(i));
    } else {
      tmp.SetFromDouble(0, lit.GetAsDouble(i));
    }
    out[i] = static_cast<uint64_t>(tmp.GetAsInt64(0));
  }
  return out;
}

ReducerKind ClassifyReducer(const HloComputation& comp, PrimitiveType t) {
  if (comp.num_parameters() != 2) return ReducerKind::kNone;
  const HloInstruction* p0 = comp.parameter_instruction(0);
  const HloInstruction* p1 = comp.parameter_instruction(1);
  const HloInstruction* root = comp.root_instruction();
  if (p0 == nullptr || p1 == nullptr || root == nullptr) {
    return ReducerKind::kNone;
  }
  const Shape scalar(t, {});
  for (const HloInstruction* p : {p0, p1, root}) {
    if (!p->shape().IsArray() || !p->shape().Compatible(scalar)) {
      return ReducerKind::kNone;
    }
  }
  if (root == p1) return ReducerKind::kAssign;
  if (root->operand_count() != 2) return ReducerKind::kNone;
  const bool in_order = root->operand(0) == p0 && root->operand(1) == p1;
  const bool swapped = root->operand(0) == p1 && root->operand(1) == p0;
  if (!in_order && !swapped) return ReducerKind::kNone;
  const bool pred = t == PrimitiveType::PRED;
  const bool integral = IsInteger(t) || pred;
  switch (root->opcode()) {
    case HloOpcode::kAdd:
      return pred || IsComplex(t) ? ReducerKind::kNone : ReducerKind::kAdd;
    case HloOpcode::kMultiply:
      return pred || IsComplex(t) ? ReducerKind::kNone : ReducerKind::kMul;
    case HloOpcode::kMaximum:
      return in_order && !IsComplex(t) ? ReducerKind::kMax : ReducerKind::kNone;
    case HloOpcode::kMinimum:
      return in_order && !IsComplex(t) ? ReducerKind::kMin : ReducerKind::kNone;
    case HloOpcode::kAnd:
      return integral ? ReducerKind::kAnd : ReducerKind::kNone;
    case HloOpcode::kOr:
      return integral ? ReducerKind::kOr : ReducerKind::kNone;
    default:
      return ReducerKind::kNone;
  }
}

Literal MakeScalar(PrimitiveType t) { return Literal(Shape(t, {})); }

void StoreScalar(const Literal& src, Literal& dst, int64_t i) {
  const int64_t w = ByteWidth(dst.element_type());
  if (src.element_type() == dst.element_type()) {
    std::memcpy(dst.mutable_bytes().data() + i * w, src.bytes().data(), w);
  } else if (IsFloat(src.element_type())) {
    dst.SetFromDouble(i, src.GetAsDouble(0));
  } else {
    dst.SetFromInt64(i, src.GetAsInt64(0));
  }
}

Status CallScalars(CallContext& ctx, const HloComputation& comp,
                   std::span<const Literal* const> args,
                   std::span<const PrimitiveType> result_types,
                   std::vector<Literal>* results) {
  ASSIGN_OR_RETURN(Literal out, ctx.Call(comp, args));
  results->clear();
  if (out.shape().IsTuple()) {
    for (Literal& e : out.mutable_tuple_elements()) {
      results->push_back(std::move(e));
    }
  } else {
    results->push_back(std::move(out));
  }
  if (results->size() != result_types.size()) {
    return InvalidArgument("computation " + comp.name() + " returned " +
                           std::to_string(results->size()) +
                           " values, expected " +
                           std::to_string(result_types.size()));
  }
  for (size_t i = 0; i < results->size(); ++i) {
    const Literal& r = (*results)[i];
    if (!r.shape().IsArray() || r.shape().rank() != 0 ||
        r.element_type() != result_types[i]) {
      return InvalidArgument(
          "computation " + comp.name() + " result " + std::to_string(i) +
          " is " + r.shape().ToString(false) + ", expected " +
          std::string(PrimitiveTypeName(result_types[i])) + "[]");
    }
  }
  return Status::Ok();
}

StatusOr<WindowPlan> WindowPlan::Make(
    const HloInstruction& instr, std::span<const int64_t> input_dims,
    std::span<const int64_t> expected_output_dims) {
  if (!instr.attrs().window.has_value()) {
    return Invalid(instr, "missing window attribute");
  }
  const std::vector<WindowDim>& win = *instr.attrs().window;
  const int64_t rank = input_dims.size();
  if (static_cast<int64_t>(win.size()) != rank) {
    return Invalid(instr, "window has " + std::to_string(win.size()) +
                              " dimensions for an input of rank " +
                              std::to_string(rank));
  }
  WindowPlan plan;
  for (int64_t d = 0; d < rank; ++d) {
    const WindowDim& w = win[d];
    if (w.size < 0 || w.stride < 1 || w.base_dilation < 1 ||
        w.window_dilation < 1 || w.reversal) {
      return Invalid(instr, "invalid window in dimension " + std::to_string(d));
    }
    const int64_t n = input_dims[d];
    const int64_t dilated = n == 0 ? 0 : (n - 1) * w.base_dilation + 1;
    const int64_t padded = dilated + w.pad_lo + w.pad_hi;
    const int64_t extent =
        w.size == 0 ? 0 : (w.size - 1) * w.window_dilation + 1;
    plan.out_dims_.push_back(
        padded < extent || w.size == 0 ? 0 : (padded - extent) / w.stride + 1);
  }
  if (!std::equal(plan.out_dims_.begin(), plan.out_dims_.end(),
                  expected_output_dims.begin(), expected_output_dims.end())) {
    return Invalid(instr, "the window gives dimensions " +
                              DimsToString(plan.out_dims_) + ", expected " +
                              DimsToString(expected_output_dims));
  }
  const std::vector<int64_t> strides = Strides(input_dims);
  plan.valid_.resize(rank);
  for (int64_t d = 0; d < rank; ++d) {
    const WindowDim& w = win[d];
    const int64_t out = plan.out_dims_[d];
    plan.valid_[d].resize(out);
    for (int64_t o = 0; o < out; ++o) {
      for (int64_t k = 0; k < w.size; ++k) {
        const int64_t u = o * w.stride - w.pad_lo + k * w.window_dilation;
        if (u < 0 || u % w.base_dilation != 0) continue;
        const int64_t c = u / w.base_dilation;
        if (c >= input_dims[d]) continue;
        plan.valid_[d][o].push_back(c * strides[d]);
      }
    }
  }
  return plan;
}

}  // namespace trench::oracle
