// Streaming: a linear tile loop over `n` elements whose operands stay in
// HBM and flow through VMEM in chunks, double buffered, so DMA overlaps
// compute and arrays larger than VMEM compile.
//
// A chunk is a multiple of 1024 elements (whole 8x128 vregs). Every array
// (inputs and outputs) gets TWO VMEM buffers of one chunk each; chunk i
// uses buffer i % 2. The emitted schedule, per chunk i (a runtime loop):
//   1. start the async input DMAs of chunk i+1 into the other buffers
//      (semaphore 2 + (i+1) % 2), if there is a chunk i+1;
//   2. wait for chunk i's inputs (semaphore 2 + i % 2);
//   3. if i >= 2, wait for chunk i-2's output DMAs (semaphore 4 + i % 2),
//      which read the output buffers chunk i is about to write;
//   4. the tile loop over chunk i (the caller's body: Load/compute/Store);
//   5. start the async output DMAs of chunk i (semaphore 4 + i % 2).
// The prologue starts chunk 0's inputs; the epilogue waits for the last
// (up to two) output DMAs. The ragged last chunk moves only its valid
// bytes, and its last tile is masked by m0 like BeginLinearTiles.
//
// In-place safety: an output may be the same HBM buffer as an input with
// the same element size (buffer assignment's in-place rule). Chunk i's
// input DMA is waited for (step 2) before chunk i's output DMA to the same
// addresses starts (step 5), and DMAs in flight at the same time touch
// disjoint chunks (inputs of chunk i+1, outputs of chunks i-1 and i), so
// every element is read before it is overwritten.
//
// Register conventions (the stream replaces BeginLinearTiles, so it takes
// the linear tile loop's registers; do not nest it with BeginLinearTiles):
//   s20  the global index of the current tile's first element (as in
//        BeginLinearTiles, so KernelBuilder::LinearIndex works in the body)
//   s21  n;  s22..s24 mask/loop scratch;  s25 = 128
//   s26  the first element of the current chunk
//   s27  byte offset of the current chunk's buffer set (0 or the set size)
//   s28..s31  scratch (DMA addresses, tile addresses): clobbered by Load,
//             Store, Begin and End, as by the KernelBuilder helpers
//   m0   the valid lanes of the current tile;  m1 scratch
//   semaphores 2, 3 (inputs) and 4, 5 (outputs)
// The body owns every other register.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/codegen/buffer_plan.h"
#include "compiler/codegen/kernel_builder.h"

namespace trench::codegen {

// One streamed array: an HBM buffer holding `n` dense elements of memory
// type `mem` (an HLO element type name).
struct StreamArray {
  std::string buffer;
  std::string mem;
};

// Default chunk: 32 vregs (128 KiB of f32 per buffer).
inline constexpr int64_t kDefaultStreamChunk = 32 * 1024;

// The code that runs only on large arrays, as hloc --capabilities
// publishes it ("large_arrays", triage/case/target_description.h), so that
// a campaign aimed at a change here draws arrays that large: the linear
// streamed loop (this file's) from kStreamedFromElements elements
// (StreamingPays' second rule), and the streamed halves of the emitters
// (stream_*.cc), which run only when the operands do not fit in VMEM
// (target_driver.cc gives their size: an f32 array as large as the
// smallest VMEM a module may ask for, compiler/driver/module_options.h).
inline constexpr int64_t kStreamedFromElements = 2 * kDefaultStreamChunk;
inline constexpr const char* kStreamLoopSources[] = {
    "compiler/codegen/streaming.*"};
inline constexpr const char* kVmemOverflowSources[] = {
    "compiler/codegen/stream_*"};

// The largest chunk (a multiple of 1024, at most `max_chunk` and at most n
// rounded up to 1024) whose two buffers per array fit in `vmem_avail`
// bytes; 0 when not even a 1024-element chunk fits.
int64_t ChooseStreamChunk(int64_t n, const std::vector<StreamArray>& arrays,
                          int64_t vmem_avail,
                          int64_t max_chunk = kDefaultStreamChunk);

// The rule for when streaming pays over staging whole arrays: when the
// whole arrays (`whole_bytes`, 512-aligned sum) do not fit in `vmem_avail`,
// or when there are at least two default chunks (n >= 2 *
// kDefaultStreamChunk): then DMA of later chunks overlaps compute of
// earlier ones and waits shrink to about one chunk's transfer, for a
// handful of extra scalar instructions per chunk.
bool StreamingPays(int64_t n, int64_t whole_bytes, int64_t vmem_avail);

// Emits an if/else on scalar register `cond`: `brnz cond, T;
// otherwise(); jmp E; T: taken(); E:` (labels named after `hint`).
// Returns the first error of the bodies.
Status EmitBranch(KernelBuilder& kb, const std::string& cond,
                  const std::string& hint, const std::function<Status()>& taken,
                  const std::function<Status()>& otherwise);

class StreamLoop {
 public:
  // Plans the loop and reserves its VMEM (2 * chunk elements per array).
  // Errors: InvalidArgument for n <= 0, a chunk that is not a positive
  // multiple of 1024, an unknown memory type, or an output sharing an
  // input's buffer with a different element size (not chunk-aligned, so
  // not in-place safe); ResourceExhausted when the buffers do not fit.
  static StatusOr<StreamLoop> Create(KernelBuilder& kb, int64_t n,
                                     std::vector<StreamArray> inputs,
                                     std::vector<StreamArray> outputs,
                                     int64_t chunk);

  // Emits the prologue and opens the chunk and tile loops: after it, s20
  // and m0 describe the current tile (see the header comment).
  void Begin();
  // vD = the current tile of input `i` (vld converts memory type to lanes),
  // under m0.
  void Load(int vreg, int input);
  // Stores vS as the current tile of output `o` (converting vst), under m0.
  void Store(int output, int vreg);
  // Closes the tile loop, starts the chunk's output DMAs, closes the chunk
  // loop and waits for the outstanding output DMAs.
  void End();

  int64_t chunk() const { return chunk_; }
  int64_t chunks() const { return (n_ + chunk_ - 1) / chunk_; }

 private:
  StreamLoop(KernelBuilder& kb) : kb_(&kb) {}
  // Emits the async DMAs of one chunk for every input (to_hbm false) or
  // output: the chunk's first element is in register `start`, the VMEM
  // buffer set's byte offset in register `set`, the semaphore is
  // `sem_base` + (set != 0). The ragged last chunk moves fewer bytes.
  void EmitChunkDmas(bool to_hbm, const std::string& start,
                     const std::string& set, int sem_base);
  // Emits `dmawait sem_base` or `dmawait sem_base + 1` by the current set
  // (s27 zero or not).
  void EmitWaitByParity(int sem_base);
  void EmitDmas(bool to_hbm, const std::string& start, const std::string& set,
                int sem, int64_t elements);

  KernelBuilder* kb_;
  int64_t n_ = 0, chunk_ = 0, set_bytes_ = 0, base_ = 0;
  std::vector<StreamArray> in_, out_;
  std::vector<int64_t> in_bytes_, out_bytes_, in_off_, out_off_;
  std::string chunk_label_, tile_label_;
};

// The largest x in [1, max(hi, 1)] with fits(x), 0 when fits(1) fails: a
// binary search, so `fits` must hold for every x below one that fits (a
// tile or block size whose VMEM grows with x).
int64_t LargestFitting(int64_t hi, const std::function<bool(int64_t)>& fits);

// s9 = the HBM address of element s<elem> of `buffer` (clobbers s28): the
// start of a block's DMA.
void EmitElementAddress(KernelBuilder& kb, int elem, const ArrayBuffer& buffer);

}  // namespace trench::codegen
