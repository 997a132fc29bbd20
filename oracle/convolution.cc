// convolution: N spatial dims (N >= 0), dim_labels as ConvDimNumbers,
// window stride / padding / lhs (base) dilation / rhs (window) dilation /
// reversal, feature_group_count and batch_group_count.
//
// Semantics follow XLA's evaluator (hlo_evaluator_typed_visitor.h,
// HandleConvolutionWithLiterals):
//  * input spatial coordinate = (out * stride - pad_lo + k * rhs_dilation)
//    / lhs_dilation, skipped when not exact or outside the input;
//    reversal reads kernel position size-1-k;
//  * feature groups: output feature o uses input features
//    [g * IFG, (g+1) * IFG) with g = o / (O / feature_group_count), where
//    IFG is the kernel's input-feature size;
//  * batch groups: output feature o reads input batch
//    out_batch + (o / (O / batch_group_count)) * (B / batch_group_count);
//  * per output element the sum runs over window positions (row-major)
//    and then input features, in that order.
// Operands are converted to the result type first (as XLA does). Floats
// accumulate in f64 and round once. Integers accumulate in 64 bits and are
// then clamped to the result type's range, as the current XLA evaluator
// does for integral results (it accumulates in int64/uint64).
#include <algorithm>
#include <limits>

#include "oracle/index_util.h"
#include "oracle/kernels.h"

namespace trench::oracle {
namespace {

struct ConvPlan {
  int64_t batch = 0, out_batch = 0, in_features = 0, ifg = 0, out_features = 0;
  int64_t groups = 1;  // max(feature_group_count, batch_group_count).
  bool feature_grouped = false;
  std::vector<int64_t> in_spatial, kernel_spatial, out_spatial;
  std::vector<WindowDim> window;
  std::vector<int64_t> result_dims;
};

StatusOr<ConvPlan> MakePlan(const HloInstruction& instr, const Shape& lhs,
                            const Shape& rhs) {
  const HloAttributes& at = instr.attrs();
  if (!at.conv_dnums.has_value()) {
    return Invalid(instr, "missing convolution dim_labels");
  }
  const ConvDimNumbers& dn = *at.conv_dnums;
  const int64_t ns = dn.input_spatial.size();
  std::vector<WindowDim> window = at.window.value_or(std::vector<WindowDim>());
  if (static_cast<int64_t>(dn.kernel_spatial.size()) != ns ||
      static_cast<int64_t>(dn.output_spatial.size()) != ns ||
      static_cast<int64_t>(window.size()) != ns || lhs.rank() != ns + 2 ||
      rhs.rank() != ns + 2 || instr.shape().rank() != ns + 2) {
    return Invalid(instr,
                   "spatial dimension counts of dim_labels, window "
                   "and operand ranks disagree");
  }
  std::vector<int64_t> in{dn.input_batch, dn.input_feature};
  std::vector<int64_t> ker{dn.kernel_input_feature, dn.kernel_output_feature};
  std::vector<int64_t> out{dn.output_batch, dn.output_feature};
  in.insert(in.end(), dn.input_spatial.begin(), dn.input_spatial.end());
  ker.insert(ker.end(), dn.kernel_spatial.begin(), dn.kernel_spatial.end());
  out.insert(out.end(), dn.output_spatial.begin(), dn.output_spatial.end());
  RETURN_IF_ERROR(CheckDimList(instr, in, ns + 2, "input"));
  RETURN_IF_ERROR(CheckDimList(instr, ker, ns + 2, "kernel"));
  RETURN_IF_ERROR(CheckDimList(instr, out, ns + 2, "output"));
  const int64_t fgc = at.feature_group_count, bgc = at.batch_group_count;
  ConvPlan p;
  p.batch = lhs.dim(dn.input_batch);
  p.in_features = lhs.dim(dn.input_feature);
  p.ifg = rhs.dim(dn.kernel_input_feature);
  p.out_features = rhs.dim(dn.kernel_output_feature);
  if (fgc < 1 || bgc < 1 || (fgc > 1 && bgc > 1)) {
    return Invalid(instr, "invalid feature/batch group counts");
  }
  if (p.in_features % fgc != 0 || p.in_features / fgc != p.ifg ||
      p.out_features % fgc != 0 || p.out_features % bgc != 0 ||
      p.batch % bgc != 0) {
    return Invalid(instr,
                   "group counts do not divide the feature/batch "
                   "dimensions (input features " +
                       std::to_string(p.in_features) +
                       ", kernel input features " + std::to_string(p.ifg) +
                       ")");
  }
  p.groups = std::max(fgc, bgc);
  p.feature_grouped = fgc > 1;
  p.out_batch = p.batch / bgc;
  p.window = window;
  p.result_dims.assign(ns + 2, 0);
  p.result_dims[dn.output_batch] = p.out_batch;
  p.result_dims[dn.output_feature] = p.out_features;
  for (int64_t i = 0; i < ns; ++i) {
    const WindowDim& w = window[i];
    const int64_t n = lhs.dim(dn.input_spatial[i]);
    const int64_t ks = rhs.dim(dn.kernel_spatial[i]);
    if (w.size != ks || w.stride < 1 || w.base_dilation < 1 ||
        w.window_dilation < 1) {
      return Invalid(instr, "window dimension " + std::to_string(i) +
                                " does not match the kernel or is invalid");
    }
    const int64_t dilated = n == 0 ? 0 : (n - 1) * w.base_dilation + 1;
    const int64_t padded = dilated + w.pad_lo + w.pad_hi;
    const int64_t extent = ks == 0 ? 0 : (ks - 1) * w.window_dilation + 1;
    p.result_dims[dn.output_spatial[i]] =
        padded < extent || ks == 0 ? 0 : (padded - extent) / w.stride + 1;
    p.in_spatial.push_back(n);
    p.kernel_spatial.push_back(ks);
    p.out_spatial.push_back(p.result_dims[dn.output_spatial[i]]);
  }
  return p;
}

// lhs as [batch][spatial...][features], rhs as [kspatial...][ifg][O].
// Writes acc[O] for every output pixel and hands it to store(pixel, acc)
// where pixel enumerates [out_batch][out spatial...] row-major.
template <typename Acc, typename Store>
void ConvCore(const ConvPlan& p, const std::vector<Acc>& lhs,
              const std::vector<Acc>& rhs, int threads, Store&& store) {
  const int64_t ns = p.in_spatial.size();
  const int64_t c = p.in_features, o_count = p.out_features;
  const int64_t og = o_count / p.groups;
  const int64_t bgs = p.batch / (p.feature_grouped ? 1 : p.groups);
  const std::vector<int64_t> in_str = Strides(p.in_spatial);
  const int64_t in_pixels = Product(p.in_spatial);
  const int64_t k_count = Product(p.kernel_spatial);
  const int64_t out_pixels = Product(p.out_spatial);
  const int64_t total = p.out_batch * out_pixels;
  const double work = static_cast<double>(total) * k_count * p.ifg * o_count;
  ParallelFor(total, work < 1e6 ? 1 : threads, 16, [&](int64_t t0, int64_t t1) {
    std::vector<Acc> acc(o_count);
    std::vector<int64_t> opos(ns), kpos(ns);
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t ob = t / std::max<int64_t>(out_pixels, 1);
      int64_t rem = t % std::max<int64_t>(out_pixels, 1);
      for (int64_t i = ns - 1; i >= 0; --i) {
        opos[i] = rem % p.out_spatial[i];
        rem /= p.out_spatial[i];
      }
      std::fill(acc.begin(), acc.end(), Acc(0));
      std::fill(kpos.begin(), kpos.end(), 0);
      for (int64_t kl = 0; kl < k_count;
           ++kl, NextIndex(p.kernel_spatial, kpos)) {
        int64_t pix = 0;
        bool valid = true;
        int64_t kr = 0;  // Kernel position, reversal applied, row-major.
        for (int64_t i = 0; i < ns && valid; ++i) {
          const WindowDim& w = p.window[i];
          const int64_t u =
              opos[i] * w.stride - w.pad_lo + kpos[i] * w.window_dilation;
          if (u < 0 || u % w.base_dilation != 0 ||
              u / w.base_dilation >= p.in_spatial[i]) {
            valid = false;
            break;
          }
          pix += (u / w.base_dilation) * in_str[i];
          kr = kr * p.kernel_spatial[i] +
               (w.reversal ? p.kernel_spatial[i] - 1 - kpos[i] : kpos[i]);
        }
        if (!valid) continue;
        const Acc* kw = rhs.data() + kr * p.ifg * o_count;
        for (int64_t g = 0; g < p.groups; ++g) {
          const int64_t b = p.feature_grouped ? ob : ob + g * bgs;
          const int64_t f0 = p.feature_grouped ? g * p.ifg : 0;
          const Acc* l = lhs.data() + (b * in_pixels + pix) * c + f0;
          Acc* a = acc.data() + g * og;
          for (int64_t iz = 0; iz < p.ifg; ++iz) {
            const Acc lv = l[iz];
            const Acc* r = kw + iz * o_count + g * og;
            for (int64_t o = 0; o < og; ++o) a[o] += lv * r[o];
          }
        }
      }
      store(t, acc);
    }
  });
}

}  // namespace

StatusOr<Literal> EvalConvolution(const HloInstruction& instr, Operands ops,
                                  const EvaluatorOptions& options) {
  RETURN_IF_ERROR(CheckOperands(instr, ops, 2));
  const Literal& lhs = *ops[0];
  const Literal& rhs = *ops[1];
  const PrimitiveType rt = instr.shape().element_type();
  RETURN_IF_ERROR(CheckNotComplex(instr, lhs.element_type()));
  RETURN_IF_ERROR(CheckNotComplex(instr, rhs.element_type()));
  RETURN_IF_ERROR(CheckNotComplex(instr, rt));
  if (!instr.shape().IsArray()) return Invalid(instr, "result is not an array");
  ASSIGN_OR_RETURN(ConvPlan p, MakePlan(instr, lhs.shape(), rhs.shape()));
  RETURN_IF_ERROR(CheckResultDims(instr, p.result_dims));
  Literal out(instr.shape());
  if (out.element_count() == 0) return out;

  const ConvDimNumbers& dn = *instr.attrs().conv_dnums;
  std::vector<int64_t> lperm{dn.input_batch}, rperm(dn.kernel_spatial);
  lperm.insert(lperm.end(), dn.input_spatial.begin(), dn.input_spatial.end());
  lperm.push_back(dn.input_feature);
  rperm.push_back(dn.kernel_input_feature);
  rperm.push_back(dn.kernel_output_feature);
  // Output offsets of pixel t = (out_batch, out spatial...) and feature o.
  const std::vector<int64_t> ostr = Strides(p.result_dims);
  const int64_t out_pixels = Product(p.out_spatial);
  auto out_offset = [&](int64_t t) {
    int64_t off = (t / out_pixels) * ostr[dn.output_batch];
    int64_t rem = t % out_pixels;
    for (int64_t i = static_cast<int64_t>(p.out_spatial.size()) - 1; i >= 0;
         --i) {
      off += (rem % p.out_spatial[i]) * ostr[dn.output_spatial[i]];
      rem /= p.out_spatial[i];
    }
    return off;
  };
  const int64_t fstride = ostr[dn.output_feature];

  if (IsFloat(rt)) {
    const std::vector<double> l =
        Permute(ToDoubles(lhs, rt), lhs.shape().dims(), lperm);
    const std::vector<double> r =
        Permute(ToDoubles(rhs, rt), rhs.shape().dims(), rperm);
    DispatchArrayType(rt, [&]<PrimitiveType T>() {
      using N = NativeT<T>;
      if constexpr (!std::is_integral_v<N> && T != PrimitiveType::C64 &&
                    T != PrimitiveType::C128) {
        N* o = out.mutable_data<N>().data();
        ConvCore<double>(p, l, r, options.threads,
                         [&](int64_t t, const std::vector<double>& acc) {
                           const int64_t base = out_offset(t);
                           for (size_t f = 0; f < acc.size(); ++f) {
                             o[base + f * fstride] = FromDouble<N>(acc[f]);
                           }
                         });
      }
    });
    return out;
  }
  const PrimitiveType as = rt == PrimitiveType::PRED ? PrimitiveType::U8 : rt;
  const std::vector<uint64_t> l =
      Permute(ToWrappedInts(lhs, as), lhs.shape().dims(), lperm);
  const std::vector<uint64_t> r =
      Permute(ToWrappedInts(rhs, as), rhs.shape().dims(), rperm);
  std::vector<uint64_t> sums(out.element_count());
  ConvCore<uint64_t>(p, l, r, options.threads,
                     [&](int64_t t, const std::vector<uint64_t>& acc) {
                       const int64_t base = out_offset(t);
                       for (size_t f = 0; f < acc.size(); ++f) {
                         sums[base + f * fstride] = acc[f];
                       }
                     });
  const int bits = BitWidth(rt);
  for (size_t i = 0; i < sums.size(); ++i) {
    if (rt == PrimitiveType::PRED) {
      out.mutable_data<bool>()[i] = sums[i] != 0;
    } else if (IsUnsigned(rt)) {
      const uint64_t max =
          bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      out.SetFromInt64(i, static_cast<int64_t>(std::min(sums[i], max)));
    } else {
      const int64_t v = static_cast<int64_t>(sums[i]);
      const int64_t hi = bits == 64 ? std::numeric_limits<int64_t>::max()
                                    : (int64_t{1} << (bits - 1)) - 1;
      out.SetFromInt64(i, std::clamp(v, -hi - 1, hi));
    }
  }
  return out;
}

}  // namespace trench::oracle
