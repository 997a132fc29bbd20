// scatter: N operands, one index array, N updates, update computation
// (operand values..., update values...) -> N values.
//
// Follows XLA's evaluator (hlo_evaluator_typed_visitor.h, HandleScatter):
// the result starts as a copy of the operands; update scatter positions are
// visited in row-major order and, within each, the update window in
// row-major order, so repeated indices apply the computation in that
// order. Start indices are NOT clamped: when any part of an update window
// would fall outside the operand (start < 0 or start > dim - window size in
// some dim) the whole window is skipped. input_batching_dims take their
// coordinate from the matching scatter_indices_batching_dims position.
#include <algorithm>

#include "oracle/index_util.h"
#include "oracle/kernels.h"

namespace trench::oracle {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Calls fn(a, b) over a box of `counts`, a and b offsets with strides sa, sb.
template <typename F>
void ForEachBox(std::span<const int64_t> counts, std::span<const int64_t> sa,
                std::span<const int64_t> sb, F&& fn) {
  if (Product(counts) == 0) return;
  std::vector<int64_t> idx(counts.size(), 0);
  int64_t a = 0, b = 0;
  while (true) {
    fn(a, b);
    int64_t d = static_cast<int64_t>(counts.size()) - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < counts[d]) {
        a += sa[d];
        b += sb[d];
        break;
      }
      a -= sa[d] * (counts[d] - 1);
      b -= sb[d] * (counts[d] - 1);
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace

StatusOr<Literal> EvalScatter(const HloInstruction& instr, Operands ops,
                              CallContext& ctx) {
  RETURN_IF_ERROR(CheckOperands(instr, ops, 3, /*at_least=*/true));
  if (ops.size() % 2 != 1) {
    return Invalid(instr, "scatter needs N operands, indices and N updates");
  }
  if (!instr.attrs().scatter_dnums.has_value() ||
      instr.called_computations().empty()) {
    return Invalid(instr, "missing scatter dimension numbers or to_apply");
  }
  const size_t n = ops.size() / 2;
  Operands operands = ops.subspan(0, n), updates = ops.subspan(n + 1, n);
  const Literal& indices = *ops[n];
  const ScatterDimNumbers& dn = *instr.attrs().scatter_dnums;
  const std::vector<int64_t>& odims = operands[0]->shape().dims();
  const std::vector<int64_t>& udims = updates[0]->shape().dims();
  const int64_t orank = odims.size(), urank = udims.size();
  for (size_t i = 0; i < n; ++i) {
    if (operands[i]->shape().dims() != odims ||
        updates[i]->shape().dims() != udims) {
      return Invalid(instr, "scatter operands or updates differ in shape");
    }
  }
  if (!IsInteger(indices.element_type())) {
    return Invalid(instr, "scatter indices must be integers");
  }
  const int64_t irank = indices.shape().rank();
  const int64_t ivd = dn.index_vector_dim;
  if (ivd < 0 || ivd > irank) {
    return Invalid(instr, "index_vector_dim out of range");
  }
  const int64_t vec_len = ivd == irank ? 1 : indices.shape().dim(ivd);
  if (static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size()) != vec_len) {
    return Invalid(instr,
                   "scatter_dims_to_operand_dims length differs from "
                   "the index vector length");
  }
  std::vector<int64_t> mapped = dn.scatter_dims_to_operand_dims;
  mapped.insert(mapped.end(), dn.input_batching_dims.begin(),
                dn.input_batching_dims.end());
  RETURN_IF_ERROR(
      CheckDimList(instr, mapped, orank, "scatter_dims_to_operand"));
  std::vector<int64_t> inserted = dn.inserted_window_dims;
  inserted.insert(inserted.end(), dn.input_batching_dims.begin(),
                  dn.input_batching_dims.end());
  RETURN_IF_ERROR(CheckDimList(instr, inserted, orank, "inserted_window"));
  RETURN_IF_ERROR(
      CheckDimList(instr, dn.update_window_dims, urank, "update_window"));
  std::vector<int64_t> window_operand_dims;
  for (int64_t d = 0; d < orank; ++d) {
    if (!Contains(inserted, d)) window_operand_dims.push_back(d);
  }
  if (window_operand_dims.size() != dn.update_window_dims.size() ||
      dn.input_batching_dims.size() !=
          dn.scatter_indices_batching_dims.size()) {
    return Invalid(instr, "update_window_dims do not match the operand");
  }
  // Scatter dims of the updates pair with the index dims minus ivd.
  std::vector<int64_t> index_dims, scatter_udims;
  for (int64_t d = 0; d < irank; ++d) {
    if (d != ivd) index_dims.push_back(d);
  }
  for (int64_t d = 0; d < urank; ++d) {
    if (!Contains(dn.update_window_dims, d)) scatter_udims.push_back(d);
  }
  if (index_dims.size() != scatter_udims.size()) {
    return Invalid(instr, "update scatter dims do not match the indices");
  }
  std::vector<int64_t> scatter_counts;
  for (size_t i = 0; i < index_dims.size(); ++i) {
    if (indices.shape().dim(index_dims[i]) != udims[scatter_udims[i]]) {
      return Invalid(instr, "update scatter dim sizes differ from indices");
    }
    scatter_counts.push_back(udims[scatter_udims[i]]);
  }
  // Window size per operand dim (1 for inserted and batching dims).
  std::vector<int64_t> wsize(orank, 1), wcounts;
  for (size_t i = 0; i < window_operand_dims.size(); ++i) {
    const int64_t s = udims[dn.update_window_dims[i]];
    if (s > odims[window_operand_dims[i]]) {
      return Invalid(instr, "update window larger than the operand");
    }
    wsize[window_operand_dims[i]] = s;
    wcounts.push_back(s);
  }
  std::vector<int64_t> batching_pos;
  for (size_t i = 0; i < dn.scatter_indices_batching_dims.size(); ++i) {
    const int64_t d = dn.scatter_indices_batching_dims[i];
    RETURN_IF_ERROR(CheckDim(instr, d, irank, "scatter_indices_batching"));
    if (d == ivd) return Invalid(instr, "batching dim is index_vector_dim");
    batching_pos.push_back(std::find(index_dims.begin(), index_dims.end(), d) -
                           index_dims.begin());
  }
  // Result: a copy of the operands.
  const Shape& rs = instr.shape();
  std::vector<Literal> results;
  for (size_t i = 0; i < n; ++i) {
    const Shape& s = rs.IsTuple() && static_cast<int64_t>(i) < rs.tuple_size()
                         ? rs.tuple_shape(i)
                         : rs;
    if ((rs.IsTuple() ? rs.tuple_size() != static_cast<int64_t>(n) : n != 1) ||
        !s.IsArray() || s.dims() != odims ||
        s.element_type() != operands[i]->element_type() ||
        updates[i]->element_type() != s.element_type()) {
      return Invalid(instr, "result shape does not match the operands");
    }
    results.emplace_back(s);
    std::copy(operands[i]->bytes().begin(), operands[i]->bytes().end(),
              results.back().mutable_bytes().begin());
  }

  const std::vector<int64_t> ostr = Strides(odims), ustr = Strides(udims);
  const std::vector<int64_t> istr = Strides(indices.shape().dims());
  std::vector<int64_t> w_ostr, w_ustr, s_ustr, s_istr;
  for (size_t i = 0; i < window_operand_dims.size(); ++i) {
    w_ostr.push_back(ostr[window_operand_dims[i]]);
    w_ustr.push_back(ustr[dn.update_window_dims[i]]);
  }
  for (size_t i = 0; i < index_dims.size(); ++i) {
    s_ustr.push_back(ustr[scatter_udims[i]]);
    s_istr.push_back(istr[index_dims[i]]);
  }

  const PrimitiveType t = operands[0]->element_type();
  const ReducerKind kind = n == 1 && !IsComplex(t)
                               ? ClassifyReducer(*instr.to_apply(), t)
                               : ReducerKind::kNone;
  std::vector<Literal> cur, upd, returned;
  std::vector<const Literal*> args;
  std::vector<PrimitiveType> types;
  for (size_t i = 0; i < n; ++i) {
    cur.push_back(MakeScalar(operands[i]->element_type()));
    upd.push_back(MakeScalar(operands[i]->element_type()));
    types.push_back(operands[i]->element_type());
  }
  for (Literal& c : cur) args.push_back(&c);
  for (Literal& u : upd) args.push_back(&u);

  Literal scalar = MakeScalar(indices.element_type());
  std::vector<int64_t> sidx(scatter_counts.size(), 0), start(orank);
  const int64_t positions = Product(scatter_counts);
  Status status;
  for (int64_t p = 0; p < positions; ++p, NextIndex(scatter_counts, sidx)) {
    int64_t ibase = 0, ubase = 0;
    for (size_t i = 0; i < sidx.size(); ++i) {
      ibase += sidx[i] * s_istr[i];
      ubase += sidx[i] * s_ustr[i];
    }
    std::fill(start.begin(), start.end(), 0);
    for (int64_t k = 0; k < vec_len; ++k) {
      LoadScalar(indices, ibase + (ivd == irank ? 0 : k * istr[ivd]), scalar);
      start[dn.scatter_dims_to_operand_dims[k]] = ScalarIndexValue(scalar);
    }
    for (size_t i = 0; i < batching_pos.size(); ++i) {
      start[dn.input_batching_dims[i]] = sidx[batching_pos[i]];
    }
    bool in_bounds = true;
    int64_t obase = 0;
    for (int64_t d = 0; d < orank; ++d) {
      if (start[d] < 0 || start[d] > odims[d] - wsize[d]) in_bounds = false;
      obase += start[d] * ostr[d];
    }
    if (!in_bounds) continue;
    if (kind != ReducerKind::kNone) {
      DispatchArrayType(t, [&]<PrimitiveType T>() {
        using N = NativeT<T>;
        if constexpr (T != PrimitiveType::C64 && T != PrimitiveType::C128) {
          N* r = results[0].mutable_data<N>().data();
          const N* u = updates[0]->data<N>().data();
          ForEachBox(wcounts, w_ostr, w_ustr, [&](int64_t oo, int64_t uo) {
            r[obase + oo] = ApplyReducer(kind, r[obase + oo], u[ubase + uo]);
          });
        }
      });
      continue;
    }
    ForEachBox(wcounts, w_ostr, w_ustr, [&](int64_t oo, int64_t uo) {
      if (!status.ok()) return;
      for (size_t i = 0; i < n; ++i) {
        LoadScalar(results[i], obase + oo, cur[i]);
        LoadScalar(*updates[i], ubase + uo, upd[i]);
      }
      status = CallScalars(ctx, *instr.to_apply(), args, types, &returned);
      if (!status.ok()) return;
      for (size_t i = 0; i < n; ++i)
        StoreScalar(returned[i], results[i], obase + oo);
    });
    RETURN_IF_ERROR(status);
  }
  if (!rs.IsTuple()) return std::move(results[0]);
  return Literal::Tuple(std::move(results));
}

}  // namespace trench::oracle
