// KernelBuilder: assembles one TPU kernel as assembly text (tpu/ISA.md) and
// parses it with the TPU assembler, so every emitted kernel is validated by
// the machine's own grammar before it reaches an executable.
//
// Register conventions shared by the emitters (emitters.h):
//   s20..s27  owned by the linear tile loop (BeginLinearTiles)
//   s28..s31  scratch of the helpers below
//   m0        the tail mask of the current tile (valid elements)
//   v28..v31  scratch of the helpers below (v31 = linear element index)
// Emitters own everything else.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "tpu/isa.h"

namespace trench::codegen {

// An integer operand (immediate, offset, count) as assembly text.
inline std::string I(int64_t x) { return std::to_string(x); }

// `bytes` rounded up to AllocVmem's 512-byte alignment: what an
// allocation of that size takes.
inline int64_t VmemAligned(int64_t bytes) { return (bytes + 511) / 512 * 512; }

class KernelBuilder {
 public:
  // `name` must be a tpux identifier; `vmem_capacity` bounds AllocVmem.
  KernelBuilder(std::string name, int64_t vmem_capacity);

  // Appends one instruction (assembly text, no indentation).
  void Emit(const std::string& line);
  // How many instructions and labels are emitted so far, and dropping
  // those after the first `n` (to emit an attempt again).
  size_t line_count() const { return line_ends_.size(); }
  void TruncateLines(size_t n);
  // A fresh label name "<hint>_<n>" (unique in this kernel).
  std::string NewLabel(const std::string& hint);
  void PlaceLabel(const std::string& label);

  // Reserves `bytes` of VMEM (512-byte aligned) and returns its offset.
  int64_t AllocVmem(int64_t bytes);
  // The VMEM capacity given at construction, and the bytes reserved so far.
  int64_t vmem_capacity() const { return vmem_capacity_; }
  int64_t vmem_used() const { return vmem_used_; }
  // Stack discipline for several instructions in one kernel (control
  // flow): VmemMark() is the current allocation offset; ReleaseVmem(mark)
  // frees everything allocated since that mark, so later AllocVmem calls
  // reuse it. The kernel's `.vmem` is the high-water mark of all
  // allocations. REQUIRES: `mark` came from VmemMark() of this builder and
  // no mark taken after it is still to be released.
  int64_t VmemMark() const { return vmem_used_; }
  void ReleaseVmem(int64_t mark);

  // Copies `bytes` of HBM buffer `buffer` (from byte `offset` in it) to
  // VMEM `vmem` (or back) and waits.
  void DmaIn(int64_t vmem, const std::string& buffer, int64_t bytes,
             int64_t offset = 0);
  void DmaOut(const std::string& buffer, int64_t vmem, int64_t bytes);

  // Linear tile loop over `n` elements, 1024 (one 8x128 vreg) per step:
  // inside, s20 is the index of the tile's first element and m0 masks the
  // valid elements (a linear prefix of the tile on the last step).
  // REQUIRES: n > 0; calls nest not.
  void BeginLinearTiles(int64_t n);
  void EndLinearTiles();
  // Loads/stores the current tile of a dense VMEM array at `vmem` whose
  // elements have memory type `mem` (lanes convert per vld/vst), under m0.
  // `mem` may also be c64 (one u64 pair: re in vreg, im in vreg+1) or c128
  // (a quad: re f64 in vreg:vreg+1, im f64 in vreg+2:vreg+3, moved as two
  // vgather/vscatter.u64 halves; clobbers v29, v30).
  void LoadTile(int vreg, const std::string& mem, int64_t vmem);
  void StoreTile(const std::string& mem, int64_t vmem, int vreg);
  // vD = the 1024 (m0-masked) consecutive elements of memory type `mem` at
  // `addr` ("vmem[...]"), and the store; c64/c128 as for LoadTile (c128
  // clobbers v28..v30).
  void LoadLanes(int vreg, const std::string& mem, const std::string& addr);
  void StoreLanes(const std::string& mem, const std::string& addr, int vreg);
  // vgather/vscatter of element type `type` (a memory type, c64 or c128 as
  // for LoadTile) at `addr` (the memory operand text "vmem[...]") with the
  // element indices in v<idx> (s32), under `mask` ("" or "m<k>"). c128
  // gathers the halves at 2*idx and 2*idx+1 in 8-byte units (clobbers v29,
  // v30; REQUIRES idx not in v28..v30).
  void Gather(int vreg, const std::string& type, const std::string& addr,
              int idx, const std::string& mask);
  void Scatter(const std::string& type, const std::string& addr, int idx,
               int vreg, const std::string& mask);
  // v31 = the linear element index of each lane of the current tile (s32).
  void LinearIndex();
  // vD = splat of the 32-bit immediate `value` typed `type`.
  void Splat(int vreg, const std::string& type, const std::string& value);

  // Parses the text. ResourceExhausted when the VMEM use exceeds the
  // capacity; Internal (with the text) if the assembler rejects it.
  StatusOr<tpu::Kernel> Finish() const;
  // The assembly text so far (for dumps and errors).
  std::string Text() const;

 private:
  std::string name_;
  int64_t vmem_capacity_;
  int64_t vmem_used_ = 0;
  int64_t vmem_peak_ = 0;  // High-water mark of vmem_used_ (`.vmem`).
  int next_label_ = 0;
  // The emitted lines, each ending in '\n', one after the other (one
  // buffer instead of a string per line), and where each line ends.
  std::string body_;
  std::vector<size_t> line_ends_;
  std::string tile_label_;
};

// The vld/vst/vgather type moving HLO element type `hlo_type`: itself for
// real types, u64 for c64 (re bits low, im bits high); "c128" stays c128
// (no single memory type: KernelBuilder's helpers move it as two halves).
std::string MemType(const std::string& hlo_type);
// Bytes per element of a memory type (c64: 8, c128: 16); 0 if unknown.
int MemTypeBytes(const std::string& mem);
// Registers holding one value of `hlo_type`: 1, 2 (64-bit types and c64)
// or 4 (c128: an f64 pair for re, then one for im).
int RegCount(const std::string& hlo_type);

// Register-lane type of an HLO element type name, i.e. what `vld.<type>`
// leaves in a register (tpu/ISA.md): f32/bf16/f16 -> f32; s8/s16/s32 and
// pred (0/1) -> s32; u8/u16/u32 -> u32; f64/s64/u64 -> themselves (an
// even/odd register pair). Empty for unsupported types.
std::string LaneType(const std::string& hlo_type);

}  // namespace trench::codegen
