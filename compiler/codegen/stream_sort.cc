// sort tile by tile (stream_sort.h).
#include "compiler/codegen/stream_sort.h"

#include <algorithm>

#include "compiler/codegen/emit_data_movement_util.h"
#include "compiler/codegen/streaming.h"

namespace trench::codegen {
namespace {

std::string I(int64_t x) { return std::to_string(x); }

// The largest x in [1, hi] with fits(x), 0 when fits(1) fails.
int64_t Largest(int64_t hi, const std::function<bool(int64_t)>& fits) {
  if (!fits(1)) return 0;
  int64_t lo = 1;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

// The box of a tile [o, len, w] in an operand [outer, len, inner] (HBM
// strides) against the dense tile (VMEM strides); `to_hbm` swaps them.
dm::Box TileBox(const SortTile& full, int64_t o, int64_t w, bool to_hbm) {
  const std::vector<int64_t> counts = {o, full.len, w};
  const std::vector<int64_t> hbm = {full.len * full.inner, full.inner, 1};
  const std::vector<int64_t> vmem = {full.len * w, w, 1};
  return to_hbm ? dm::Box{counts, vmem, hbm} : dm::Box{counts, hbm, vmem};
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
  int64_t o =
      Largest(t.outer, [&](int64_t x) { return fits(x * t.len * t.inner); });
  int64_t w = t.inner;
  if (o == 0) {
    o = 1;
    w = Largest(t.inner, [&](int64_t x) { return fits(x * t.len); });
  }
  if (w == 0) {
    return ResourceExhausted("hloc: " + instr.name() +
                             ": not even one row along the sort dimension "
                             "fits in VMEM");
  }
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
    for (int64_t i = 0; i < n; ++i) {
      const int esz = dm::ElemBytes(t.dtypes[i]);
      kb.Emit("saddr s6, " + ins[i].name);
      kb.Emit("smul s7, s9, " + I(esz));
      kb.Emit("sadd s6, s6, s7");
      dm::EmitBoxDma(kb, {"vmem", -1, tile.in_vmem[i]}, {"hbm", 6, 0},
                     TileBox(t, o_rows, w_cols, false), esz, 0);
    }
    RETURN_IF_ERROR(EmitSortTile(kb, instr, cur));
    for (int64_t i = 0; i < n; ++i) {
      const int esz = dm::ElemBytes(t.dtypes[i]);
      kb.Emit("saddr s6, " + outs[i].name);
      kb.Emit("smul s7, s9, " + I(esz));
      kb.Emit("sadd s6, s6, s7");
      dm::EmitBoxDma(kb, {"hbm", 6, 0}, {"vmem", -1, tile.out_vmem[i]},
                     TileBox(t, o_rows, w_cols, true), esz, 0);
    }
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
