// Internals of the fused-kernel emitter (emit_fusion*.cc): the per-tile
// evaluator of a fused computation.
//
// Values are evaluated at "positions": registers of s32 linear element
// indices (row-major; every buffer is dense row-major, so a reshape keeps
// the position). Elementwise ops evaluate their operands at their own
// position; broadcast / transpose / slice map the position (index math on
// the coordinates); iota reads its coordinate; staged arrays (fusion
// parameters, the dot's result) are loaded (contiguous at the tile
// position) or gathered. Each body is emitted twice over the same
// traversal: a dry run counts the uses of every (value, position), the
// real run emits and frees each register after its last use.
//
// Register spilling: when v0..v27 run out, the least recently used value
// that is not in use right now (an operand of the op being emitted, or a
// value a driver holds between Get and Release) is stored to a VMEM spill
// slot (one tile: 4 KiB, 8 KiB for a register pair) and reloaded at its
// next use; a value already in its slot is not stored again. A lane-wise
// op that runs out of scratch registers is emitted again after one more
// spill, until it fits. Slots are allocated (AllocVmem) only when a spill
// happens, and reused after their value's last use, so kernels that fit
// in registers are emitted exactly as before. A body is straight-line
// code within one tile iteration, so a slot never outlives its iteration.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "compiler/codegen/emitters.h"
#include "compiler/codegen/streaming.h"
#include "compiler/codegen/vector_ops.h"
#include "compiler/passes/fusion_support.h"

namespace trench::codegen::fusion_internal {

// An array staged whole in VMEM (dense row-major, memory type `mem`), or,
// when `stream` >= 0, streamed input `stream` of a streamed kernel
// (stream_fusion.h): read only at the body's own position, through the
// evaluator's stream loader.
struct Staged {
  int64_t vmem = 0;
  std::string mem;
  int stream = -1;
};

// Where a tapped fused instruction's value goes (VMEM, then DMA'd out).
struct TapRegion {
  int64_t vmem = 0;
  std::string mem;
};

class TileEvaluator {
 public:
  // `staged`: values read from VMEM (fused parameters, the dot). `taps`:
  // in-loop tap stores for these instructions (only those in `covered`).
  // The body's own position is the current linear tile (contiguous, s20
  // and m0 from KernelBuilder::BeginLinearTiles) when `tile_reg` < 0, else
  // the indices in register `tile_reg` (lanes under m0).
  TileEvaluator(
      KernelBuilder& kb, VRegPool& pool,
      const std::unordered_map<const HloInstruction*, Staged>& staged,
      const std::unordered_map<const HloInstruction*, TapRegion>& taps,
      int tile_reg);

  // Streamed kernels: `load(dst, stream)` emits vD = the body's own
  // position of streamed input `stream` (Staged::stream) under m0.
  void SetStreamLoader(std::function<void(int dst, int stream)> load) {
    stream_load_ = std::move(load);
  }
  // Dry run on/off: while dry, Get/Release count uses and emit nothing.
  void SetDry(bool dry) { dry_ = dry; }
  bool dry() const { return dry_; }
  // The register holding `instr`'s value at the body's position (lane
  // form). Every Get must be matched by a Release (same order in the dry
  // and real runs).
  StatusOr<int> Get(const HloInstruction* instr);
  void Release(const HloInstruction* instr);
  // Frees the registers the body still holds and forgets the counts (the
  // evaluator can then run another body).
  void End();
  // Values stored to spill slots so far (for tests and dumps).
  int spills() const { return spills_; }

 private:
  using Key = std::pair<const HloInstruction*, int>;  // (value, position)

  // Follows position-preserving and position-mapping ops down to the
  // instruction that produces a value; updates `pos`.
  StatusOr<const HloInstruction*> Resolve(const HloInstruction* instr,
                                          int* pos);
  StatusOr<int> Eval(const HloInstruction* instr, int pos);
  void ReleaseKey(const HloInstruction* instr, int pos);
  StatusOr<int> Compute(const HloInstruction* instr, int pos);
  // The register of position `pos`'s linear indices.
  StatusOr<int> PositionReg(int pos);
  StatusOr<int> MapPosition(const HloInstruction* index_op, int pos);
  void ReleasePosition(int pos);
  // A free register (pair if wide), spilling values when none is left.
  StatusOr<int> Alloc(bool wide);
  // Stores the least recently used unpinned value to its slot and frees
  // its register; false when no value can be spilled.
  bool SpillOne();
  int64_t TakeSlot(bool wide);
  // EmitVectorOp, spilling values until its scratch registers fit.
  Status EmitVectorOpSpilling(const HloInstruction& instr, int dst,
                              const std::vector<int>& srcs);
  void Pin(const Key& key);
  void Unpin(const Key& key);

  KernelBuilder& kb_;
  VRegPool& pool_;
  const std::unordered_map<const HloInstruction*, Staged>& staged_;
  const std::unordered_map<const HloInstruction*, TapRegion>& taps_;
  bool dry_ = true;
  // Positions: 0 is the body's own. Derived ones: (index op, parent).
  struct Position {
    const HloInstruction* op = nullptr;
    int parent = -1;
    int reg = -1;
    int uses = 0;  // Dry: counted; real: remaining.
  };
  std::vector<Position> positions_;
  std::map<std::pair<const HloInstruction*, int>, int> position_ids_;
  struct Value {
    int reg = -1;
    bool wide = false;
    bool spillable = false;  // One register or a pair (not a c128 quad).
    int uses = 0;
    int64_t slot = -1;  // Its spill slot (holding the value) or -1.
    uint64_t last = 0;  // When it was last used (LRU).
  };
  std::map<Key, Value> values_;
  std::map<Key, int> pinned_;  // In use now (count).
  uint64_t tick_ = 0;
  std::vector<int64_t> free_slots_[2];  // [wide]: slots no value holds.
  int spills_ = 0;
  int tile_reg_;  // < 0: the body's position is the linear tile.
  std::function<void(int, int)> stream_load_;
};

// Runs `body` twice over the evaluator: dry (counting uses), then for real.
template <typename Body>
Status TwoPass(TileEvaluator& ev, Body body) {
  ev.SetDry(true);
  RETURN_IF_ERROR(body());
  ev.SetDry(false);
  RETURN_IF_ERROR(body());
  ev.End();
  return Status::Ok();
}

// The tile loop of a reduce fusion (kInput, see emit_fusion.cc): over the
// reduce output's tiles, accumulating every reduce root and scattering the
// other roots (shaped like the reduce input) to `outs` (one per root).
Status EmitFusedReduceLoop(
    KernelBuilder& kb, VRegPool& pool, const FusionSpec& spec,
    const std::vector<const HloInstruction*>& roots,
    const std::vector<Staged>& outs,
    const std::unordered_map<const HloInstruction*, Staged>& staged,
    const std::unordered_map<const HloInstruction*, TapRegion>& taps);

// Emits C = dot(lhs, rhs) of the fused `dot` (operands staged in VMEM) and
// leaves the result dense row-major in its element type at a new VMEM
// region (returned). REQUIRES: AnalyzeFusion accepted the dot.
StatusOr<int64_t> EmitFusedDot(KernelBuilder& kb, const HloInstruction& dot,
                               const Staged& lhs, const Staged& rhs);

// The values a fused computation returns: its root, or the root tuple's
// operands.
std::vector<const HloInstruction*> FusionRoots(const HloComputation& fused);

// Streamed fusions (stream_fusion*.cc). A fusion's parameters and their
// operands' buffers.
using ParamBuffers = std::unordered_map<const HloInstruction*, ArrayBuffer>;

// How the fused expression reads each parameter: at the body's own
// position (`own`) and/or at mapped ones (through broadcast, transpose,
// slice: `mapped`).
struct ParamAccess {
  std::unordered_set<const HloInstruction*> own, mapped;
  // Adds the reads of `x` evaluated at the own position (own) or a mapped
  // one (!own).
  void Collect(const HloInstruction* x, bool at_own);

 private:
  std::unordered_set<const HloInstruction*> seen_own_, seen_mapped_;
};

// Places every parameter `access` reads: those read only at the own
// position with `n` elements stream (Staged::stream = their index in
// `streamed`, appended as StreamArrays); the others are DMAed whole into
// new VMEM. ResourceExhausted (naming the parameter) when one does not fit.
StatusOr<std::unordered_map<const HloInstruction*, Staged>> PlaceParams(
    KernelBuilder& kb, const HloInstruction& fusion, const ParamBuffers& params,
    const ParamAccess& access, int64_t n, std::vector<StreamArray>* streamed);

// The reduce-fusion fold streamed in slabs (stream_fusion_reduce.cc):
// computes every root of the kInput fusion `instr` into `outs`.
Status EmitStreamedReduceFusion(KernelBuilder& kb, const HloInstruction& instr,
                                const FusionSpec& spec,
                                const std::vector<const HloInstruction*>& roots,
                                const ParamBuffers& params,
                                const std::vector<ArrayBuffer>& outs);

}  // namespace trench::codegen::fusion_internal
