// The trace cutter: cut a module into subgraph modules that a target can
// run, given a predicate saying which instructions it can run.
//
// What is cut: the entry computation and every computation called as
// control flow (while condition/body, call, conditional branches), each
// separately. Computations applied by an instruction (fused computations,
// reduce/sort/scatter/map to_apply, select-and-scatter) belong to that
// instruction and are never cut: the predicate judges the instruction as a
// whole.
//
// How: in one computation, the instructions the predicate accepts
// (parameters and scalar constants excepted) are grouped into connected
// components (operand edges between accepted instructions). A get-tuple-element
// joins only if its operand is in the component (otherwise its value is an
// input, so no tuple-shaped inputs arise from it). A component larger than
// max_instructions is split into consecutive pieces of its post order.
// Each piece becomes one module:
//   * its instructions are cloned in post order into a new entry
//     computation (called computations are deep-copied into the module);
//   * every operand from outside the piece (a rejected instruction, a
//     parameter of the original computation, an instruction of another
//     piece) becomes a parameter of the same shape, named after it, in
//     order of first use; a scalar constant operand is cloned instead, so
//     init values of reductions stay constants;
//   * its outputs are the piece's instructions used outside it, the
//     computation's root, and instructions without users: the root is that
//     value, or a tuple of them in post order;
//   * control dependencies are dropped.
// Pieces with nothing to compute (only parameters, constants, tuples and
// get-tuple-elements) are left out.
//
// Shape scaling (SubgraphOptions::max_elements > 0): a subgraph module with
// an array over max_elements elements is rewritten by ScaleShapes (below)
// into a program of the same structure with smaller dimensions. If no
// scaling verifies, the piece is split in two halves of its post order,
// recursively, each scaled on its own; a single instruction that still
// cannot be scaled is dropped (counted in CutResult::unscalable). The predicate
// therefore judges the instruction at trace size; a caller that wants "runs
// once scaled" scales IsolateInstruction's module in its predicate.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/hlo_module.h"
#include "triage/fuzz/collective_scale.h"

namespace trench {

// True if the target can run `instr` (of the module being cut). Called
// once per instruction that is neither a parameter nor a scalar constant.
using CanRunPredicate = std::function<bool(const HloInstruction&)>;

struct SubgraphOptions {
  // Largest number of instructions per subgraph (0: no limit).
  int64_t max_instructions = 0;
  // Largest array (elements) of a subgraph module; larger ones are scaled
  // (see the file comment). 0: no limit, shapes are kept.
  int64_t max_elements = 0;
  // Devices of the mesh a subgraph with device ops (collectives,
  // partition-id, replica-id; kept when the predicate accepts them) is
  // scaled to, with its shapes (collective_scale.h: the trace's mesh,
  // TraceMesh, becomes ScaledMesh(mesh, max_devices), groups and pairs
  // are rewritten for it, all-gather and reduce-scatter sizes follow the
  // new group sizes, and CheckCollectives must hold). Only with
  // max_elements > 0; otherwise such a subgraph keeps the trace's mesh.
  int64_t max_devices = 4;
};

struct Subgraph {
  std::unique_ptr<HloModule> module;
  std::string computation;  // The cut computation's name.
  // The original instructions the entry computes (parameters and cloned
  // scalar constants excepted), in post order.
  std::vector<std::string> instructions;
  // inputs[i]: the original instruction parameter(i) stands for.
  std::vector<std::string> inputs;
  // VerifyModule's answer on the subgraph (ok for a verified input
  // module; kept rather than dropping the subgraph).
  Status verified;
  // The ScaleShapes factor applied to the module (1: trace shapes).
  int64_t scale_factor = 1;
  // The devices it runs on: 1 x 1 unless it holds device ops (an SPMD
  // program; see SubgraphOptions::max_devices).
  DeviceMesh mesh;
};

struct CutResult {
  std::vector<Subgraph> subgraphs;
  int64_t instructions = 0;  // Judged instructions (see CanRunPredicate).
  int64_t accepted = 0;      // Accepted (a get-tuple-element also needs
                             // its operand accepted).
  // Accepted instructions in no subgraph: their module could not be scaled
  // within max_elements even alone.
  int64_t unscalable = 0;
};

// Cuts `module` as described above. Errors: InvalidArgument when the
// module has no entry computation. Never crashes on a parsed module.
StatusOr<CutResult> CutSubgraphs(const HloModule& module,
                                 const CanRunPredicate& can_run,
                                 const SubgraphOptions& options = {});

// A module computing `instr` alone: its operands become parameters (scalar
// constants are cloned), called computations are deep-copied. Used for
// trial compiles (a predicate "does the target compile this instruction").
std::unique_ptr<HloModule> IsolateInstruction(const HloInstruction& instr);

// Scaling scheme. For a target factor f (a power of two) per module, a
// size map s(d) = d / g(d), g(d) a power of two dividing d, is applied to
// every array dimension of every instruction of every computation of the
// module (parameters, fused and applied computations included), and to
// the size-carrying attributes: a slice of a scaled dim keeps its stride
// and takes s(result dim) elements from the same relative start; a pad's
// low edge becomes s(low) and its high edge makes up s(result dim)
// (interior stays); dynamic-slice sizes and gather slice_sizes map by s.
// Index-valued attributes (broadcast/transpose/reduce dimensions,
// iota_dimension, dot/gather/scatter/convolution dimension numbers) need
// nothing; windows of reduce-window/convolution stay. A constant array
// whose shape shrinks is replaced by its leading corner. One map for all
// sizes keeps elementwise ops, broadcasts, transposes, concatenates,
// slices and pads of scaled dims consistent. By default g(d) = f for
// every d >= kMinScaledDim with d / f >= kMinScaledSize, else 1; when no
// f fits that way, every d >= kMinScaledDimLastResort takes the largest
// power of two up to f that keeps it >= kMinScaledSize ([80,128,64,128]
// -> [10,16,8,16] for f = 8). Reshapes: for each group of consecutive dims
// that a reshape or bitcast splits or merges (size-1 dims aside, equal
// products on both sides, more than one dim on a side: [.., 64, 128] <->
// [.., 8192]), the products of g over both sides must be equal, so that
// the scaled sides' products are. An unbalanced group doubles g of the
// sizes on its low side, largest first, while they stay scalable (8192 ->
// 1024 with 128 -> 16 for f = 8; [1024,1024] -> [1048576] with 1048576 /
// f^2), else halves g of the sizes on its high side, smallest first, for
// good. When that module does not verify (another size relation, such as
// a concatenate of two sizes into a doubled one), the conservative map is
// tried for the same f: g = 1 for every size a reshape group holds.
// After scaling the module must verify (VerifyModule), which catches
// whatever the map breaks (odd slices, windows larger than a scaled dim).
// Semantics: a new program of the same structure, not the original's.
inline constexpr int64_t kMinScaledDim = 256;
inline constexpr int64_t kMinScaledDimLastResort = 16;
inline constexpr int64_t kMinScaledSize = 8;
inline constexpr int64_t kMaxScaleFactor = 4096;

struct ScaledModule {
  std::unique_ptr<HloModule> module;
  int64_t factor = 1;  // 1: every array was already within the limit.
};

// What a scaling must also respect (a mesh-scaled module's collectives):
// each ratio's large size takes the factor g(small) * ratio (an all-gather
// whose group shrank; f = 1 is then tried first, since the shapes change
// even within the limit), and `check` (when set) must accept the scaled
// module besides VerifyModule.
struct ScaleConstraints {
  std::vector<fuzz::SizeRatio> ratios;
  std::function<Status(const HloModule&)> check;
};

// The mildest scaling (f = 2, 4, ..., kMaxScaleFactor) of a copy of
// `module` in which every array has at most `max_elements` elements and
// which VerifyModule (and constraints.check) accepts. Errors:
// FailedPrecondition (with the last verifier message) when no factor
// works. `module` is unchanged.
StatusOr<ScaledModule> ScaleShapes(const HloModule& module,
                                   int64_t max_elements,
                                   const ScaleConstraints& constraints = {});

// True if the result and every operand of `instr` (each array leaf) has at
// most `max_elements` elements.
bool MaxElementsWithin(const HloInstruction& instr, int64_t max_elements);

}  // namespace trench
