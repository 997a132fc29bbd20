// Typed attributes of HLO instructions. Each field is meaningful only for
// the opcodes named in its comment; the parser fills them from XLA's
// attribute syntax and the printer writes them back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trench {

struct SliceDim {  // slice={[start:limit:stride], ...}
  int64_t start = 0, limit = 0, stride = 1;
  bool operator==(const SliceDim&) const = default;
};

struct PaddingDim {  // padding=lo_hi_interior x ...
  int64_t lo = 0, hi = 0, interior = 0;
  bool operator==(const PaddingDim&) const = default;
};

struct WindowDim {  // window={size=.. stride=.. pad=lo_hi lhs_dilate= ...}
  int64_t size = 1, stride = 1, pad_lo = 0, pad_hi = 0;
  int64_t base_dilation = 1;    // lhs_dilate
  int64_t window_dilation = 1;  // rhs_dilate
  bool reversal = false;        // rhs_reversal
  bool operator==(const WindowDim&) const = default;
};

// dim_labels=b01f_01io->b01f, stored as dimension numbers.
struct ConvDimNumbers {
  int64_t input_batch = 0, input_feature = 0;
  std::vector<int64_t> input_spatial;
  int64_t kernel_input_feature = 0, kernel_output_feature = 0;
  std::vector<int64_t> kernel_spatial;
  int64_t output_batch = 0, output_feature = 0;
  std::vector<int64_t> output_spatial;
  bool operator==(const ConvDimNumbers&) const = default;
};

struct DotDimNumbers {
  std::vector<int64_t> lhs_batch, lhs_contracting;
  std::vector<int64_t> rhs_batch, rhs_contracting;
  bool operator==(const DotDimNumbers&) const = default;
};

struct GatherDimNumbers {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, start_index_map;
  std::vector<int64_t> operand_batching_dims, start_indices_batching_dims;
  int64_t index_vector_dim = 0;
  bool operator==(const GatherDimNumbers&) const = default;
};

struct ScatterDimNumbers {
  std::vector<int64_t> update_window_dims, inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  std::vector<int64_t> input_batching_dims, scatter_indices_batching_dims;
  int64_t index_vector_dim = 0;
  bool operator==(const ScatterDimNumbers&) const = default;
};

enum class Precision { kDefault, kHigh, kHighest };
enum class ComparisonDirection { kEq, kNe, kLt, kLe, kGt, kGe };
// kUnset: no type= attribute; the default for the element type applies.
enum class ComparisonType { kUnset, kFloat, kTotalOrder, kSigned, kUnsigned };
enum class FusionKind { kLoop, kInput, kOutput, kCustom };

const char* PrecisionName(Precision p);  // "DEFAULT", "HIGH", "HIGHEST"
const char* ComparisonDirectionName(ComparisonDirection d);  // "EQ", ...
const char* ComparisonTypeName(ComparisonType t);  // "FLOAT", "TOTALORDER"..
const char* FusionKindName(FusionKind k);          // "kLoop", ...

// All typed attributes. Unset optionals and empty vectors mean "absent".
struct HloAttributes {
  // parameter
  int64_t parameter_number = 0;
  // get-tuple-element: index=
  int64_t tuple_index = 0;
  // iota: iota_dimension=
  int64_t iota_dimension = 0;
  // broadcast, transpose, reduce, reverse, concatenate, sort, map,
  // reduce-scatter, all-gather...: dimensions={...}
  std::vector<int64_t> dimensions;
  bool has_dimensions = false;  // Printed even when empty (dimensions={}).
  // slice
  std::vector<SliceDim> slice;
  // dynamic-slice: dynamic_slice_sizes=
  std::vector<int64_t> dynamic_slice_sizes;
  // pad: padding=
  std::vector<PaddingDim> padding;
  // convolution, reduce-window, select-and-scatter: window=
  std::optional<std::vector<WindowDim>> window;
  // convolution
  std::optional<ConvDimNumbers> conv_dnums;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  // dot (and convolution's operand_precision)
  std::optional<DotDimNumbers> dot_dnums;
  std::vector<Precision> operand_precision;
  // gather / scatter
  std::optional<GatherDimNumbers> gather_dnums;
  std::vector<int64_t> gather_slice_sizes;
  std::optional<ScatterDimNumbers> scatter_dnums;
  bool indices_are_sorted = false;
  bool unique_indices = false;
  // compare
  ComparisonDirection comparison_direction = ComparisonDirection::kEq;
  ComparisonType comparison_type = ComparisonType::kUnset;
  // reduce-precision
  int64_t exponent_bits = 0, mantissa_bits = 0;
  // sort
  bool is_stable = false;
  // fusion
  FusionKind fusion_kind = FusionKind::kLoop;

  // Attributes kept verbatim, in their original order: metadata,
  // backend_config, frontend_attributes, sharding, custom_call_target and
  // everything the parser does not model. (key, value text).
  std::vector<std::pair<std::string, std::string>> raw;

  // The raw value of `key`, or nullptr.
  const std::string* FindRaw(const std::string& key) const;

  bool operator==(const HloAttributes&) const = default;
};

}  // namespace trench
