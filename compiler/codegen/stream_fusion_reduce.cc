// The streamed reduce fusion (stream_fusion.h): the reduce input's
// iteration space in double-buffered slabs (stream_slab.h), each folded
// lane-parallel with the fused producers evaluated per reduced element.
//
// Per slab of `rows` indices of the split dim p (the slab as an array
// [rows, dims p+1..]): a tile loop over the slab's results; each lane has
// `base`, the slab-local index of its result's first reduced element; the
// nested loops over the slab's reduced dims (s1.., s10..) give `local` =
// base + offset and the global position `global` = s8 (the slab's first
// input element) + local, at which the evaluator computes every root's
// value: streamed parameters are gathered from the slab buffers at
// `local`, staged ones at `global`. Reduce roots fold into accumulators
// (registers, then the per-slab result region or the resident ones);
// other roots are scattered at `local` into a slab-sized region that is
// DMAed to their output after the slab.
#include <algorithm>

#include "compiler/codegen/emit_fusion_internal.h"
#include "compiler/codegen/emit_reduce_util.h"
#include "compiler/codegen/stream_slab.h"
#include "compiler/codegen/streaming.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen::fusion_internal {
namespace {

std::string TypeName(const HloInstruction* i) {
  return std::string(PrimitiveTypeName(i->shape().element_type()));
}

// Result elements of plan `s` (the product of its kept dims).
int64_t Results(const SlabPlan& s) {
  int64_t n = 1;
  for (size_t d = 0; d < s.dims.size(); ++d) {
    if (!s.Reduced(d)) n *= s.dims[d];
  }
  return n;
}

// One root of the fusion and where it goes.
struct RootPlan {
  const HloInstruction* root = nullptr;
  bool reduce = false;
  std::string in_type;  // The reduce input's type (reduce roots).
  std::string lane;     // Accumulator lane type (reduce roots).
  std::string op;       // The fold instruction, "vadd.f32" etc.
  std::string dtype;    // The root's element type.
  ArrayBuffer out;
  int64_t region = 0;  // Accumulators, slab results or slab outputs.
  int acc = -1;        // Accumulator register (during a slab).
};

class FusedSlabFold {
 public:
  FusedSlabFold(KernelBuilder& kb, const HloInstruction& fusion,
                std::vector<RootPlan>& roots,
                const std::unordered_map<const HloInstruction*, Staged>& staged,
                const std::vector<StreamArray>& streamed)
      : kb_(kb),
        fusion_(fusion),
        roots_(roots),
        staged_(staged),
        streamed_(streamed) {}

  // The plan of the slabs to come; with `view`, the slab input is a box
  // of the reduce input (kept-dim tiling, stream_slab.h).
  void SetPlan(const SlabPlan& s, const SlabView* view) {
    s_ = &s;
    view_ = view;
  }
  // Fills resident accumulators (the plan's results) with their inits.
  Status FillResident();
  // The fold of the current slab (`rows` indices of dim p).
  Status Slab(SlabLoop& loop, int64_t rows);

 private:
  // vD = root r's init value in its lane form.
  Status Init(const RootPlan& r, int dst, int zero);
  // Box view: vD = the reduce-input index of box index vD (clobbers
  // `tmp`, v29, s0).
  void EmitBoxToInput(int v, int tmp);
  // s28 = the HBM address of box element s8 of `buffer` (clobbers s29).
  void EmitBoxAddress(const std::string& buffer, int64_t e);

  KernelBuilder& kb_;
  const HloInstruction& fusion_;
  const SlabPlan* s_ = nullptr;
  const SlabView* view_ = nullptr;
  std::vector<RootPlan>& roots_;
  const std::unordered_map<const HloInstruction*, Staged>& staged_;
  const std::vector<StreamArray>& streamed_;
};

Status FusedSlabFold::Init(const RootPlan& r, int dst, int zero) {
  const HloInstruction* init = r.root->operand(1);
  if (auto it = staged_.find(init); it != staged_.end()) {
    kb_.Gather(dst, it->second.mem, "vmem[" + I(it->second.vmem) + "]", zero,
               "m0");
    return Status::Ok();
  }
  if (init->opcode() != HloOpcode::kConstant) {
    return CannotCompile(fusion_,
                         "a reduce init that is not a parameter or "
                         "constant");
  }
  return EmitSplatScalar(kb_, init->literal(), dst);
}

void FusedSlabFold::EmitBoxToInput(int v, int tmp) {
  // (v / row) * hbm_row + v % row + base.
  kb_.Splat(29, "s32", I(view_->row));
  kb_.Emit("vrem.s32 " + VReg(tmp) + ", " + VReg(v) + ", v29");
  kb_.Emit("vdiv.s32 " + VReg(v) + ", " + VReg(v) + ", v29");
  kb_.Splat(29, "s32", I(view_->hbm_row));
  kb_.Emit("vmul.s32 " + VReg(v) + ", " + VReg(v) + ", v29");
  kb_.Emit("vadd.s32 " + VReg(v) + ", " + VReg(v) + ", " + VReg(tmp));
  kb_.Emit("sld.s64 s0, vmem[" + I(view_->base_word) + "]");
  kb_.Emit("vbcast.s32 v29, s0");
  kb_.Emit("vadd.s32 " + VReg(v) + ", " + VReg(v) + ", v29");
}

void FusedSlabFold::EmitBoxAddress(const std::string& buffer, int64_t e) {
  kb_.Emit("sdiv s28, s8, " + I(view_->row));
  kb_.Emit("srem s29, s8, " + I(view_->row));
  kb_.Emit("smul s28, s28, " + I(view_->hbm_row));
  kb_.Emit("sadd s28, s28, s29");
  kb_.Emit("sld.s64 s29, vmem[" + I(view_->base_word) + "]");
  kb_.Emit("sadd s28, s28, s29");
  kb_.Emit("smul s28, s28, " + I(e));
  kb_.Emit("saddr s29, " + buffer);
  kb_.Emit("sadd s28, s28, s29");
}

Status FusedSlabFold::FillResident() {
  for (const RootPlan& r : roots_) {
    if (!r.reduce) continue;
    kb_.BeginLinearTiles(Results(*s_));
    kb_.Splat(8, "s32", "0");
    RETURN_IF_ERROR(Init(r, 0, 8));
    kb_.StoreTile(r.lane, r.region, 0);
    kb_.EndLinearTiles();
  }
  return Status::Ok();
}

Status FusedSlabFold::Slab(SlabLoop& loop, int64_t rows) {
  loop.EmitSlabStart("s8");
  const SlabFoldShape f = FoldShape(*s_, rows);
  if (f.loops.size() > 7)
    return CannotCompile(fusion_, "8 streamed reduce dims");
  VRegPool pool;
  ASSIGN_OR_RETURN(int base, pool.Alloc(false));
  ASSIGN_OR_RETURN(int tmp, pool.Alloc(false));
  ASSIGN_OR_RETURN(int oidx, pool.Alloc(false));
  ASSIGN_OR_RETURN(int local, pool.Alloc(false));
  ASSIGN_OR_RETURN(int global, pool.Alloc(false));
  for (RootPlan& r : roots_) {
    if (r.reduce) {
      ASSIGN_OR_RETURN(r.acc, pool.AllocN(RegCount(r.in_type)));
    }
  }
  BeginFoldTiles(kb_, *s_, rows, f, base, oidx, tmp);
  for (RootPlan& r : roots_) {
    if (!r.reduce) continue;
    if (s_->resident) {
      kb_.Gather(r.acc, r.lane, "vmem[" + I(r.region) + "]", oidx, "m0");
    } else {
      RETURN_IF_ERROR(Init(r, r.acc, oidx));
    }
  }
  auto fold = [&]() -> Status {
    EmitFoldOffset(kb_, f);
    kb_.Emit("vbcast.s32 " + VReg(local) + ", s0");
    kb_.Emit("vadd.s32 " + VReg(local) + ", " + VReg(local) + ", " +
             VReg(base));
    kb_.Emit("vbcast.s32 " + VReg(global) + ", s8");
    kb_.Emit("vadd.s32 " + VReg(global) + ", " + VReg(global) + ", " +
             VReg(local));
    if (view_ != nullptr) EmitBoxToInput(global, tmp);
    TileEvaluator ev(kb_, pool, staged_, {}, global);
    ev.SetStreamLoader([&](int dst, int j) {
      kb_.Gather(dst, streamed_[j].mem, "vmem[s19+" + I(loop.Address(j)) + "]",
                 local, "m0");
    });
    return TwoPass(ev, [&]() -> Status {
      for (const RootPlan& r : roots_) {
        const HloInstruction* value = r.reduce ? r.root->operand(0) : r.root;
        ASSIGN_OR_RETURN(int v, ev.Get(value));
        if (!ev.dry() && r.reduce) {
          kb_.Emit(r.op + " " + VReg(r.acc) + ", " + VReg(r.acc) + ", " +
                   VReg(v) + " @m0");
        } else if (!ev.dry()) {
          kb_.Scatter(r.dtype, "vmem[" + I(r.region) + "]", local, v, "m0");
        }
        ev.Release(value);
      }
      return Status::Ok();
    });
  };
  if (f.loops.empty()) {
    RETURN_IF_ERROR(fold());
  } else {
    RETURN_IF_ERROR(EmitNestedLoops(kb_, f.loops, fold));
  }
  for (const RootPlan& r : roots_) {
    if (!r.reduce) continue;
    if (s_->resident) {
      kb_.Scatter(r.lane, "vmem[" + I(r.region) + "]", oidx, r.acc, "m0");
    } else {
      kb_.StoreTile(r.dtype, r.region, r.acc);
    }
  }
  kb_.EndLinearTiles();
  // The slab's final values: per-slab results at s9, other roots at s8.
  bool dma = false;
  for (const RootPlan& r : roots_) {
    if (r.reduce && s_->resident) continue;
    const int64_t e = MemTypeBytes(r.dtype);
    const int64_t n = r.reduce ? s_->SlabOutputs(rows) : rows * s_->inner;
    if (view_ != nullptr && !r.reduce) {
      EmitBoxAddress(r.out.name, e);
      if (s_->p == 0 && rows > 1) {  // Rows of the box, hbm_row apart.
        kb_.Emit("dmastart hbm[s28], vmem[" + I(r.region) + "], " +
                 I(view_->row * e) + ", 6, " + I(rows) + ", " +
                 I(view_->row * e) + ", " + I(view_->hbm_row * e));
        dma = true;
        continue;
      }
    } else {
      kb_.Emit("saddr s28, " + r.out.name);
      kb_.Emit("smul s29, " + std::string(r.reduce ? "s9" : "s8") + ", " +
               I(e));
      kb_.Emit("sadd s28, s28, s29");
    }
    kb_.Emit("dmastart hbm[s28], vmem[" + I(r.region) + "], " + I(n * e) +
             ", 6");
    dma = true;
  }
  if (dma) kb_.Emit("dmawait 6");
  return Status::Ok();
}

}  // namespace

Status EmitStreamedReduceFusion(KernelBuilder& kb, const HloInstruction& instr,
                                const FusionSpec& spec,
                                const std::vector<const HloInstruction*>& roots,
                                const ParamBuffers& params,
                                const std::vector<ArrayBuffer>& outs) {
  const std::vector<int64_t>& dims = spec.reduce_input_dims;
  const int64_t n = Product(dims);
  if (n == 0 || dims.size() > 8) {
    return ResourceExhausted("hloc: " + instr.name() +
                             ": a reduce fusion of no elements or rank > 8 "
                             "whose results do not fit in VMEM");
  }
  std::vector<RootPlan> plans;
  ParamAccess access;
  for (size_t i = 0; i < roots.size(); ++i) {
    RootPlan r;
    r.root = roots[i];
    r.reduce = roots[i]->opcode() == HloOpcode::kReduce;
    r.dtype = TypeName(roots[i]);
    r.out = outs[i];
    access.Collect(roots[i], true);
    if (r.reduce) {
      r.in_type = TypeName(roots[i]->operand(0));
      r.lane = LaneType(r.in_type);
      const std::string m = FusedReducerMnemonic(
          *roots[i]->to_apply(), roots[i]->operand(0)->shape().element_type());
      if (m.empty() || r.lane.empty()) {
        return CannotCompile(instr, "this reducer of " + r.in_type);
      }
      r.op = m + "." + r.lane;
    }
    plans.push_back(r);
  }
  if (outs[0].elements == 0) return Status::Ok();
  std::vector<StreamArray> streamed;
  ASSIGN_OR_RETURN(auto staged,
                   PlaceParams(kb, instr, params, access, n, &streamed));
  for (const RootPlan& r : plans) {
    for (const StreamArray& a : streamed) {
      if (a.buffer == r.out.name &&
          (r.reduce || MemTypeBytes(a.mem) != MemTypeBytes(r.dtype))) {
        return CannotCompile(instr,
                             "an output in place over a streamed "
                             "operand of another shape");
      }
    }
  }
  std::vector<SlabArray> arrays;
  for (const StreamArray& a : streamed) {
    arrays.push_back({a.buffer, MemTypeBytes(a.mem), 0});
  }
  auto cost = [&](const SlabPlan& s, int64_t b) {
    int64_t c = 0;
    for (const SlabArray& a : arrays) {
      c += 2 * VmemAligned(b * s.inner * a.elem_bytes);
    }
    for (const RootPlan& r : plans) {
      const int64_t e = MemTypeBytes(r.dtype);
      if (!r.reduce) {
        c += VmemAligned(b * s.inner * e);
      } else if (s.resident) {
        c += VmemAligned(Results(s) * MemTypeBytes(r.lane));
      } else {
        c += VmemAligned(s.SlabOutputs(b) * e);
      }
    }
    return c;
  };
  // The whole input, else blocks of the outermost kept dim (its block
  // index in 512 bytes of VMEM of its own).
  const int64_t avail = kb.vmem_capacity() - kb.vmem_used();
  auto choose = [&](const std::vector<int64_t>& d,
                    const std::vector<int64_t>& red, int64_t left) {
    return ChooseSlabPlan(
        d, red, left, [](SlabPlan&) {}, cost);
  };
  StatusOr<SlabPlan> chosen = choose(dims, spec.reduce_dims, avail);
  StatusOr<KeptTiling> tiling = NotFound("untiled");
  if (!chosen.ok()) {
    tiling = ChooseKeptTiling(dims, spec.reduce_dims,
                              [&](const auto& vd, const auto& vred) {
                                return choose(vd, vred, avail - 512).ok();
                              });
    if (tiling.ok()) {
      chosen = choose(tiling->Dims(tiling->w), tiling->vred, avail - 512);
    }
  }
  if (!chosen.ok()) {
    return ResourceExhausted(
        "hloc: " + instr.name() +
        ": not even one row of a streamed reduce-fusion slab (with its "
        "accumulators and outputs, for one index of the outermost kept "
        "dim) fits in VMEM");
  }
  const SlabPlan& s = *chosen;
  const int64_t set_bytes = LayOutSlabSet(s, arrays);
  const int64_t base = kb.AllocVmem(2 * set_bytes);
  for (RootPlan& r : plans) {
    const int64_t e = MemTypeBytes(r.dtype);
    r.region = kb.AllocVmem(!r.reduce    ? s.b * s.inner * e
                            : s.resident ? Results(s) * MemTypeBytes(r.lane)
                                         : s.SlabOutputs(s.b) * e);
  }
  FusedSlabFold fold(kb, instr, plans, staged, streamed);
  // One pass of the slab loop over plan `p` (a block when tiled).
  auto pass = [&](const SlabPlan& p, const SlabView* view,
                  int64_t word) -> Status {
    std::vector<SlabArray> laid = arrays;
    const int64_t set = LayOutSlabSet(p, laid);
    SlabLoop loop(kb, p, laid, base, set);
    if (view != nullptr) loop.SetView(*view);
    fold.SetPlan(p, view);
    loop.Start();
    if (p.resident) RETURN_IF_ERROR(fold.FillResident());
    RETURN_IF_ERROR(loop.Run(
        [&](int64_t rows) -> Status { return fold.Slab(loop, rows); }));
    if (!p.resident) return Status::Ok();
    for (const RootPlan& r : plans) {
      if (!r.reduce) continue;
      const int64_t n = Results(p), e = MemTypeBytes(r.dtype);
      EmitResidentWriteBack(kb, r.lane, r.region, r.out.name, r.dtype, n, n * e,
                            word, word < 0 ? 0 : Results(s) * e);
    }
    return Status::Ok();
  };
  if (!tiling.ok()) return pass(s, nullptr, -1);
  // Blocks: index j at `word`, its first input element j * w * I at
  // word + 8 (the fold takes every scalar register).
  const KeptTiling& t = *tiling;
  const SlabPlan last = SameSplit(s, t.Dims(t.last_w));
  const int64_t word = kb.AllocVmem(16);
  const SlabView full_view{t.w * t.inner, t.hbm_row(), word + 8};
  const SlabView last_view{t.last_w * t.inner, t.hbm_row(), word + 8};
  const std::string loop = kb.NewLabel("fkept_block");
  kb.Emit("simm s0, 0");
  kb.Emit("sst.s64 vmem[" + I(word) + "], s0");
  kb.PlaceLabel(loop);
  kb.Emit("sld.s64 s0, vmem[" + I(word) + "]");
  kb.Emit("smul s1, s0, " + I(t.w * t.inner));
  kb.Emit("sst.s64 vmem[" + I(word + 8) + "], s1");
  kb.Emit("scmpeq s1, s0, " + I(t.blocks - 1));
  RETURN_IF_ERROR(EmitBranch(
      kb, "s1", "fkept_last", [&] { return pass(last, &last_view, word); },
      [&] { return pass(s, &full_view, word); }));
  kb.Emit("sld.s64 s0, vmem[" + I(word) + "]");
  kb.Emit("sadd s0, s0, 1");
  kb.Emit("sst.s64 vmem[" + I(word) + "], s0");
  kb.Emit("scmplt s1, s0, " + I(t.blocks));
  kb.Emit("brnz s1, " + loop);
  return Status::Ok();
}

}  // namespace trench::codegen::fusion_internal
