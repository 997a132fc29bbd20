// Slabs: the double-buffered slab loop shared by the streamed reduce
// (stream_reduce.h) and the streamed reduce fusion (stream_fusion.h).
//
// An input of dims `dims` is split along one dimension p: a slab is a
// block of up to `b` consecutive indices of dim p at fixed indices of dims
// 0..p-1 and all of dims p+1.. -- one contiguous range of the row-major
// input, one DMA per streamed array. Slabs run in row-major order; the
// last block of dim p is ragged when b does not divide it. Results:
//  * per-slab outputs (every reduced dim is inner to p): each result's
//    reduced elements all lie in one slab, so a slab's results are one
//    contiguous range of the result starting at element s9;
//  * resident accumulators (some reduced dim is p or outer to it): every
//    result is folded slab after slab into an accumulator kept whole.
//
// The loop (SlabLoop) keeps s18 (slab index), s19 (byte offset of the
// current buffer set, 0 or set_bytes) and s9 (the first result element of
// the current slab); its DMA and wait code clobbers s22..s24 and s28..s31.
// Semaphores 2/3 carry the slab DMAs (by buffer set). The body owns the
// other registers.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/codegen/emit_reduce_util.h"
#include "compiler/codegen/kernel_builder.h"

namespace trench::codegen {

struct SlabPlan {
  std::vector<int64_t> dims;  // The input's.
  std::vector<int64_t> red;   // Reduced dims, sorted.
  int64_t p = 0;              // The split dimension.
  int64_t b = 0;              // Indices of dim p per slab.
  int64_t inner = 1;          // Input elements per index of dim p.
  int64_t outer = 1;          // Product of dims 0..p-1.
  int64_t blocks = 0;         // Slabs per outer index: ceil(dims[p] / b).
  int64_t ragged = 0;         // Indices of the last block (b when even).
  int64_t kept_inner = 1;     // Product of the kept dims after p.
  bool p_kept = false;
  bool resident = false;  // Accumulators of the whole result in VMEM.

  int64_t slabs() const { return outer * blocks; }
  bool Reduced(int64_t d) const {
    return std::binary_search(red.begin(), red.end(), d);
  }
  // Result elements of a slab of `rows` indices of dim p.
  int64_t SlabOutputs(int64_t rows) const {
    return (p_kept ? rows : 1) * kept_inner;
  }
};

// The plan splitting `dims` along `p` (b, blocks and ragged unset).
SlabPlan SlabGeometry(const std::vector<int64_t>& dims,
                      const std::vector<int64_t>& red, int64_t p);

// The outermost split dimension p for which `cost(plan, 1)` (VMEM bytes of
// a slab of one row) fits in `avail`, with the largest b whose cost fits;
// `prepare` may set caller-specific fields of each candidate plan before it
// is costed. NotFound (the caller words the error) when no p fits.
StatusOr<SlabPlan> ChooseSlabPlan(
    const std::vector<int64_t>& dims, const std::vector<int64_t>& red,
    int64_t avail, const std::function<void(SlabPlan&)>& prepare,
    const std::function<int64_t(const SlabPlan&, int64_t)>& cost);

// Kept-dim tiling (stream_reduce.h): the input `dims` as [A, Q, I] -- A
// the reduced dims before the first kept dim q, Q = dims[q], I the dims
// after q -- in blocks of w indices of dim q; block j is the box
// [A, w, I] starting at element j * w * I, reduced over vred (A and the
// reduced dims after q).
struct KeptTiling {
  int64_t q = 0, a = 1, inner = 1, w = 0, blocks = 0, last_w = 0;
  int64_t q_size = 0;         // dims[q].
  std::vector<int64_t> tail;  // dims q+1..
  std::vector<int64_t> vred;
  // The box dims {A, w, dims q+1..}.
  std::vector<int64_t> Dims(int64_t width) const;
  // Elements between consecutive indices of A in the input.
  int64_t hbm_row() const { return q_size * inner; }
};
// The tiling with the largest w for which fits(Dims(w), vred) holds.
// NotFound when no reduced dim precedes a kept one or not even w = 1 fits.
StatusOr<KeptTiling> ChooseKeptTiling(
    const std::vector<int64_t>& dims, const std::vector<int64_t>& red,
    const std::function<bool(const std::vector<int64_t>&,
                             const std::vector<int64_t>&)>& fits);
// The plan of `dims` split like `full` (same p, at most full.b rows per
// slab): for a box no larger than full's in any dim it needs no more VMEM.
SlabPlan SameSplit(const SlabPlan& full, const std::vector<int64_t>& dims);

// The lane-parallel fold of one slab of `rows` indices of dim p, seen as
// the array [rows, dims p+1..]: its kept dims with their strides in the
// slab (one result per lane) and loops over its reduced dims
// (EmitNestedLoops: s1.., s10..).
struct SlabFoldShape {
  std::vector<int64_t> out_dims, coeff;
  std::vector<LoopDim> loops;
};
SlabFoldShape FoldShape(const SlabPlan& s, int64_t rows);
// Opens the tile loop over the slab's results and emits, per lane,
// v<base> = the slab index of its result's first reduced element and
// v<oidx> = s9 + its result index (resident plans; the index into the
// resident accumulators) or 0. Clobbers v<tmp>, v29, v31. Close with
// kb.EndLinearTiles().
void BeginFoldTiles(KernelBuilder& kb, const SlabPlan& s, int64_t rows,
                    const SlabFoldShape& f, int base, int oidx, int tmp);
// Emits s0 = the slab offset of the current element of the fold loops.
void EmitFoldOffset(KernelBuilder& kb, const SlabFoldShape& f);

// One array streamed slab by slab: HBM buffer `buffer` with `elem_bytes`
// per element, at byte `offset` within a buffer set.
struct SlabArray {
  std::string buffer;
  int64_t elem_bytes = 0;
  int64_t offset = 0;
};

// Lays out one buffer set for `arrays` (offsets, 512-aligned) for slabs of
// `plan.b` rows and returns the set's bytes.
int64_t LayOutSlabSet(const SlabPlan& plan, std::vector<SlabArray>& arrays);

// Resident accumulators at the end: converts the `elements` values of
// lane memory type `acc_mem` at VMEM `vmem` to `out_dtype` in place (tile
// t's result bytes lie within the accumulator bytes of tiles <= t, as the
// lane form is at least as wide, already read) and DMAs `bytes` of them to
// HBM buffer `out`.
// With `offset_word` >= 0 the destination starts `offset_scale` bytes
// times the s64 at VMEM `offset_word` into `out` (clobbers s28, s29).
void EmitResidentWriteBack(KernelBuilder& kb, const std::string& acc_mem,
                           int64_t vmem, const std::string& out,
                           const std::string& out_dtype, int64_t elements,
                           int64_t bytes, int64_t offset_word = -1,
                           int64_t offset_scale = 0);

// A slab input that is a box of its HBM array (kept-dim tiling,
// stream_reduce.h): the plan's input is [dims[0], rest] with `row`
// elements per index of dim 0, which lie `hbm_row` elements apart in HBM,
// starting at the element held by the s64 at VMEM `base_word`. row == 0:
// the plan's input is the dense HBM array itself.
struct SlabView {
  int64_t row = 0;
  int64_t hbm_row = 0;
  int64_t base_word = 0;
};

class SlabLoop {
 public:
  // `base`: VMEM offset of two buffer sets of `set_bytes` each.
  SlabLoop(KernelBuilder& kb, const SlabPlan& plan,
           std::vector<SlabArray> arrays, int64_t base, int64_t set_bytes)
      : kb_(kb),
        s_(plan),
        arrays_(std::move(arrays)),
        base_(base),
        set_bytes_(set_bytes) {}

  // The prologue: s18 = s19 = 0 and slab 0's DMAs started (the caller may
  // emit set-up work that overlaps them before Run).
  void Start();
  // The slab loop: prefetch of the next slab, wait for the current one,
  // s9, then body(rows) with the slab's `rows` indices of dim p (b, or the
  // ragged count on the last block). The current slab of array i is at
  // VMEM s19 + Address(i).
  Status Run(const std::function<Status(int64_t rows)>& body);
  int64_t Address(int i) const { return base_ + arrays_[i].offset; }
  // Emits s<dst> = the first input element of slab s18 (clobbers s28,
  // s29, s31).
  void EmitSlabStart(const std::string& dst);
  void SetView(const SlabView& view) { view_ = view; }

 private:
  // Starts the DMAs of the slab whose index is in register `slab` into the
  // buffer set at byte offset `set` (a register).
  void EmitSlabDmas(const std::string& slab, const std::string& set);
  void EmitDmas(const std::string& set, int64_t rows, int sem);
  // s9 = the first result element of slab s18; leaves the block index in
  // s29.
  void EmitOutputOffset();

  KernelBuilder& kb_;
  const SlabPlan& s_;
  std::vector<SlabArray> arrays_;
  int64_t base_, set_bytes_;
  SlabView view_;
};

}  // namespace trench::codegen
