// iota: element = its index along iota_dimension, converted to the element
// type as convert would convert an s64 (XLA's HandleIota static_casts the
// index; for the 16-bit floats we round once from the exact index).
#include <string>
#include <vector>

#include "oracle/convert_element.h"
#include "oracle/kernels.h"

namespace trench::oracle {

StatusOr<Literal> EvalIota(const HloInstruction& instr) {
  const Shape& shape = instr.shape();
  const int64_t dim = instr.attrs().iota_dimension;
  if (!shape.IsArray() || shape.rank() == 0 || dim < 0 || dim >= shape.rank()) {
    return InvalidArgument("%" + instr.name() + ": iota of shape " +
                           shape.ToString(false) +
                           " with iota_dimension=" + std::to_string(dim));
  }
  Literal out(shape);
  if (out.element_count() == 0) return out;  // Other dims may be huge.
  // Row-major: index = ((outer * size) + k) * inner + j, value depends on k.
  const int64_t size = shape.dim(dim);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= shape.dim(d);
  for (int64_t d = dim + 1; d < shape.rank(); ++d) inner *= shape.dim(d);
  DispatchArrayType(shape.element_type(), [&]<PrimitiveType T>() {
    using N = NativeT<T>;
    std::vector<N> values(size);
    for (int64_t k = 0; k < size; ++k) {
      values[k] = ConvertElement<PrimitiveType::S64, T>(k);
    }
    N* p = out.mutable_data<N>().data();
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t k = 0; k < size; ++k) {
        const N v = values[k];
        for (int64_t j = 0; j < inner; ++j) *p++ = v;
      }
    }
  });
  return out;
}

}  // namespace trench::oracle
