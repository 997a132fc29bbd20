// Internals of the synthetic generator (generator.h), shared by its .cc
// files: the generation state and the per-group op emitters.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compiler/ir/collective_groups.h"
#include "triage/fuzz/generator.h"
#include "triage/fuzz/interesting_values.h"
#include "triage/fuzz/program_builder.h"

namespace trench::fuzz::internal {

// The computation being generated and its values.
struct Context {
  ComputationBuilder* builder = nullptr;
  std::vector<Value> pool;      // Array values usable as operands.
  std::vector<int> uses;        // Per pool entry.
  bool can_add_params = false;  // Only the entry grows new parameters.
  // Values set aside for the root tuple (no later op reads them).
  std::vector<Value> outputs;
};

// Largest magnitude a value of type t may reach before ops on it could
// overflow (+inf for integer types: they wrap, which XLA defines).
double Limit(PrimitiveType t);
// Magnitude of the random inputs of type t (random_inputs.h).
double InputBound(PrimitiveType t);

class Gen {
 public:
  Gen(uint64_t seed, const GeneratorOptions& options);

  Rng rng;
  const GeneratorOptions& opt;
  ProgramBuilder pb;
  std::vector<PrimitiveType> dtypes;
  Context* ctx = nullptr;
  int depth = 0;  // Nesting of called computations being built.
  // A program about special values (GeneratorOptions::special_values).
  bool special = false;
  // Building a kLoop fusion body: elementwise ops only.
  bool loop_fusion_body = false;
  // The devices an SPMD program runs on (1 x 1: a single-device program),
  // the channel_ids handed out and the collectives emitted so far.
  DeviceMesh mesh;
  int64_t channels = 0;
  int collectives = 0;
  // How a collective's groups are written (ReduceGroups in
  // generator_collectives.cc): with a channel_id or not, groups of
  // `per_group` of `ids` ids, "{}" allowed for one group of all, and the
  // use_global_device_ids attribute that follows, if any.
  struct GroupForm {
    bool channel = false;
    int64_t ids = 0;
    int64_t per_group = 0;
    bool may_be_empty = false;
    std::string suffix;
  };
  // The all-reduces over groups of one size emitted so far, each by what
  // XLA's all-reduce-combiner keys on (element type, reduction op, group
  // mode and groups), for near-copies of them.
  struct AllReduceKey {
    PrimitiveType type;
    std::string op;
    Value operand;  // What it reduces (tamed for `op`).
    GroupForm form;
    std::string groups;   // The replica_groups text.
    int64_t members = 1;  // Devices per group.
  };
  std::vector<AllReduceKey> all_reduces;

  // Extents around the tiling / VMEM boundaries (PickDim's stress sizes),
  // split at 128 so that small ones stay common.
  std::vector<int64_t> boundary_dims_small, boundary_dims_large;
  // Entry parameters whose inputs get interesting values (FillEdgeInputs).
  struct EdgeParam {
    int64_t number;
    std::vector<InterestingValue> values;
  };
  std::vector<EdgeParam> edge_params;

  // ---- Interesting values (generator_edge.cc).
  // Whether an op with edge semantics takes an edge operand now.
  // Doubled in special-value programs (their edges are the point).
  bool EdgeChance() {
    return rng.Chance(opt.edge_operands * (special ? 2 : 1));
  }
  // NaN and infinities may appear (special-value programs, allow_nonfinite).
  bool NonfiniteOk() const { return special || opt.allow_nonfinite; }
  // 1-4 interesting values of t (finite only unless NonfiniteOk(); no
  // zeros when `nonzero`).
  std::vector<InterestingValue> EdgeValues(PrimitiveType t, bool nonzero);
  // A value of type t and these dims made of interesting values: a
  // constant (a literal, or a broadcast scalar for large arrays), that
  // constant behind an opt-barrier, or in the entry a new parameter whose
  // input gets them. Its bound is the values' largest magnitude. In the
  // pool.
  Value EdgeOperand(PrimitiveType t, const std::vector<int64_t>& dims,
                    bool nonzero = false);

  // ---- Types and shapes.
  bool Allowed(PrimitiveType t) const;
  // A dtype of options.dtypes satisfying f, or nullopt.
  std::optional<PrimitiveType> PickType(
      const std::function<bool(PrimitiveType)>& f);
  int64_t PickDim();
  // Dims of the given rank with at most max_elements elements.
  std::vector<int64_t> PickDims(int rank, int64_t max_elements);
  std::vector<int64_t> PickDims() {
    return FreshDims(static_cast<int>(rng.Uniform(0, opt.max_rank)),
                     opt.max_elements);
  }
  // Dims of a new array (parameter, iota): PickDims, or a long row
  // (long_row_probability), and sometimes one dim of size 0
  // (zero_dim_probability).
  std::vector<int64_t> FreshDims(int rank, int64_t max_elements);
  // A shape with a random (sometimes non-default) layout.
  Shape MakeShape(PrimitiveType t, std::vector<int64_t> dims);

  // ---- Values of the current context.
  // Emits and records the value in the pool (arrays only; operand uses
  // counted).
  Value Emit(const Shape& shape, std::string_view op,
             const std::vector<Value>& operands, std::string_view attrs,
             double bound, bool pool = true);
  // A new parameter; in the entry, with probability edge_inputs (unless
  // !maybe_edge) its input will hold interesting values (edge_params).
  Value Param(const Shape& shape, bool maybe_edge = true);
  Value Constant(PrimitiveType t, double v);
  // broadcast(constant v) to dims, type t.
  Value Splat(PrimitiveType t, const std::vector<int64_t>& dims, double v);
  // A pool value satisfying f (less used ones preferred), or nullopt.
  std::optional<Value> PickValue(const std::function<bool(const Value&)>& f);
  // A value of type t and these dims: a pool value, a converted pool value,
  // a new parameter (entry only) or a broadcast scalar.
  Value Operand(PrimitiveType t, const std::vector<int64_t>& dims);
  // Any value of a type satisfying f (new parameter or converted value if
  // the pool has none).
  std::optional<Value> AnyOperand(const std::function<bool(PrimitiveType)>& f);
  // A scalar of integer type (an index), from a parameter or a constant.
  Value IndexScalar();

  // Takes v out of the pool: it becomes an output of the root tuple.
  // REQUIRES: v was emitted in the current context.
  void Reserve(const Value& v);
  // Whether a binary op should read the same value twice.
  bool SameOperand();

  // ---- Guards.
  // In special-value programs, float v with every NaN replaced by 0
  // (select(compare(v, v, EQ), v, 0)); else v.
  Value NoNaN(const Value& v);
  // In special-value programs, float v with every inf and NaN replaced by
  // 0 (select(is-finite(v), v, 0)); else v.
  Value Finite(const Value& v);
  // clamp(-b, v, b) (complex: both parts) when v.bound > b.
  Value Tame(const Value& v, double b);
  // convert to t with the range guards of generator.h; with `saturate`,
  // float -> integer converts take any value (XLA saturates, NaN -> 0) and,
  // where NaN and inf may appear, narrowing converts may overflow.
  Value Convert(const Value& v, PrimitiveType t, bool saturate = false);
  // Elementwise op on same-shape operands; result type `out` (default:
  // operand type) and bound as given. No guards.
  Value Unary(std::string_view op, const Value& v, double bound,
              std::optional<PrimitiveType> out = std::nullopt,
              std::string_view attrs = "");
  Value Binary(std::string_view op, const Value& a, const Value& b,
               double bound, std::string_view attrs = "");
  // The same dims as v with layout chosen afresh.
  Shape Like(const Value& v, std::optional<PrimitiveType> t = std::nullopt);

  // ---- Called computations, built in steps: BeginBody switches ctx to a
  // new computation; BodyParams adds parameters (a tuple parameter is
  // unpacked with get-tuple-element) with magnitude `bound`; BodyOps draws
  // body_instructions elementwise ops; Result makes a value of shape s
  // (layout included) bounded by `bound`; EndBody sets the root (a tuple
  // of outs, or the single value), restores ctx and adds the computation
  // to the module, returning its name.
  struct BodyScope {
    std::unique_ptr<ComputationBuilder> builder;
    Context context;
    Context* saved = nullptr;
  };
  std::unique_ptr<BodyScope> BeginBody(std::string_view prefix);
  std::vector<Value> BodyParams(const std::vector<Shape>& params, double bound);
  void BodyOps();
  Value Result(const Shape& s, double bound);
  std::string EndBody(BodyScope& scope, const std::vector<Value>& outs,
                      bool tuple_root);
  // All steps at once. Builds a computation with parameters of
  // `params` (arrays), generates `body_instructions` elementwise ops on
  // them, and returns the computation name; the root is a tuple of values
  // with the shapes in `results` (each bounded by `bound`), or the single
  // value when results has one element and !tuple_root.
  std::string Body(std::string_view prefix, const std::vector<Shape>& params,
                   const std::vector<Shape>& results, double bound,
                   bool tuple_root);
};

// Emitters: each draws operands and attributes for `op` and emits it (with
// its guards) into g.ctx; false if `op` cannot be emitted now (no usable
// dtype), and then nothing was emitted.
bool EmitElementwise(Gen& g, HloOpcode op);   // generator_elementwise.cc
bool EmitDataMovement(Gen& g, HloOpcode op);  // generator_data.cc
bool EmitIndexing(Gen& g, HloOpcode op);      // generator_data.cc
bool EmitReduction(Gen& g, HloOpcode op);     // generator_reduce.cc
bool EmitContraction(Gen& g, HloOpcode op);   // generator_reduce.cc
bool EmitControl(Gen& g, HloOpcode op);       // generator_control.cc
// A collective, partition-id or replica-id over g.mesh, in the entry of an
// SPMD program only (false elsewhere). generator_collectives.cc.
bool EmitCollective(Gen& g, HloOpcode op);
// A reduction op for type t ("add", "maximum", ...); x tamed so that
// combining n elements with `op` cannot overflow; the bound after that.
// generator_reduce.cc.
std::string PickReducer(Gen& g, PrimitiveType t);
Value TameFor(Gen& g, const Value& x, const std::string& op, double n);
double BoundAfter(const std::string& op, double b, double n);
// In a called computation: x - broadcast(reduce(x)) over x's trailing
// dims with add/max/min (the softmax / norm pattern); false if no value
// fits. generator_reduce.cc.
bool EmitNormalize(Gen& g);
// A random elementwise op (with its guards) reading x, of x's dims; its
// result (in the pool), or nullopt if no op takes x's type.
std::optional<Value> ElementwiseOn(Gen& g, const Value& x);
// Sprinkles special values (GeneratorOptions::special_values) into the
// real float inputs; returns the indices of the inputs that got some.
std::vector<int64_t> SprinkleSpecialValues(uint64_t seed,
                                           std::vector<Literal>& inputs);

// Writes the interesting values of g.edge_params into their inputs (each
// element with a density of 5%, 30% or 100%, at least one); returns the
// parameter numbers. generator_edge.cc.
std::vector<int64_t> FillEdgeInputs(const Gen& g, uint64_t seed,
                                    std::vector<Literal>& inputs);
// The literal text of an array of dims whose elements are drawn from
// `values` (bound: their largest magnitude). generator_edge.cc.
std::string EdgeLiteralText(Gen& g, PrimitiveType t,
                            const std::vector<int64_t>& dims,
                            const std::vector<InterestingValue>& values);

// Ops usable inside called computations (elementwise, same shape).
const std::vector<HloOpcode>& BodyOps();

}  // namespace trench::fuzz::internal
