// dot with general dimension numbers.
//
// Result dims: batch dims (in lhs_batch order), then lhs free dims, then
// rhs free dims, each in operand order (operation_semantics.md, DotGeneral).
// Operands are first converted to the result element type, as XLA's
// evaluator does for mixed types (hlo_evaluator_typed_visitor.h,
// HandleDotSlowPath converts each operand whose type differs), so s8 x s8
// -> s32 and bf16 x bf16 -> f32 are exact widenings.
//
// Numerics. Floats: products and sums in f64, k in increasing order, one
// rounding to the result type at the end (the evaluator contract; XLA's
// own evaluator accumulates bf16/f16 in f32). No FMA is used, so the
// result is the same on every machine and clone. Integers: the sum of
// products wraps modulo 2^bits of the result type; XLA accumulates in a
// 64-bit ElementwiseT and truncates with static_cast<ReturnT>, which is
// the same value. Pred: OR of ANDs (bool accumulation in XLA).
//
// The float kernel packs both operands into k-major panels of doubles and runs
// a 4x8 register-blocked micro-kernel written with GCC vector extensions (AVX2
// clone where available), blocked for L1/L2, with row blocks spread over
// EvaluatorOptions::threads.
#include <algorithm>

#include "oracle/index_util.h"
#include "oracle/kernels.h"

namespace trench::oracle {
namespace {

typedef double v4d __attribute__((vector_size(32)));

constexpr int64_t kMR = 4;    // Rows of C per micro-kernel.
constexpr int64_t kNR = 8;    // Columns of C per micro-kernel.
constexpr int64_t kKC = 256;  // k block: a B panel of kKC x kNR is 16 KiB.
constexpr int64_t kMC = 64;   // Row block: an A block of kMC x kKC is 128 KiB.

struct DotPlan {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  // Permutations that bring lhs to [batch, free, contracting] and rhs to
  // [batch, contracting, free] order.
  std::vector<int64_t> lhs_perm, rhs_perm;
  std::vector<int64_t> result_dims;
};

StatusOr<DotPlan> MakePlan(const HloInstruction& instr, const Shape& lhs,
                           const Shape& rhs) {
  // No dimension numbers at all (a printed `dot(a, b)`) is an outer
  // product: every dim is free.
  const DotDimNumbers dn = instr.attrs().dot_dnums.value_or(DotDimNumbers{});
  if (dn.lhs_batch.size() != dn.rhs_batch.size() ||
      dn.lhs_contracting.size() != dn.rhs_contracting.size()) {
    return Invalid(instr, "lhs and rhs batch/contracting counts differ");
  }
  std::vector<int64_t> lhs_used = dn.lhs_batch, rhs_used = dn.rhs_batch;
  lhs_used.insert(lhs_used.end(), dn.lhs_contracting.begin(),
                  dn.lhs_contracting.end());
  rhs_used.insert(rhs_used.end(), dn.rhs_contracting.begin(),
                  dn.rhs_contracting.end());
  RETURN_IF_ERROR(CheckDimList(instr, lhs_used, lhs.rank(), "lhs"));
  RETURN_IF_ERROR(CheckDimList(instr, rhs_used, rhs.rank(), "rhs"));
  DotPlan p;
  for (size_t i = 0; i < dn.lhs_batch.size(); ++i) {
    const int64_t s = lhs.dim(dn.lhs_batch[i]);
    if (s != rhs.dim(dn.rhs_batch[i])) {
      return Invalid(instr, "batch dimension sizes differ");
    }
    p.batch *= s;
    p.result_dims.push_back(s);
    p.lhs_perm.push_back(dn.lhs_batch[i]);
    p.rhs_perm.push_back(dn.rhs_batch[i]);
  }
  for (size_t i = 0; i < dn.lhs_contracting.size(); ++i) {
    const int64_t s = lhs.dim(dn.lhs_contracting[i]);
    if (s != rhs.dim(dn.rhs_contracting[i])) {
      return Invalid(instr, "contracting dimension sizes differ");
    }
    p.k *= s;
    p.rhs_perm.push_back(dn.rhs_contracting[i]);
  }
  auto free_dims = [](int64_t rank, const std::vector<int64_t>& used) {
    std::vector<int64_t> f;
    for (int64_t d = 0; d < rank; ++d) {
      if (std::find(used.begin(), used.end(), d) == used.end()) f.push_back(d);
    }
    return f;
  };
  for (int64_t d : free_dims(lhs.rank(), lhs_used)) {
    p.m *= lhs.dim(d);
    p.result_dims.push_back(lhs.dim(d));
    p.lhs_perm.push_back(d);
  }
  for (int64_t d : free_dims(rhs.rank(), rhs_used)) {
    p.n *= rhs.dim(d);
    p.result_dims.push_back(rhs.dim(d));
    p.rhs_perm.push_back(d);
  }
  p.lhs_perm.insert(p.lhs_perm.end(), dn.lhs_contracting.begin(),
                    dn.lhs_contracting.end());
  return p;
}

// C[4x8] += A panel (k x 4) * B panel (k x 8); C rows are ldc apart. The
// eight accumulators are named variables so they stay in registers (GCC at
// -O2 does not unroll a loop over an accumulator array).
__attribute__((always_inline)) inline void MicroKernel(int64_t kc,
                                                       const double* a,
                                                       const double* b,
                                                       double* c, int64_t ldc) {
  v4d c00, c01, c10, c11, c20, c21, c30, c31;
  std::memcpy(&c00, c, 32);
  std::memcpy(&c01, c + 4, 32);
  std::memcpy(&c10, c + ldc, 32);
  std::memcpy(&c11, c + ldc + 4, 32);
  std::memcpy(&c20, c + 2 * ldc, 32);
  std::memcpy(&c21, c + 2 * ldc + 4, 32);
  std::memcpy(&c30, c + 3 * ldc, 32);
  std::memcpy(&c31, c + 3 * ldc + 4, 32);
  for (int64_t p = 0; p < kc; ++p) {
    v4d b0, b1;
    std::memcpy(&b0, b + p * kNR, 32);
    std::memcpy(&b1, b + p * kNR + 4, 32);
    const double* ap = a + p * kMR;
    const v4d a0 = {ap[0], ap[0], ap[0], ap[0]};
    const v4d a1 = {ap[1], ap[1], ap[1], ap[1]};
    const v4d a2 = {ap[2], ap[2], ap[2], ap[2]};
    const v4d a3 = {ap[3], ap[3], ap[3], ap[3]};
    c00 += a0 * b0;
    c01 += a0 * b1;
    c10 += a1 * b0;
    c11 += a1 * b1;
    c20 += a2 * b0;
    c21 += a2 * b1;
    c30 += a3 * b0;
    c31 += a3 * b1;
  }
  std::memcpy(c, &c00, 32);
  std::memcpy(c + 4, &c01, 32);
  std::memcpy(c + ldc, &c10, 32);
  std::memcpy(c + ldc + 4, &c11, 32);
  std::memcpy(c + 2 * ldc, &c20, 32);
  std::memcpy(c + 2 * ldc + 4, &c21, 32);
  std::memcpy(c + 3 * ldc, &c30, 32);
  std::memcpy(c + 3 * ldc + 4, &c31, 32);
}

// Rows [row0, row1) (multiples of kMR) of one batch: C (mp x np) += A x B
// from packed panels. ap: panels of kMR rows, each k x kMR; bp: panels of
// kNR columns, each k x kNR.
__attribute__((target_clones("avx2", "default"))) void MacroKernel(
    const double* ap, const double* bp, double* c, int64_t k, int64_t np,
    int64_t row0, int64_t row1) {
  for (int64_t k0 = 0; k0 < k; k0 += kKC) {
    const int64_t kc = std::min(kKC, k - k0);
    for (int64_t j = 0; j < np; j += kNR) {
      const double* b = bp + j * k + k0 * kNR;
      for (int64_t i = row0; i < row1; i += kMR) {
        MicroKernel(kc, ap + i * k + k0 * kMR, b, c + i * np + j, np);
      }
    }
  }
}

// Packs a rows x k matrix, element (r, p) at m[r * rs + p * ks], into
// panels of `width` rows, each k x width (zero-padded to a multiple of
// width). With (rs, ks) = (k, 1) this reads lhs [m][k]; with (1, n) it
// reads rhs [k][n] without transposing it first.
template <typename E>
std::vector<double> PackPanels(const E* m, int64_t rows, int64_t k, int64_t rs,
                               int64_t ks, int64_t width) {
  const int64_t padded = (rows + width - 1) / width * width;
  std::vector<double> out(padded * k);
  for (int64_t r0 = 0; r0 < padded; r0 += width) {
    double* panel = out.data() + r0 * k;
    const int64_t live = std::min(width, rows - r0);
    for (int64_t p = 0; p < k; ++p) {
      const E* src = m + r0 * rs + p * ks;
      for (int64_t c = 0; c < live; ++c) {
        panel[p * width + c] = static_cast<double>(src[c * rs]);
      }
      for (int64_t c = live; c < width; ++c) panel[p * width + c] = 0.0;
    }
  }
  return out;
}

// Float dot: a is [batch][m][k], b is [batch][k][n], of double or of an
// element type that widens to double exactly (f32 operands of an f32 dot
// are packed straight from the literal). Returns C as [batch][m][n].
template <typename E>
std::vector<double> GemmF64(const DotPlan& p, const E* a, const E* b,
                            int threads) {
  const int64_t mp = (p.m + kMR - 1) / kMR * kMR;
  const int64_t np = (p.n + kNR - 1) / kNR * kNR;
  std::vector<std::vector<double>> ap(p.batch), bp(p.batch), cp(p.batch);
  for (int64_t i = 0; i < p.batch; ++i) {
    ap[i] = PackPanels(a + i * p.m * p.k, p.m, p.k, p.k, 1, kMR);
    bp[i] = PackPanels(b + i * p.k * p.n, p.n, p.k, 1, p.n, kNR);
    cp[i].assign(mp * np, 0.0);
  }
  const int64_t blocks = (mp + kMC - 1) / kMC;
  const double flops = 2.0 * p.batch * p.m * p.n * p.k;
  ParallelFor(p.batch * blocks, flops < 4e6 ? 1 : threads, 1,
              [&](int64_t t0, int64_t t1) {
                for (int64_t t = t0; t < t1; ++t) {
                  const int64_t i = t / blocks, blk = t % blocks;
                  const int64_t r0 = blk * kMC, r1 = std::min(mp, r0 + kMC);
                  MacroKernel(ap[i].data(), bp[i].data(), cp[i].data(), p.k, np,
                              r0, r1);
                }
              });
  if (np == p.n && mp == p.m && p.batch == 1) return std::move(cp[0]);
  std::vector<double> c(p.batch * p.m * p.n);
  for (int64_t i = 0; i < p.batch; ++i) {
    for (int64_t r = 0; r < p.m; ++r) {
      std::copy_n(cp[i].data() + r * np, p.n, c.data() + (i * p.m + r) * p.n);
    }
  }
  return c;
}

bool IsIdentity(std::span<const int64_t> perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

// Permutes only when `perm` is not the identity.
template <typename E>
std::vector<E> PermuteIfNeeded(std::vector<E> in, std::span<const int64_t> dims,
                               std::span<const int64_t> perm) {
  return IsIdentity(perm) ? in : Permute(in, dims, perm);
}

// Integer dot: wrapping sum of products of the converted operands.
std::vector<uint64_t> GemmWrapped(const DotPlan& p,
                                  const std::vector<uint64_t>& a,
                                  const std::vector<uint64_t>& b) {
  std::vector<uint64_t> c(p.batch * p.m * p.n, 0);
  for (int64_t bi = 0; bi < p.batch; ++bi) {
    const uint64_t* ab = a.data() + bi * p.m * p.k;
    const uint64_t* bb = b.data() + bi * p.k * p.n;
    uint64_t* cb = c.data() + bi * p.m * p.n;
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t kk = 0; kk < p.k; ++kk) {
        const uint64_t av = ab[i * p.k + kk];
        const uint64_t* brow = bb + kk * p.n;
        uint64_t* crow = cb + i * p.n;
        for (int64_t j = 0; j < p.n; ++j) crow[j] += av * brow[j];
      }
    }
  }
  return c;
}

}  // namespace

StatusOr<Literal> EvalDot(const HloInstruction& instr, Operands ops,
                          const EvaluatorOptions& options) {
  RETURN_IF_ERROR(CheckOperands(instr, ops, 2));
  const Literal& lhs = *ops[0];
  const Literal& rhs = *ops[1];
  const PrimitiveType rt = instr.shape().element_type();
  RETURN_IF_ERROR(CheckNotComplex(instr, lhs.element_type()));
  RETURN_IF_ERROR(CheckNotComplex(instr, rhs.element_type()));
  RETURN_IF_ERROR(CheckNotComplex(instr, rt));
  ASSIGN_OR_RETURN(DotPlan p, MakePlan(instr, lhs.shape(), rhs.shape()));
  RETURN_IF_ERROR(CheckResultDims(instr, p.result_dims));
  Literal out(instr.shape());
  if (out.element_count() == 0) return out;

  if (IsFloat(rt)) {
    std::vector<double> c;
    if (rt == PrimitiveType::F32 && lhs.element_type() == rt &&
        rhs.element_type() == rt && IsIdentity(p.lhs_perm) &&
        IsIdentity(p.rhs_perm)) {
      c = GemmF64(p, lhs.data<float>().data(), rhs.data<float>().data(),
                  options.threads);
    } else {
      const std::vector<double> a =
          PermuteIfNeeded(ToDoubles(lhs, rt), lhs.shape().dims(), p.lhs_perm);
      const std::vector<double> b =
          PermuteIfNeeded(ToDoubles(rhs, rt), rhs.shape().dims(), p.rhs_perm);
      c = GemmF64(p, a.data(), b.data(), options.threads);
    }
    DispatchArrayType(rt, [&]<PrimitiveType T>() {
      using N = NativeT<T>;
      if constexpr (!std::is_integral_v<N> && T != PrimitiveType::C64 &&
                    T != PrimitiveType::C128) {
        std::span<N> o = out.mutable_data<N>();
        for (size_t i = 0; i < c.size(); ++i) o[i] = FromDouble<N>(c[i]);
      }
    });
    return out;
  }
  // Integers and pred: convert (pred stays 0/1 in u64 arithmetic).
  const PrimitiveType as = rt == PrimitiveType::PRED ? PrimitiveType::U8 : rt;
  const std::vector<uint64_t> a =
      PermuteIfNeeded(ToWrappedInts(lhs, as), lhs.shape().dims(), p.lhs_perm);
  const std::vector<uint64_t> b =
      PermuteIfNeeded(ToWrappedInts(rhs, as), rhs.shape().dims(), p.rhs_perm);
  const std::vector<uint64_t> c = GemmWrapped(p, a, b);
  for (size_t i = 0; i < c.size(); ++i) {
    if (rt == PrimitiveType::PRED) {
      out.mutable_data<bool>()[i] = c[i] != 0;
    } else {
      out.SetFromInt64(i, static_cast<int64_t>(c[i]));
    }
  }
  return out;
}

}  // namespace trench::oracle
