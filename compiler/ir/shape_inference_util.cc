// Helpers shared by the shape inference rules: messages, attribute checks,
// called-computation signatures and window arithmetic.
#include <algorithm>
#include <set>

#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/shape_inference_internal.h"

namespace trench::shape_inference_internal {

Status Err(const HloInstruction& instr, const std::string& what) {
  return InvalidArgument("%" + instr.name() + ": " +
                         std::string(OpcodeName(instr.opcode())) + " " + what);
}

std::string Str(const Shape& shape) { return shape.ToString(false); }

std::string Str(const std::vector<int64_t>& dims) {
  std::string s = "{";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(dims[i]);
  }
  return s + "}";
}

std::string TypeStr(PrimitiveType t) {
  return std::string(PrimitiveTypeName(t));
}

const Shape& OperandShape(const HloInstruction& instr, int64_t i) {
  return instr.operand(i)->shape();
}

Status ExpectArray(const HloInstruction& instr, const Shape& shape,
                   const std::string& what) {
  if (!shape.IsArray()) {
    return Err(instr, what + " must be an array, got " + Str(shape));
  }
  return Status::Ok();
}

Status ExpectScalar(const HloInstruction& instr, const Shape& shape,
                    const std::string& what) {
  if (!shape.IsArray() || shape.rank() != 0) {
    return Err(instr, what + " must be a scalar, got " + Str(shape));
  }
  return Status::Ok();
}

Status CheckDimList(const HloInstruction& instr,
                    const std::vector<int64_t>& dims, int64_t rank,
                    const std::string& what) {
  std::set<int64_t> seen;
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return Err(instr, what + " " + Str(dims) + " has dimension " +
                            std::to_string(d) + " out of range for rank " +
                            std::to_string(rank));
    }
    if (!seen.insert(d).second) {
      return Err(instr, what + " " + Str(dims) + " repeats dimension " +
                            std::to_string(d));
    }
  }
  return Status::Ok();
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

bool IsSortedStrictly(const std::vector<int64_t>& v) {
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i - 1] >= v[i]) return false;
  }
  return true;
}

Shape NoLayout(Shape shape) {
  shape.clear_layout();
  return shape;
}

Shape WithType(const Shape& dims_from, PrimitiveType t) {
  Shape s = NoLayout(dims_from);
  s.set_element_type(t);
  return s;
}

bool SameTypeIgnoringFpPrecision(PrimitiveType a, PrimitiveType b) {
  return a == b || (IsFloat(a) && IsFloat(b));
}

Status ExpectCalledCount(const HloInstruction& instr, int64_t count) {
  const int64_t n = instr.called_computations().size();
  if (n != count) {
    return Err(instr, "expects " + std::to_string(count) +
                          " called computation(s), has " + std::to_string(n));
  }
  return Status::Ok();
}

StatusOr<Signature> CalleeSignature(const HloInstruction& instr, int64_t index,
                                    const std::string& role) {
  const auto& called = instr.called_computations();
  if (index < 0 || index >= static_cast<int64_t>(called.size()) ||
      called[index] == nullptr) {
    return Err(instr, "is missing its " + role + " computation");
  }
  const HloComputation& comp = *called[index];
  Signature sig;
  sig.name = comp.name();
  if (comp.root_instruction() == nullptr) {
    return Err(instr, role + " computation %" + comp.name() + " has no root");
  }
  sig.result = &comp.root_instruction()->shape();
  for (int64_t i = 0; i < comp.num_parameters(); ++i) {
    const HloInstruction* p = comp.parameter_instruction(i);
    if (p == nullptr || p->parameter_number() != i) {
      return Err(instr, role + " computation %" + comp.name() +
                            " has no parameter " + std::to_string(i));
    }
    sig.params.push_back(&p->shape());
  }
  return sig;
}

namespace {

// "(f32[], f32[]) -> f32[]".
std::string SigStr(const Signature& sig) {
  std::string s = "(";
  for (size_t i = 0; i < sig.params.size(); ++i) {
    if (i) s += ", ";
    s += Str(*sig.params[i]);
  }
  return s + ") -> " + Str(*sig.result);
}

Status BadSignature(const HloInstruction& instr, const Signature& sig,
                    const std::string& expected) {
  return Err(instr, "computation %" + sig.name + " has signature " +
                        SigStr(sig) + ", expected " + expected);
}

std::string ScalarList(const std::vector<PrimitiveType>& types) {
  std::string s;
  for (size_t i = 0; i < types.size(); ++i) {
    if (i) s += ", ";
    s += TypeStr(types[i]) + "[]";
  }
  return s;
}

bool IsScalarOf(const Shape& s, PrimitiveType t, bool ignore_fp_precision) {
  if (!s.IsArray() || s.rank() != 0) return false;
  return ignore_fp_precision ? SameTypeIgnoringFpPrecision(s.element_type(), t)
                             : s.element_type() == t;
}

}  // namespace

Status CheckReducer(const HloInstruction& instr, const Signature& sig,
                    const std::vector<PrimitiveType>& acc,
                    const std::vector<PrimitiveType>& in) {
  const size_t n = acc.size();
  const std::string result =
      n == 1 ? ScalarList(acc) : "(" + ScalarList(acc) + ")";
  const std::string expected =
      "(" + ScalarList(acc) + ", " + ScalarList(in) + ") -> " + result;
  if (sig.params.size() != 2 * n) return BadSignature(instr, sig, expected);
  for (size_t i = 0; i < n; ++i) {
    if (!IsScalarOf(*sig.params[i], acc[i], false) ||
        !IsScalarOf(*sig.params[n + i], in[i], true)) {
      return BadSignature(instr, sig, expected);
    }
  }
  const Shape& r = *sig.result;
  if (n == 1) {
    if (!IsScalarOf(r, acc[0], false))
      return BadSignature(instr, sig, expected);
    return Status::Ok();
  }
  if (!r.IsTuple() || r.tuple_size() != static_cast<int64_t>(n)) {
    return BadSignature(instr, sig, expected);
  }
  for (size_t i = 0; i < n; ++i) {
    if (!IsScalarOf(r.tuple_shape(i), acc[i], false)) {
      return BadSignature(instr, sig, expected);
    }
  }
  return Status::Ok();
}

Status CheckComparator(const HloInstruction& instr, const Signature& sig,
                       const std::vector<PrimitiveType>& types) {
  std::vector<PrimitiveType> doubled;
  for (PrimitiveType t : types) {
    doubled.push_back(t);
    doubled.push_back(t);
  }
  const std::string expected = "(" + ScalarList(doubled) + ") -> pred[]";
  if (sig.params.size() != doubled.size()) {
    return BadSignature(instr, sig, expected);
  }
  for (size_t i = 0; i < doubled.size(); ++i) {
    if (!IsScalarOf(*sig.params[i], doubled[i], false)) {
      return BadSignature(instr, sig, expected);
    }
  }
  if (!IsScalarOf(*sig.result, PrimitiveType::PRED, false)) {
    return BadSignature(instr, sig, expected);
  }
  return Status::Ok();
}

const std::vector<WindowDim>& WindowOf(const HloInstruction& instr) {
  static const std::vector<WindowDim> kEmpty;
  return instr.attrs().window ? *instr.attrs().window : kEmpty;
}

StatusOr<std::vector<int64_t>> WindowOutputDims(
    const HloInstruction& instr, const std::vector<int64_t>& base,
    const std::vector<WindowDim>& window) {
  if (window.size() != base.size()) {
    return Err(instr, "window has " + std::to_string(window.size()) +
                          " dimension(s), expected " +
                          std::to_string(base.size()));
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < base.size(); ++i) {
    const WindowDim& w = window[i];
    const std::string at = " in window dimension " + std::to_string(i);
    if (w.size <= 0) return Err(instr, "has non-positive size" + at);
    if (w.stride <= 0) return Err(instr, "has non-positive stride" + at);
    if (w.base_dilation <= 0 || w.window_dilation <= 0) {
      return Err(instr, "has non-positive dilation" + at);
    }
    const int64_t dilated_base =
        base[i] == 0 ? 0 : (base[i] - 1) * w.base_dilation + 1;
    const int64_t padded = dilated_base + w.pad_lo + w.pad_hi;
    const int64_t dilated_window = (w.size - 1) * w.window_dilation + 1;
    out.push_back(
        padded < dilated_window ? 0 : (padded - dilated_window) / w.stride + 1);
  }
  return out;
}

}  // namespace trench::shape_inference_internal
