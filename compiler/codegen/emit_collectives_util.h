// Plumbing of the collective emitters (emit_all_reduce.cc,
// emit_collectives_move.cc): where each chip stands in a collective's
// groups, and the link protocol every collective kernel follows.
//
// Every chip runs the same kernel, so what depends on the chip is looked
// up at run time: the kernel writes a small table to SMEM (one row per
// chip: its position in its group, its ring neighbours and its group's
// members, from DeviceGroups on the mesh) and reads its own row by
// `chipid`. Flags are immediates, so code naming a flag that depends on
// the chip branches on the chip (EmitPerChip).
//
// Protocol (tpu/ISA.md, "Slice"):
//  - A chip writes into a peer only the peer's collective scratch buffer
//    (BufferPlan::collective_scratch), and only after the peer's "ready"
//    for this collective: flagsignal on flag kReadyFlagBase + the ready's
//    sender, raised when the peer enters the collective's kernel (so its
//    earlier kernels, and its reads of the scratch in earlier
//    collectives, are done). Ready flags are per sender, so the readies
//    of different collectives never mix: a chip consumes one sender's
//    signals in the order the sender raised them (one link, in order).
//  - Data lands by rdmastart on flag kDataFlag. A chip's flagwait on it
//    consumes exactly this collective's transfers: no peer sends it data
//    for a later collective before the chip's ready for that one.
//
// Registers: s0 = chipid, s10 = position in the group, s11 = the next
// member (ring order), s12 = the previous one, s9 scratch of EmitPerChip;
// emitters use s13..s19 for addresses.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/codegen/kernel_builder.h"
#include "compiler/ir/collective_groups.h"
#include "compiler/ir/hlo_instruction.h"

namespace trench::codegen::coll {

inline constexpr int kDataFlag = 0;
inline constexpr int kReadyFlagBase = 8;  // + the sender's chip index.
inline constexpr int kSendSem = 1;        // rdmastart's local semaphore.
inline constexpr int kLocalSem = 2;       // Local DMAs.

// Each chip's group in one collective; chip c is device c of the mesh.
struct GroupMap {
  int chips = 1;                              // The slice: the mesh's devices.
  int64_t size = 1;                           // Members of every group.
  std::vector<std::vector<int64_t>> members;  // Per chip: its group.
  std::vector<int64_t> position;              // Per chip: its place in it.
};

// The groups of `instr` (all-reduce, all-gather, reduce-scatter,
// all-to-all) on `mesh`. InvalidArgument ("hloc: ...") when DeviceGroups
// fails or the groups differ in size (the ring's chunking is static).
StatusOr<GroupMap> MapGroups(const HloInstruction& instr,
                             const DeviceMesh& mesh);

// The chips whose groups have one size, and their map. A chip outside
// `chips` has a placeholder row in `map` (a group of itself, repeated):
// code emitted for the class runs on its chips only (EmitOnChips).
struct GroupClass {
  GroupMap map;
  std::vector<int> chips;
};
// The groups of `instr` by size, smallest first: one class when all
// groups have the same size. Only all-reduce may have groups of different
// sizes (XLA's verifier requires equal ones of the others; so does
// DeviceGroups). InvalidArgument ("hloc: ...") when DeviceGroups fails.
StatusOr<std::vector<GroupClass>> MapGroupClasses(const HloInstruction& instr,
                                                  const DeviceMesh& mesh);

// s0 = chipid; writes the group table to SMEM and loads this chip's row:
// s10 = position, s11 = next member, s12 = previous member.
void EmitGroupPlace(KernelBuilder& kb, const GroupMap& g);
// s<reg> = member j of this chip's group. REQUIRES: EmitGroupPlace.
void EmitMember(KernelBuilder& kb, const GroupMap& g, int64_t j, int reg);

// Emits body(c) for each chip c, run only on chip c (a branch on s0).
void EmitPerChip(KernelBuilder& kb, int chips,
                 const std::function<void(int)>& body);
// Emits body() once, run only on the chips listed (a branch on s0).
// REQUIRES: s0 = chipid.
void EmitOnChips(KernelBuilder& kb, const std::vector<int>& chips,
                 const std::function<void()>& body);

// The ready handshake: chip c tells each chip of writers(c) (those that
// write into c's scratch in this collective) that it entered, then waits
// for the ready of each chip of targets(c) (those c writes into).
using ChipList = std::function<std::vector<int64_t>(int)>;
void EmitHandshake(KernelBuilder& kb, int chips, const ChipList& writers,
                   const ChipList& targets);
// The ring's: writers {previous member}, targets {next member}.
void EmitRingHandshake(KernelBuilder& kb, const GroupMap& g);

// s<dst> = (s10 + add) mod n, then times `scale` (add >= 0).
void EmitPositionOffset(KernelBuilder& kb, int dst, int64_t add, int64_t n,
                        int64_t scale);

// The ring's gather steps over n blocks of `bytes` bytes in the scratch
// area at `area`: at step k = 0..n-2 a chip forwards block
// (p + first - k) mod n of its area to the same place in the next
// member's, then waits for the block the previous member sends it.
// REQUIRES: the block at step 0 is in place; EmitGroupPlace and the ring
// handshake before.
void EmitRingForward(KernelBuilder& kb, const std::string& scratch,
                     int64_t area, int64_t bytes, int64_t n, int64_t first);

// Zeroes `bytes` bytes of VMEM at `vmem` (u8 stores, one tile loop).
void EmitZeroVmem(KernelBuilder& kb, int64_t vmem, int64_t bytes);

// Internal (naming `instr`) when the plan has no collective scratch.
Status CheckScratch(const HloInstruction& instr, const std::string& scratch);

// `bytes` rounded up to the 512-byte granule scratch areas are laid out in.
inline int64_t AlignScratch(int64_t bytes) { return (bytes + 511) / 512 * 512; }

// Bytes of the collective scratch `instr` needs on `mesh` (0 for other
// ops or groups MapGroups refuses; the emitter reports those).
int64_t CollectiveScratchBytes(const HloInstruction& instr,
                               const DeviceMesh& mesh);

}  // namespace trench::codegen::coll
