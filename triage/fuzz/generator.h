// Synthetic HLO programs for differential fuzzing.
//
// GenerateSynthetic(seed, options) builds a random, type- and shape-correct
// HLO module over the ops the oracle evaluates (SyntheticOps()) and the
// element types of options.dtypes, parses and verifies it with compiler/ir,
// and returns its text, its inputs and its origin. The same (seed, options)
// always gives the same text and the same inputs, on every machine.
//
// Shapes stress a tiled machine: dimensions are drawn from sizes around the
// code generator's tiling and VMEM-block boundaries (size_boundaries.def:
// 7, 8, 9, 15, 16, 17, ..., 127, 128, 129, ..., 1023, 1024, 1025, ...)
// mixed with small ones, size-1 dims, non-default layouts, broadcasts and
// transposes.
//
// Also (options): dimensions of size 0, long rows of 1024..3000 elements,
// binary ops on the same value twice, and reduces with multi-output fusion
// siblings. Half of the reduces run over the minor (trailing) dims, a
// quarter read a fresh input, and called computations other than kLoop
// fusions (loop bodies, branches, callees) may hold the softmax/norm
// pattern x - broadcast(reduce(x)) (the compiler's fusion pass does not
// enter them, so their reduces take the unfused paths).
//
// Values: unless options.allow_nonfinite, programs guard every domain so
// that no NaN or infinity arises from finite inputs: the generator tracks
// a magnitude bound per value and clamps operands before ops that could
// overflow; logs take abs(x)+1, sqrt abs(x), divisors abs(y)+1 (integers:
// y|1), exponentials a clamped input, power a bounded exponent, shift
// amounts are masked to the bit width, float->int converts are clamped
// into range, bitcasts to floats mask the exponent's top bit (except
// where an edge operand takes a guard's place, GeneratorOptions::
// edge_operands: XLA defines those cases). Dynamic
// indices are random small integers; XLA clamps them (dynamic-slice,
// gather) or skips out-of-bounds updates (scatter), so every index is
// defined. Inputs are compiler/ir/random_inputs.h's RandomArguments(entry,
// seed): floats in [-4, 4), signed integers in [-8, 7], unsigned in
// [0, 15], the same values `hlo-eval --random-inputs --seed S` and
// `hlo-run` produce for the case's input seed, except in programs about
// special values (options.special_values; origin["special_values"] lists
// the inputs that got them), whose inputs are stored with the case, and
// except the inputs of edge parameters (origin["edge_inputs"]), which
// hold interesting values (interesting_values.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "compiler/ir/collective_groups.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/ir/literal.h"
#include "compiler/ir/opcode.h"

namespace trench::fuzz {

// A program with its inputs. `origin` records where it came from (goes
// into case.json as is): {"kind":"synthetic","seed":S,"options":{...}} or
// {"kind":"trace",...} (trace_corpus.h).
// An SPMD program (mesh of more than one device) holds the inputs of every
// device, device-major: device d's are inputs[d * L, (d + 1) * L), L the
// entry's parameter leaves (hlo_diff::Case's layout).
struct GeneratedCase {
  std::string hlo_text;
  std::vector<Literal> inputs;
  Json origin;
  DeviceMesh mesh;  // 1 x 1: a single-device program.
};

struct GeneratorOptions {
  // Random ops drawn for the entry computation (guards, converts and
  // operand adapters they need come on top).
  int instructions = 20;
  // Weight of an op: weights[opcode text] if present, else weights[group]
  // (OpGroup), else 1. 0 disables it.
  std::map<std::string, double> weights;
  // Non-empty: only these ops (opcode texts or group names) are drawn;
  // helpers (convert, broadcast, clamp, constant...) still appear as
  // guards and adapters.
  std::vector<std::string> focus;
  // Element types values may have. Empty: all of AllDtypes().
  std::vector<PrimitiveType> dtypes;
  int max_rank = 4;
  int64_t max_elements = 1 << 14;  // Per array.
  // Probability that an array gets a non-default layout.
  double layout_probability = 0.25;
  // Probability to draw a dim from the ragged sizes near 8/128/256 rather
  // than from small sizes (1..5).
  double stress_probability = 0.5;
  // Called computations (while/conditional/call/map/fusion bodies): random
  // ops in each.
  int body_instructions = 4;
  // No guards at all: ops may overflow and leave their domains (NaN and
  // infinities arise anywhere). Off by default.
  bool allow_nonfinite = false;
  // Share of programs "about" non-finite values: guards stay, but some
  // real float inputs (f16 bf16 f32 f64) get +-inf, NaN, -0 and
  // subnormals sprinkled in, and half of these programs draw only real
  // float types. Such programs also canonicalize NaN before ops whose
  // result would depend on a NaN's sign or payload or on comparing NaNs
  // (bitcast-convert, TOTALORDER compares, sort keys, arg-max/min
  // reducers, select-and-scatter): IEEE does not specify those bits. Dot
  // and convolution operands are made finite (inf/NaN -> 0): the matrix
  // unit's multi-pass f32 modes split inf into bf16 parts (inf - inf =
  // NaN) and padding zeros may meet inf (0 * inf), both left to the
  // backend by XLA.
  double special_values = 0.08;
  // Probability that a binary op reads the same value twice (x - x,
  // x * x, compare(x, x), ...), as real graphs do (after CSE). Doubled in
  // special-value programs, where floats may also divide by themselves.
  double same_operand_probability = 0.1;
  // Probability that a new array (parameter, iota, ...) gets one dimension
  // of size 0.
  double zero_dim_probability = 0.03;
  // Probability that a new array of rank >= 1 gets a long minor (last)
  // dimension of 1024..3000 elements, other dims 1..4 (total within
  // max_elements): tiled reductions over several 1024-element chunks with
  // ragged tails.
  double long_row_probability = 0.12;
  // Probability that a program is large: its first input has n - 1, n,
  // n + 1 or 3n/2 elements for n = large_elements (0: twice the largest
  // size boundary b, below: the code generator streams arrays from 2
  // chunks on), its arrays may hold up to 3n/2 + 1 elements, and it has
  // at most kLargeInstructions instructions (origin["large"]). The choice
  // comes from the seed alone, so other programs stay as they were.
  double large_probability = 0.01;
  int64_t large_elements = 0;
  // Module attributes of large programs (their HloModule header's
  // frontend_attributes), under which the target reaches its large-array
  // code from large_elements (target_description.h "large_arrays"). Each
  // is hlo_diff::IsFrontendAttribute; at most 8.
  std::vector<std::pair<std::string, std::string>> large_attributes;
  static constexpr int kLargeInstructions = 4;
  static constexpr int64_t kMaxLargeElements = int64_t{1} << 26;
  // Probability that a (single-input) reduce comes with multi-output fusion
  // siblings: its input computed from a value x, and elementwise ops on x
  // and on a slice of x shaped like the reduce result, all outputs of the
  // program (the pattern XLA's multi-output fusion targets).
  double sibling_probability = 0.3;
  // Share of programs that are SPMD: they run on a mesh of 1x2, 2x1, 2x2
  // or 1x4 devices (origin["mesh"]), each device with inputs of its own
  // (RandomArguments with DeviceSeed(seed, d)), and draw the "collective"
  // group too (SpmdOps(): all-reduce, all-gather, reduce-scatter,
  // all-to-all, collective-permute over every group mode and both
  // replica_groups forms, partition-id, replica-id; an all-reduce is often
  // a near-copy of an earlier one, its groups drawn again) in the entry, at
  // least one collective each. The choice comes from the seed alone, so other
  // programs stay as they were; a focus on collectives alone makes every
  // program SPMD. CheckCollectives (collective_scale.h) holds for them.
  double spmd_share = 0;
  // Interesting values (interesting_values.h; finite ones only unless the
  // program is about special values or allow_nonfinite):
  // - edge_operands: probability (doubled in special-value programs,
  //   whose edge values are inf or NaN half of the time) that an op with
  //   edge semantics (shifts,
  //   divide, remainder, power, maximum, minimum, compare, clamp, convert)
  //   draws an operand made of them, and then drops the guards the op's
  //   semantics make unnecessary (integer x / 0 and x % 0, INT_MIN / -1,
  //   shift amounts past the bit width, float -> integer saturation, and
  //   in special-value programs float division, remainder and power);
  // - edge_constants: probability that a random constant holds them;
  // - edge_inputs: probability that a new entry parameter's input holds
  //   them (origin["edge_inputs"] lists those parameters).
  // An edge operand is a constant (constant folding and the algebraic
  // simplifier see it), a constant behind an opt-barrier (they do not) or,
  // in the entry, a new parameter whose input holds the values.
  double edge_operands = 0.3;
  double edge_constants = 0.25;
  double edge_inputs = 0.15;
  // Tiling / VMEM-block boundaries (elements) that stressed dimensions are
  // drawn around (b-1, b, b+1 at 1x, 2x, 3x). Empty: the target's
  // boundaries of size_boundaries.def.
  std::vector<int64_t> size_boundaries;

  Json ToJson() const;
  // Inverse of ToJson (missing fields keep defaults). InvalidArgument on
  // unknown dtypes or malformed fields.
  static StatusOr<GeneratorOptions> FromJson(const Json& j);
};

// The opcodes GenerateSynthetic can draw, in a fixed order.
const std::vector<HloOpcode>& SyntheticOps();
// The device ops SPMD programs draw besides SyntheticOps() (group
// "collective").
const std::vector<HloOpcode>& SpmdOps();
// The input seed of device d of an SPMD program of `seed` (d = 0: seed).
uint64_t DeviceSeed(uint64_t seed, int64_t device);
// The group of a synthetic op: "elementwise_unary", "transcendental",
// "elementwise_binary", "compare", "select", "clamp", "convert",
// "data_movement", "indexing", "reduction", "contraction", "control",
// "constant", "collective".
std::string OpGroup(HloOpcode op);
// pred s8 s16 s32 s64 u8 u16 u32 u64 f16 bf16 f32 f64 c64 c128.
const std::vector<PrimitiveType>& AllDtypes();

// True for the opcodes oracle/evaluator.cc evaluates (the default
// "supported" predicate of the trace corpus).
bool OracleEvaluates(HloOpcode op);

// Parses and verifies generated program text; a failure is a bug of the
// program source `what` ("generator", "trace sample"): Internal naming it,
// the seed and the parser's or verifier's words.
StatusOr<std::unique_ptr<HloModule>> ParseGenerated(const std::string& text,
                                                    const std::string& what,
                                                    uint64_t seed);

// Generates the program for `seed` (see the file comment). Errors:
// InvalidArgument for unusable options (no dtype, max_elements < 1,
// unknown focus names); Internal when the generated module fails to parse
// or verify (a generator bug; the message holds the verifier's words).
StatusOr<GeneratedCase> GenerateSynthetic(uint64_t seed,
                                          const GeneratorOptions& options);

}  // namespace trench::fuzz
