#include "compiler/passes/literal_folder.h"

#include <cstring>
#include <functional>

#include "compiler/passes/literal_folder_internal.h"

namespace trench {
namespace {

// Calls f(index, linear) for every index of `dims` in row-major order.
void ForEachIndex(
    const std::vector<int64_t>& dims,
    const std::function<void(const std::vector<int64_t>&, int64_t)>& f) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    f(index, linear);
    for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
}

int64_t Linear(const std::vector<int64_t>& dims,
               const std::vector<int64_t>& index) {
  int64_t linear = 0;
  for (size_t d = 0; d < dims.size(); ++d) linear = linear * dims[d] + index[d];
  return linear;
}

// Builds out[i] = in[map(out_index)] for a data-movement op.
Literal Gather(const Literal& in, const Shape& out_shape,
               const std::function<void(const std::vector<int64_t>&,
                                        std::vector<int64_t>*)>& map) {
  Literal out(out_shape);
  const int64_t width = ByteWidth(out_shape.element_type());
  const auto src = in.bytes();
  auto dst = out.mutable_bytes();
  const std::vector<int64_t>& in_dims = in.shape().dims();
  std::vector<int64_t> in_index(in_dims.size());
  ForEachIndex(
      out_shape.dims(), [&](const std::vector<int64_t>& idx, int64_t linear) {
        map(idx, &in_index);
        std::memcpy(dst.data() + linear * width,
                    src.data() + Linear(in_dims, in_index) * width, width);
      });
  return out;
}

std::optional<Literal> FoldBroadcast(const HloInstruction& instr,
                                     const Literal& in) {
  const auto& dims = instr.dimensions();
  if (static_cast<int64_t>(dims.size()) != in.shape().rank()) {
    return std::nullopt;
  }
  return Gather(in, instr.shape(), [&](const auto& out, auto* src) {
    for (size_t i = 0; i < dims.size(); ++i) (*src)[i] = out[dims[i]];
  });
}

std::optional<Literal> FoldTranspose(const HloInstruction& instr,
                                     const Literal& in) {
  const auto& perm = instr.dimensions();
  if (static_cast<int64_t>(perm.size()) != in.shape().rank()) {
    return std::nullopt;
  }
  return Gather(in, instr.shape(), [&](const auto& out, auto* src) {
    for (size_t i = 0; i < perm.size(); ++i) (*src)[perm[i]] = out[i];
  });
}

std::optional<Literal> FoldSlice(const HloInstruction& instr,
                                 const Literal& in) {
  const auto& slice = instr.attrs().slice;
  if (static_cast<int64_t>(slice.size()) != in.shape().rank()) {
    return std::nullopt;
  }
  return Gather(in, instr.shape(), [&](const auto& out, auto* src) {
    for (size_t i = 0; i < slice.size(); ++i) {
      (*src)[i] = slice[i].start + out[i] * slice[i].stride;
    }
  });
}

std::optional<Literal> FoldReverse(const HloInstruction& instr,
                                   const Literal& in) {
  const auto& in_dims = in.shape().dims();
  std::vector<bool> rev(in_dims.size(), false);
  for (int64_t d : instr.dimensions()) {
    if (d < 0 || d >= static_cast<int64_t>(rev.size())) return std::nullopt;
    rev[d] = true;
  }
  return Gather(in, instr.shape(), [&](const auto& out, auto* src) {
    for (size_t i = 0; i < in_dims.size(); ++i) {
      (*src)[i] = rev[i] ? in_dims[i] - 1 - out[i] : out[i];
    }
  });
}

std::optional<Literal> FoldConcatenate(const HloInstruction& instr,
                                       const std::vector<const Literal*>& ops) {
  if (instr.dimensions().size() != 1) return std::nullopt;
  const int64_t dim = instr.dimensions()[0];
  Literal out(instr.shape());
  const int64_t width = ByteWidth(instr.shape().element_type());
  auto dst = out.mutable_bytes();
  const auto& out_dims = instr.shape().dims();
  int64_t offset = 0;
  for (const Literal* op : ops) {
    const auto src = op->bytes();
    std::vector<int64_t> out_index;
    ForEachIndex(op->shape().dims(),
                 [&](const std::vector<int64_t>& idx, int64_t linear) {
                   out_index = idx;
                   out_index[dim] += offset;
                   std::memcpy(dst.data() + Linear(out_dims, out_index) * width,
                               src.data() + linear * width, width);
                 });
    offset += op->shape().dim(dim);
  }
  return out;
}

std::optional<Literal> FoldIota(const HloInstruction& instr) {
  const Shape& shape = instr.shape();
  const int64_t dim = instr.attrs().iota_dimension;
  if (IsComplex(shape.element_type()) || dim < 0 || dim >= shape.rank()) {
    return std::nullopt;
  }
  Literal out(shape);
  const bool is_float = IsFloat(shape.element_type());
  ForEachIndex(shape.dims(),
               [&](const std::vector<int64_t>& idx, int64_t linear) {
                 // Indices are far below 2^53 (the result is capped), so the
                 // double is exact and SetFromDouble rounds once.
                 if (is_float) {
                   out.SetFromDouble(linear, static_cast<double>(idx[dim]));
                 } else {
                   out.SetFromInt64(linear, idx[dim]);
                 }
               });
  return out;
}

std::optional<Literal> FoldSelect(const HloInstruction& instr,
                                  const std::vector<const Literal*>& ops) {
  const Literal& pred = *ops[0];
  Literal out(instr.shape());
  const int64_t width = ByteWidth(instr.shape().element_type());
  const int64_t n = out.element_count();
  const bool scalar_pred = pred.shape().rank() == 0;
  if (!scalar_pred && pred.element_count() != n) return std::nullopt;
  if (ops[1]->element_count() != n || ops[2]->element_count() != n) {
    return std::nullopt;
  }
  const auto p = pred.data<bool>();
  auto dst = out.mutable_bytes();
  for (int64_t i = 0; i < n; ++i) {
    const Literal* src = p[scalar_pred ? 0 : i] ? ops[1] : ops[2];
    std::memcpy(dst.data() + i * width, src->bytes().data() + i * width, width);
  }
  return out;
}

std::optional<Literal> CopyBytes(const HloInstruction& instr,
                                 const Literal& in) {
  Literal out(instr.shape());
  if (out.bytes().size() != in.bytes().size()) return std::nullopt;
  std::memcpy(out.mutable_bytes().data(), in.bytes().data(), in.bytes().size());
  return out;
}

}  // namespace

std::optional<Literal> FoldInstruction(
    const HloInstruction& instr, const std::vector<const Literal*>& operands) {
  const Shape& shape = instr.shape();
  // Empty results are declined too: there is nothing to gain, and their
  // text can still be huge (f32[1000000000000,0] prints one {} per row).
  if (!shape.IsArray() || shape.is_dynamic() || shape.element_count() == 0 ||
      shape.element_count() > kMaxFoldedElements ||
      static_cast<int64_t>(operands.size()) != instr.operand_count()) {
    return std::nullopt;
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    const Shape& s = operands[i]->shape();
    if (!s.IsArray() || s.is_dynamic() ||
        !s.Compatible(instr.operand(i)->shape())) {
      return std::nullopt;
    }
  }
  const bool same_type = operands.size() == 1 &&
                         operands[0]->element_type() == shape.element_type();
  switch (instr.opcode()) {
    case HloOpcode::kBroadcast:
      if (!same_type) return std::nullopt;
      return FoldBroadcast(instr, *operands[0]);
    case HloOpcode::kTranspose:
      if (!same_type) return std::nullopt;
      return FoldTranspose(instr, *operands[0]);
    case HloOpcode::kSlice:
      if (!same_type) return std::nullopt;
      return FoldSlice(instr, *operands[0]);
    case HloOpcode::kReverse:
      if (!same_type) return std::nullopt;
      return FoldReverse(instr, *operands[0]);
    case HloOpcode::kReshape:
    case HloOpcode::kCopy:
      if (!same_type) return std::nullopt;
      return CopyBytes(instr, *operands[0]);
    case HloOpcode::kConcatenate:
      for (const Literal* op : operands) {
        if (op->element_type() != shape.element_type()) return std::nullopt;
      }
      return FoldConcatenate(instr, operands);
    case HloOpcode::kIota:
      return FoldIota(instr);
    case HloOpcode::kSelect:
      if (operands[0]->element_type() != PrimitiveType::PRED ||
          operands[1]->element_type() != shape.element_type() ||
          operands[2]->element_type() != shape.element_type()) {
        return std::nullopt;
      }
      return FoldSelect(instr, operands);
    default:
      return folder::FoldElementwise(instr, operands);
  }
}

}  // namespace trench
