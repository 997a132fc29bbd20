// all-reduce and reduce-scatter as ring algorithms over the members of
// each chip's group (emit_collectives_util.h has the protocol).
//
// Each operand (an all-reduce may carry several: a combined one) is split
// into n chunks, n the group size. Reduce-scatter phase, steps k = 0..n-2:
// a chip sends chunk (p + shift - k) mod n of its accumulator (VMEM) into
// the next member's scratch, waits for chunk (p + shift - k - 1) from the
// previous member and folds it in: acc = to_apply(received, acc). After
// it, chunk (p + shift + 1) mod n is fully reduced on member p.
//
// Every element type with a lane form, complex included (c64, c128: the
// computation's complex add, multiply, ... on register pairs or quads).
//
// Reduction order (deterministic): chunk c is folded in ring order
// starting at member c - shift, f(...f(f(x[c-shift], x[c-shift+1]),
// x[c-shift+2])..., x[c-shift-1]) (member indices mod n), each step
// rounded to the element type. The oracle's contract allows any order
// (an n u sum|x| bound).
//
// The accumulator lives in VMEM. An operand whose accumulator would pass
// PieceBytes (4 MiB, less in a small VMEM) is reduced in pieces, each piece a
// whole ring of its own (an all-reduce's pieces: runs of elements; a
// reduce-scatter's: blocks of rows or parts of a slab), so operands larger than
// VMEM compile; the reduction order above holds within each piece.
//
// all-reduce: shift 0, chunks of ceil(E/n) elements (the accumulator is
// zero-padded to n chunks), then the all-gather phase: member p puts its
// reduced chunk p + 1 into its own gather area and forwards, at step k,
// chunk (p + 1 - k) mod n to the next member, receiving (p - k) mod n;
// the gathered area is the result.
// Groups of different sizes (all-reduce only): each size's chips run the
// ring for their size, in a branch of their own (coll::EmitOnChips).
// reduce-scatter: shift n - 1, so member p ends with chunk p, its result.
// Chunks run along dimensions[0]: the accumulator is loaded with the
// chunks made contiguous (one strided DMA per chunk).
#include <algorithm>

#include "compiler/codegen/emit_collectives_util.h"
#include "compiler/codegen/emit_reduce_util.h"
#include "compiler/codegen/emitters.h"
#include "compiler/codegen/vector_ops.h"
#include "compiler/ir/dtype.h"

namespace trench::codegen {
namespace {

using coll::GroupMap;

struct Leaf {
  ArrayBuffer in, out;
  std::string mem;
  int64_t esz = 0;
  int64_t chunk = 0;    // Elements per chunk.
  int64_t scratch = 0;  // Offset of its scratch area.
  int64_t offset = 0;   // A piece of an all-reduce: its byte offset.
};

// An all-reduce's or reduce-scatter's accumulator in VMEM holds at most
// this many bytes: a larger operand is reduced in pieces, one ring after
// the other. An all-reduce's pieces reuse the leaf's scratch areas (safe
// by the ring's own order: before a member starts piece k + 1 it has
// received every chunk of piece k, and the last of them passed its next
// member only after that member had read everything piece k wrote to it).
constexpr int64_t kAllReducePieceBytes = 4 << 20;

// The piece size for a kernel: kAllReducePieceBytes, or a quarter of a
// smaller VMEM (a module may ask for one, module_options.h), so that the
// pieces also run, and can be tested and fuzzed, on small arrays.
int64_t PieceBytes(const KernelBuilder& kb) {
  return std::max<int64_t>(
      512, std::min(kAllReducePieceBytes, kb.vmem_capacity() / 4));
}

// acc (VMEM, n chunks of leaf.chunk elements) = the chip's reduction of
// every member's chunks (see the file comment). Registers as
// emit_collectives_util.h; s13..s18.
Status EmitRingReduceScatter(const HloInstruction& instr, const GroupMap& g,
                             const Leaf& leaf, int64_t acc, int64_t shift,
                             const std::string& scratch, KernelBuilder& kb) {
  const int64_t n = g.size;
  const int64_t cb = leaf.chunk * leaf.esz;
  const int64_t tmp = kb.AllocVmem(cb);
  VRegPool pool;
  const int rc = RegCount(leaf.in.dtype);
  ASSIGN_OR_RETURN(int va, pool.AllocN(rc));
  ASSIGN_OR_RETURN(int vb, pool.AllocN(rc));
  for (int64_t k = 0; k + 1 < n; ++k) {
    // Send chunk (p + shift - k) into the next member's scratch.
    coll::EmitPositionOffset(kb, 13, shift - k + 2 * n, n, cb);
    kb.Emit("saddr s14, " + scratch);
    kb.Emit("sadd s14, s14, s13");
    kb.Emit("rdmastart s11, hbm[s14+" + I(leaf.scratch) + "], vmem[s13+" +
            I(acc) + "], " + I(cb) + ", " + I(coll::kSendSem) + ", " +
            I(coll::kDataFlag));
    kb.Emit("dmawait " + I(coll::kSendSem));
    kb.Emit("flagwait " + I(coll::kDataFlag) + ", 1");
    // Chunk (p + shift - k - 1) arrived from the previous member.
    coll::EmitPositionOffset(kb, 15, shift - k - 1 + 2 * n, n, cb);
    kb.Emit("saddr s16, " + scratch);
    kb.Emit("sadd s16, s16, s15");
    kb.Emit("dmastart vmem[" + I(tmp) + "], hbm[s16+" + I(leaf.scratch) +
            "], " + I(cb) + ", " + I(coll::kLocalSem));
    kb.Emit("dmawait " + I(coll::kLocalSem));
    kb.BeginLinearTiles(leaf.chunk);
    kb.LoadTile(va, leaf.mem, tmp);
    kb.Emit("smul s18, s20, " + I(leaf.esz));
    kb.Emit("sadd s18, s18, s15");
    const std::string at = "vmem[s18+" + I(acc) + "]";
    kb.LoadLanes(vb, leaf.mem, at);
    RETURN_IF_ERROR(EmitScalarComputation(kb, pool, instr, *instr.to_apply(),
                                          {va, vb}, {va}));
    kb.StoreLanes(leaf.mem, at, va);
    kb.EndLinearTiles();
  }
  return Status::Ok();
}

// The all-reduce's all-gather phase: the reduced chunk (p + 1) of acc
// into the gather area, forwarded around the ring, then the area's first
// E elements to the result.
void EmitRingAllGather(const GroupMap& g, const Leaf& leaf, int64_t acc,
                       const std::string& scratch, KernelBuilder& kb) {
  const int64_t n = g.size;
  const int64_t cb = leaf.chunk * leaf.esz;
  const int64_t area = leaf.scratch + coll::AlignScratch(n * cb);
  coll::EmitPositionOffset(kb, 13, 1, n, cb);
  kb.Emit("saddr s14, " + scratch);
  kb.Emit("sadd s14, s14, s13");
  kb.Emit("dmastart hbm[s14+" + I(area) + "], vmem[s13+" + I(acc) + "], " +
          I(cb) + ", " + I(coll::kLocalSem));
  kb.Emit("dmawait " + I(coll::kLocalSem));
  coll::EmitRingForward(kb, scratch, area, cb, n, 1);
  kb.Emit("saddr s14, " + scratch);
  kb.Emit("saddr s15, " + leaf.out.name);
  kb.Emit("dmastart hbm[s15" + (leaf.offset ? "+" + I(leaf.offset) : "") +
          "], hbm[s14+" + I(area) + "], " + I(leaf.out.bytes) + ", " +
          I(coll::kLocalSem));
  kb.Emit("dmawait " + I(coll::kLocalSem));
}

// The operand/result pairs of `instr` and their scratch areas, in the
// order CollectiveScratchBytes counts them.
StatusOr<std::vector<Leaf>> Leaves(const HloInstruction& instr,
                                   const BufferPlan& plan, int64_t n) {
  std::vector<ArrayBuffer> outs = LeafBuffers(plan, &instr);
  if (outs.size() != instr.operands().size()) {
    return CannotCompile(instr, "a nested tuple");
  }
  std::vector<Leaf> leaves;
  int64_t offset = 0;
  for (size_t i = 0; i < outs.size(); ++i) {
    Leaf l;
    l.in = plan.Array(instr.operand(i));
    l.out = outs[i];
    l.mem = MemType(l.in.dtype);
    l.esz = MemTypeBytes(l.mem);
    // Complex operands move as their memory type (c64 a u64 pair, c128
    // two halves) and fold through the computation's complex ops.
    const bool lanes = !LaneType(l.in.dtype).empty() ||
                       IsComplex(instr.operand(i)->shape().element_type());
    if (!lanes || l.esz == 0) return CannotCompile(instr, l.in.dtype);
    l.scratch = offset;
    if (instr.opcode() == HloOpcode::kAllReduce) {
      l.chunk = (l.in.elements + n - 1) / n;
      if (l.in.elements > 0)
        offset += 2 * coll::AlignScratch(n * l.chunk * l.esz);
    } else {
      l.chunk = l.in.elements / n;
      offset += coll::AlignScratch(l.in.bytes);
    }
    leaves.push_back(std::move(l));
  }
  return leaves;
}

Status CheckReduction(const HloInstruction& instr, const BufferPlan& plan,
                      GroupMap* g) {
  RETURN_IF_ERROR(CheckScalarComputation(instr, *instr.to_apply()));
  ASSIGN_OR_RETURN(*g, coll::MapGroups(instr, plan.mesh));
  return coll::CheckScratch(instr, plan.collective_scratch);
}

}  // namespace

Status EmitAllReduce(const HloInstruction& instr, const BufferPlan& plan,
                     KernelBuilder& kb) {
  RETURN_IF_ERROR(CheckScalarComputation(instr, *instr.to_apply()));
  ASSIGN_OR_RETURN(std::vector<coll::GroupClass> classes,
                   coll::MapGroupClasses(instr, plan.mesh));
  RETURN_IF_ERROR(coll::CheckScratch(instr, plan.collective_scratch));
  // The ring of one group size, on the chips whose groups have it.
  auto ring = [&](const GroupMap& g) -> Status {
    ASSIGN_OR_RETURN(std::vector<Leaf> leaves, Leaves(instr, plan, g.size));
    const int64_t n = g.size;
    coll::EmitGroupPlace(kb, g);
    if (n > 1) coll::EmitRingHandshake(kb, g);
    for (const Leaf& leaf : leaves) {
      // Pieces of a multiple of n elements, the last one shorter; one
      // piece (the leaf itself) when the accumulator fits.
      const int64_t per =
          std::max<int64_t>(n, PieceBytes(kb) / leaf.esz / n * n);
      for (int64_t start = 0; start < leaf.in.elements; start += per) {
        Leaf piece = leaf;
        const int64_t e = std::min(per, leaf.in.elements - start);
        if (e != leaf.in.elements) {
          piece.in.elements = e;
          piece.in.bytes = piece.out.bytes = e * leaf.esz;
          piece.chunk = (e + n - 1) / n;
          piece.offset = start * leaf.esz;
        }
        const int64_t bytes = n * piece.chunk * piece.esz;
        const int64_t mark = kb.VmemMark();
        const int64_t acc = kb.AllocVmem(bytes);
        coll::EmitZeroVmem(kb, acc + piece.in.bytes, bytes - piece.in.bytes);
        kb.DmaIn(acc, piece.in.name, piece.in.bytes, piece.offset);
        RETURN_IF_ERROR(EmitRingReduceScatter(instr, g, piece, acc, 0,
                                              plan.collective_scratch, kb));
        EmitRingAllGather(g, piece, acc, plan.collective_scratch, kb);
        kb.ReleaseVmem(mark);
      }
    }
    return Status::Ok();
  };
  if (classes.size() == 1) return ring(classes.front().map);
  kb.Emit("chipid s0");
  Status status = Status::Ok();
  for (const coll::GroupClass& k : classes) {
    coll::EmitOnChips(kb, k.chips, [&] {
      if (status.ok()) status = ring(k.map);
    });
  }
  return status;
}

Status EmitReduceScatter(const HloInstruction& instr, const BufferPlan& plan,
                         KernelBuilder& kb) {
  GroupMap g;
  RETURN_IF_ERROR(CheckReduction(instr, plan, &g));
  ASSIGN_OR_RETURN(std::vector<Leaf> leaves, Leaves(instr, plan, g.size));
  if (instr.dimensions().size() != 1) {
    return CannotCompile(instr, "reduce-scatter without one dimension");
  }
  const int64_t d = instr.dimensions()[0];
  const int64_t n = g.size;
  coll::EmitGroupPlace(kb, g);
  if (n > 1) coll::EmitRingHandshake(kb, g);
  for (const Leaf& leaf : leaves) {
    if (leaf.in.elements == 0) continue;
    if (d < 0 || d >= static_cast<int64_t>(leaf.in.dims.size()) ||
        leaf.in.dims[d] % n != 0) {
      return CannotCompile(instr,
                           "a scatter dimension the group does not "
                           "divide");
    }
    int64_t outer = 1, inner = leaf.esz;
    for (int64_t i = 0; i < d; ++i) outer *= leaf.in.dims[i];
    for (size_t i = d + 1; i < leaf.in.dims.size(); ++i) {
      inner *= leaf.in.dims[i];
    }
    const int64_t row = leaf.in.dims[d] * inner;  // Bytes per outer index.
    const int64_t slab = row / n;                 // A chunk's part of it.
    // Pieces: blocks of `rows` outer indices and `part` bytes of each
    // slab, one ring after the other; the whole chunk when its
    // accumulator fits in PieceBytes. Pieces alternate between
    // two halves of the leaf's scratch: a member that finished piece k + 1
    // has had its next member's contribution to it, sent after that member
    // read all of piece k, so piece k + 2 may overwrite piece k's half.
    int64_t rows = outer, part = slab;
    if (n * outer * slab > PieceBytes(kb)) {
      const int64_t cap = std::max<int64_t>(
          leaf.esz, std::min(PieceBytes(kb), leaf.in.bytes / 2 - 512) / n);
      if (slab <= cap) {
        rows = cap / slab;
      } else {
        rows = 1;
        part = std::max<int64_t>(leaf.esz, cap / leaf.esz * leaf.esz);
      }
    }
    const int64_t region = coll::AlignScratch(n * rows * part);
    int64_t k = 0;
    for (int64_t o0 = 0; o0 < outer; o0 += rows) {
      for (int64_t b0 = 0; b0 < slab; b0 += part, ++k) {
        const int64_t r = std::min(rows, outer - o0);
        const int64_t b = std::min(part, slab - b0);
        const int64_t cb = r * b;
        Leaf piece = leaf;
        piece.chunk = cb / leaf.esz;
        piece.scratch = leaf.scratch + (k % 2) * region;
        const int64_t mark = kb.VmemMark();
        const int64_t acc = kb.AllocVmem(n * cb);
        // Chunk c contiguous at acc + c * cb: its slabs of every outer
        // index.
        kb.Emit("saddr s13, " + leaf.in.name);
        for (int64_t c = 0; c < n; ++c) {
          kb.Emit("dmastart vmem[" + I(acc + c * cb) + "], hbm[s13+" +
                  I(o0 * row + c * slab + b0) + "], " + I(b) + ", " +
                  I(coll::kLocalSem) +
                  (r > 1 ? ", " + I(r) + ", " + I(row) + ", " + I(b)
                         : std::string()));
        }
        kb.Emit("dmawait " + I(coll::kLocalSem));
        RETURN_IF_ERROR(EmitRingReduceScatter(instr, g, piece, acc, n - 1,
                                              plan.collective_scratch, kb));
        coll::EmitPositionOffset(kb, 13, 0, n, cb);
        kb.Emit("saddr s14, " + leaf.out.name);
        const int64_t at = o0 * slab + b0;  // In the result (rows of slab).
        kb.Emit("dmastart hbm[s14" + (at ? "+" + I(at) : std::string()) +
                "], vmem[s13+" + I(acc) + "], " +
                (b == slab ? I(cb) + ", " + I(coll::kLocalSem)
                           : I(b) + ", " + I(coll::kLocalSem) + ", " + I(r) +
                                 ", " + I(b) + ", " + I(slab)));
        kb.Emit("dmawait " + I(coll::kLocalSem));
        kb.ReleaseVmem(mark);
      }
    }
  }
  return Status::Ok();
}

}  // namespace trench::codegen
