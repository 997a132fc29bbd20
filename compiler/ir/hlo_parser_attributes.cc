// Typed instruction attributes: one small parser per XLA attribute syntax,
// selected from a table by key (and, for keys whose meaning depends on the
// op, by opcode). Other names XLA's parser knows are kept raw; any other
// name is refused (CheckAttributeName).
#include <algorithm>
#include <cctype>
#include <string>
#include <unordered_set>

#include "compiler/ir/hlo_parser_internal.h"

namespace trench::hlo_parser_internal {
namespace {

using Handler = Status (*)(HloLexer&, HloInstruction*, AttributeContext*);

HloAttributes& A(HloInstruction* instr) { return instr->mutable_attrs(); }

// {1, 2, 3}
Status ParseIntList(HloLexer& lex, std::vector<int64_t>* out) {
  out->clear();
  RETURN_IF_ERROR(lex.Expect('{'));
  if (lex.TryConsume('}')) return Status::Ok();
  do {
    ASSIGN_OR_RETURN(int64_t v, lex.ParseInt("integer"));
    out->push_back(v);
  } while (lex.TryConsume(','));
  return lex.Expect('}');
}

// 3x3x1 (at least one integer).
Status ParseXList(HloLexer& lex, std::vector<int64_t>* out) {
  out->clear();
  do {
    ASSIGN_OR_RETURN(int64_t v, lex.ParseInt("integer"));
    out->push_back(v);
  } while (lex.TryConsume('x'));
  return Status::Ok();
}

Status ParseComputationRef(HloLexer& lex, ComputationRef* ref) {
  lex.SkipSpace();
  ref->pos = lex.pos();
  ASSIGN_OR_RETURN(ref->name, lex.ParseName("computation name"));
  return Status::Ok();
}

Status Slot(HloLexer& lex, std::optional<ComputationRef>* slot) {
  ComputationRef ref;
  RETURN_IF_ERROR(ParseComputationRef(lex, &ref));
  *slot = std::move(ref);
  return Status::Ok();
}

// condition=, true_computation=, select= / body=, false_computation=,
// scatter=: the two computations of a pair.
Status FirstOfPair(HloLexer& lex, HloInstruction*, AttributeContext* ctx) {
  return Slot(lex, &ctx->slot0);
}
Status SecondOfPair(HloLexer& lex, HloInstruction*, AttributeContext* ctx) {
  return Slot(lex, &ctx->slot1);
}

Status OneCallee(HloLexer& lex, HloInstruction*, AttributeContext* ctx) {
  ComputationRef ref;
  RETURN_IF_ERROR(ParseComputationRef(lex, &ref));
  ctx->list.push_back(std::move(ref));
  return Status::Ok();
}

Status CalleeList(HloLexer& lex, HloInstruction*, AttributeContext* ctx) {
  RETURN_IF_ERROR(lex.Expect('{'));
  if (lex.TryConsume('}')) return Status::Ok();
  do {
    ComputationRef ref;
    RETURN_IF_ERROR(ParseComputationRef(lex, &ref));
    ctx->list.push_back(std::move(ref));
  } while (lex.TryConsume(','));
  return lex.Expect('}');
}

Status ControlPredecessors(HloLexer& lex, HloInstruction* instr,
                           AttributeContext* ctx) {
  RETURN_IF_ERROR(lex.Expect('{'));
  if (lex.TryConsume('}')) return Status::Ok();
  do {
    lex.SkipSpace();
    const size_t at = lex.pos();
    ASSIGN_OR_RETURN(std::string name, lex.ParseName("instruction name"));
    auto it = ctx->defined->find(name);
    if (it == ctx->defined->end()) {
      return lex.ErrorAt(at, "control predecessor '" + name +
                                 "' is not defined before its use");
    }
    instr->AddControlPredecessor(it->second);
  } while (lex.TryConsume(','));
  return lex.Expect('}');
}

// {[0:2], [1:5:2]}
Status Slice(HloLexer& lex, HloInstruction* instr, AttributeContext*) {
  auto& out = A(instr).slice;
  out.clear();
  RETURN_IF_ERROR(lex.Expect('{'));
  if (lex.TryConsume('}')) return Status::Ok();
  do {
    SliceDim d;
    RETURN_IF_ERROR(lex.Expect('['));
    ASSIGN_OR_RETURN(d.start, lex.ParseInt("slice start"));
    RETURN_IF_ERROR(lex.Expect(':'));
    ASSIGN_OR_RETURN(d.limit, lex.ParseInt("slice limit"));
    if (lex.TryConsume(':')) {
      ASSIGN_OR_RETURN(d.stride, lex.ParseInt("slice stride"));
    }
    RETURN_IF_ERROR(lex.Expect(']'));
    out.push_back(d);
  } while (lex.TryConsume(','));
  return lex.Expect('}');
}

// lo_hi[_interior]x...
Status Padding(HloLexer& lex, HloInstruction* instr, AttributeContext*) {
  auto& out = A(instr).padding;
  out.clear();
  do {
    PaddingDim d;
    ASSIGN_OR_RETURN(d.lo, lex.ParseInt("low padding"));
    RETURN_IF_ERROR(lex.Expect('_'));
    ASSIGN_OR_RETURN(d.hi, lex.ParseInt("high padding"));
    if (lex.TryConsume('_')) {
      ASSIGN_OR_RETURN(d.interior, lex.ParseInt("interior padding"));
    }
    out.push_back(d);
  } while (lex.TryConsume('x'));
  return Status::Ok();
}

// One window sub-attribute; `n` is the dimension count fixed by the first.
Status WindowField(HloLexer& lex, std::string_view key,
                   std::vector<WindowDim>* dims, bool* sized) {
  const size_t at = lex.pos();
  std::vector<int64_t> a, b;
  if (key == "pad") {
    do {
      ASSIGN_OR_RETURN(int64_t lo, lex.ParseInt("low padding"));
      RETURN_IF_ERROR(lex.Expect('_'));
      ASSIGN_OR_RETURN(int64_t hi, lex.ParseInt("high padding"));
      a.push_back(lo);
      b.push_back(hi);
    } while (lex.TryConsume('x'));
  } else {
    RETURN_IF_ERROR(ParseXList(lex, &a));
  }
  if (!*sized) {
    dims->assign(a.size(), WindowDim{});
    *sized = true;
  } else if (a.size() != dims->size()) {
    return lex.ErrorAt(
        at, "window " + std::string(key) + " has " + std::to_string(a.size()) +
                " dimensions, expected " + std::to_string(dims->size()));
  }
  for (size_t i = 0; i < a.size(); ++i) {
    WindowDim& d = (*dims)[i];
    if (key == "size") d.size = a[i];
    if (key == "stride") d.stride = a[i];
    if (key == "pad") d.pad_lo = a[i], d.pad_hi = b[i];
    if (key == "lhs_dilate") d.base_dilation = a[i];
    if (key == "rhs_dilate") d.window_dilation = a[i];
    if (key == "rhs_reversal") d.reversal = a[i] != 0;
  }
  return Status::Ok();
}

// {size=3x3 stride=1x1 pad=0_0x1_1 lhs_dilate=.. rhs_dilate=.. rhs_reversal=..}
Status Window(HloLexer& lex, HloInstruction* instr, AttributeContext*) {
  std::vector<WindowDim> dims;
  bool sized = false;
  RETURN_IF_ERROR(lex.Expect('{'));
  while (!lex.TryConsume('}')) {
    const size_t at = lex.pos();
    std::string_view key = lex.ConsumeWord();
    if (key != "size" && key != "stride" && key != "pad" &&
        key != "lhs_dilate" && key != "rhs_dilate" && key != "rhs_reversal") {
      lex.set_pos(at);
      return lex.Error(
          "window field (size, stride, pad, lhs_dilate, rhs_dilate, "
          "rhs_reversal) or '}'");
    }
    RETURN_IF_ERROR(lex.Expect('='));
    RETURN_IF_ERROR(WindowField(lex, key, &dims, &sized));
  }
  A(instr).window = std::move(dims);
  return Status::Ok();
}

// Parses one dim_labels group: `batch`/`feature` letters (b,f or i,o),
// digits for spatial dims.
Status LabelGroup(HloLexer& lex, std::string_view text, size_t base, char c0,
                  char c1, int64_t* d0, int64_t* d1,
                  std::vector<int64_t>* spatial) {
  *d0 = *d1 = -1;
  std::vector<int64_t> pos_of(text.size(), -1);
  int n_spatial = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const int64_t p = static_cast<int64_t>(i);
    if (c == c0 && *d0 < 0) {
      *d0 = p;
    } else if (c == c1 && *d1 < 0) {
      *d1 = p;
    } else if (c >= '0' && c <= '9' &&
               c - '0' < static_cast<int>(text.size()) && pos_of[c - '0'] < 0) {
      pos_of[c - '0'] = p;
      ++n_spatial;
    } else {
      return lex.ErrorAt(base + i,
                         std::string("unexpected '") + c + "' in dim_labels");
    }
  }
  if (*d0 < 0 || *d1 < 0) {
    return lex.ErrorAt(base, std::string("dim_labels group '") +
                                 std::string(text) + "' needs '" + c0 +
                                 "' and '" + c1 + "'");
  }
  spatial->clear();
  for (int k = 0; k < n_spatial; ++k) {
    if (pos_of[k] < 0) {
      return lex.ErrorAt(base, "dim_labels group '" + std::string(text) +
                                   "' is missing spatial dimension " +
                                   std::to_string(k));
    }
    spatial->push_back(pos_of[k]);
  }
  return Status::Ok();
}

// b01f_01io->b01f
Status DimLabels(HloLexer& lex, HloInstruction* instr, AttributeContext*) {
  lex.SkipSpace();
  const size_t base = lex.pos();
  std::string_view v = lex.text().substr(base, lex.end() - base);
  const size_t us = v.find('_');
  const size_t arrow = v.find("->");
  if (us == std::string_view::npos || arrow == std::string_view::npos ||
      arrow < us) {
    return lex.ErrorAt(base, "expected dim_labels like b01f_01io->b01f, got '" +
                                 std::string(v) + "'");
  }
  ConvDimNumbers d;
  RETURN_IF_ERROR(LabelGroup(lex, v.substr(0, us), base, 'b', 'f',
                             &d.input_batch, &d.input_feature,
                             &d.input_spatial));
  RETURN_IF_ERROR(LabelGroup(lex, v.substr(us + 1, arrow - us - 1),
                             base + us + 1, 'i', 'o', &d.kernel_input_feature,
                             &d.kernel_output_feature, &d.kernel_spatial));
  RETURN_IF_ERROR(LabelGroup(lex, v.substr(arrow + 2), base + arrow + 2, 'b',
                             'f', &d.output_batch, &d.output_feature,
                             &d.output_spatial));
  if (d.input_spatial.size() != d.kernel_spatial.size() ||
      d.input_spatial.size() != d.output_spatial.size()) {
    return lex.ErrorAt(base,
                       "dim_labels groups have different spatial "
                       "dimension counts");
  }
  A(instr).conv_dnums = std::move(d);
  lex.set_pos(lex.end());
  return Status::Ok();
}

Status OperandPrecision(HloLexer& lex, HloInstruction* instr,
                        AttributeContext*) {
  auto& out = A(instr).operand_precision;
  out.clear();
  RETURN_IF_ERROR(lex.Expect('{'));
  if (lex.TryConsume('}')) return Status::Ok();
  do {
    std::string w(lex.PeekWord());
    std::transform(w.begin(), w.end(), w.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (w == "default") {
      out.push_back(Precision::kDefault);
    } else if (w == "high") {
      out.push_back(Precision::kHigh);
    } else if (w == "highest") {
      out.push_back(Precision::kHighest);
    } else {
      return lex.Error("precision (default, high, highest)");
    }
    lex.ConsumeWord();
  } while (lex.TryConsume(','));
  return lex.Expect('}');
}

template <typename E, size_t N>
Status Enum(HloLexer& lex, const std::pair<const char*, E> (&names)[N],
            std::string_view what, E* out) {
  std::string_view w = lex.PeekWord();
  for (const auto& [name, e] : names) {
    if (w == name) {
      *out = e;
      lex.ConsumeWord();
      return Status::Ok();
    }
  }
  return lex.Error(what);
}

Status Direction(HloLexer& lex, HloInstruction* instr, AttributeContext*) {
  using D = ComparisonDirection;
  static const std::pair<const char*, D> kNames[] = {
      {"EQ", D::kEq}, {"NE", D::kNe}, {"LT", D::kLt},
      {"LE", D::kLe}, {"GT", D::kGt}, {"GE", D::kGe}};
  return Enum(lex, kNames, "comparison direction (EQ, NE, LT, LE, GT, GE)",
              &A(instr).comparison_direction);
}

Status CompareType(HloLexer& lex, HloInstruction* instr, AttributeContext*) {
  using T = ComparisonType;
  static const std::pair<const char*, T> kNames[] = {
      {"FLOAT", T::kFloat},
      {"TOTALORDER", T::kTotalOrder},
      {"SIGNED", T::kSigned},
      {"UNSIGNED", T::kUnsigned}};
  return Enum(lex, kNames,
              "comparison type (FLOAT, TOTALORDER, SIGNED, "
              "UNSIGNED)",
              &A(instr).comparison_type);
}

Status Kind(HloLexer& lex, HloInstruction* instr, AttributeContext*) {
  using K = FusionKind;
  static const std::pair<const char*, K> kNames[] = {{"kLoop", K::kLoop},
                                                     {"kInput", K::kInput},
                                                     {"kOutput", K::kOutput},
                                                     {"kCustom", K::kCustom}};
  return Enum(lex, kNames, "fusion kind (kLoop, kInput, kOutput, kCustom)",
              &A(instr).fusion_kind);
}

// Integer fields.
template <int64_t HloAttributes::*F>
Status Int(HloLexer& lex, HloInstruction* instr, AttributeContext*) {
  ASSIGN_OR_RETURN(A(instr).*F, lex.ParseInt("integer"));
  return Status::Ok();
}

template <bool HloAttributes::*F>
Status Bool(HloLexer& lex, HloInstruction* instr, AttributeContext*) {
  ASSIGN_OR_RETURN(A(instr).*F, lex.ParseBool("true or false"));
  return Status::Ok();
}

template <std::vector<int64_t> HloAttributes::*F>
Status List(HloLexer& lex, HloInstruction* instr, AttributeContext*) {
  return ParseIntList(lex, &(A(instr).*F));
}

Status Dimensions(HloLexer& lex, HloInstruction* instr, AttributeContext*) {
  A(instr).has_dimensions = true;
  return ParseIntList(lex, &A(instr).dimensions);
}

// Lists inside optional dimension-number structs.
template <typename S, std::optional<S> HloAttributes::*Opt,
          std::vector<int64_t> S::*F>
Status DnumList(HloLexer& lex, HloInstruction* instr, AttributeContext*) {
  auto& opt = A(instr).*Opt;
  if (!opt) opt.emplace();
  return ParseIntList(lex, &((*opt).*F));
}

template <typename S, std::optional<S> HloAttributes::*Opt>
Status IndexVectorDim(HloLexer& lex, HloInstruction* instr, AttributeContext*) {
  auto& opt = A(instr).*Opt;
  if (!opt) opt.emplace();
  ASSIGN_OR_RETURN(opt->index_vector_dim, lex.ParseInt("integer"));
  return Status::Ok();
}

using H = HloAttributes;
using G = GatherDimNumbers;
using S = ScatterDimNumbers;
using D = DotDimNumbers;

struct Entry {
  const char* key;
  std::optional<HloOpcode> only;  // Typed only for this opcode.
  Handler handler;
};

const Entry kTable[] = {
    {"dimensions", {}, Dimensions},
    {"slice", {}, Slice},
    {"padding", {}, Padding},
    {"window", {}, Window},
    {"dim_labels", {}, DimLabels},
    {"feature_group_count", {}, Int<&H::feature_group_count>},
    {"batch_group_count", {}, Int<&H::batch_group_count>},
    {"lhs_batch_dims", HloOpcode::kDot,
     DnumList<D, &H::dot_dnums, &D::lhs_batch>},
    {"lhs_contracting_dims", HloOpcode::kDot,
     DnumList<D, &H::dot_dnums, &D::lhs_contracting>},
    {"rhs_batch_dims", HloOpcode::kDot,
     DnumList<D, &H::dot_dnums, &D::rhs_batch>},
    {"rhs_contracting_dims", HloOpcode::kDot,
     DnumList<D, &H::dot_dnums, &D::rhs_contracting>},
    {"operand_precision", {}, OperandPrecision},
    {"direction", HloOpcode::kCompare, Direction},
    {"type", HloOpcode::kCompare, CompareType},
    {"index", HloOpcode::kGetTupleElement, Int<&H::tuple_index>},
    {"iota_dimension", {}, Int<&H::iota_dimension>},
    {"exponent_bits", {}, Int<&H::exponent_bits>},
    {"mantissa_bits", {}, Int<&H::mantissa_bits>},
    {"dynamic_slice_sizes", {}, List<&H::dynamic_slice_sizes>},
    {"offset_dims", HloOpcode::kGather,
     DnumList<G, &H::gather_dnums, &G::offset_dims>},
    {"collapsed_slice_dims", HloOpcode::kGather,
     DnumList<G, &H::gather_dnums, &G::collapsed_slice_dims>},
    {"start_index_map", HloOpcode::kGather,
     DnumList<G, &H::gather_dnums, &G::start_index_map>},
    {"operand_batching_dims", HloOpcode::kGather,
     DnumList<G, &H::gather_dnums, &G::operand_batching_dims>},
    {"start_indices_batching_dims", HloOpcode::kGather,
     DnumList<G, &H::gather_dnums, &G::start_indices_batching_dims>},
    {"index_vector_dim", HloOpcode::kGather,
     IndexVectorDim<G, &H::gather_dnums>},
    {"slice_sizes", HloOpcode::kGather, List<&H::gather_slice_sizes>},
    {"update_window_dims", HloOpcode::kScatter,
     DnumList<S, &H::scatter_dnums, &S::update_window_dims>},
    {"inserted_window_dims", HloOpcode::kScatter,
     DnumList<S, &H::scatter_dnums, &S::inserted_window_dims>},
    {"scatter_dims_to_operand_dims", HloOpcode::kScatter,
     DnumList<S, &H::scatter_dnums, &S::scatter_dims_to_operand_dims>},
    {"input_batching_dims", HloOpcode::kScatter,
     DnumList<S, &H::scatter_dnums, &S::input_batching_dims>},
    {"scatter_indices_batching_dims", HloOpcode::kScatter,
     DnumList<S, &H::scatter_dnums, &S::scatter_indices_batching_dims>},
    {"index_vector_dim", HloOpcode::kScatter,
     IndexVectorDim<S, &H::scatter_dnums>},
    {"indices_are_sorted", {}, Bool<&H::indices_are_sorted>},
    {"unique_indices", {}, Bool<&H::unique_indices>},
    {"is_stable", {}, Bool<&H::is_stable>},
    {"kind", HloOpcode::kFusion, Kind},
    {"control-predecessors", {}, ControlPredecessors},
    {"to_apply", {}, OneCallee},
    {"calls", {}, OneCallee},
    {"branch_computations", {}, CalleeList},
    {"called_computations", {}, CalleeList},
    {"condition", {}, FirstOfPair},
    {"true_computation", {}, FirstOfPair},
    {"select", {}, FirstOfPair},
    {"body", {}, SecondOfPair},
    {"false_computation", {}, SecondOfPair},
    {"scatter", {}, SecondOfPair},
};

// Instruction attributes XLA's HLO parser (xla/hlo/parser/hlo_parser.cc)
// accepts that kTable does not model: they are kept raw. XLA accepts each
// only on the opcodes that use it; here any known name is accepted on any
// opcode, so that what the printer writes back always parses again.
constexpr const char* kRawKeys[] = {
    // On every instruction.
    "sharding", "frontend_attributes", "statistics", "parameter_replication",
    "origin", "metadata", "backend_config",
    // Collectives and channels.
    "replica_groups", "channel_id", "constrain_layout", "use_global_device_ids",
    "mode", "source_target_pairs", "slice_sizes", "is_host_transfer",
    // Async ops, copy-start, call, reshape, topk, scan.
    "async_execution_thread", "output_to_operand_aliasing",
    "cross_program_prefetch_index", "is_composite", "inferred_dimension", "k",
    "largest", "num_carries", "is_reverse", "is_associative",
    // Unary ops with an accuracy, convolution, dot variants.
    "result_accuracy", "conv_kind", "algorithm", "lhs_ragged_dims",
    "rhs_group_dims",
    // fft, triangular-solve and cholesky options, batch norms.
    "fft_type", "fft_length", "left_side", "lower", "unit_diagonal",
    "transpose_a", "epsilon", "feature_index",
    // domain, infeed/outfeed, rng, rng-get-and-update-state.
    "domain", "infeed_config", "outfeed_config", "outfeed_shape",
    "distribution", "delta",
    // custom-call.
    "custom_call_target", "operand_layout_constraints",
    "custom_call_has_side_effect", "padding_type", "literal", "schedule",
    "api_version",
    // Printed by older XLA releases (sparse dot, async groups, copy-start).
    "sparsity", "async_group_id", "is_cross_program_prefetch"};

const std::unordered_set<std::string_view>& KnownKeys() {
  static const auto* const known = [] {
    auto* set = new std::unordered_set<std::string_view>();
    for (const Entry& e : kTable) set->insert(e.key);
    for (const char* k : kRawKeys) set->insert(k);
    return set;
  }();
  return *known;
}

char Lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

// Levenshtein distance ignoring case, or `cap` + 1 once it exceeds `cap`.
size_t EditDistance(std::string_view a, std::string_view b, size_t cap) {
  if ((a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()) > cap) {
    return cap + 1;
  }
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    size_t best = row[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({up + 1, row[j - 1] + 1,
                         diag + (Lower(a[i - 1]) == Lower(b[j - 1]) ? 0 : 1)});
      diag = up;
      best = std::min(best, row[j]);
    }
    if (best > cap) return cap + 1;
  }
  return row[b.size()];
}

// The known name closest to `key` within two edits, if exactly one is.
std::optional<std::string_view> Suggestion(std::string_view key) {
  constexpr size_t kCap = 2;
  std::optional<std::string_view> best;
  size_t best_distance = kCap + 1;
  bool tie = false;
  for (std::string_view known : KnownKeys()) {
    const size_t d = EditDistance(key, known, kCap);
    if (d < best_distance) {
      best = known, best_distance = d, tie = false;
    } else if (d == best_distance && d <= kCap) {
      tie = true;
    }
  }
  // A short name is within two edits of too many others to guess.
  if (tie || best_distance > kCap || key.size() <= 2 * best_distance) {
    return std::nullopt;
  }
  return best;
}

}  // namespace

Status CheckAttributeName(const HloLexer& lex, std::string_view key,
                          size_t key_pos) {
  if (KnownKeys().count(key)) return Status::Ok();
  // The key is a run of name characters (HloLexer::ConsumeWord).
  std::string message =
      "unknown attribute '" + std::string(key.substr(0, 64)) + "'";
  if (std::optional<std::string_view> s = Suggestion(key)) {
    message += "; did you mean '" + std::string(*s) + "'?";
  }
  return lex.ErrorAt(key_pos, message);
}

Status ParseAttribute(std::string_view key, HloLexer value,
                      HloInstruction* instr, AttributeContext* ctx) {
  for (const Entry& e : kTable) {
    if (key != e.key || (e.only && *e.only != instr->opcode())) continue;
    value.SkipSpace();
    RETURN_IF_ERROR(e.handler(value, instr, ctx));
    if (!value.AtEnd()) {
      return value.Error("end of " + std::string(key) + " value");
    }
    return Status::Ok();
  }
  const size_t b = value.pos();
  A(instr).raw.emplace_back(
      std::string(key), std::string(value.text().substr(b, value.end() - b)));
  return Status::Ok();
}

}  // namespace trench::hlo_parser_internal
