// sort of operands too large to stage whole (emit_sort.cc stages them):
// the operands are viewed as [outer, len, inner] (len the sort dimension,
// outer and inner the products of the dims before and after it) and
// sorted tile by tile. A tile is a box [o, len, w] of every operand --
// whole rows along the sort dimension -- DMAed into VMEM (one strided box
// DMA per operand), sorted by the staged kernel's row sort (EmitSortTile,
// the oracle's stable merge sort, so equal keys keep their order) and
// DMAed to the results. Tiles take as many outer indices as fit with all
// of inner (w = inner), or, when not even one outer index fits, one outer
// index and as many inner indices as fit; the last tile of a row of tiles
// is ragged (its row sort is emitted for its own sizes, under a branch).
// A row that alone exceeds VMEM is sorted in HBM, row by row: blocks of
// it that fit two at a time are sorted, then p rounds (p blocks) of
// odd-even transposition merge-split adjacent blocks (both staged, sorted
// stably, written back smaller half first), which sorts the row and keeps
// equal keys in order; O(p) times the work of one sort of the row.
// No double buffering: the row sort is O(len log len) gathers per element
// while a tile's DMA is one transfer, so overlapping them gains little.
//
// Registers: s4..s9 (tile loop; row, round, block and segment loops), s10..s19
// (box DMAs), the row sort's s0..s3, s10..s14, s20..s31 and vector registers;
// semaphore 0.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/codegen/buffer_plan.h"
#include "compiler/codegen/kernel_builder.h"
#include "compiler/ir/hlo_instruction.h"

namespace trench::codegen {

// One staged tile of a sort: `dtypes` of the N operands, their [outer,
// len, inner] dims, the VMEM of each operand's input and output (dense
// row-major tile) and of the two s32 permutation arrays.
struct SortTile {
  std::vector<std::string> dtypes;
  int64_t outer = 1, len = 1, inner = 1;
  std::vector<int64_t> in_vmem, out_vmem;
  int64_t perm[2] = {0, 0};
};

// VMEM bytes (512-aligned) of a tile of `elements` elements per operand:
// inputs, outputs and the two permutations.
int64_t SortTileBytes(const std::vector<std::string>& dtypes, int64_t elements);

// Emits the row sort of tile `t` (emit_sort.cc): out = the inputs sorted
// along len by `instr`'s comparator, stable. REQUIRES: the comparator
// passed CheckScalarComputation with 2N parameters; t.len >= 1, rows > 0.
// Errors: out of vector registers for the comparator.
Status EmitSortTile(KernelBuilder& kb, const HloInstruction& instr,
                    const SortTile& t);

// Emits sort `instr` tile by tile as above; `t` gives the dtypes and the
// [outer, len, inner] view (its VMEM fields are ignored). Errors:
// ResourceExhausted when not even two elements of a row fit in VMEM;
// EmitSortTile's.
Status EmitStreamedSort(const HloInstruction& instr,
                        const std::vector<ArrayBuffer>& ins,
                        const std::vector<ArrayBuffer>& outs, const SortTile& t,
                        KernelBuilder& kb);

}  // namespace trench::codegen
