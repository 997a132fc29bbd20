// The streamed reduce (stream_reduce.h): slab planning, the double
// buffered slab loop, and the lane-parallel fold of one slab.
#include "compiler/codegen/stream_reduce.h"

#include <algorithm>
#include <string>
#include <vector>

#include "compiler/codegen/emitters.h"
#include "compiler/codegen/stream_slab.h"
#include "compiler/codegen/streaming.h"
#include "compiler/codegen/vector_ops.h"

namespace trench::codegen {
namespace {

// Memory type of a resident accumulator: the lane form of `t` (complex
// types are moved as themselves).
std::string AccMem(const std::string& t) {
  return t == "c64" || t == "c128" ? t : LaneType(t);
}

struct ReducePlan : SlabPlan {
  // Every dim from p on is reduced and the reducer a plain add/max/min:
  // a slab is one contiguous run of one result's elements, folded with
  // whole-vreg loads and the cross-lane unit.
  bool vector = false;
  std::vector<SlabArray> arrays;  // One per input, in a buffer set.
  int64_t set_bytes = 0;          // One buffer set (one slab of every input).
  int64_t results = 0;            // Result elements (product of kept dims).
};

// Kept-dim tiling (stream_reduce.h): the input as [A, Q, I] (A the
// reduced dims before the first kept dim q, Q = dims[q], I the rest), in
// blocks of w indices of dim q; each block is a reduce of the box
// [A, w, I] with resident accumulators of its own results.
struct Tiling {
  int64_t w = 0, blocks = 0, row = 0, hbm_row = 0;
  ReducePlan full, last;  // Plans of a block of w and of the last block.
};

// VMEM bytes of plan `s` with `b` indices per slab.
int64_t Cost(const ReductionOperands& ops, const SlabPlan& s, int64_t b) {
  int64_t set = 0;
  for (const ArrayBuffer& in : ops.ins) {
    set += VmemAligned(b * s.inner * ElemBytes(in.dtype));
  }
  int64_t c = 2 * set, results = 1;
  for (size_t d = 0; d < s.dims.size(); ++d) {
    if (!s.Reduced(d)) results *= s.dims[d];
  }
  for (const ArrayBuffer& init : ops.inits) c += VmemAligned(init.bytes);
  for (const ArrayBuffer& out : ops.outs) {
    c += s.resident ? VmemAligned(results * MemTypeBytes(AccMem(out.dtype)))
                    : VmemAligned(s.SlabOutputs(b) * ElemBytes(out.dtype));
  }
  return c;
}

// The outermost split dimension of the input `dims` (reduced: `red`) with
// a slab that fits in `avail`, and the largest such slab; NotFound when
// none fits.
StatusOr<ReducePlan> ChoosePlan(const ReductionOperands& ops,
                                const Reducer& reducer,
                                const std::vector<int64_t>& dims,
                                const std::vector<int64_t>& red,
                                int64_t avail) {
  ASSIGN_OR_RETURN(SlabPlan chosen, ChooseSlabPlan(
                                        dims, red, avail, [](SlabPlan&) {},
                                        [&](const SlabPlan& s, int64_t b) {
                                          return Cost(ops, s, b);
                                        }));
  ReducePlan s;
  static_cast<SlabPlan&>(s) = chosen;
  const int64_t rank = s.dims.size(), p = s.p;
  s.vector = s.red.size() >= static_cast<size_t>(rank - p) && s.red[0] <= p &&
             s.red[s.red.size() - (rank - p)] == p && reducer.direct &&
             (reducer.simple == "vadd" || reducer.simple == "vmax" ||
              reducer.simple == "vmin");
  for (const ArrayBuffer& in : ops.ins) {
    s.arrays.push_back({in.name, ElemBytes(in.dtype), 0});
  }
  s.set_bytes = LayOutSlabSet(s, s.arrays);
  s.results = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (!s.Reduced(d)) s.results *= s.dims[d];
  }
  return s;
}

// The kept-dim tiling with the largest block that fits; NotFound when the
// input has no reduced dim before a kept one or not even a block of one
// index fits.
StatusOr<Tiling> ChooseTiling(const ReductionOperands& ops,
                              const Reducer& reducer,
                              const std::vector<int64_t>& dims,
                              const std::vector<int64_t>& red, int64_t avail) {
  auto plan = [&](const std::vector<int64_t>& vd,
                  const std::vector<int64_t>& vred, int64_t left) {
    return ChoosePlan(ops, reducer, vd, vred, left);
  };
  ASSIGN_OR_RETURN(
      KeptTiling k,
      ChooseKeptTiling(dims, red, [&](const auto& vd, const auto& vred) {
        return plan(vd, vred, avail).ok();
      }));
  Tiling t;
  t.w = k.w;
  t.blocks = k.blocks;
  t.row = k.w * k.inner;  // Box elements per index of A.
  t.hbm_row = k.hbm_row();
  ASSIGN_OR_RETURN(t.full, plan(k.Dims(k.w), k.vred, avail));
  // The accumulators are allocated for a full block, the buffer sets for
  // the larger of the two plans: the last block's plan must leave room
  // for the full block's accumulators.
  int64_t extra = 0;
  for (const ArrayBuffer& out : ops.outs) {
    const int64_t e = MemTypeBytes(AccMem(out.dtype));
    extra += VmemAligned(t.full.results * e) -
             VmemAligned(t.full.results / t.w * k.last_w * e);
  }
  ASSIGN_OR_RETURN(t.last, plan(k.Dims(k.last_w), k.vred, avail - extra));
  return t;
}

class SlabEmitter {
 public:
  SlabEmitter(const HloInstruction& instr, const ReductionOperands& ops,
              const Reducer& reducer, KernelBuilder& kb)
      : instr_(instr), ops_(ops), reducer_(reducer), kb_(kb) {}

  // The whole input with plan `s`.
  Status Emit(const ReducePlan& s);
  // Block after block of the kept-dim tiling `t`.
  Status EmitTiled(const Tiling& t);

 private:
  // VMEM for the inits, two buffer sets and the results of a plan.
  void Alloc(int64_t set_bytes, const ReducePlan& s);
  // One pass of the slab loop over plan `s` (with the HBM view `view`
  // when tiled, results written at block `word`'s offset).
  Status EmitPass(const ReducePlan& s, const SlabView* view, int64_t word);
  // The fold of the current slab when it holds `rows` indices of dim p.
  Status EmitSlab(int64_t rows);
  // The same for a vector plan.
  void EmitVectorSlab(int64_t rows);
  // Resident accumulators: init fill before, conversion and DMA after.
  void EmitFillAccumulators();
  void EmitWriteResults(int64_t word);

  const HloInstruction& instr_;
  const ReductionOperands& ops_;
  const Reducer& reducer_;
  const ReducePlan* s_ = nullptr;
  KernelBuilder& kb_;
  int64_t slab_base_ = 0;
  int64_t acc_stride_ = 0;  // Results per block (tiled).
  std::vector<int64_t> init_v_, acc_v_;
};

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
  kb_.BeginLinearTiles(rows * s_->inner);
  kb_.Splat(2, lane, id);  // Masked-off lanes keep the identity.
  kb_.Emit("smul s29, s20, " + I(ElemBytes(in.dtype)));
  kb_.Emit("sadd s29, s29, s19");
  kb_.LoadLanes(2, in.dtype,
                "vmem[s29+" + I(slab_base_ + s_->arrays[0].offset) + "]");
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
  if (s_->vector) {
    EmitVectorSlab(rows);
    return Status::Ok();
  }
  const SlabFoldShape f = FoldShape(*s_, rows);
  const int64_t outputs = s_->SlabOutputs(rows);
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
  BeginFoldTiles(kb_, *s_, rows, f, base, oidx, tmp);
  if (s_->resident) {
    for (int64_t i = 0; i < ops_.n; ++i) {
      kb_.Gather(acc[i], AccMem(ops_.outs[i].dtype),
                 "vmem[" + I(acc_v_[i]) + "]", oidx, "m0");
    }
  } else {
    for (int64_t i = 0; i < ops_.n; ++i) {
      kb_.Gather(acc[i], ops_.inits[i].dtype, "vmem[" + I(init_v_[i]) + "]",
                 oidx, "m0");
    }
  }
  auto fold = [&](int at) -> Status {
    for (int64_t i = 0; i < ops_.n; ++i) {
      kb_.Gather(x[i], ops_.ins[i].dtype,
                 "vmem[s19+" + I(slab_base_ + s_->arrays[i].offset) + "]", at,
                 "m0");
    }
    if (reducer_.direct) {
      kb_.Emit(reducer_.simple + "." + LaneType(ops_.ins[0].dtype) + " " +
               VReg(acc[0]) + ", " + VReg(acc[0]) + ", " + VReg(x[0]) + " @m0");
      return Status::Ok();
    }
    return EmitScalarComputation(kb_, pool, instr_, *instr_.to_apply(), params,
                                 acc);
  };
  if (f.loops.empty()) {
    RETURN_IF_ERROR(fold(base));
  } else {
    RETURN_IF_ERROR(EmitNestedLoops(kb_, f.loops, [&]() -> Status {
      EmitFoldOffset(kb_, f);
      kb_.Emit("vbcast.s32 " + VReg(idx) + ", s0");
      kb_.Emit("vadd.s32 " + VReg(idx) + ", " + VReg(idx) + ", " + VReg(base));
      return fold(idx);
    }));
  }
  for (int64_t i = 0; i < ops_.n; ++i) {
    if (s_->resident) {
      kb_.Scatter(AccMem(ops_.outs[i].dtype), "vmem[" + I(acc_v_[i]) + "]",
                  oidx, acc[i], "m0");
    } else {
      kb_.StoreTile(ops_.outs[i].dtype, acc_v_[i], acc[i]);
    }
  }
  kb_.EndLinearTiles();
  if (!s_->resident) {
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
  kb_.BeginLinearTiles(s_->results);
  kb_.Splat(8, "s32", "0");
  for (int64_t i = 0; i < ops_.n; ++i) {
    kb_.Gather(0, ops_.inits[i].dtype, "vmem[" + I(init_v_[i]) + "]", 8, "m0");
    kb_.StoreTile(AccMem(ops_.outs[i].dtype), acc_v_[i], 0);
  }
  kb_.EndLinearTiles();
}

void SlabEmitter::EmitWriteResults(int64_t word) {
  for (int64_t i = 0; i < ops_.n; ++i) {
    const ArrayBuffer& out = ops_.outs[i];
    const int64_t e = ElemBytes(out.dtype);
    EmitResidentWriteBack(kb_, AccMem(out.dtype), acc_v_[i], out.name,
                          out.dtype, s_->results, s_->results * e, word,
                          word < 0 ? 0 : acc_stride_ * e);
  }
}

void SlabEmitter::Alloc(int64_t set_bytes, const ReducePlan& s) {
  for (const ArrayBuffer& init : ops_.inits) {
    init_v_.push_back(kb_.AllocVmem(init.bytes));
  }
  slab_base_ = kb_.AllocVmem(2 * set_bytes);
  for (const ArrayBuffer& out : ops_.outs) {
    acc_v_.push_back(
        kb_.AllocVmem(s.resident ? s.results * MemTypeBytes(AccMem(out.dtype))
                                 : s.SlabOutputs(s.b) * ElemBytes(out.dtype)));
  }
}

Status SlabEmitter::EmitPass(const ReducePlan& s, const SlabView* view,
                             int64_t word) {
  s_ = &s;
  SlabLoop loop(kb_, s, s.arrays, slab_base_, s.set_bytes);
  if (view != nullptr) {
    SlabView v = *view;  // Rows of this plan's box: w (or the last w) * I.
    v.row = Product(s.dims) / s.dims[0];
    loop.SetView(v);
  }
  // Slab 0 flies while the inits (untiled) and accumulators are set up.
  loop.Start();
  if (view == nullptr) {
    for (int64_t i = 0; i < ops_.n; ++i) {
      kb_.DmaIn(init_v_[i], ops_.inits[i].name, ops_.inits[i].bytes);
    }
  }
  if (s.resident) EmitFillAccumulators();
  RETURN_IF_ERROR(
      loop.Run([&](int64_t rows) -> Status { return EmitSlab(rows); }));
  if (s.resident) EmitWriteResults(word);
  return Status::Ok();
}

Status SlabEmitter::Emit(const ReducePlan& s) {
  Alloc(s.set_bytes, s);
  return EmitPass(s, nullptr, -1);
}

Status SlabEmitter::EmitTiled(const Tiling& t) {
  Alloc(std::max(t.full.set_bytes, t.last.set_bytes), t.full);
  acc_stride_ = t.full.results;
  for (int64_t i = 0; i < ops_.n; ++i) {
    kb_.DmaIn(init_v_[i], ops_.inits[i].name, ops_.inits[i].bytes);
  }
  // Block index j at `word`, its first HBM element j * w * I at word + 8
  // (every scalar register is taken by the pass).
  const int64_t word = kb_.AllocVmem(16);
  const SlabView view{t.row, t.hbm_row, word + 8};
  const std::string loop = kb_.NewLabel("kept_block");
  kb_.Emit("simm s0, 0");
  kb_.Emit("sst.s64 vmem[" + I(word) + "], s0");
  kb_.PlaceLabel(loop);
  kb_.Emit("sld.s64 s0, vmem[" + I(word) + "]");
  kb_.Emit("smul s1, s0, " + I(t.row));
  kb_.Emit("sst.s64 vmem[" + I(word + 8) + "], s1");
  if (t.last.dims[1] == t.w) {
    RETURN_IF_ERROR(EmitPass(t.full, &view, word));
  } else {
    kb_.Emit("scmpeq s1, s0, " + I(t.blocks - 1));
    RETURN_IF_ERROR(EmitBranch(
        kb_, "s1", "kept_last", [&] { return EmitPass(t.last, &view, word); },
        [&] { return EmitPass(t.full, &view, word); }));
  }
  kb_.Emit("sld.s64 s0, vmem[" + I(word) + "]");
  kb_.Emit("sadd s0, s0, 1");
  kb_.Emit("sst.s64 vmem[" + I(word) + "], s0");
  kb_.Emit("scmplt s1, s0, " + I(t.blocks));
  kb_.Emit("brnz s1, " + loop);
  return Status::Ok();
}

}  // namespace

bool ReductionFitsStaged(const KernelBuilder& kb,
                         const ReductionOperands& ops) {
  int64_t whole = 0;
  for (int64_t i = 0; i < ops.n; ++i) {
    whole += VmemAligned(ops.ins[i].bytes) + VmemAligned(ops.inits[i].bytes) +
             VmemAligned(ops.outs[i].bytes);
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
  const int64_t avail = kb.vmem_capacity() - kb.vmem_used();
  SlabEmitter emitter(instr, ops, reducer, kb);
  StatusOr<ReducePlan> s =
      ChoosePlan(ops, reducer, ops.ins[0].dims, red, avail);
  if (s.ok()) return emitter.Emit(*s);
  // The tiling keeps its block index in 512 bytes of VMEM of its own.
  StatusOr<Tiling> t =
      ChooseTiling(ops, reducer, ops.ins[0].dims, red, avail - 512);
  if (t.ok()) return emitter.EmitTiled(*t);
  return ResourceExhausted("hloc: " + instr.name() +
                           ": not even one row of a streamed reduce slab "
                           "(with its accumulators, for one index of the "
                           "outermost kept dim) fits in VMEM");
}

}  // namespace trench::codegen
