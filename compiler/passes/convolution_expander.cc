#include "compiler/passes/convolution_expander.h"

#include <algorithm>

#include "compiler/passes/pass_util.h"

namespace trench {
namespace {

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// Builds the expansion's instructions next to `conv`. Intermediate shapes
// get the default layout when the convolution's shape has a layout (so a
// laid-out module stays consistently laid out), none otherwise.
class Builder {
 public:
  Builder(HloInstruction* conv, NameUniquer* names)
      : comp_(conv->parent()),
        names_(names),
        like_(conv->shape()),
        base_(conv->name()) {}

  Shape MakeShape(PrimitiveType t, std::vector<int64_t> dims) const {
    Shape s(t, std::move(dims));
    if (like_.has_layout()) {
      Layout l;
      for (int64_t d = s.rank() - 1; d >= 0; --d) l.minor_to_major.push_back(d);
      s.set_layout(std::move(l));
    }
    return s;
  }

  HloInstruction* Add(HloOpcode op, PrimitiveType t, std::vector<int64_t> dims,
                      std::vector<HloInstruction*> operands,
                      const std::string& what) {
    return AddNew(comp_, names_, op, MakeShape(t, std::move(dims)),
                  std::move(operands), base_ + "." + what);
  }

  static std::vector<int64_t> Dims(const HloInstruction* x) {
    return x->shape().dims();
  }
  static PrimitiveType Type(const HloInstruction* x) {
    return x->shape().element_type();
  }

  HloInstruction* Convert(HloInstruction* x, PrimitiveType t) {
    if (Type(x) == t) return x;
    return Add(HloOpcode::kConvert, t, Dims(x), {x}, "convert");
  }

  HloInstruction* Transpose(HloInstruction* x,
                            const std::vector<int64_t>& perm) {
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == int64_t(i);
    if (identity) return x;
    std::vector<int64_t> dims;
    for (int64_t d : perm) dims.push_back(x->shape().dim(d));
    HloInstruction* t =
        Add(HloOpcode::kTranspose, Type(x), dims, {x}, "transpose");
    t->mutable_attrs().dimensions = perm;
    t->mutable_attrs().has_dimensions = true;
    return t;
  }

  HloInstruction* Reshape(HloInstruction* x, const std::vector<int64_t>& dims) {
    if (Dims(x) == dims) return x;
    return Add(HloOpcode::kReshape, Type(x), dims, {x}, "reshape");
  }

  // A scalar `value` of type t broadcast to `dims`.
  HloInstruction* Splat(PrimitiveType t, const std::vector<int64_t>& dims,
                        int64_t value) {
    Literal lit(MakeShape(t, {}));
    if (value != 0) lit.SetFromInt64(0, value);
    HloInstruction* c = comp_->AddInstruction(HloInstruction::CreateConstant(
        std::move(lit), names_->Get(base_ + ".constant")));
    HloInstruction* b = Add(HloOpcode::kBroadcast, t, dims, {c}, "broadcast");
    b->mutable_attrs().has_dimensions = true;
    return b;
  }

  // Slice of x along dim d: [start, limit) with `stride`.
  HloInstruction* Slice(HloInstruction* x, int64_t d, int64_t start,
                        int64_t limit, int64_t stride) {
    std::vector<SliceDim> sl = Full(x);
    sl[d] = {start, limit, stride};
    return Slice(x, sl);
  }

  // [0, n) with stride 1 in every dim of x.
  static std::vector<SliceDim> Full(const HloInstruction* x) {
    std::vector<SliceDim> sl;
    for (int64_t n : Dims(x)) sl.push_back({0, n, 1});
    return sl;
  }

  HloInstruction* Slice(HloInstruction* x, const std::vector<SliceDim>& sl) {
    if (sl == Full(x)) return x;
    std::vector<int64_t> dims;
    for (const SliceDim& s : sl) {
      dims.push_back((s.limit - s.start + s.stride - 1) / s.stride);
    }
    HloInstruction* s = Add(HloOpcode::kSlice, Type(x), dims, {x}, "slice");
    s->mutable_attrs().slice = sl;
    return s;
  }

  HloInstruction* Concat(const std::vector<HloInstruction*>& xs, int64_t d) {
    if (xs.size() == 1) return xs[0];
    std::vector<int64_t> dims = Dims(xs[0]);
    dims[d] = 0;
    for (HloInstruction* x : xs) dims[d] += x->shape().dim(d);
    HloInstruction* c =
        Add(HloOpcode::kConcatenate, Type(xs[0]), dims, xs, "concatenate");
    c->mutable_attrs().dimensions = {d};
    c->mutable_attrs().has_dimensions = true;
    return c;
  }

  // Interleaves bd - 1 zeros between the elements of dim d (base dilation).
  HloInstruction* Dilate(HloInstruction* x, int64_t d, int64_t bd) {
    std::vector<int64_t> dims = Dims(x);
    const int64_t n = dims[d];
    if (bd == 1 || n <= 1) return x;
    std::vector<int64_t> split = dims;
    split.insert(split.begin() + d + 1, 1);
    std::vector<int64_t> zdims = split;
    zdims[d + 1] = bd - 1;
    HloInstruction* c =
        Concat({Reshape(x, split), Splat(Type(x), zdims, 0)}, d + 1);
    std::vector<int64_t> merged = dims;
    merged[d] = n * bd;
    return Slice(Reshape(c, merged), d, 0, (n - 1) * bd + 1, 1);
  }

  // Edge padding of dim d by lo / hi (negative values crop).
  HloInstruction* Pad(HloInstruction* x, int64_t d, int64_t lo, int64_t hi) {
    std::vector<int64_t> dims = Dims(x);
    const int64_t n = dims[d];
    const int64_t start = std::max<int64_t>(0, -lo);
    const int64_t end = std::min(n, n + hi);
    if (end <= start) {
      dims[d] = n + lo + hi;
      return Splat(Type(x), dims, 0);
    }
    std::vector<HloInstruction*> parts;
    if (lo > 0) {
      dims[d] = lo;
      parts.push_back(Splat(Type(x), dims, 0));
    }
    parts.push_back(Slice(x, d, start, end, 1));
    if (hi > 0) {
      dims[d] = hi;
      parts.push_back(Splat(Type(x), dims, 0));
    }
    return Concat(parts, d);
  }

  HloComputation* comp() { return comp_; }

 private:
  HloComputation* comp_;
  NameUniquer* names_;
  Shape like_;
  std::string base_;
};

// Result type -> accumulation type of the dot (see the header).
PrimitiveType AccumulationType(PrimitiveType rt) {
  if (IsFloat(rt)) return rt;
  if (rt == PrimitiveType::PRED) return PrimitiveType::S32;
  return IsUnsigned(rt) ? PrimitiveType::U64 : PrimitiveType::S64;
}

Status Expand(HloInstruction* conv, NameUniquer* names) {
  Builder b(conv, names);
  const HloAttributes& at = conv->attrs();
  const ConvDimNumbers dn = *at.conv_dnums;
  const std::vector<WindowDim> window =
      at.window.value_or(std::vector<WindowDim>());
  const int64_t ns = dn.input_spatial.size();
  const Shape out_shape = conv->shape();
  const PrimitiveType rt = out_shape.element_type();
  HloInstruction* lhs = conv->operand(0);
  HloInstruction* rhs = conv->operand(1);
  const int64_t fgc = at.feature_group_count, bgc = at.batch_group_count;
  const int64_t batch = lhs->shape().dim(dn.input_batch);
  const int64_t ifg = rhs->shape().dim(dn.kernel_input_feature);
  const int64_t ofeat = rhs->shape().dim(dn.kernel_output_feature);
  std::vector<int64_t> ksizes, osizes;
  for (int64_t i = 0; i < ns; ++i) {
    ksizes.push_back(rhs->shape().dim(dn.kernel_spatial[i]));
    osizes.push_back(out_shape.dim(dn.output_spatial[i]));
  }
  const int64_t positions = Product(ksizes);
  if (out_shape.element_count() == 0 || positions == 0 || ifg == 0) {
    HloInstruction* zero = b.Splat(rt, out_shape.dims(), 0);
    zero->set_shape(out_shape);
    return ReplaceInstruction(conv, zero);
  }

  // 1. Operand types.
  const PrimitiveType ct = AccumulationType(rt);
  const PrimitiveType wrap = rt == PrimitiveType::PRED ? PrimitiveType::U8 : rt;
  HloInstruction* x = b.Convert(b.Convert(lhs, wrap), ct);
  HloInstruction* w = b.Convert(b.Convert(rhs, wrap), ct);

  // 2. Input as [batch, spatial.., feature], dilated and padded.
  std::vector<int64_t> lperm{dn.input_batch};
  lperm.insert(lperm.end(), dn.input_spatial.begin(), dn.input_spatial.end());
  lperm.push_back(dn.input_feature);
  x = b.Transpose(x, lperm);
  for (int64_t i = 0; i < ns; ++i) {
    x = b.Dilate(x, 1 + i, window[i].base_dilation);
    x = b.Pad(x, 1 + i, window[i].pad_lo, window[i].pad_hi);
  }

  // 3. Patches [batch, out spatial.., positions, feature].
  std::vector<HloInstruction*> patches;
  std::vector<int64_t> kr(ns, 0);
  for (int64_t p = 0; p < positions; ++p) {
    std::vector<SliceDim> sl = Builder::Full(x);
    for (int64_t i = 0; i < ns; ++i) {
      const WindowDim& wd = window[i];
      const int64_t k = wd.reversal ? ksizes[i] - 1 - kr[i] : kr[i];
      const int64_t start = k * wd.window_dilation;
      sl[1 + i] = {start, start + (osizes[i] - 1) * wd.stride + 1, wd.stride};
    }
    HloInstruction* s = b.Slice(x, sl);
    std::vector<int64_t> dims = Builder::Dims(s);
    dims.insert(dims.begin() + 1 + ns, 1);
    patches.push_back(b.Reshape(s, dims));
    for (int64_t i = ns - 1; i >= 0; --i) {  // Next kernel position.
      if (++kr[i] < ksizes[i]) break;
      kr[i] = 0;
    }
  }
  HloInstruction* pt = b.Concat(patches, 1 + ns);

  // 4. Kernel as [positions, input feature, output feature]; the dot.
  std::vector<int64_t> rperm(dn.kernel_spatial);
  rperm.push_back(dn.kernel_input_feature);
  rperm.push_back(dn.kernel_output_feature);
  w = b.Transpose(w, rperm);
  const int64_t groups = std::max(fgc, bgc);
  const int64_t og = ofeat / groups;
  const int64_t out_batch = batch / bgc;
  DotDimNumbers ddn;
  std::vector<int64_t> pdims = Builder::Dims(pt);  // [B, O.., KK, C]
  std::vector<int64_t> ddims;                      // The dot's result dims.
  if (groups == 1) {
    w = b.Reshape(w, {positions, ifg, ofeat});
    ddn.lhs_contracting = {ns + 1, ns + 2};
    ddn.rhs_contracting = {0, 1};
    ddims = pdims;
    ddims.resize(ns + 1);
    ddims.push_back(ofeat);
  } else {
    w = b.Reshape(w, {positions, ifg, groups, og});
    ddn.rhs_batch = {2};
    ddn.rhs_contracting = {0, 1};
    if (fgc > 1) {  // [B, O.., KK, G, IFG]
      pdims.back() = groups;
      pdims.push_back(ifg);
      pt = b.Reshape(pt, pdims);
      ddn.lhs_batch = {ns + 2};
      ddn.lhs_contracting = {ns + 1, ns + 3};
    } else {  // [G, BG, O.., KK, C]
      pdims[0] = out_batch;
      pdims.insert(pdims.begin(), groups);
      pt = b.Reshape(pt, pdims);
      ddn.lhs_batch = {0};
      ddn.lhs_contracting = {ns + 2, ns + 3};
    }
    ddims = {groups, out_batch};
    ddims.insert(ddims.end(), osizes.begin(), osizes.end());
    ddims.push_back(og);
  }
  HloInstruction* dot = b.Add(HloOpcode::kDot, ct, ddims, {pt, w}, "dot");
  dot->mutable_attrs().dot_dnums = ddn;
  dot->mutable_attrs().operand_precision = at.operand_precision;
  HloInstruction* y = dot;
  if (groups > 1) {  // [G, Bx, O.., OG] -> [Bx, O.., G * OG]
    std::vector<int64_t> perm;
    for (int64_t i = 1; i <= ns + 1; ++i) perm.push_back(i);
    perm.push_back(0);
    perm.push_back(ns + 2);
    y = b.Transpose(y, perm);
    std::vector<int64_t> dims{out_batch};
    dims.insert(dims.end(), osizes.begin(), osizes.end());
    dims.push_back(ofeat);
    y = b.Reshape(y, dims);
  }

  // 5. Back to the result type, then to the output dim order.
  const std::vector<int64_t> cdims = Builder::Dims(y);
  if (rt == PrimitiveType::PRED) {
    HloInstruction* cmp = b.Add(HloOpcode::kCompare, rt, cdims,
                                {y, b.Splat(ct, cdims, 0)}, "compare");
    cmp->mutable_attrs().comparison_direction = ComparisonDirection::kNe;
    y = cmp;
  } else if (IsInteger(rt) && BitWidth(rt) < 64) {
    const int bits = BitWidth(rt);
    if (IsUnsigned(rt)) {
      y = b.Add(HloOpcode::kMinimum, ct, cdims,
                {y, b.Splat(ct, cdims, (int64_t{1} << bits) - 1)}, "minimum");
    } else {
      const int64_t hi = (int64_t{1} << (bits - 1)) - 1;
      y = b.Add(HloOpcode::kClamp, ct, cdims,
                {b.Splat(ct, cdims, -hi - 1), y, b.Splat(ct, cdims, hi)},
                "clamp");
    }
    y = b.Convert(y, rt);
  }
  std::vector<int64_t> operm(ns + 2);
  operm[dn.output_batch] = 0;
  operm[dn.output_feature] = ns + 1;
  for (int64_t i = 0; i < ns; ++i) operm[dn.output_spatial[i]] = 1 + i;
  HloInstruction* result = b.Transpose(y, operm);
  result->set_shape(out_shape);  // A new instruction: the dot or later.
  return ReplaceInstruction(conv, result);
}

}  // namespace

StatusOr<bool> ConvolutionExpander::Run(HloModule* module, PassContext* ctx) {
  NameUniquer names(*module);
  bool changed = false;
  for (HloComputation* comp : module->computations()) {
    for (HloInstruction* instr : comp->MakeInstructionPostOrder()) {
      if (instr->opcode() != HloOpcode::kConvolution ||
          !instr->attrs().conv_dnums || instr->operand_count() != 2 ||
          !instr->shape().IsArray() || instr->shape().is_dynamic() ||
          instr->operand(0)->shape().is_dynamic() ||
          instr->operand(1)->shape().is_dynamic() ||
          !instr->control_predecessors().empty() ||
          !ctx->ShouldRewrite(name(), "expand-convolution", instr->name())) {
        continue;
      }
      RETURN_IF_ERROR(Expand(instr, &names));
      changed = true;
    }
  }
  return changed;
}

}  // namespace trench
