// The streamed reduce (stream_reduce.h): slab planning, the double
// buffered slab loop, and the lane-parallel fold of one slab.
#include "compiler/codegen/stream_reduce.h"

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/codegen/emitters.h"
#include "compiler/codegen/vector_ops.h"

namespace trench::codegen {
namespace {

std::string I(int64_t x) { return std::to_string(x); }

int64_t Aligned(int64_t bytes) { return (bytes + 511) / 512 * 512; }

// Memory type of a resident accumulator: the lane form of `t` (complex
// types are moved as themselves).
std::string AccMem(const std::string& t) {
  return t == "c64" || t == "c128" ? t : LaneType(t);
}

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
  // Every dim from p on is reduced and the reducer a plain add/max/min:
  // a slab is one contiguous run of one result's elements, folded with
  // whole-vreg loads and the cross-lane unit.
  bool vector = false;
  std::vector<int64_t> in_off;  // Offset of each input in a buffer set.
  int64_t set_bytes = 0;        // One buffer set (one slab of every input).

  int64_t slabs() const { return outer * blocks; }
  bool Reduced(int64_t d) const {
    return std::binary_search(red.begin(), red.end(), d);
  }
  // Result elements of a slab of `rows` indices of dim p.
  int64_t SlabOutputs(int64_t rows) const {
    return (p_kept ? rows : 1) * kept_inner;
  }
};

// VMEM bytes of plan `s` with `b` indices per slab.
int64_t Cost(const ReductionOperands& ops, const SlabPlan& s, int64_t b) {
  int64_t set = 0;
  for (const ArrayBuffer& in : ops.ins) {
    set += Aligned(b * s.inner * ElemBytes(in.dtype));
  }
  int64_t c = 2 * set;
  for (const ArrayBuffer& init : ops.inits) c += Aligned(init.bytes);
  for (const ArrayBuffer& out : ops.outs) {
    c += s.resident ? Aligned(out.elements * MemTypeBytes(AccMem(out.dtype)))
                    : Aligned(s.SlabOutputs(b) * ElemBytes(out.dtype));
  }
  return c;
}

// The outermost split dimension with a slab that fits in `avail`, and the
// largest such slab.
StatusOr<SlabPlan> ChoosePlan(const HloInstruction& instr,
                              const ReductionOperands& ops,
                              const Reducer& reducer, std::vector<int64_t> red,
                              int64_t avail) {
  SlabPlan s;
  s.dims = ops.ins[0].dims;
  s.red = std::move(red);
  const int64_t rank = s.dims.size();
  for (int64_t p = 0; p < rank; ++p) {
    s.p = p;
    s.outer = Product(std::vector<int64_t>(s.dims.begin(), s.dims.begin() + p));
    s.inner =
        Product(std::vector<int64_t>(s.dims.begin() + p + 1, s.dims.end()));
    s.p_kept = !s.Reduced(p);
    s.resident = !s.red.empty() && s.red.front() <= p;
    s.kept_inner = 1;
    for (int64_t d = p + 1; d < rank; ++d) {
      if (!s.Reduced(d)) s.kept_inner *= s.dims[d];
    }
    s.vector = false;
    if (s.red.size() >= static_cast<size_t>(rank - p) && s.red[0] <= p &&
        s.red[s.red.size() - (rank - p)] == p && reducer.direct &&
        (reducer.simple == "vadd" || reducer.simple == "vmax" ||
         reducer.simple == "vmin")) {
      s.vector = true;
    }
    if (Cost(ops, s, 1) > avail) continue;
    int64_t lo = 1, hi = s.dims[p];  // Cost(lo) fits; find the largest.
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (Cost(ops, s, mid) <= avail) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    s.b = lo;
    s.blocks = (s.dims[p] + s.b - 1) / s.b;
    s.ragged = s.dims[p] - (s.blocks - 1) * s.b;
    for (const ArrayBuffer& in : ops.ins) {
      s.in_off.push_back(s.set_bytes);
      s.set_bytes += Aligned(s.b * s.inner * ElemBytes(in.dtype));
    }
    return s;
  }
  return ResourceExhausted("hloc: " + instr.name() +
                           ": not even one row of a streamed reduce slab "
                           "(with its accumulators) fits in VMEM");
}

class SlabEmitter {
 public:
  SlabEmitter(const HloInstruction& instr, const ReductionOperands& ops,
              const Reducer& reducer, const SlabPlan& s, KernelBuilder& kb)
      : instr_(instr), ops_(ops), reducer_(reducer), s_(s), kb_(kb) {}

  Status Emit();

 private:
  // Starts the DMAs of the slab whose index is in register `slab` into the
  // buffer set at byte offset `set` (a register; semaphore 2 for set 0, 3
  // for set 1). Clobbers s24, s28..s31.
  void EmitSlabDmas(const std::string& slab, const std::string& set);
  void EmitDmas(const std::string& set, int64_t rows, int sem);
  // s9 = the first result element of slab s18. Leaves j (the block index)
  // in s29.
  void EmitOutputOffset();
  // The fold of the current slab when it holds `rows` indices of dim p.
  Status EmitSlab(int64_t rows);
  // The same for a vector plan.
  void EmitVectorSlab(int64_t rows);
  // Resident accumulators: init fill before, conversion and DMA after.
  void EmitFillAccumulators();
  void EmitWriteResults();

  const HloInstruction& instr_;
  const ReductionOperands& ops_;
  const Reducer& reducer_;
  const SlabPlan& s_;
  KernelBuilder& kb_;
  int64_t slab_base_ = 0;
  std::vector<int64_t> init_v_, acc_v_;
};

void SlabEmitter::EmitDmas(const std::string& set, int64_t rows, int sem) {
  for (int64_t i = 0; i < ops_.n; ++i) {
    const int64_t e = ElemBytes(ops_.ins[i].dtype);
    kb_.Emit("saddr s28, " + ops_.ins[i].name);
    kb_.Emit("smul s29, s30, " + I(e));
    kb_.Emit("sadd s28, s28, s29");
    kb_.Emit("dmastart vmem[" + set + "+" + I(slab_base_ + s_.in_off[i]) +
             "], hbm[s28], " + I(rows * s_.inner * e) + ", " + I(sem));
  }
}

void SlabEmitter::EmitSlabDmas(const std::string& slab,
                               const std::string& set) {
  // s30 = the slab's first input element: o * dims[p] * inner + j * b *
  // inner, with o = slab / blocks and j = slab % blocks.
  kb_.Emit("sdiv s28, " + slab + ", " + I(s_.blocks));
  kb_.Emit("srem s29, " + slab + ", " + I(s_.blocks));
  kb_.Emit("smul s30, s28, " + I(s_.dims[s_.p] * s_.inner));
  kb_.Emit("smul s31, s29, " + I(s_.b * s_.inner));
  kb_.Emit("sadd s30, s30, s31");
  kb_.Emit("scmpeq s24, s29, " + I(s_.blocks - 1));
  const std::string odd = kb_.NewLabel("slab_odd");
  const std::string done = kb_.NewLabel("slab_dma");
  auto sized = [&](int sem) {
    if (s_.ragged == s_.b) {
      EmitDmas(set, s_.b, sem);
      return;
    }
    const std::string part = kb_.NewLabel("slab_ragged");
    const std::string end = kb_.NewLabel("slab_sized");
    kb_.Emit("brnz s24, " + part);
    EmitDmas(set, s_.b, sem);
    kb_.Emit("jmp " + end);
    kb_.PlaceLabel(part);
    EmitDmas(set, s_.ragged, sem);
    kb_.PlaceLabel(end);
  };
  kb_.Emit("brnz " + set + ", " + odd);
  sized(2);
  kb_.Emit("jmp " + done);
  kb_.PlaceLabel(odd);
  sized(3);
  kb_.PlaceLabel(done);
}

void SlabEmitter::EmitOutputOffset() {
  const std::vector<int64_t>& dims = s_.dims;
  // Result strides: the row-major strides of the kept dims.
  std::vector<int64_t> ost(dims.size(), 0);
  int64_t stride = 1;
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (s_.Reduced(d)) continue;
    ost[d] = stride;
    stride *= dims[d];
  }
  kb_.Emit("sdiv s28, s18, " + I(s_.blocks));
  kb_.Emit("srem s29, s18, " + I(s_.blocks));
  kb_.Emit("simm s9, 0");
  int64_t ist = 1;  // Stride of dim d in the outer index (dims 0..p-1).
  for (int64_t d = s_.p - 1; d >= 0; --d) {
    if (!s_.Reduced(d) && dims[d] > 1) {
      kb_.Emit("sdiv s30, s28, " + I(ist));
      kb_.Emit("srem s30, s30, " + I(dims[d]));
      kb_.Emit("smul s30, s30, " + I(ost[d]));
      kb_.Emit("sadd s9, s9, s30");
    }
    ist *= dims[d];
  }
  if (s_.p_kept) {
    kb_.Emit("smul s30, s29, " + I(s_.b * ost[s_.p]));
    kb_.Emit("sadd s9, s9, s30");
  }
}

void SlabEmitter::EmitVectorSlab(int64_t rows) {
  const ArrayBuffer& in = ops_.ins[0];
  const std::string lane = LaneType(in.dtype), sfx = "." + lane;
  const std::string& op = reducer_.simple;
  const std::string id = ReducerIdentity(op, lane);
  const std::string red = op == "vadd"   ? "redsum"
                          : op == "vmax" ? "redmax"
                                         : "redmin";
  const std::string acc = AccMem(ops_.outs[0].dtype);
  // v0 partials (1024 lanes), v2 the loaded tile, v4 the slab's total,
  // v6 the result's accumulator, v8 its index (pairs for 64-bit lanes).
  kb_.Splat(0, lane, id);
  kb_.BeginLinearTiles(rows * s_.inner);
  kb_.Splat(2, lane, id);  // Masked-off lanes keep the identity.
  kb_.Emit("smul s29, s20, " + I(ElemBytes(in.dtype)));
  kb_.Emit("sadd s29, s29, s19");
  kb_.LoadLanes(2, in.dtype, "vmem[s29+" + I(slab_base_ + s_.in_off[0]) + "]");
  kb_.Emit(op + sfx + " v0, v0, v2");
  kb_.EndLinearTiles();
  kb_.Emit("vl" + red + sfx + " v4, v0");
  kb_.Emit("vs" + red + sfx + " v4, v4");
  kb_.Emit("simm s28, 1");
  kb_.Emit("mbox m4, s28, s28");
  kb_.Emit("vbcast.s32 v8, s9");
  kb_.Gather(6, acc, "vmem[" + I(acc_v_[0]) + "]", 8, "m4");
  kb_.Emit(op + sfx + " v6, v6, v4");
  kb_.Scatter(acc, "vmem[" + I(acc_v_[0]) + "]", 8, 6, "m4");
}

Status SlabEmitter::EmitSlab(int64_t rows) {
  if (s_.vector) {
    EmitVectorSlab(rows);
    return Status::Ok();
  }
  // The slab as an array of its own: [rows, dims p+1..].
  std::vector<int64_t> ld = {rows};
  ld.insert(ld.end(), s_.dims.begin() + s_.p + 1, s_.dims.end());
  const std::vector<int64_t> lst = RowMajorStrides(ld);
  std::vector<int64_t> out_dims, coeff;
  std::vector<LoopDim> loops;
  for (size_t d = 0; d < ld.size(); ++d) {
    if (s_.Reduced(s_.p + static_cast<int64_t>(d))) {
      loops.push_back({ld[d], 0, lst[d]});
    } else {
      out_dims.push_back(ld[d]);
      coeff.push_back(lst[d]);
    }
  }
  const int64_t outputs = s_.SlabOutputs(rows);
  VRegPool pool;
  ASSIGN_OR_RETURN(int base, pool.Alloc(false));
  ASSIGN_OR_RETURN(int idx, pool.Alloc(false));
  ASSIGN_OR_RETURN(int tmp, pool.Alloc(false));
  ASSIGN_OR_RETURN(int oidx, pool.Alloc(false));
  std::vector<int> acc, x;
  for (int64_t i = 0; i < ops_.n; ++i) {
    ASSIGN_OR_RETURN(int a, pool.AllocN(RegCount(ops_.inits[i].dtype)));
    acc.push_back(a);
  }
  for (int64_t i = 0; i < ops_.n; ++i) {
    ASSIGN_OR_RETURN(int v, pool.AllocN(RegCount(ops_.ins[i].dtype)));
    x.push_back(v);
  }
  std::vector<int> params = acc;
  params.insert(params.end(), x.begin(), x.end());
  kb_.BeginLinearTiles(outputs);
  kb_.LinearIndex();
  EmitIndexFromLinear(kb_, 31, out_dims, coeff, 0, base, tmp);
  if (s_.resident) {
    kb_.Emit("vbcast.s32 " + VReg(oidx) + ", s9");
    kb_.Emit("vadd.s32 " + VReg(oidx) + ", " + VReg(oidx) + ", v31");
    for (int64_t i = 0; i < ops_.n; ++i) {
      kb_.Gather(acc[i], AccMem(ops_.outs[i].dtype),
                 "vmem[" + I(acc_v_[i]) + "]", oidx, "m0");
    }
  } else {
    kb_.Splat(idx, "s32", "0");
    for (int64_t i = 0; i < ops_.n; ++i) {
      kb_.Gather(acc[i], ops_.inits[i].dtype, "vmem[" + I(init_v_[i]) + "]",
                 idx, "m0");
    }
  }
  auto fold = [&](int at) -> Status {
    for (int64_t i = 0; i < ops_.n; ++i) {
      kb_.Gather(x[i], ops_.ins[i].dtype,
                 "vmem[s19+" + I(slab_base_ + s_.in_off[i]) + "]", at, "m0");
    }
    if (reducer_.direct) {
      kb_.Emit(reducer_.simple + "." + LaneType(ops_.ins[0].dtype) + " " +
               VReg(acc[0]) + ", " + VReg(acc[0]) + ", " + VReg(x[0]) + " @m0");
      return Status::Ok();
    }
    return EmitScalarComputation(kb_, pool, instr_, *instr_.to_apply(), params,
                                 acc);
  };
  if (loops.empty()) {
    RETURN_IF_ERROR(fold(base));
  } else {
    RETURN_IF_ERROR(EmitNestedLoops(kb_, loops, [&]() -> Status {
      kb_.Emit("simm s0, 0");
      for (size_t j = 0; j < loops.size(); ++j) {
        kb_.Emit("sadd s0, s0, s" + I(10 + j));
      }
      kb_.Emit("vbcast.s32 " + VReg(idx) + ", s0");
      kb_.Emit("vadd.s32 " + VReg(idx) + ", " + VReg(idx) + ", " + VReg(base));
      return fold(idx);
    }));
  }
  for (int64_t i = 0; i < ops_.n; ++i) {
    if (s_.resident) {
      kb_.Scatter(AccMem(ops_.outs[i].dtype), "vmem[" + I(acc_v_[i]) + "]",
                  oidx, acc[i], "m0");
    } else {
      kb_.StoreTile(ops_.outs[i].dtype, acc_v_[i], acc[i]);
    }
  }
  kb_.EndLinearTiles();
  if (!s_.resident) {
    // The slab's results are final: out[s9 ..] = them.
    for (int64_t i = 0; i < ops_.n; ++i) {
      const int64_t e = ElemBytes(ops_.outs[i].dtype);
      kb_.Emit("saddr s28, " + ops_.outs[i].name);
      kb_.Emit("smul s29, s9, " + I(e));
      kb_.Emit("sadd s28, s28, s29");
      kb_.Emit("dmastart hbm[s28], vmem[" + I(acc_v_[i]) + "], " +
               I(outputs * e) + ", 6");
    }
    kb_.Emit("dmawait 6");
  }
  return Status::Ok();
}

void SlabEmitter::EmitFillAccumulators() {
  kb_.BeginLinearTiles(ops_.outs[0].elements);
  kb_.Splat(8, "s32", "0");
  for (int64_t i = 0; i < ops_.n; ++i) {
    kb_.Gather(0, ops_.inits[i].dtype, "vmem[" + I(init_v_[i]) + "]", 8, "m0");
    kb_.StoreTile(AccMem(ops_.outs[i].dtype), acc_v_[i], 0);
  }
  kb_.EndLinearTiles();
}

void SlabEmitter::EmitWriteResults() {
  for (int64_t i = 0; i < ops_.n; ++i) {
    const ArrayBuffer& out = ops_.outs[i];
    const std::string acc = AccMem(out.dtype);
    if (acc != out.dtype) {
      // In place: tile t's result bytes lie within the accumulator bytes
      // of tiles <= t (the lane form is at least as wide), already read.
      kb_.BeginLinearTiles(out.elements);
      kb_.LoadTile(0, acc, acc_v_[i]);
      kb_.StoreTile(out.dtype, acc_v_[i], 0);
      kb_.EndLinearTiles();
    }
    kb_.DmaOut(out.name, acc_v_[i], out.bytes);
  }
}

Status SlabEmitter::Emit() {
  for (const ArrayBuffer& init : ops_.inits) {
    init_v_.push_back(kb_.AllocVmem(init.bytes));
  }
  slab_base_ = kb_.AllocVmem(2 * s_.set_bytes);
  for (const ArrayBuffer& out : ops_.outs) {
    acc_v_.push_back(kb_.AllocVmem(
        s_.resident ? out.elements * MemTypeBytes(AccMem(out.dtype))
                    : s_.SlabOutputs(s_.b) * ElemBytes(out.dtype)));
  }
  // Prologue: slab 0 into set 0, then the inits (and accumulators) while
  // it flies.
  kb_.Emit("simm s18, 0");
  kb_.Emit("simm s19, 0");
  EmitSlabDmas("s18", "s19");
  for (int64_t i = 0; i < ops_.n; ++i) {
    kb_.DmaIn(init_v_[i], ops_.inits[i].name, ops_.inits[i].bytes);
  }
  if (s_.resident) EmitFillAccumulators();
  const int64_t slabs = s_.slabs();
  const std::string loop = kb_.NewLabel("slab");
  kb_.PlaceLabel(loop);
  if (slabs > 1) {
    // Prefetch slab s18 + 1 into the other set.
    const std::string skip = kb_.NewLabel("slab_noprefetch");
    kb_.Emit("sadd s22, s18, 1");
    kb_.Emit("scmplt s23, s22, " + I(slabs));
    kb_.Emit("brz s23, " + skip);
    kb_.Emit("simm s23, " + I(s_.set_bytes));
    kb_.Emit("ssub s23, s23, s19");
    EmitSlabDmas("s22", "s23");
    kb_.PlaceLabel(skip);
  }
  {
    const std::string odd = kb_.NewLabel("slab_wodd");
    const std::string done = kb_.NewLabel("slab_wait");
    kb_.Emit("brnz s19, " + odd);
    kb_.Emit("dmawait 2");
    kb_.Emit("jmp " + done);
    kb_.PlaceLabel(odd);
    kb_.Emit("dmawait 3");
    kb_.PlaceLabel(done);
  }
  EmitOutputOffset();
  if (s_.ragged == s_.b) {
    RETURN_IF_ERROR(EmitSlab(s_.b));
  } else {
    const std::string part = kb_.NewLabel("slab_part");
    const std::string next = kb_.NewLabel("slab_next");
    kb_.Emit("scmpeq s31, s29, " + I(s_.blocks - 1));
    kb_.Emit("brnz s31, " + part);
    RETURN_IF_ERROR(EmitSlab(s_.b));
    kb_.Emit("jmp " + next);
    kb_.PlaceLabel(part);
    RETURN_IF_ERROR(EmitSlab(s_.ragged));
    kb_.PlaceLabel(next);
  }
  kb_.Emit("sadd s18, s18, 1");
  kb_.Emit("simm s22, " + I(s_.set_bytes));
  kb_.Emit("ssub s19, s22, s19");
  kb_.Emit("scmplt s22, s18, " + I(slabs));
  kb_.Emit("brnz s22, " + loop);
  if (s_.resident) EmitWriteResults();
  return Status::Ok();
}

}  // namespace

bool ReductionFitsStaged(const KernelBuilder& kb,
                         const ReductionOperands& ops) {
  int64_t whole = 0;
  for (int64_t i = 0; i < ops.n; ++i) {
    whole += Aligned(ops.ins[i].bytes) + Aligned(ops.inits[i].bytes) +
             Aligned(ops.outs[i].bytes);
  }
  return whole <= kb.vmem_capacity() - kb.vmem_used();
}

Status EmitStreamedReduce(const HloInstruction& instr,
                          const ReductionOperands& ops, const Reducer& reducer,
                          KernelBuilder& kb) {
  std::vector<int64_t> red = instr.dimensions();
  std::sort(red.begin(), red.end());
  for (int64_t d : ops.ins[0].dims) {
    if (d == 0) return InvalidArgument("hloc: streamed reduce of no elements");
  }
  ASSIGN_OR_RETURN(SlabPlan s, ChoosePlan(instr, ops, reducer, std::move(red),
                                          kb.vmem_capacity() - kb.vmem_used()));
  return SlabEmitter(instr, ops, reducer, s, kb).Emit();
}

}  // namespace trench::codegen
