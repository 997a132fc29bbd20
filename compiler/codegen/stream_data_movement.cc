// Streamed broadcast / transpose / slice / reverse (stream_data_movement.h).
#include "compiler/codegen/stream_data_movement.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "compiler/codegen/emit_data_movement_util.h"
#include "compiler/codegen/streaming.h"

namespace trench::codegen {
namespace {

// The window of one block of `rows` indices of dim q: the out dims >= q
// whose coordinate moves the source index, in the operand's dim order.
struct Window {
  std::vector<int64_t> dims;     // Out dims, outermost source dim first.
  std::vector<int64_t> counts;   // Indices fetched per dim.
  std::vector<int64_t> strides;  // Dense strides in the window.
  int64_t elements = 1;
  int64_t first = 0;  // Constant part of the first fetched source index.
  int64_t gather_offset = 0;  // Window index of local coordinate 0.
  std::string dma_tail;       // "chunk, sem-less triples" of the dmastart.
};

class BlockStreamer {
 public:
  BlockStreamer(const ArrayBuffer& in, const ArrayBuffer& out,
                const GatherSource& src, KernelBuilder& kb)
      : in_(in), out_(out), src_(src), kb_(kb) {
    esz_ = dm::ElemBytes(out.dtype);
    ost_ = dm::RowMajorStrides(out.dims);
  }

  // Chooses q and b; false when nothing fits.
  bool Plan(int64_t avail);
  void Emit();

 private:
  // The window for blocks of `rows` indices of dim q_; nullopt when one
  // dmastart cannot move it.
  std::optional<Window> MakeWindow(int64_t rows) const;
  int64_t BlockElements(int64_t rows) const { return rows * ost_[q_]; }
  // s6 = o, s7 = j of block `reg`; s8 = the source index of the window's
  // first element, less the per-variant constant; s9 = the last block.
  void EmitBlockCoordinates(const std::string& reg);
  // Starts the window DMA of the block in s6..s9 into the set at `set`.
  void EmitWindowDma(const std::string& set);
  // Gathers the block (variant `rows`) and starts its output DMA.
  void EmitBlock(int64_t rows);
  // `emit(sem)` under a branch on the parity of set register `set`.
  template <typename F>
  void ByParity(const std::string& set, int sem_base, F emit);

  const ArrayBuffer& in_;
  const ArrayBuffer& out_;
  const GatherSource& src_;
  KernelBuilder& kb_;
  int esz_ = 0;
  std::vector<int64_t> ost_;
  int64_t q_ = 0, b_ = 0, blocks_ = 0, ragged_ = 0, outer_ = 1;
  Window full_, part_;
  int64_t set_bytes_ = 0, win_off_ = 0, out_off_ = 0, base_ = 0;
};

std::optional<Window> BlockStreamer::MakeWindow(int64_t rows) const {
  Window w;
  const int64_t rank = out_.dims.size();
  for (int64_t d = q_; d < rank; ++d) {
    if (src_.coeff[d] != 0) w.dims.push_back(d);
  }
  std::stable_sort(w.dims.begin(), w.dims.end(), [&](int64_t a, int64_t b) {
    return std::abs(src_.coeff[a]) > std::abs(src_.coeff[b]);
  });
  for (int64_t d : w.dims) {
    w.counts.push_back(d == q_ ? rows : out_.dims[d]);
  }
  w.strides = dm::RowMajorStrides(w.counts);
  w.elements = dm::Product(w.counts);
  dm::Box box;
  for (size_t k = 0; k < w.dims.size(); ++k) {
    const int64_t c = src_.coeff[w.dims[k]];
    box.counts.push_back(w.counts[k]);
    box.src.push_back(std::abs(c));
    box.dst.push_back(w.strides[k]);
    if (c < 0) {  // Fetched forwards from the smallest index.
      w.first += c * (w.counts[k] - 1);
      w.gather_offset += (w.counts[k] - 1) * w.strides[k];
    }
  }
  dm::Box nb = dm::Normalize(box);
  int64_t chunk = esz_;
  if (!nb.counts.empty() && dm::ContiguousRun(nb) > 1) {
    chunk = dm::ContiguousRun(nb) * esz_;
    nb.counts.pop_back();
    nb.src.pop_back();
    nb.dst.pop_back();
  }
  if (nb.counts.size() > 3) return std::nullopt;
  w.dma_tail = I(chunk);
  std::string triples;
  for (size_t d = nb.counts.size(); d-- > 0;) {
    triples += ", " + I(nb.counts[d]) + ", " + I(nb.src[d] * esz_) + ", " +
               I(nb.dst[d] * esz_);
  }
  w.dma_tail += "|" + triples;  // Split at '|' around the semaphore.
  return w;
}

bool BlockStreamer::Plan(int64_t avail) {
  const int64_t rank = out_.dims.size();
  for (q_ = 0; q_ < rank; ++q_) {
    outer_ = dm::Product(
        std::vector<int64_t>(out_.dims.begin(), out_.dims.begin() + q_));
    auto cost = [&](int64_t rows) -> std::optional<int64_t> {
      std::optional<Window> w = MakeWindow(rows);
      if (!w) return std::nullopt;
      return 2 * (VmemAligned(w->elements * esz_) +
                  VmemAligned(BlockElements(rows) * esz_));
    };
    b_ = LargestFitting(out_.dims[q_], [&](int64_t rows) {
      std::optional<int64_t> c = cost(rows);
      return c && *c <= avail;
    });
    if (b_ == 0) continue;
    blocks_ = (out_.dims[q_] + b_ - 1) / b_;
    ragged_ = out_.dims[q_] - (blocks_ - 1) * b_;
    full_ = *MakeWindow(b_);
    part_ = *MakeWindow(ragged_);
    win_off_ = 0;
    out_off_ = VmemAligned(full_.elements * esz_);
    set_bytes_ = out_off_ + VmemAligned(BlockElements(b_) * esz_);
    return true;
  }
  return false;
}

template <typename F>
void BlockStreamer::ByParity(const std::string& set, int sem_base, F emit) {
  const std::string odd = kb_.NewLabel("blk_odd");
  const std::string done = kb_.NewLabel("blk_par");
  kb_.Emit("brnz " + set + ", " + odd);
  emit(sem_base);
  kb_.Emit("jmp " + done);
  kb_.PlaceLabel(odd);
  emit(sem_base + 1);
  kb_.PlaceLabel(done);
}

void BlockStreamer::EmitBlockCoordinates(const std::string& reg) {
  kb_.Emit("sdiv s6, " + reg + ", " + I(blocks_));
  kb_.Emit("srem s7, " + reg + ", " + I(blocks_));
  kb_.Emit("simm s8, " + I(src_.offset));
  int64_t ist = 1;  // Stride of dim d in the outer index (dims 0..q-1).
  for (int64_t d = q_ - 1; d >= 0; --d) {
    if (src_.coeff[d] != 0 && out_.dims[d] > 1) {
      kb_.Emit("sdiv s9, s6, " + I(ist));
      kb_.Emit("srem s9, s9, " + I(out_.dims[d]));
      kb_.Emit("smul s9, s9, " + I(src_.coeff[d]));
      kb_.Emit("sadd s8, s8, s9");
    }
    ist *= out_.dims[d];
  }
  kb_.Emit("smul s9, s7, " + I(src_.coeff[q_] * b_));
  kb_.Emit("sadd s8, s8, s9");
  kb_.Emit("scmpeq s9, s7, " + I(blocks_ - 1));
}

void BlockStreamer::EmitWindowDma(const std::string& set) {
  auto sized = [&](const Window& w, int sem) {
    const size_t bar = w.dma_tail.find('|');
    kb_.Emit("sadd s10, s8, " + I(w.first));
    kb_.Emit("smul s10, s10, " + I(esz_));
    kb_.Emit("saddr s11, " + in_.name);
    kb_.Emit("sadd s11, s11, s10");
    kb_.Emit("dmastart vmem[" + set + "+" + I(base_ + win_off_) +
             "], hbm[s11], " + w.dma_tail.substr(0, bar) + ", " + I(sem) +
             w.dma_tail.substr(bar + 1));
  };
  ByParity(set, 2, [&](int sem) {
    if (ragged_ == b_) {
      sized(full_, sem);
      return;
    }
    const std::string part = kb_.NewLabel("win_part");
    const std::string end = kb_.NewLabel("win_sized");
    kb_.Emit("brnz s9, " + part);
    sized(full_, sem);
    kb_.Emit("jmp " + end);
    kb_.PlaceLabel(part);
    sized(part_, sem);
    kb_.PlaceLabel(end);
  });
}

void BlockStreamer::EmitBlock(int64_t rows) {
  const Window& w = rows == b_ ? full_ : part_;
  std::vector<int64_t> ld = {rows};
  ld.insert(ld.end(), out_.dims.begin() + q_ + 1, out_.dims.end());
  const std::string& mem = src_.mem;
  kb_.BeginLinearTiles(BlockElements(rows));
  kb_.LinearIndex();
  EmitCoordinates(kb_, ld);
  kb_.Splat(12, "s32", I(w.gather_offset));
  for (size_t k = 0; k < w.dims.size(); ++k) {
    const int64_t g = src_.coeff[w.dims[k]] < 0 ? -w.strides[k] : w.strides[k];
    kb_.Splat(14, "s32", I(g));
    kb_.Emit("vmul.s32 v13, v" + I(2 + w.dims[k] - q_) + ", v14");
    kb_.Emit("vadd.s32 v12, v12, v13");
  }
  kb_.Emit("vgather." + mem + " v0, vmem[s2+" + I(base_ + win_off_) +
           "], v12 @m0");
  kb_.Emit("smul s29, s20, " + I(esz_));
  kb_.Emit("sadd s29, s29, s2");
  kb_.StoreLanes(mem, "vmem[s29+" + I(base_ + out_off_) + "]", 0);
  kb_.EndLinearTiles();
  // out[o * dims[q] * ost[q] + j * b * ost[q] ..] = the block.
  kb_.Emit("smul s10, s6, " + I(out_.dims[q_] * ost_[q_]));
  kb_.Emit("smul s11, s7, " + I(b_ * ost_[q_]));
  kb_.Emit("sadd s10, s10, s11");
  kb_.Emit("smul s10, s10, " + I(esz_));
  kb_.Emit("saddr s11, " + out_.name);
  kb_.Emit("sadd s11, s11, s10");
  ByParity("s2", 4, [&](int sem) {
    kb_.Emit("dmastart hbm[s11], vmem[s2+" + I(base_ + out_off_) + "], " +
             I(BlockElements(rows) * esz_) + ", " + I(sem));
  });
}

void BlockStreamer::Emit() {
  base_ = kb_.AllocVmem(2 * set_bytes_);
  const int64_t n = outer_ * blocks_;
  kb_.Emit("simm s1, 0");
  kb_.Emit("simm s2, 0");
  EmitBlockCoordinates("s1");
  EmitWindowDma("s2");
  const std::string loop = kb_.NewLabel("blk");
  kb_.PlaceLabel(loop);
  if (n > 1) {  // Prefetch block s1 + 1 into the other set.
    const std::string skip = kb_.NewLabel("blk_noprefetch");
    kb_.Emit("sadd s4, s1, 1");
    kb_.Emit("scmplt s5, s4, " + I(n));
    kb_.Emit("brz s5, " + skip);
    kb_.Emit("simm s5, " + I(set_bytes_));
    kb_.Emit("ssub s5, s5, s2");
    EmitBlockCoordinates("s4");
    EmitWindowDma("s5");
    kb_.PlaceLabel(skip);
  }
  ByParity("s2", 2, [&](int sem) { kb_.Emit("dmawait " + I(sem)); });
  if (n > 2) {  // Block s1 - 2's output DMA reads this set's block buffer.
    const std::string skip = kb_.NewLabel("blk_nooutwait");
    kb_.Emit("scmplt s5, s1, 2");
    kb_.Emit("brnz s5, " + skip);
    ByParity("s2", 4, [&](int sem) { kb_.Emit("dmawait " + I(sem)); });
    kb_.PlaceLabel(skip);
  }
  EmitBlockCoordinates("s1");
  if (ragged_ == b_) {
    EmitBlock(b_);
  } else {
    (void)EmitBranch(
        kb_, "s9", "blk_part", [&] { return EmitBlock(ragged_), Status::Ok(); },
        [&] { return EmitBlock(b_), Status::Ok(); });
  }
  kb_.Emit("sadd s1, s1, 1");
  kb_.Emit("simm s5, " + I(set_bytes_));
  kb_.Emit("ssub s2, s5, s2");
  kb_.Emit("scmplt s5, s1, " + I(n));
  kb_.Emit("brnz s5, " + loop);
  if (n >= 2) kb_.Emit("dmawait " + I(4 + (n - 2) % 2));
  kb_.Emit("dmawait " + I(4 + (n - 1) % 2));
}

}  // namespace

Status EmitStreamedGather(const HloInstruction& instr, const ArrayBuffer& in,
                          const ArrayBuffer& out, const GatherSource& src,
                          KernelBuilder& kb) {
  if (src.mem == "c128") return CannotCompile(instr, "streamed c128");
  if (out.dims.size() > 8 || out.elements == 0 ||
      src.coeff.size() != out.dims.size()) {
    return CannotCompile(instr, "a streamed copy of this shape");
  }
  BlockStreamer s(in, out, src, kb);
  if (!s.Plan(kb.vmem_capacity() - kb.vmem_used())) {
    return ResourceExhausted("hloc: " + instr.name() +
                             ": not even one streamed block of its result "
                             "(and the operand window) fits in VMEM");
  }
  s.Emit();
  return Status::Ok();
}

}  // namespace trench::codegen
