// The target compiler's entry points: HLO module -> TPU executable (.tpux).
//
// Compile() is the whole compiler: the pass pipeline (compiler/passes,
// under the bisection controls), then code generation. CompileModule() is
// the back end alone: it compiles the module as it is, one kernel per
// instruction that computes something (a fusion is one instruction),
// buffers from buffer_plan.h, then one kernel copying the entry's result
// leaves (and the tapped values) to the output (and tap) buffers.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/ir/collective_groups.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/pipeline.h"
#include "tpu/executable.h"

namespace trench::codegen {

struct CompileOptions {
  // Taps: every instruction of the entry and of its fused computations
  // (taps_all) or the named ones. A tapped array value becomes a tap buffer
  // labelled with the instruction name; a tuple value gives one tap per
  // array leaf, labelled "name#i".
  bool taps_all = false;
  std::vector<std::string> taps;
  // Pass-pipeline controls (Compile): pipeline.h describes them. The name
  // "buffer-assignment" in disabled_passes, or a pass_limit used up by the
  // pipeline's executions, turns buffer reuse off.
  std::vector<std::string> disabled_passes;
  std::optional<int64_t> pass_limit;
  std::optional<int64_t> rewrite_limit;
  std::string pass_dump_dir;  // Compile: module after each pass; "" = none.
  // VMEM capacity assumed per kernel (tpu::SimOptions::vmem_bytes).
  int64_t vmem_bytes = 16 << 20;
  // The SPMD mesh the program runs on: chip c of a slice of mesh.size()
  // chips (the executable's `slice`) is device c, replica c / partitions,
  // partition c % partitions (collective_groups.h). Collectives exchange
  // data between the chips (emit_all_reduce.cc, emit_collectives_move.cc).
  DeviceMesh mesh;
  // Back end (CompileModule): whether buffer assignment may reuse buffers,
  // and the context whose rewrite counter its decisions ask (nullptr: an
  // unlimited one). Compile() sets both from the controls above.
  bool buffer_assignment = true;
  PassContext* context = nullptr;
};

// Compiles the entry computation of `module` as it is (REQUIRES:
// VerifyModule ok). Errors: Unimplemented("hloc: cannot compile <op> for
// <dtype>") for an op or element type the code generator does not support;
// NotFound for a tap naming no instruction of the entry or of a fused
// computation; InvalidArgument for a mesh of more than tpu::kMaxSliceChips
// devices or collective groups the mesh does not hold; ResourceExhausted when
// an instruction's operands do not fit in VMEM. Never crashes.
StatusOr<tpu::Executable> CompileModule(const HloModule& module,
                                        const CompileOptions& options);

// What Compile() produced and decided.
struct Compilation {
  tpu::Executable executable;
  std::unique_ptr<HloModule> optimized;  // The module code was emitted for.
  std::vector<PassRunStats> passes;      // Every pass run or skipped.
  int64_t pass_executions = 0;
  // Every rewrite decision of the passes and of buffer assignment, in
  // order; with --rewrite-limit=N the N-th allowed one is the last allowed.
  std::vector<RewriteDecision> decisions;
  int64_t rewrites_allowed = 0;
  bool buffer_assignment = false;  // Buffer reuse ran.
  // Requested taps whose instruction the passes removed (no tap output).
  std::vector<std::string> taps_unavailable;
  std::vector<std::string> log;  // Pass diagnostics.
};

// The whole compiler: runs the default pass pipeline on a copy of `module`
// under the controls in `options`, then CompileModule. Tap names must name
// instructions of the input module (NotFound otherwise); those the passes
// removed are listed in taps_unavailable. Errors: InvalidArgument for an
// unknown or required pass in disabled_passes or an input that does not
// verify; a pass's failure (Internal, naming the pass); CompileModule's.
StatusOr<Compilation> Compile(const HloModule& module,
                              const CompileOptions& options);

// The instructions a tap may name: those of the entry computation and of
// the computations its fusions call (transitively).
std::vector<const HloInstruction*> TappableInstructions(const HloModule& m);

// The op names (HLO spelling) and element types CompileModule supports,
// for `hloc --capabilities`.
std::vector<std::string> SupportedOps();
std::vector<std::string> SupportedDtypes();

}  // namespace trench::codegen
