// The double-buffered streaming tile loop (streaming.h).
#include "compiler/codegen/streaming.h"

#include <algorithm>

#include "compiler/codegen/emit_data_movement_util.h"
#include "tpu/isa.h"

namespace trench::codegen {
namespace {

int64_t MemBytes(const std::string& mem) { return MemTypeBytes(mem); }

}  // namespace

Status EmitBranch(KernelBuilder& kb, const std::string& cond,
                  const std::string& hint, const std::function<Status()>& taken,
                  const std::function<Status()>& otherwise) {
  const std::string yes = kb.NewLabel(hint + "_yes");
  const std::string end = kb.NewLabel(hint + "_end");
  kb.Emit("brnz " + cond + ", " + yes);
  RETURN_IF_ERROR(otherwise());
  kb.Emit("jmp " + end);
  kb.PlaceLabel(yes);
  RETURN_IF_ERROR(taken());
  kb.PlaceLabel(end);
  return Status::Ok();
}

int64_t ChooseStreamChunk(int64_t n, const std::vector<StreamArray>& arrays,
                          int64_t vmem_avail, int64_t max_chunk) {
  int64_t per_element = 0;
  for (const StreamArray& a : arrays) per_element += MemBytes(a.mem);
  int64_t chunk = std::min(max_chunk, (n + 1023) / 1024 * 1024);
  chunk = std::max<int64_t>(chunk / 1024 * 1024, 1024);
  // 1024 elements of any type are a multiple of 512 bytes: no padding.
  while (chunk >= 1024 && 2 * chunk * per_element > vmem_avail) {
    chunk = (chunk / 2) / 1024 * 1024;
  }
  return chunk >= 1024 ? chunk : 0;
}

bool StreamingPays(int64_t n, int64_t whole_bytes, int64_t vmem_avail) {
  return whole_bytes > vmem_avail || n >= 2 * kDefaultStreamChunk;
}

StatusOr<StreamLoop> StreamLoop::Create(KernelBuilder& kb, int64_t n,
                                        std::vector<StreamArray> inputs,
                                        std::vector<StreamArray> outputs,
                                        int64_t chunk) {
  if (n <= 0) return InvalidArgument("hloc: streaming over no elements");
  if (chunk <= 0 || chunk % 1024 != 0) {
    return InvalidArgument("hloc: stream chunk " + I(chunk) +
                           " is not a positive multiple of 1024");
  }
  StreamLoop s(kb);
  s.n_ = n;
  s.chunk_ = chunk;
  s.in_ = std::move(inputs);
  s.out_ = std::move(outputs);
  auto place = [&](const std::vector<StreamArray>& arrays,
                   std::vector<int64_t>& bytes,
                   std::vector<int64_t>& off) -> Status {
    for (const StreamArray& a : arrays) {
      const int64_t b = MemBytes(a.mem);
      if (b == 0) return InvalidArgument("hloc: stream of type " + a.mem);
      bytes.push_back(b);
      off.push_back(s.set_bytes_);
      s.set_bytes_ += VmemAligned(chunk * b);
    }
    return Status::Ok();
  };
  RETURN_IF_ERROR(place(s.in_, s.in_bytes_, s.in_off_));
  RETURN_IF_ERROR(place(s.out_, s.out_bytes_, s.out_off_));
  for (size_t o = 0; o < s.out_.size(); ++o) {
    for (size_t i = 0; i < s.in_.size(); ++i) {
      if (s.out_[o].buffer == s.in_[i].buffer &&
          s.out_bytes_[o] != s.in_bytes_[i]) {
        return InvalidArgument("hloc: streamed output " + s.out_[o].buffer +
                               " overlaps an input of another element size");
      }
    }
  }
  if (kb.vmem_used() + 2 * s.set_bytes_ > kb.vmem_capacity()) {
    return ResourceExhausted("hloc: stream buffers of " + I(2 * s.set_bytes_) +
                             " bytes do not fit in VMEM");
  }
  s.base_ = kb.AllocVmem(2 * s.set_bytes_);
  return s;
}

void StreamLoop::EmitDmas(bool to_hbm, const std::string& start,
                          const std::string& set, int sem, int64_t elements) {
  const std::vector<StreamArray>& arrays = to_hbm ? out_ : in_;
  const std::vector<int64_t>& bytes = to_hbm ? out_bytes_ : in_bytes_;
  const std::vector<int64_t>& off = to_hbm ? out_off_ : in_off_;
  for (size_t j = 0; j < arrays.size(); ++j) {
    kb_->Emit("saddr s28, " + arrays[j].buffer);
    kb_->Emit("smul s29, " + start + ", " + I(bytes[j]));
    kb_->Emit("sadd s28, s28, s29");
    const std::string v = "vmem[" + set + "+" + I(base_ + off[j]) + "]";
    const std::string h = "hbm[s28]";
    kb_->Emit("dmastart " + (to_hbm ? h + ", " + v : v + ", " + h) + ", " +
              I(elements * bytes[j]) + ", " + I(sem));
  }
}

void StreamLoop::EmitChunkDmas(bool to_hbm, const std::string& start,
                               const std::string& set, int sem_base) {
  const int64_t last = (chunks() - 1) * chunk_;
  const int64_t ragged = n_ - last;
  const std::string odd = kb_->NewLabel("stream_odd");
  const std::string done = kb_->NewLabel("stream_dma");
  // Four variants: set 0/1 (semaphore) x full/ragged chunk (size).
  auto sized = [&](int sem) {
    if (ragged == chunk_) {
      EmitDmas(to_hbm, start, set, sem, chunk_);
      return;
    }
    const std::string part = kb_->NewLabel("stream_ragged");
    const std::string end = kb_->NewLabel("stream_sized");
    kb_->Emit("scmpeq s31, " + start + ", " + I(last));
    kb_->Emit("brnz s31, " + part);
    EmitDmas(to_hbm, start, set, sem, chunk_);
    kb_->Emit("jmp " + end);
    kb_->PlaceLabel(part);
    EmitDmas(to_hbm, start, set, sem, ragged);
    kb_->PlaceLabel(end);
  };
  kb_->Emit("brnz " + set + ", " + odd);
  sized(sem_base);
  kb_->Emit("jmp " + done);
  kb_->PlaceLabel(odd);
  sized(sem_base + 1);
  kb_->PlaceLabel(done);
}

void StreamLoop::EmitWaitByParity(int sem_base) {
  const std::string odd = kb_->NewLabel("stream_wodd");
  const std::string done = kb_->NewLabel("stream_wait");
  kb_->Emit("brnz s27, " + odd);
  kb_->Emit("dmawait " + I(sem_base));
  kb_->Emit("jmp " + done);
  kb_->PlaceLabel(odd);
  kb_->Emit("dmawait " + I(sem_base + 1));
  kb_->PlaceLabel(done);
}

void StreamLoop::Begin() {
  chunk_label_ = kb_->NewLabel("chunk");
  tile_label_ = kb_->NewLabel("stile");
  kb_->Emit("simm s21, " + I(n_));
  kb_->Emit("simm s25, 128");
  kb_->Emit("simm s26, 0");
  kb_->Emit("simm s27, 0");
  // Prologue: chunk 0's inputs into set 0.
  EmitDmas(false, "s26", "s27", 2, std::min(chunk_, n_));
  kb_->PlaceLabel(chunk_label_);
  if (!in_.empty() && chunks() > 1) {
    // 1. Prefetch chunk i+1 into the other set (s30), if there is one.
    const std::string skip = kb_->NewLabel("stream_noprefetch");
    kb_->Emit("sadd s22, s26, " + I(chunk_));
    kb_->Emit("scmplt s23, s22, s21");
    kb_->Emit("brz s23, " + skip);
    kb_->Emit("simm s30, " + I(set_bytes_));
    kb_->Emit("ssub s30, s30, s27");
    EmitChunkDmas(false, "s22", "s30", 2);
    kb_->PlaceLabel(skip);
  }
  // 2. Chunk i's inputs.
  if (!in_.empty()) EmitWaitByParity(2);
  // 3. Chunk i-2's outputs read the output buffers of this set.
  if (!out_.empty() && chunks() > 2) {
    const std::string skip = kb_->NewLabel("stream_nooutwait");
    kb_->Emit("scmplt s23, s26, " + I(2 * chunk_));
    kb_->Emit("brnz s23, " + skip);
    EmitWaitByParity(4);
    kb_->PlaceLabel(skip);
  }
  // 4. The tile loop (m0 as in KernelBuilder::BeginLinearTiles).
  kb_->Emit("smov s20, s26");
  kb_->PlaceLabel(tile_label_);
  kb_->Emit("ssub s22, s21, s20");
  kb_->Emit("smin s22, s22, 1024");
  kb_->Emit("sshrl s23, s22, 7");
  kb_->Emit("sand s24, s22, 127");
  kb_->Emit("mbox m0, s23, s25");
  kb_->Emit("sadd s23, s23, 1");
  kb_->Emit("mbox m1, s23, s24");
  kb_->Emit("mor m0, m0, m1");
}

void StreamLoop::Load(int vreg, int input) {
  kb_->Emit("ssub s28, s20, s26");
  kb_->Emit("smul s29, s28, " + I(in_bytes_[input]));
  kb_->Emit("sadd s29, s29, s27");
  kb_->LoadLanes(vreg, in_[input].mem,
                 "vmem[s29+" + I(base_ + in_off_[input]) + "]");
}

void StreamLoop::Store(int output, int vreg) {
  kb_->Emit("ssub s28, s20, s26");
  kb_->Emit("smul s29, s28, " + I(out_bytes_[output]));
  kb_->Emit("sadd s29, s29, s27");
  kb_->StoreLanes(out_[output].mem,
                  "vmem[s29+" + I(base_ + out_off_[output]) + "]", vreg);
}

void StreamLoop::End() {
  kb_->Emit("sadd s20, s20, 1024");
  kb_->Emit("sadd s22, s26, " + I(chunk_));
  kb_->Emit("smin s22, s22, s21");
  kb_->Emit("scmplt s22, s20, s22");
  kb_->Emit("brnz s22, " + tile_label_);
  // 5. Chunk i's outputs.
  if (!out_.empty()) EmitChunkDmas(true, "s26", "s27", 4);
  kb_->Emit("sadd s26, s26, " + I(chunk_));
  kb_->Emit("simm s22, " + I(set_bytes_));
  kb_->Emit("ssub s27, s22, s27");
  kb_->Emit("scmplt s22, s26, s21");
  kb_->Emit("brnz s22, " + chunk_label_);
  // Epilogue: the outputs of the last two chunks are still in flight.
  if (!out_.empty()) {
    const int64_t c = chunks();
    if (c >= 2) kb_->Emit("dmawait " + I(4 + (c - 2) % 2));
    kb_->Emit("dmawait " + I(4 + (c - 1) % 2));
  }
}

int64_t LargestFitting(int64_t hi, const std::function<bool(int64_t)>& fits) {
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

void EmitElementAddress(KernelBuilder& kb, int elem,
                        const ArrayBuffer& buffer) {
  kb.Emit("saddr s9, " + buffer.name);
  kb.Emit("smul s28, s" + I(elem) + ", " + I(dm::ElemBytes(buffer.dtype)));
  kb.Emit("sadd s9, s9, s28");
}

}  // namespace trench::codegen
