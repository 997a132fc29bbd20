// convert, bitcast-convert and reduce-precision.
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "oracle/convert_element.h"
#include "oracle/elementwise.h"
#include "oracle/elementwise_loops.h"

namespace trench::oracle {
namespace {

std::string TypeName(PrimitiveType t) {
  return std::string(PrimitiveTypeName(t));
}

// reduce-precision of one f32/f64 value, bit for bit as XLA's evaluator
// (HandleReducePrecision in hlo_evaluator_typed_visitor.h):
// - the mantissa is rounded to nearest even by adding a bias and masking;
//   a carry into the exponent is the correct next binade;
// - then, for fewer exponent bits, values above the new range become
//   signed infinity and values at or below the new minimum normal exponent
//   (the new format's subnormals included) become signed zero;
// - NaN stays the input NaN, except with mantissa_bits == 0, where it
//   becomes +infinity (the format has no NaN; XLA returns +inf whatever
//   the sign).
template <typename F>
F ReducePrecisionValue(F value, int ebits, int mbits) {
  using U = std::conditional_t<sizeof(F) == 4, uint32_t, uint64_t>;
  constexpr int kSrcMbits = std::numeric_limits<F>::digits - 1;
  constexpr int kSrcEbits = int{sizeof(F) * 8} - kSrcMbits - 1;
  U bits = std::bit_cast<U>(value);
  if (mbits < kSrcMbits) {
    const U last_bit = U{1} << (kSrcMbits - mbits);
    const U base_bias = (last_bit >> 1) - 1;
    const U bias = base_bias + ((bits & last_bit) >> (kSrcMbits - mbits));
    bits = (bits + bias) & ~(last_bit - 1);
  }
  if (ebits < kSrcEbits) {
    const U sign_mask = U{1} << (sizeof(F) * 8 - 1);
    const U exp_mask = ((U{1} << kSrcEbits) - 1) << kSrcMbits;
    const U src_bias = (U{1} << (kSrcEbits - 1)) - 1;
    const U dst_bias = (U{1} << (ebits - 1)) - 1;
    const U max_exp = src_bias + dst_bias;
    const U min_exp = src_bias - dst_bias;
    const U exp = bits & exp_mask;
    const U signed_zero = bits & sign_mask;
    if (exp > (max_exp << kSrcMbits)) bits = signed_zero | exp_mask;
    if (exp <= (min_exp << kSrcMbits)) bits = signed_zero;
  }
  if (std::isnan(value)) {
    return mbits > 0 ? value : std::numeric_limits<F>::infinity();
  }
  return std::bit_cast<F>(bits);
}

template <PrimitiveType From, PrimitiveType To>
void ConvertTyped(const Literal& x, Literal* out, int threads) {
  using Out = NativeT<To>;
  if constexpr (From == PrimitiveType::PRED) {
    // Read pred storage as bytes: any nonzero byte is true.
    MapUnary<uint8_t, Out>(x, out, threads, [](uint8_t v) {
      return ConvertElement<PrimitiveType::U8, To>(v != 0 ? 1 : 0);
    });
  } else {
    MapUnary<NativeT<From>, Out>(x, out, threads, [](NativeT<From> v) {
      return ConvertElement<From, To>(v);
    });
  }
}

}  // namespace

Status ConvertOp(const Literal& x, Literal* out, int threads) {
  const PrimitiveType from = x.element_type(), to = out->element_type();
  if (from == to) {
    if (x.bytes().data() != out->mutable_bytes().data()) {
      std::memmove(out->mutable_bytes().data(), x.bytes().data(),
                   x.bytes().size());
    }
    return Status::Ok();
  }
  if (IsComplex(from) && !IsComplex(to)) {
    return Unimplemented("convert from " + TypeName(from) + " to " +
                         TypeName(to) + " (complex to real) is not supported");
  }
  DispatchArrayType(from, [&]<PrimitiveType F>() {
    DispatchArrayType(to, [&]<PrimitiveType T>() {
      if constexpr (!(kIsComplexType<F> && !kIsComplexType<T>)) {
        ConvertTyped<F, T>(x, out, threads);
      }
    });
  });
  return Status::Ok();
}

Status BitcastConvertOp(const Literal& x, Literal* out) {
  const Shape& in = x.shape();
  const Shape& os = out->shape();
  const int64_t bi = ByteWidth(in.element_type());
  const int64_t bo = ByteWidth(os.element_type());
  // The minor-dimension rule of operation_semantics.md (BitcastConvertType):
  // a narrower output gains a minor dimension of size bi/bo; a wider one
  // drops the input's minor dimension, which must be bo/bi.
  std::vector<int64_t> expected = in.dims();
  if (bi > bo) {
    expected.push_back(bi / bo);
  } else if (bi < bo) {
    if (in.rank() == 0 || in.dims().back() != bo / bi) {
      return InvalidArgument("bitcast-convert from " + in.ToString(false) +
                             " to " + os.ToString(false) +
                             ": the input's minor dimension must be " +
                             std::to_string(bo / bi));
    }
    expected.pop_back();
  }
  if (bi == 0 || bo == 0 || (bi > bo ? bi % bo : bo % bi) != 0 ||
      expected != os.dims() || x.bytes().size() != out->bytes().size()) {
    return InvalidArgument("bitcast-convert from " + in.ToString(false) +
                           " to " + os.ToString(false) +
                           " does not preserve the bytes");
  }
  // Row-major data, host (little-endian) byte order: the element of the new
  // minor dimension at index 0 holds the lowest-addressed bytes, as XLA's
  // Literal::BitcastConvert on a little-endian host.
  if (x.bytes().data() != out->mutable_bytes().data()) {
    std::memmove(out->mutable_bytes().data(), x.bytes().data(),
                 x.bytes().size());
  }
  return Status::Ok();
}

Status ReducePrecisionOp(const Literal& x, int64_t exponent_bits,
                         int64_t mantissa_bits, Literal* out, int threads) {
  if (exponent_bits < 1 || mantissa_bits < 0 || exponent_bits > 64 ||
      mantissa_bits > 64) {
    return InvalidArgument(
        "reduce-precision needs exponent_bits >= 1 and "
        "mantissa_bits >= 0, got exponent_bits=" +
        std::to_string(exponent_bits) +
        " mantissa_bits=" + std::to_string(mantissa_bits));
  }
  const int e = static_cast<int>(exponent_bits);
  const int m = static_cast<int>(mantissa_bits);
  const bool ok = DispatchFloatType(x.element_type(), [&]<PrimitiveType T>() {
    using N = NativeT<T>;
    // bf16/f16 reduce their f32 value, then round back (XLA's evaluator
    // runs them with ElementwiseT = float too).
    MapUnary<N, N>(x, out, threads, [e, m](N v) {
      return Store<T>(ReducePrecisionValue(Load<T>(v), e, m));
    });
  });
  if (ok) return Status::Ok();
  return InvalidArgument("reduce-precision does not take element type " +
                         TypeName(x.element_type()));
}

}  // namespace trench::oracle
