// Kernel emitters, one per family of HLO ops. Each emits the body of one
// kernel computing `instr` from its operands' buffers (plan) into its
// result buffer: operands are DMA'd whole into VMEM, the result is built in
// VMEM tile by tile (8x128 vregs, ragged tails masked) and DMA'd back.
// Each returns Unimplemented("hloc: cannot compile <op> for <dtype>") for
// cases it does not handle, before emitting anything that matters.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/codegen/buffer_plan.h"
#include "compiler/codegen/kernel_builder.h"
#include "compiler/ir/hlo_instruction.h"

namespace trench::codegen {

// "hloc: cannot compile <op> for <type>".
Status CannotCompile(const HloInstruction& instr, const std::string& type);

// The registry (emitters.def): every emitter has this signature.
#define EMITTER(fn, sources)                                     \
  Status fn(const HloInstruction& instr, const BufferPlan& plan, \
            KernelBuilder& kb);
#include "compiler/codegen/emitters.def"

// An emitter of the registry, for `hloc --capabilities`.
struct EmitterInfo {
  std::string_view name;  // Its function's name ("EmitReduce").
  // The files that implement it: space-separated globs relative to the
  // repository root.
  std::string_view sources;
  std::vector<std::string> ops;  // The opcodes it compiles, HLO spelling.
};
// Every emitter, in registry order.
const std::vector<EmitterInfo>& RegisteredEmitters();

// True if emitters.def names an emitter for `op`.
bool IsEmittable(HloOpcode op);
// Emits `instr` with its registered emitter; CannotCompile for opcodes
// absent from the registry.
Status EmitInstruction(const HloInstruction& instr, const BufferPlan& plan,
                       KernelBuilder& kb);

// A source of an index-mapped gather: each output element at multi-index c
// (row-major over `out_dims`) whose coordinates satisfy every range in
// `ranges` reads element offset + sum_d coeff[d] * c[d] of the VMEM array at
// `vmem` (memory type `mem`).
struct GatherSource {
  int64_t vmem = 0;
  std::string mem;
  int64_t offset = 0;
  std::vector<int64_t> coeff;
  struct Range {
    int dim;
    int64_t lo, hi;  // lo <= c[dim] < hi
  };
  std::vector<Range> ranges;
};

// Emits a tile loop writing the `out_dims` array (memory type `out_mem`,
// lane type `lane`) to VMEM `out_vmem` from `sources`; elements covered by
// no source are zero. REQUIRES: rank(out_dims) <= 8, element count > 0.
void EmitGather(KernelBuilder& kb, const std::vector<int64_t>& out_dims,
                const std::vector<GatherSource>& sources, int64_t out_vmem,
                const std::string& out_mem, const std::string& lane);

// Emits v2+d = coordinate d of each lane of the current tile (from v31,
// see KernelBuilder::LinearIndex) for the row-major array `dims`.
void EmitCoordinates(KernelBuilder& kb, const std::vector<int64_t>& dims);

}  // namespace trench::codegen
