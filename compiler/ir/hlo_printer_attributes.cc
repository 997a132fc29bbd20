// Instruction attributes as text, in the syntax hlo_parser_attributes.cc
// reads. A typed attribute is printed when it is present (or differs from
// its default), or when its opcode always carries it.
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer_internal.h"

namespace trench::hlo_printer_internal {
namespace {

std::string IntList(const std::vector<int64_t>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(v[i]);
  }
  return s + "}";
}

// "3x3"
std::string XList(const std::vector<WindowDim>& w, int64_t WindowDim::*f) {
  std::string s;
  for (size_t i = 0; i < w.size(); ++i) {
    if (i) s += "x";
    s += std::to_string(w[i].*f);
  }
  return s;
}

bool AnyNot(const std::vector<WindowDim>& w, int64_t WindowDim::*f,
            int64_t dflt) {
  for (const WindowDim& d : w) {
    if (d.*f != dflt) return true;
  }
  return false;
}

std::string Window(const std::vector<WindowDim>& w) {
  if (w.empty()) return "{}";
  std::string s = "{size=" + XList(w, &WindowDim::size);
  if (AnyNot(w, &WindowDim::stride, 1)) {
    s += " stride=" + XList(w, &WindowDim::stride);
  }
  if (AnyNot(w, &WindowDim::pad_lo, 0) || AnyNot(w, &WindowDim::pad_hi, 0)) {
    s += " pad=";
    for (size_t i = 0; i < w.size(); ++i) {
      if (i) s += "x";
      s += std::to_string(w[i].pad_lo) + "_" + std::to_string(w[i].pad_hi);
    }
  }
  if (AnyNot(w, &WindowDim::base_dilation, 1)) {
    s += " lhs_dilate=" + XList(w, &WindowDim::base_dilation);
  }
  if (AnyNot(w, &WindowDim::window_dilation, 1)) {
    s += " rhs_dilate=" + XList(w, &WindowDim::window_dilation);
  }
  bool reversal = false;
  for (const WindowDim& d : w) reversal |= d.reversal;
  if (reversal) {
    s += " rhs_reversal=";
    for (size_t i = 0; i < w.size(); ++i) {
      s += (i ? "x" : "") + std::to_string(w[i].reversal ? 1 : 0);
    }
  }
  return s + "}";
}

// One dim_labels group; '?' marks an index that is out of range.
std::string LabelGroup(int64_t d0, int64_t d1, const std::vector<int64_t>& sp,
                       char c0, char c1) {
  std::string s(sp.size() + 2, '?');
  auto put = [&](int64_t at, char c) {
    if (at >= 0 && at < static_cast<int64_t>(s.size())) s[at] = c;
  };
  put(d0, c0);
  put(d1, c1);
  for (size_t k = 0; k < sp.size() && k < 10; ++k) put(sp[k], '0' + k);
  return s;
}

std::string DimLabels(const ConvDimNumbers& d) {
  return LabelGroup(d.input_batch, d.input_feature, d.input_spatial, 'b', 'f') +
         "_" +
         LabelGroup(d.kernel_input_feature, d.kernel_output_feature,
                    d.kernel_spatial, 'i', 'o') +
         "->" +
         LabelGroup(d.output_batch, d.output_feature, d.output_spatial, 'b',
                    'f');
}

std::string Padding(const std::vector<PaddingDim>& p) {
  bool interior = false;
  for (const PaddingDim& d : p) interior |= d.interior != 0;
  std::string s;
  for (size_t i = 0; i < p.size(); ++i) {
    if (i) s += "x";
    s += std::to_string(p[i].lo) + "_" + std::to_string(p[i].hi);
    if (interior) s += "_" + std::to_string(p[i].interior);
  }
  return s;
}

std::string Slice(const std::vector<SliceDim>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ", ";
    s += "[" + std::to_string(v[i].start) + ":" + std::to_string(v[i].limit);
    if (v[i].stride != 1) s += ":" + std::to_string(v[i].stride);
    s += "]";
  }
  return s + "}";
}

std::string Precisions(const std::vector<Precision>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ",";
    s += v[i] == Precision::kHighest ? "highest"
         : v[i] == Precision::kHigh  ? "high"
                                     : "default";
  }
  return s + "}";
}

using Attrs = std::vector<std::pair<std::string, std::string>>;

void AddGather(const HloAttributes& a, Attrs* out) {
  if (a.gather_dnums) {
    const GatherDimNumbers& g = *a.gather_dnums;
    out->emplace_back("offset_dims", IntList(g.offset_dims));
    out->emplace_back("collapsed_slice_dims", IntList(g.collapsed_slice_dims));
    out->emplace_back("start_index_map", IntList(g.start_index_map));
    if (!g.operand_batching_dims.empty()) {
      out->emplace_back("operand_batching_dims",
                        IntList(g.operand_batching_dims));
    }
    if (!g.start_indices_batching_dims.empty()) {
      out->emplace_back("start_indices_batching_dims",
                        IntList(g.start_indices_batching_dims));
    }
    out->emplace_back("index_vector_dim", std::to_string(g.index_vector_dim));
  }
  if (!a.gather_slice_sizes.empty()) {
    out->emplace_back("slice_sizes", IntList(a.gather_slice_sizes));
  }
  if (a.scatter_dnums) {
    const ScatterDimNumbers& s = *a.scatter_dnums;
    out->emplace_back("update_window_dims", IntList(s.update_window_dims));
    out->emplace_back("inserted_window_dims", IntList(s.inserted_window_dims));
    out->emplace_back("scatter_dims_to_operand_dims",
                      IntList(s.scatter_dims_to_operand_dims));
    if (!s.input_batching_dims.empty()) {
      out->emplace_back("input_batching_dims", IntList(s.input_batching_dims));
    }
    if (!s.scatter_indices_batching_dims.empty()) {
      out->emplace_back("scatter_indices_batching_dims",
                        IntList(s.scatter_indices_batching_dims));
    }
    out->emplace_back("index_vector_dim", std::to_string(s.index_vector_dim));
  }
}

void AddTyped(const HloInstruction& instr, Attrs* out) {
  const HloAttributes& a = instr.attrs();
  const HloOpcode op = instr.opcode();
  if (a.has_dimensions) out->emplace_back("dimensions", IntList(a.dimensions));
  if (!a.slice.empty()) out->emplace_back("slice", Slice(a.slice));
  if (!a.padding.empty()) out->emplace_back("padding", Padding(a.padding));
  if (a.window) out->emplace_back("window", Window(*a.window));
  if (a.conv_dnums) out->emplace_back("dim_labels", DimLabels(*a.conv_dnums));
  if (a.feature_group_count != 1) {
    out->emplace_back("feature_group_count",
                      std::to_string(a.feature_group_count));
  }
  if (a.batch_group_count != 1) {
    out->emplace_back("batch_group_count", std::to_string(a.batch_group_count));
  }
  if (a.dot_dnums) {
    const DotDimNumbers& d = *a.dot_dnums;
    if (!d.lhs_batch.empty())
      out->emplace_back("lhs_batch_dims", IntList(d.lhs_batch));
    out->emplace_back("lhs_contracting_dims", IntList(d.lhs_contracting));
    if (!d.rhs_batch.empty())
      out->emplace_back("rhs_batch_dims", IntList(d.rhs_batch));
    out->emplace_back("rhs_contracting_dims", IntList(d.rhs_contracting));
  }
  if (!a.operand_precision.empty()) {
    out->emplace_back("operand_precision", Precisions(a.operand_precision));
  }
  if (op == HloOpcode::kCompare) {
    out->emplace_back("direction",
                      ComparisonDirectionName(a.comparison_direction));
    if (a.comparison_type != ComparisonType::kUnset) {
      out->emplace_back("type", ComparisonTypeName(a.comparison_type));
    }
  }
  if (op == HloOpcode::kGetTupleElement) {
    out->emplace_back("index", std::to_string(a.tuple_index));
  }
  if (op == HloOpcode::kIota || a.iota_dimension != 0) {
    out->emplace_back("iota_dimension", std::to_string(a.iota_dimension));
  }
  if (op == HloOpcode::kReducePrecision || a.exponent_bits != 0 ||
      a.mantissa_bits != 0) {
    out->emplace_back("exponent_bits", std::to_string(a.exponent_bits));
    out->emplace_back("mantissa_bits", std::to_string(a.mantissa_bits));
  }
  if (!a.dynamic_slice_sizes.empty()) {
    out->emplace_back("dynamic_slice_sizes", IntList(a.dynamic_slice_sizes));
  }
  AddGather(a, out);
  if (a.indices_are_sorted) out->emplace_back("indices_are_sorted", "true");
  if (a.unique_indices) out->emplace_back("unique_indices", "true");
  if (a.is_stable) out->emplace_back("is_stable", "true");
  if (op == HloOpcode::kFusion) {
    out->emplace_back("kind", FusionKindName(a.fusion_kind));
  }
}

void AddCallees(const HloInstruction& instr, bool percent, Attrs* out) {
  auto Ref = [&](const HloComputation* c) {
    return (percent ? "%" : "") + (c ? c->name() : std::string("<null>"));
  };
  const auto& called = instr.called_computations();
  const size_t n = called.size();
  if (n == 0) return;
  const HloOpcode op = instr.opcode();
  auto pair = [&](const char* k0, const char* k1) {
    out->emplace_back(k0, Ref(called[0]));
    out->emplace_back(k1, Ref(called[1]));
  };
  auto list = [&](const char* key) {
    std::string s = "{";
    for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + Ref(called[i]);
    out->emplace_back(key, s + "}");
  };
  if (op == HloOpcode::kWhile && n == 2) {
    pair("condition", "body");
  } else if (op == HloOpcode::kSelectAndScatter && n == 2) {
    pair("select", "scatter");
  } else if (op == HloOpcode::kConditional) {
    const bool pred_form =
        n == 2 && instr.operand_count() > 0 &&
        instr.operand(0)->shape().element_type() == PrimitiveType::PRED;
    if (pred_form) {
      pair("true_computation", "false_computation");
    } else {
      list("branch_computations");
    }
  } else if (op == HloOpcode::kCustomCall || n > 1) {
    list("called_computations");
  } else if (op == HloOpcode::kFusion || op == HloOpcode::kAsyncStart) {
    out->emplace_back("calls", Ref(called[0]));
  } else {
    out->emplace_back("to_apply", Ref(called[0]));
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> InstructionAttributes(
    const HloInstruction& instr, bool percent) {
  Attrs out;
  AddTyped(instr, &out);
  AddCallees(instr, percent, &out);
  const auto& preds = instr.control_predecessors();
  if (!preds.empty()) {
    std::string s = "{";
    for (size_t i = 0; i < preds.size(); ++i) {
      s += (i ? ", " : "") + std::string(percent ? "%" : "") + preds[i]->name();
    }
    out.emplace_back("control-predecessors", s + "}");
  }
  for (const auto& [k, v] : instr.attrs().raw) {
    if (k != kAsyncWrappedOpcodeKey) out.emplace_back(k, v);
  }
  return out;
}

}  // namespace trench::hlo_printer_internal
