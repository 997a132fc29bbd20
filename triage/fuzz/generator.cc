// GenerateSynthetic: the op catalogue, options, the main loop and the final
// parse + verify.
#include "triage/fuzz/generator.h"

#include <algorithm>
#include <set>

#include "compiler/ir/collective_groups.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/random_inputs.h"
#include "compiler/ir/verifier.h"
#include "triage/case/target_description.h"
#include "triage/fuzz/collective_scale.h"
#include "triage/fuzz/generator_internal.h"
#include "triage/fuzz/size_boundaries.h"

namespace trench::fuzz {
namespace {

using O = HloOpcode;

struct OpInfo {
  HloOpcode op;
  const char* group;
};

// The catalogue: every op the oracle evaluates that a random program can
// use meaningfully (no tokens, no rng). The "collective" group (last, so
// that single-device programs draw as before) only in SPMD programs.
const std::vector<OpInfo>& Catalogue() {
  static const auto* ops = new std::vector<OpInfo>{
      {O::kAbs, "elementwise_unary"},
      {O::kNegate, "elementwise_unary"},
      {O::kSign, "elementwise_unary"},
      {O::kNot, "elementwise_unary"},
      {O::kPopulationCount, "elementwise_unary"},
      {O::kClz, "elementwise_unary"},
      {O::kFloor, "elementwise_unary"},
      {O::kCeil, "elementwise_unary"},
      {O::kRoundNearestAfz, "elementwise_unary"},
      {O::kRoundNearestEven, "elementwise_unary"},
      {O::kCopy, "elementwise_unary"},
      {O::kIsFinite, "elementwise_unary"},
      {O::kReducePrecision, "elementwise_unary"},
      {O::kReal, "elementwise_unary"},
      {O::kImag, "elementwise_unary"},
      {O::kExp, "transcendental"},
      {O::kExpm1, "transcendental"},
      {O::kLog, "transcendental"},
      {O::kLog1p, "transcendental"},
      {O::kLogistic, "transcendental"},
      {O::kSqrt, "transcendental"},
      {O::kRsqrt, "transcendental"},
      {O::kCbrt, "transcendental"},
      {O::kSin, "transcendental"},
      {O::kCos, "transcendental"},
      {O::kTan, "transcendental"},
      {O::kTanh, "transcendental"},
      {O::kErf, "transcendental"},
      {O::kAtan2, "transcendental"},
      {O::kPower, "transcendental"},
      {O::kAdd, "elementwise_binary"},
      {O::kSubtract, "elementwise_binary"},
      {O::kMultiply, "elementwise_binary"},
      {O::kDivide, "elementwise_binary"},
      {O::kRemainder, "elementwise_binary"},
      {O::kMaximum, "elementwise_binary"},
      {O::kMinimum, "elementwise_binary"},
      {O::kAnd, "elementwise_binary"},
      {O::kOr, "elementwise_binary"},
      {O::kXor, "elementwise_binary"},
      {O::kShiftLeft, "elementwise_binary"},
      {O::kShiftRightArithmetic, "elementwise_binary"},
      {O::kShiftRightLogical, "elementwise_binary"},
      {O::kComplex, "elementwise_binary"},
      {O::kCompare, "compare"},
      {O::kSelect, "select"},
      {O::kClamp, "clamp"},
      {O::kConvert, "convert"},
      {O::kBitcastConvert, "convert"},
      {O::kBroadcast, "data_movement"},
      {O::kReshape, "data_movement"},
      {O::kBitcast, "data_movement"},
      {O::kTranspose, "data_movement"},
      {O::kSlice, "data_movement"},
      {O::kConcatenate, "data_movement"},
      {O::kPad, "data_movement"},
      {O::kReverse, "data_movement"},
      {O::kIota, "data_movement"},
      {O::kDynamicSlice, "data_movement"},
      {O::kDynamicUpdateSlice, "data_movement"},
      {O::kGather, "indexing"},
      {O::kScatter, "indexing"},
      {O::kReduce, "reduction"},
      {O::kReduceWindow, "reduction"},
      {O::kSelectAndScatter, "reduction"},
      {O::kSort, "reduction"},
      {O::kDot, "contraction"},
      {O::kConvolution, "contraction"},
      {O::kWhile, "control"},
      {O::kConditional, "control"},
      {O::kCall, "control"},
      {O::kTuple, "control"},
      {O::kGetTupleElement, "control"},
      {O::kMap, "control"},
      {O::kFusion, "control"},
      {O::kOptimizationBarrier, "control"},
      {O::kConstant, "constant"},
      {O::kAllReduce, "collective"},
      {O::kAllGather, "collective"},
      {O::kReduceScatter, "collective"},
      {O::kAllToAll, "collective"},
      {O::kCollectivePermute, "collective"},
      {O::kPartitionId, "collective"},
      {O::kReplicaId, "collective"},
  };
  return *ops;
}

// Default weights: the structural ops are rarer than elementwise ones in
// real programs but carry most of the code generator's complexity.
double DefaultWeight(const std::string& group) {
  if (group == "elementwise_unary" || group == "transcendental") return 0.6;
  if (group == "elementwise_binary") return 1.0;
  if (group == "control") return 0.7;
  if (group == "constant") return 1.0;
  return 1.5;
}

bool Emit(internal::Gen& g, HloOpcode op, const std::string& group) {
  if (group == "data_movement") return internal::EmitDataMovement(g, op);
  if (group == "indexing") return internal::EmitIndexing(g, op);
  if (group == "reduction") return internal::EmitReduction(g, op);
  if (group == "contraction") return internal::EmitContraction(g, op);
  if (group == "control" || group == "constant") {
    return internal::EmitControl(g, op);
  }
  if (group == "collective") return internal::EmitCollective(g, op);
  return internal::EmitElementwise(g, op);
}

}  // namespace

uint64_t DeviceSeed(uint64_t seed, int64_t device) {
  return device == 0
             ? seed
             : seed ^ (0x9e3779b97f4a7c15ull * static_cast<uint64_t>(device));
}

const std::vector<HloOpcode>& SyntheticOps() {
  static const auto* ops = [] {
    auto* v = new std::vector<HloOpcode>;
    for (const OpInfo& i : Catalogue()) {
      if (std::string_view(i.group) != "collective") v->push_back(i.op);
    }
    return v;
  }();
  return *ops;
}

const std::vector<HloOpcode>& SpmdOps() {
  static const auto* ops = [] {
    auto* v = new std::vector<HloOpcode>;
    for (const OpInfo& i : Catalogue()) {
      if (std::string_view(i.group) == "collective") v->push_back(i.op);
    }
    return v;
  }();
  return *ops;
}

std::string OpGroup(HloOpcode op) {
  for (const OpInfo& i : Catalogue()) {
    if (i.op == op) return i.group;
  }
  return "";
}

const std::vector<PrimitiveType>& AllDtypes() {
  using P = PrimitiveType;
  static const auto* v = new std::vector<PrimitiveType>{
      P::PRED, P::S8,  P::S16,  P::S32, P::S64, P::U8,  P::U16, P::U32,
      P::U64,  P::F16, P::BF16, P::F32, P::F64, P::C64, P::C128};
  return *v;
}

bool OracleEvaluates(HloOpcode op) {
  switch (op) {
    // Elementwise ops without an oracle kernel.
    case O::kAcos:
    case O::kAcosh:
    case O::kAsin:
    case O::kAsinh:
    case O::kAtanh:
    case O::kCosh:
    case O::kSinh:
    case O::kStochasticConvert:
      return false;
    case O::kParameter:
    case O::kConstant:
    case O::kAfterAll:
    case O::kAddDependency:
      return true;
    default:
      break;
  }
  if (IsElementwise(op)) return true;
  if (IsDeviceOp(op)) return false;  // On a mesh only (oracle/spmd.h).
  return OpGroup(op) != "";
}

Json GeneratorOptions::ToJson() const {
  Json j = Json::MakeObject();
  j["instructions"] = instructions;
  Json w = Json::MakeObject();
  for (const auto& [k, v] : weights) w[k] = v;
  j["weights"] = w;
  Json f = Json::MakeArray();
  for (const auto& s : focus) f.push_back(s);
  j["focus"] = f;
  Json d = Json::MakeArray();
  for (PrimitiveType t : dtypes) d.push_back(PrimitiveTypeName(t));
  j["dtypes"] = d;
  j["max_rank"] = max_rank;
  j["max_elements"] = max_elements;
  j["layout_probability"] = layout_probability;
  j["stress_probability"] = stress_probability;
  j["body_instructions"] = body_instructions;
  j["allow_nonfinite"] = allow_nonfinite;
  j["special_values"] = special_values;
  j["same_operand_probability"] = same_operand_probability;
  j["zero_dim_probability"] = zero_dim_probability;
  j["long_row_probability"] = long_row_probability;
  j["large_probability"] = large_probability;
  if (large_elements > 0) j["large_elements"] = large_elements;
  if (!large_attributes.empty()) {
    Json a = Json::MakeObject();
    for (const auto& [k, v] : large_attributes) a[k] = v;
    j["large_attributes"] = std::move(a);
  }
  j["sibling_probability"] = sibling_probability;
  j["spmd_share"] = spmd_share;
  j["edge_operands"] = edge_operands;
  j["edge_constants"] = edge_constants;
  j["edge_inputs"] = edge_inputs;
  if (!size_boundaries.empty()) {
    Json b = Json::MakeArray();
    for (int64_t v : size_boundaries) b.push_back(v);
    j["size_boundaries"] = b;
  }
  return j;
}

StatusOr<GeneratorOptions> GeneratorOptions::FromJson(const Json& j) {
  GeneratorOptions o;
  if (!j.is_object()) return InvalidArgument("generator options: not object");
  auto get_int = [&](const char* key, auto& field) -> Status {
    if (const Json* v = j.Find(key)) {
      ASSIGN_OR_RETURN(int64_t x, v->GetInt64());
      field = static_cast<std::remove_reference_t<decltype(field)>>(x);
    }
    return Status::Ok();
  };
  auto get_double = [&](const char* key, double& field) -> Status {
    if (const Json* v = j.Find(key)) {
      ASSIGN_OR_RETURN(field, v->GetDouble());
    }
    return Status::Ok();
  };
  RETURN_IF_ERROR(get_int("instructions", o.instructions));
  RETURN_IF_ERROR(get_int("max_rank", o.max_rank));
  RETURN_IF_ERROR(get_int("max_elements", o.max_elements));
  RETURN_IF_ERROR(get_int("body_instructions", o.body_instructions));
  RETURN_IF_ERROR(get_double("layout_probability", o.layout_probability));
  RETURN_IF_ERROR(get_double("stress_probability", o.stress_probability));
  RETURN_IF_ERROR(get_double("special_values", o.special_values));
  RETURN_IF_ERROR(
      get_double("same_operand_probability", o.same_operand_probability));
  RETURN_IF_ERROR(get_double("zero_dim_probability", o.zero_dim_probability));
  RETURN_IF_ERROR(get_double("long_row_probability", o.long_row_probability));
  RETURN_IF_ERROR(get_double("large_probability", o.large_probability));
  RETURN_IF_ERROR(get_int("large_elements", o.large_elements));
  if (const Json* a = j.Find("large_attributes")) {
    if (!a->is_object()) {
      return InvalidArgument(
          "generator options: large_attributes: expected "
          "an object");
    }
    for (const auto& [k, v] : a->object()) {
      ASSIGN_OR_RETURN(std::string value, v.GetString());
      o.large_attributes.emplace_back(k, std::move(value));
    }
  }
  RETURN_IF_ERROR(get_double("sibling_probability", o.sibling_probability));
  RETURN_IF_ERROR(get_double("spmd_share", o.spmd_share));
  RETURN_IF_ERROR(get_double("edge_operands", o.edge_operands));
  RETURN_IF_ERROR(get_double("edge_constants", o.edge_constants));
  RETURN_IF_ERROR(get_double("edge_inputs", o.edge_inputs));
  if (const Json* b = j.Find("size_boundaries"); b && b->is_array()) {
    for (const Json& v : b->array()) {
      ASSIGN_OR_RETURN(int64_t x, v.GetInt64());
      if (x < 1) {
        return InvalidArgument(
            "generator options: size_boundaries must be positive");
      }
      o.size_boundaries.push_back(x);
    }
  }
  if (const Json* v = j.Find("allow_nonfinite")) {
    ASSIGN_OR_RETURN(o.allow_nonfinite, v->GetBool());
  }
  if (const Json* w = j.Find("weights"); w && w->is_object()) {
    for (const auto& [k, v] : w->object()) {
      ASSIGN_OR_RETURN(o.weights[k], v.GetDouble());
    }
  }
  if (const Json* f = j.Find("focus"); f && f->is_array()) {
    for (const Json& s : f->array()) {
      ASSIGN_OR_RETURN(std::string name, s.GetString());
      o.focus.push_back(name);
    }
  }
  if (const Json* d = j.Find("dtypes"); d && d->is_array()) {
    for (const Json& s : d->array()) {
      ASSIGN_OR_RETURN(std::string name, s.GetString());
      auto t = PrimitiveTypeFromName(name);
      if (!t || !IsArrayType(*t)) {
        return InvalidArgument("generator options: unknown dtype " + name);
      }
      o.dtypes.push_back(*t);
    }
  }
  return o;
}

StatusOr<std::unique_ptr<HloModule>> ParseGenerated(const std::string& text,
                                                    const std::string& what,
                                                    uint64_t seed) {
  const std::string who = what + " (seed " + std::to_string(seed) + ")";
  auto module = ParseHloModule(text);
  if (!module.ok()) {
    return Internal(who +
                    " produced unparsable HLO: " + module.status().message());
  }
  Status verified = VerifyModule(**module);
  if (!verified.ok()) {
    return Internal(
        who + " produced HLO that does not verify: " + verified.message());
  }
  return std::move(*module);
}

StatusOr<GeneratedCase> GenerateSynthetic(uint64_t seed,
                                          const GeneratorOptions& options) {
  if (options.max_elements < 1 || options.max_rank < 0 ||
      options.instructions < 0) {
    return InvalidArgument("generator options: bad sizes");
  }
  if (options.large_attributes.size() > 8) {
    return InvalidArgument("generator options: more than 8 large_attributes");
  }
  for (const auto& [k, v] : options.large_attributes) {
    if (!hlo_diff::IsFrontendAttribute(k, v)) {
      return InvalidArgument("generator options: large_attributes: " +
                             Json(k).Dump() + " = " + Json(v).Dump() +
                             " is not a module attribute (letters, digits, "
                             "'_', '.', '-', at most 64 each)");
    }
  }
  if (options.large_elements < 0 ||
      options.large_elements > GeneratorOptions::kMaxLargeElements) {
    return InvalidArgument(
        "generator options: large_elements must be 0 (from the size "
        "boundaries) to " +
        std::to_string(GeneratorOptions::kMaxLargeElements));
  }
  std::set<std::string> names;
  for (const OpInfo& i : Catalogue()) {
    names.insert(std::string(OpcodeName(i.op)));
    names.insert(i.group);
  }
  for (const std::string& f : options.focus) {
    if (!names.count(f)) {
      return InvalidArgument("generator options: unknown focus op " + f);
    }
  }
  for (const auto& [k, v] : options.weights) {
    if (!names.count(k)) {
      return InvalidArgument("generator options: unknown weight key " + k);
    }
  }
  // Large programs: drawn from a stream of their own (the seed's other
  // draws are those of a program that is not large).
  GeneratorOptions large = options;
  std::vector<int64_t> streamed;
  if (Rng pick(seed ^ 0x3c6ef372fe94f82bull);
      pick.Chance(options.large_probability)) {
    std::vector<int64_t> bounds = options.size_boundaries;
    if (bounds.empty()) {
      for (const ElementBoundary& b : DefaultBoundaries()) {
        bounds.push_back(b.elements);
      }
    }
    const int64_t b = options.large_elements > 0
                          ? options.large_elements
                          : 2 * *std::max_element(bounds.begin(), bounds.end());
    large.max_elements = std::max(options.max_elements, b + b / 2 + 1);
    large.instructions =
        std::min(options.instructions, GeneratorOptions::kLargeInstructions);
    const int64_t n = std::max<int64_t>(
        1, pick.Pick(std::vector<int64_t>{b - 1, b, b + 1, b + b / 2}));
    // Rank 1, or rank 2 with a few rows (a ragged minor dim when the rows
    // do not divide n).
    const int64_t rows =
        std::min(n, pick.Pick(std::vector<int64_t>{1, 1, 2, 3, 8}));
    streamed = rows == 1 ? std::vector<int64_t>{n}
                         : std::vector<int64_t>{rows, n / rows};
  }
  const GeneratorOptions& o = streamed.empty() ? options : large;
  internal::Gen g(seed, o);
  if (g.dtypes.empty()) return InvalidArgument("generator options: no dtype");
  // SPMD programs: also drawn from a stream of their own; a focus on
  // collectives alone makes every program one.
  const bool collective_focus =
      !options.focus.empty() &&
      std::all_of(options.focus.begin(), options.focus.end(),
                  [](const std::string& f) {
                    const auto op = OpcodeFromName(f);
                    return f == "collective" || (op && IsDeviceOp(*op));
                  });
  if (Rng pick(seed ^ 0x510e527fade682d1ull);
      streamed.empty() &&
      (collective_focus || pick.Chance(options.spmd_share))) {
    static const DeviceMesh kMeshes[] = {{1, 2}, {2, 1}, {2, 2}, {1, 4}};
    g.mesh = kMeshes[pick.Uniform(0, 3)];
  }

  std::vector<double> weights;
  for (const OpInfo& i : Catalogue()) {
    const std::string name(OpcodeName(i.op));
    double w = DefaultWeight(i.group);
    if (auto it = options.weights.find(i.group); it != options.weights.end()) {
      w = it->second;
    }
    if (auto it = options.weights.find(name); it != options.weights.end()) {
      w = it->second;
    }
    if (std::string_view(i.group) == "collective" && g.mesh.size() <= 1) {
      w = 0;
    }
    if (!options.focus.empty() &&
        std::find_if(options.focus.begin(), options.focus.end(),
                     [&](const std::string& f) {
                       return f == name || f == i.group;
                     }) == options.focus.end()) {
      w = 0;
    }
    weights.push_back(w);
  }

  internal::Context entry;
  entry.builder = &g.pb.entry();
  entry.can_add_params = true;
  g.ctx = &entry;
  // A first parameter so that every program reads an input.
  auto fresh_param = [&] {
    g.Param(g.MakeShape(g.rng.Pick(g.dtypes),
                        g.FreshDims(static_cast<int>(g.rng.Uniform(
                                        std::min(1, o.max_rank), o.max_rank)),
                                    o.max_elements)));
  };
  if (streamed.empty()) {
    fresh_param();
  } else {
    g.Param(g.MakeShape(g.rng.Pick(g.dtypes), streamed));
  }
  for (int n = 0; n < o.instructions; ++n) {
    bool emitted = false;
    for (int attempt = 0; attempt < 8 && !emitted; ++attempt) {
      const int64_t k = g.rng.PickWeighted(weights);
      if (k < 0) break;
      const OpInfo& info = Catalogue()[k];
      emitted = Emit(g, info.op, info.group);
    }
    // Nothing fitted the values at hand: more material for the next op.
    if (!emitted) fresh_param();
  }
  // An SPMD program exchanges data at least once.
  if (g.mesh.size() > 1 && g.collectives == 0) {
    internal::EmitCollective(g, O::kAllReduce);
  }
  // The root: the reserved outputs and every value nobody reads (at most
  // 16, most recent first), so that no generated instruction is dead.
  std::vector<Value> outputs;
  for (size_t i = entry.pool.size(); i-- > 0 && outputs.size() < 16;) {
    if (entry.uses[i] == 0) outputs.push_back(entry.pool[i]);
  }
  std::reverse(outputs.begin(), outputs.end());
  outputs.insert(outputs.begin(), entry.outputs.begin(), entry.outputs.end());
  if (outputs.empty()) outputs.push_back(entry.pool.back());
  if (outputs.size() == 1 && !g.rng.Chance(0.2)) {
    entry.builder->SetRoot(outputs[0].name);
  } else {
    std::vector<Shape> shapes;
    for (const Value& v : outputs) shapes.push_back(v.shape);
    Value t = g.Emit(Shape::Tuple(shapes), "tuple", outputs, "", 0, false);
    entry.builder->SetRoot(t.name);
  }

  GeneratedCase c;
  c.hlo_text = g.pb.Text();
  if (!streamed.empty() && !options.large_attributes.empty()) {
    // "HloModule NAME, frontend_attributes={k="v",...}": the values were
    // checked above, so none can end its quotes.
    std::string attrs = ", frontend_attributes={";
    for (size_t i = 0; i < options.large_attributes.size(); ++i) {
      const auto& [k, v] = options.large_attributes[i];
      attrs += (i ? "," : "") + k + "=\"" + v + "\"";
    }
    c.hlo_text.insert(c.hlo_text.find('\n'), attrs + "}");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module,
                   ParseGenerated(c.hlo_text, "generator", seed));
  c.inputs = RandomArguments(*module->entry_computation(), seed);
  c.origin = Json::MakeObject();
  c.origin["kind"] = "synthetic";
  c.origin["seed"] = seed;
  c.origin["options"] = options.ToJson();
  if (!streamed.empty()) c.origin["large"] = true;
  if (!g.edge_params.empty()) {
    Json which = Json::MakeArray();
    for (int64_t i : internal::FillEdgeInputs(g, seed, c.inputs)) {
      which.push_back(i);
    }
    c.origin["edge_inputs"] = which;
  }
  if (g.special) {
    Json which = Json::MakeArray();
    for (int64_t i : internal::SprinkleSpecialValues(seed, c.inputs)) {
      which.push_back(i);
    }
    c.origin["special_values"] = which;
  }
  if (g.mesh.size() > 1) {
    if (Status s = CheckCollectives(*module, g.mesh); !s.ok()) {
      return Internal(
          "generator (seed " + std::to_string(seed) +
          ") produced collectives that do not fit its mesh: " + s.message());
    }
    c.mesh = g.mesh;
    for (int64_t d = 1; d < g.mesh.size(); ++d) {
      const uint64_t ds = DeviceSeed(seed, d);
      std::vector<Literal> args =
          RandomArguments(*module->entry_computation(), ds);
      if (!g.edge_params.empty()) internal::FillEdgeInputs(g, ds, args);
      if (g.special) internal::SprinkleSpecialValues(ds, args);
      for (Literal& l : args) c.inputs.push_back(std::move(l));
    }
    c.origin["mesh"] = Json::MakeObject();
    c.origin["mesh"]["replicas"] = g.mesh.replicas;
    c.origin["mesh"]["partitions"] = g.mesh.partitions;
  }
  return c;
}

}  // namespace trench::fuzz
