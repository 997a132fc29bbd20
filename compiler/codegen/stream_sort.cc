// sort tile by tile (stream_sort.h).
#include "compiler/codegen/stream_sort.h"

#include <algorithm>

#include "compiler/codegen/emit_data_movement_util.h"
#include "compiler/codegen/streaming.h"

namespace trench::codegen {
namespace {

// The box of a tile [o, len, w] in an operand [outer, len, inner] (HBM
// strides) against the dense tile (VMEM strides); `to_hbm` swaps them.
dm::Box TileBox(const SortTile& full, int64_t o, int64_t w, bool to_hbm) {
  const std::vector<int64_t> counts = {o, full.len, w};
  const std::vector<int64_t> hbm = {full.len * full.inner, full.inner, 1};
  const std::vector<int64_t> vmem = {full.len * w, w, 1};
  return to_hbm ? dm::Box{counts, vmem, hbm} : dm::Box{counts, hbm, vmem};
}

// DMAs, for each operand i, the `box` of HBM buffer `hbm[i]` starting at
// element s9 into VMEM `vmem[i]`, or the reverse when `to_hbm`.
void EmitStagingDmas(KernelBuilder& kb, const SortTile& t,
                     const std::vector<ArrayBuffer>& hbm,
                     const std::vector<int64_t>& vmem, const dm::Box& box,
                     bool to_hbm) {
  for (size_t i = 0; i < hbm.size(); ++i) {
    const int esz = dm::ElemBytes(t.dtypes[i]);
    kb.Emit("saddr s6, " + hbm[i].name);
    kb.Emit("smul s7, s9, " + I(esz));
    kb.Emit("sadd s6, s6, s7");
    if (to_hbm) {
      dm::EmitBoxDma(kb, {"hbm", 6, 0}, {"vmem", -1, vmem[i]}, box, esz, 0);
    } else {
      dm::EmitBoxDma(kb, {"vmem", -1, vmem[i]}, {"hbm", 6, 0}, box, esz, 0);
    }
  }
}

// The box of `count` elements of a row whose elements are `stride` apart
// in HBM, against a dense VMEM run; `to_hbm` swaps them.
dm::Box RowBox(int64_t count, int64_t stride, bool to_hbm) {
  return to_hbm ? dm::Box{{count}, {1}, {stride}}
                : dm::Box{{count}, {stride}, {1}};
}

// Rows longer than VMEM, one row at a time (s4 = row): blocks of b
// elements (the last one r <= b), each sorted from the operands into the
// results; then p rounds (p blocks) of odd-even transposition over the
// blocks in the results, where a merge-split of blocks j and j+1 stages
// both, sorts the 2b elements stably and writes them back, the smaller
// half to block j. p rounds sort p sorted blocks (as p rounds of odd-even
// transposition sort p elements), and the stable merge-splits keep equal
// keys in their order, since they never pass one another. s5 = round,
// s8 = block, s9 = the segment's first element, s6/s7 scratch.
Status EmitMergeSplitSort(const HloInstruction& instr,
                          const std::vector<ArrayBuffer>& ins,
                          const std::vector<ArrayBuffer>& outs,
                          const SortTile& t, KernelBuilder& kb) {
  const int64_t avail = kb.vmem_capacity() - kb.vmem_used();
  const int64_t b = LargestFitting(t.len / 2, [&](int64_t x) {
    return SortTileBytes(t.dtypes, 2 * x) <= avail;
  });
  if (b == 0) {
    return ResourceExhausted("hloc: " + instr.name() +
                             ": not even two elements of a row along the "
                             "sort dimension fit in VMEM");
  }
  const int64_t p = (t.len + b - 1) / b;
  const int64_t r = t.len - (p - 1) * b;
  const int64_t n = ins.size();
  SortTile tile = t;
  tile.outer = tile.inner = 1;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t bytes = 2 * b * MemTypeBytes(MemType(t.dtypes[i]));
    tile.in_vmem.push_back(kb.AllocVmem(bytes));
    tile.out_vmem.push_back(kb.AllocVmem(bytes));
  }
  tile.perm[0] = kb.AllocVmem(2 * b * 4);
  tile.perm[1] = kb.AllocVmem(2 * b * 4);
  // The `len` elements from s9 of `from` (the operands or the results)
  // sorted into the results.
  auto segment = [&](int64_t len,
                     const std::vector<ArrayBuffer>& from) -> Status {
    SortTile cur = tile;
    cur.len = len;
    EmitStagingDmas(kb, t, from, tile.in_vmem, RowBox(len, t.inner, false),
                    false);
    RETURN_IF_ERROR(EmitSortTile(kb, instr, cur));
    EmitStagingDmas(kb, t, outs, tile.out_vmem, RowBox(len, t.inner, true),
                    true);
    return Status::Ok();
  };
  // s9 = the first element of block s8 of row s4.
  auto block_start = [&] {
    kb.Emit("sdiv s6, s4, " + I(t.inner));
    kb.Emit("smul s6, s6, " + I(t.len * t.inner));
    kb.Emit("srem s7, s4, " + I(t.inner));
    kb.Emit("sadd s9, s6, s7");
    kb.Emit("smul s7, s8, " + I(b * t.inner));
    kb.Emit("sadd s9, s9, s7");
  };
  // `full` unless block s8 is `last` and the last block is ragged.
  auto ragged_at = [&](int64_t last, const std::function<Status()>& ragged,
                       const std::function<Status()>& full) -> Status {
    if (r == b) return full();
    kb.Emit("scmpeq s6, s8, " + I(last));
    return EmitBranch(kb, "s6", "sort_ragged", ragged, full);
  };
  kb.Emit("simm s4, 0");
  const std::string row = kb.NewLabel("sort_row");
  kb.PlaceLabel(row);
  // Each block sorted on its own.
  kb.Emit("simm s8, 0");
  const std::string block = kb.NewLabel("sort_block");
  kb.PlaceLabel(block);
  block_start();
  RETURN_IF_ERROR(ragged_at(
      p - 1, [&] { return segment(r, ins); }, [&] { return segment(b, ins); }));
  kb.Emit("sadd s8, s8, 1");
  kb.Emit("scmplt s6, s8, " + I(p));
  kb.Emit("brnz s6, " + block);
  // p rounds of merge-splits of blocks (j, j+1), j = round % 2, +2, ...
  kb.Emit("simm s5, 0");
  const std::string round = kb.NewLabel("sort_round");
  const std::string pair = kb.NewLabel("sort_pair");
  const std::string round_end = kb.NewLabel("sort_round_end");
  kb.PlaceLabel(round);
  kb.Emit("srem s8, s5, 2");
  kb.PlaceLabel(pair);
  kb.Emit("sadd s6, s8, 1");
  kb.Emit("scmplt s6, s6, " + I(p));
  kb.Emit("brz s6, " + round_end);
  block_start();
  RETURN_IF_ERROR(ragged_at(
      p - 2, [&] { return segment(b + r, outs); },
      [&] { return segment(2 * b, outs); }));
  kb.Emit("sadd s8, s8, 2");
  kb.Emit("jmp " + pair);
  kb.PlaceLabel(round_end);
  kb.Emit("sadd s5, s5, 1");
  kb.Emit("scmplt s6, s5, " + I(p));
  kb.Emit("brnz s6, " + round);
  kb.Emit("sadd s4, s4, 1");
  kb.Emit("scmplt s6, s4, " + I(t.outer * t.inner));
  kb.Emit("brnz s6, " + row);
  return Status::Ok();
}

}  // namespace

Status EmitStreamedSort(const HloInstruction& instr,
                        const std::vector<ArrayBuffer>& ins,
                        const std::vector<ArrayBuffer>& outs, const SortTile& t,
                        KernelBuilder& kb) {
  const int64_t avail = kb.vmem_capacity() - kb.vmem_used();
  auto fits = [&](int64_t elements) {
    return SortTileBytes(t.dtypes, elements) <= avail;
  };
  // Tile [o, len, w]: whole inner rows when one outer index fits.
  int64_t o = LargestFitting(
      t.outer, [&](int64_t x) { return fits(x * t.len * t.inner); });
  int64_t w = t.inner;
  if (o == 0) {
    o = 1;
    w = LargestFitting(t.inner, [&](int64_t x) { return fits(x * t.len); });
  }
  if (w == 0) return EmitMergeSplitSort(instr, ins, outs, t, kb);
  const int64_t n = ins.size();
  SortTile tile = t;
  const int64_t elements = o * t.len * w;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t bytes = elements * MemTypeBytes(MemType(t.dtypes[i]));
    tile.in_vmem.push_back(kb.AllocVmem(bytes));
    tile.out_vmem.push_back(kb.AllocVmem(bytes));
  }
  tile.perm[0] = kb.AllocVmem(elements * 4);
  tile.perm[1] = kb.AllocVmem(elements * 4);
  // Tiles: (outer block, inner block) row-major; s4 = tile index.
  const int64_t oblocks = (t.outer + o - 1) / o;
  const int64_t iblocks = (t.inner + w - 1) / w;
  const int64_t last_o = t.outer - (oblocks - 1) * o;
  const int64_t last_w = t.inner - (iblocks - 1) * w;
  // One tile of o_rows x w_cols whose first element is s9.
  auto emit_tile = [&](int64_t o_rows, int64_t w_cols) -> Status {
    SortTile cur = tile;
    cur.outer = o_rows;
    cur.inner = w_cols;
    EmitStagingDmas(kb, t, ins, tile.in_vmem, TileBox(t, o_rows, w_cols, false),
                    false);
    RETURN_IF_ERROR(EmitSortTile(kb, instr, cur));
    EmitStagingDmas(kb, t, outs, tile.out_vmem,
                    TileBox(t, o_rows, w_cols, true), true);
    return Status::Ok();
  };
  kb.Emit("simm s4, 0");
  const std::string loop = kb.NewLabel("sort_tile");
  kb.PlaceLabel(loop);
  // s5 = outer block, s8 = inner block; s9 = first element.
  kb.Emit("sdiv s5, s4, " + I(iblocks));
  kb.Emit("srem s8, s4, " + I(iblocks));
  kb.Emit("smul s9, s5, " + I(o * t.len * t.inner));
  kb.Emit("smul s7, s8, " + I(w));
  kb.Emit("sadd s9, s9, s7");
  if (last_o != o) {  // Then w == inner: the last outer block is ragged.
    kb.Emit("scmpeq s8, s5, " + I(oblocks - 1));
    RETURN_IF_ERROR(EmitBranch(
        kb, "s8", "sort_ragged", [&] { return emit_tile(last_o, w); },
        [&] { return emit_tile(o, w); }));
  } else if (last_w != w) {  // o == 1: the last inner block is ragged.
    kb.Emit("scmpeq s8, s8, " + I(iblocks - 1));
    RETURN_IF_ERROR(EmitBranch(
        kb, "s8", "sort_ragged", [&] { return emit_tile(o, last_w); },
        [&] { return emit_tile(o, w); }));
  } else {
    RETURN_IF_ERROR(emit_tile(o, w));
  }
  kb.Emit("sadd s4, s4, 1");
  kb.Emit("scmplt s8, s4, " + I(oblocks * iblocks));
  kb.Emit("brnz s8, " + loop);
  return Status::Ok();
}

}  // namespace trench::codegen
