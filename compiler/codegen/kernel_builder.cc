#include "compiler/codegen/kernel_builder.h"

#include <algorithm>

#include "tpu/assembler.h"

namespace trench::codegen {

KernelBuilder::KernelBuilder(std::string name, int64_t vmem_capacity)
    : name_(std::move(name)), vmem_capacity_(vmem_capacity) {}

void KernelBuilder::Emit(const std::string& line) {
  body_ += "  ";
  body_ += line;
  body_ += '\n';
  line_ends_.push_back(body_.size());
}

void KernelBuilder::TruncateLines(size_t n) {
  if (n >= line_ends_.size()) return;
  line_ends_.resize(n);
  body_.resize(n == 0 ? 0 : line_ends_.back());
}

std::string KernelBuilder::NewLabel(const std::string& hint) {
  return hint + "_" + std::to_string(next_label_++);
}

void KernelBuilder::PlaceLabel(const std::string& label) {
  body_ += label;
  body_ += ":\n";
  line_ends_.push_back(body_.size());
}

int64_t KernelBuilder::AllocVmem(int64_t bytes) {
  int64_t at = vmem_used_;
  vmem_used_ += VmemAligned(bytes);
  vmem_peak_ = std::max(vmem_peak_, vmem_used_);
  return at;
}

void KernelBuilder::ReleaseVmem(int64_t mark) {
  if (mark >= 0 && mark <= vmem_used_) vmem_used_ = mark;
}

void KernelBuilder::DmaIn(int64_t vmem, const std::string& buffer,
                          int64_t bytes, int64_t offset) {
  if (bytes == 0) return;
  Emit("saddr s28, " + buffer);
  Emit("dmastart vmem[" + std::to_string(vmem) + "], hbm[s28" +
       (offset != 0 ? "+" + std::to_string(offset) : std::string()) + "], " +
       std::to_string(bytes) + ", 0");
  Emit("dmawait 0");
}

void KernelBuilder::DmaOut(const std::string& buffer, int64_t vmem,
                           int64_t bytes) {
  if (bytes == 0) return;
  Emit("saddr s28, " + buffer);
  Emit("dmastart hbm[s28], vmem[" + std::to_string(vmem) + "], " +
       std::to_string(bytes) + ", 1");
  Emit("dmawait 1");
}

void KernelBuilder::BeginLinearTiles(int64_t n) {
  tile_label_ = NewLabel("tile");
  Emit("simm s21, " + std::to_string(n));
  Emit("simm s20, 0");
  Emit("simm s25, 128");
  PlaceLabel(tile_label_);
  // m0 = the first min(n - s20, 1024) lanes: full sublanes, then a partial
  // one (mbox(rows, 128) | mbox(rows + 1, rem)).
  Emit("ssub s22, s21, s20");
  Emit("smin s22, s22, 1024");
  Emit("sshrl s23, s22, 7");
  Emit("sand s24, s22, 127");
  Emit("mbox m0, s23, s25");
  Emit("sadd s23, s23, 1");
  Emit("mbox m1, s23, s24");
  Emit("mor m0, m0, m1");
}

void KernelBuilder::EndLinearTiles() {
  Emit("sadd s20, s20, 1024");
  Emit("scmplt s22, s20, s21");
  Emit("brnz s22, " + tile_label_);
}

int MemTypeBytes(const std::string& mem) {
  if (mem == "c64") return 8;
  if (mem == "c128") return 16;
  auto t = tpu::DTypeFromName(mem);
  return t ? tpu::DTypeBytes(*t) : 0;
}

static int MemBytes(const std::string& mem) {
  const int b = MemTypeBytes(mem);
  return b == 0 ? 4 : b;
}

std::string MemType(const std::string& t) { return t == "c64" ? "u64" : t; }

int RegCount(const std::string& t) {
  if (t == "c128") return 4;
  if (t == "c64" || t == "f64" || t == "s64" || t == "u64") return 2;
  return 1;
}

static std::string At(const std::string& mask) {
  return mask.empty() ? "" : " @" + mask;
}

void KernelBuilder::Gather(int vreg, const std::string& type,
                           const std::string& addr, int idx,
                           const std::string& mask) {
  const std::string d = "v" + std::to_string(vreg);
  if (type != "c128") {
    Emit("vgather." + MemType(type) + " " + d + ", " + addr + ", v" +
         std::to_string(idx) + At(mask));
    return;
  }
  Emit("vadd.s32 v30, v" + std::to_string(idx) + ", v" + std::to_string(idx));
  Emit("vgather.u64 " + d + ", " + addr + ", v30" + At(mask));
  Emit("vimm.s32 v29, 1");
  Emit("vadd.s32 v30, v30, v29");
  Emit("vgather.u64 v" + std::to_string(vreg + 2) + ", " + addr + ", v30" +
       At(mask));
}

void KernelBuilder::Scatter(const std::string& type, const std::string& addr,
                            int idx, int vreg, const std::string& mask) {
  const std::string s = "v" + std::to_string(vreg);
  if (type != "c128") {
    Emit("vscatter." + MemType(type) + " " + addr + ", v" +
         std::to_string(idx) + ", " + s + At(mask));
    return;
  }
  Emit("vadd.s32 v30, v" + std::to_string(idx) + ", v" + std::to_string(idx));
  Emit("vscatter.u64 " + addr + ", v30, " + s + At(mask));
  Emit("vimm.s32 v29, 1");
  Emit("vadd.s32 v30, v30, v29");
  Emit("vscatter.u64 " + addr + ", v30, v" + std::to_string(vreg + 2) +
       At(mask));
}

void KernelBuilder::LoadLanes(int vreg, const std::string& mem,
                              const std::string& addr) {
  if (mem == "c128") {
    Emit("viota v28, 2");
    Gather(vreg, mem, addr, 28, "m0");
    return;
  }
  Emit("vld." + MemType(mem) + " v" + std::to_string(vreg) + ", " + addr +
       " @m0");
}

void KernelBuilder::StoreLanes(const std::string& mem, const std::string& addr,
                               int vreg) {
  if (mem == "c128") {
    Emit("viota v28, 2");
    Scatter(mem, addr, 28, vreg, "m0");
    return;
  }
  Emit("vst." + MemType(mem) + " " + addr + ", v" + std::to_string(vreg) +
       " @m0");
}

void KernelBuilder::LoadTile(int vreg, const std::string& mem, int64_t vmem) {
  Emit("smul s29, s20, " + std::to_string(MemBytes(mem)));
  LoadLanes(vreg, mem, "vmem[s29+" + std::to_string(vmem) + "]");
}

void KernelBuilder::StoreTile(const std::string& mem, int64_t vmem, int vreg) {
  Emit("smul s29, s20, " + std::to_string(MemBytes(mem)));
  StoreLanes(mem, "vmem[s29+" + std::to_string(vmem) + "]", vreg);
}

void KernelBuilder::LinearIndex() {
  Emit("viota v31, 2");
  Emit("vbcast.s32 v30, s20");
  Emit("vadd.s32 v31, v31, v30");
}

void KernelBuilder::Splat(int vreg, const std::string& type,
                          const std::string& value) {
  Emit("vimm." + type + " v" + std::to_string(vreg) + ", " + value);
}

std::string KernelBuilder::Text() const {
  std::string t =
      "kernel " + name_ + " {\n  .vmem " + std::to_string(vmem_peak_) + "\n";
  t.reserve(t.size() + body_.size() + 2);
  t += body_;
  t += "}\n";
  return t;
}

StatusOr<tpu::Kernel> KernelBuilder::Finish() const {
  if (vmem_peak_ > vmem_capacity_) {
    return ResourceExhausted(
        "hloc: kernel " + name_ + " needs " + std::to_string(vmem_peak_) +
        " bytes of VMEM, capacity " + std::to_string(vmem_capacity_));
  }
  // Body lines start at line 3 of Text() (after `kernel` and `.vmem`).
  StatusOr<tpu::Kernel> k = tpu::AssembleKernel(name_, vmem_peak_, body_, 3);
  if (!k.ok()) {
    return Internal("hloc: emitted kernel " + name_ +
                    " does not assemble: " + k.status().message());
  }
  return k;
}

std::string LaneType(const std::string& t) {
  if (t == "f32" || t == "bf16" || t == "f16") return "f32";
  if (t == "s32" || t == "s16" || t == "s8" || t == "pred") return "s32";
  if (t == "u32" || t == "u16" || t == "u8") return "u32";
  if (t == "f64" || t == "s64" || t == "u64") return t;
  return "";
}

}  // namespace trench::codegen
