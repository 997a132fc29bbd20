// reduce: N inputs and N inits reduced over any dimensions with any
// reducer computation (tuple result when N > 1, e.g. argmax).
//
// Two strategies:
//  * Cross-lane (one input, reducer a plain add/max/min, the reduced
//    dimensions a trailing run, so every output reduces one contiguous row
//    of R elements): rows are loaded into registers with identity-filled
//    ragged edges, combined elementwise, then reduced by the cross-lane unit
//    (vlred* across lanes; for long rows also vsred* across sublanes). With
//    R < 1024 each sublane holds one row (8 rows per step, strided vld);
//    else one row fills whole 8x128 tiles.
//  * Lane-parallel (everything else): each lane computes one output
//    element, starting from the inits and folding in its reduced elements
//    one gather per input, in row-major order of the reduced dimensions (the
//    oracle's order, so any reducer gives the oracle's value).
// Operands too big for the VMEM left stream through it in slabs
// (stream_reduce.h). Plain add on bf16/f16 accumulates in f32 and rounds once
// at the store, as the oracle (f64, rounded once) and XLA do; reducers given as
// computations are emitted with EmitVectorOp, which rounds after every op like
// the oracle's general path.
#include <algorithm>

#include "compiler/codegen/emit_reduce_util.h"
#include "compiler/codegen/emitters.h"
#include "compiler/codegen/stream_reduce.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {
namespace {

// One input, reduced dims = the trailing run [rank - k, rank).
Status EmitCrossLaneReduce(const ArrayBuffer& in, const ArrayBuffer& init,
                           const ArrayBuffer& out, const std::string& op,
                           int64_t rows, int64_t r, KernelBuilder& kb) {
  const std::string lane = LaneType(in.dtype);
  const std::string sfx = "." + lane;
  const std::string id = ReducerIdentity(op, lane);
  const std::string red = op == "vadd"   ? "vlredsum"
                          : op == "vmax" ? "vlredmax"
                                         : "vlredmin";
  const std::string sred = "vs" + red.substr(2);
  const int64_t esz = ElemBytes(in.dtype), osz = ElemBytes(out.dtype);
  const int64_t in_vmem = kb.AllocVmem(in.bytes);
  const int64_t init_vmem = kb.AllocVmem(init.bytes);
  const int64_t out_vmem = kb.AllocVmem(out.bytes);
  kb.DmaIn(in_vmem, in.name, in.bytes);
  kb.DmaIn(init_vmem, init.name, init.bytes);
  // v2 = init in every lane; v4 accumulator; v6 loaded chunk; v8 result.
  kb.Emit("mset m4");
  kb.Splat(0, "s32", "0");
  kb.Emit("vgather." + init.dtype + " v2, vmem[" + std::to_string(init_vmem) +
          "], v0 @m4");
  kb.Emit("simm s1, 0");  // First row of this step.
  const std::string row_loop = kb.NewLabel("rows");
  const std::string chunk_loop = kb.NewLabel("chunks");
  kb.PlaceLabel(row_loop);
  kb.Splat(4, lane, id);
  kb.Emit("simm s3, 0");  // First element of this chunk in the row.
  if (r < 1024) {
    // Sublane s holds row s1 + s; lanes are 128 elements of the row.
    kb.Emit("simm s2, " + std::to_string(rows));
    kb.Emit("ssub s2, s2, s1");
    kb.Emit("smin s2, s2, 8");
    kb.PlaceLabel(chunk_loop);
    kb.Emit("simm s4, " + std::to_string(r));
    kb.Emit("ssub s4, s4, s3");
    kb.Emit("smin s4, s4, 128");
    kb.Emit("mbox m4, s2, s4");
    kb.Emit("smul s5, s1, " + std::to_string(r));
    kb.Emit("sadd s5, s5, s3");
    kb.Emit("smul s5, s5, " + std::to_string(esz));
    kb.Splat(6, lane, id);
    kb.Emit("vld." + in.dtype + " v6, vmem[s5+" + std::to_string(in_vmem) +
            "], " + std::to_string(r * esz) + " @m4");
    kb.Emit(op + sfx + " v4, v4, v6");
    kb.Emit("sadd s3, s3, 128");
    kb.Emit("scmplt s6, s3, " + std::to_string(r));
    kb.Emit("brnz s6, " + chunk_loop);
    kb.Emit(red + sfx + " v8, v4");
    kb.Emit(op + sfx + " v8, v2, v8");
    kb.Emit("simm s7, 1");
    kb.Emit("mbox m5, s2, s7");
    kb.Emit("smul s5, s1, " + std::to_string(osz));
    kb.Emit("vst." + out.dtype + " vmem[s5+" + std::to_string(out_vmem) +
            "], v8, " + std::to_string(osz) + " @m5");
    kb.Emit("sadd s1, s1, 8");
  } else {
    // One row (s1) at a time, 1024 contiguous elements per chunk.
    kb.Emit("simm s7, 128");
    kb.PlaceLabel(chunk_loop);
    kb.Emit("simm s4, " + std::to_string(r));
    kb.Emit("ssub s4, s4, s3");
    kb.Emit("smin s4, s4, 1024");
    kb.Emit("sshrl s5, s4, 7");
    kb.Emit("sand s6, s4, 127");
    kb.Emit("mbox m4, s5, s7");
    kb.Emit("sadd s5, s5, 1");
    kb.Emit("mbox m5, s5, s6");
    kb.Emit("mor m4, m4, m5");
    kb.Emit("smul s5, s1, " + std::to_string(r));
    kb.Emit("sadd s5, s5, s3");
    kb.Emit("smul s5, s5, " + std::to_string(esz));
    kb.Splat(6, lane, id);
    kb.Emit("vld." + in.dtype + " v6, vmem[s5+" + std::to_string(in_vmem) +
            "] @m4");
    kb.Emit(op + sfx + " v4, v4, v6");
    kb.Emit("sadd s3, s3, 1024");
    kb.Emit("scmplt s6, s3, " + std::to_string(r));
    kb.Emit("brnz s6, " + chunk_loop);
    kb.Emit(red + sfx + " v8, v4");
    kb.Emit(sred + sfx + " v8, v8");
    kb.Emit(op + sfx + " v8, v2, v8");
    kb.Emit("simm s7, 1");
    kb.Emit("mbox m5, s7, s7");
    kb.Emit("smul s5, s1, " + std::to_string(osz));
    kb.Emit("vst." + out.dtype + " vmem[s5+" + std::to_string(out_vmem) +
            "], v8 @m5");
    kb.Emit("sadd s1, s1, 1");
  }
  kb.Emit("scmplt s6, s1, " + std::to_string(rows));
  kb.Emit("brnz s6, " + row_loop);
  kb.DmaOut(out.name, out_vmem, out.bytes);
  return Status::Ok();
}

}  // namespace

Status EmitReduce(const HloInstruction& instr, const BufferPlan& plan,
                  KernelBuilder& kb) {
  ASSIGN_OR_RETURN(ReductionOperands ops, GetReductionOperands(instr, plan));
  const int64_t n = ops.n;
  const std::vector<ArrayBuffer>& ins = ops.ins;
  const std::vector<ArrayBuffer>& inits = ops.inits;
  const std::vector<ArrayBuffer>& outs = ops.outs;
  const std::vector<int64_t>& dims = ins[0].dims;
  const int64_t rank = dims.size();
  if (rank > 8) return CannotCompile(instr, "rank > 8");
  const HloComputation& comp = *instr.to_apply();
  ASSIGN_OR_RETURN(Reducer reducer, ChooseReducer(instr, ops));
  const std::string& simple = reducer.simple;
  const bool direct = reducer.direct;
  if (outs[0].elements == 0) return Status::Ok();
  if (!ReductionFitsStaged(kb, ops)) {
    return EmitStreamedReduce(instr, ops, reducer, kb);
  }

  std::vector<int64_t> red = instr.dimensions();
  std::sort(red.begin(), red.end());
  std::vector<int64_t> kept, out_coeff;
  const std::vector<int64_t> st = RowMajorStrides(dims);
  for (int64_t d = 0; d < rank; ++d) {
    if (!std::binary_search(red.begin(), red.end(), d)) {
      kept.push_back(d);
      out_coeff.push_back(st[d]);
    }
  }
  int64_t r = 1;
  for (int64_t d : red) r *= dims[d];
  const bool trailing =
      !red.empty() && red.front() == rank - static_cast<int64_t>(red.size()) &&
      red.back() == rank - 1;
  if (direct && trailing && r > 0 &&
      (simple == "vadd" || simple == "vmax" || simple == "vmin")) {
    return EmitCrossLaneReduce(ins[0], inits[0], outs[0], simple,
                               outs[0].elements, r, kb);
  }

  // Lane-parallel path.
  const ReductionVmem vmem = StageReduction(kb, ops);
  VRegPool pool;
  ASSIGN_OR_RETURN(int base, pool.Alloc(false));
  ASSIGN_OR_RETURN(int idx, pool.Alloc(false));
  ASSIGN_OR_RETURN(int tmp, pool.Alloc(false));
  std::vector<int> acc, x;
  for (int64_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(int a, pool.AllocN(RegCount(inits[i].dtype)));
    acc.push_back(a);
  }
  for (int64_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(int v, pool.AllocN(RegCount(ins[i].dtype)));
    x.push_back(v);
  }
  std::vector<int> params = acc;
  params.insert(params.end(), x.begin(), x.end());
  kb.BeginLinearTiles(outs[0].elements);
  kb.LinearIndex();
  std::vector<int64_t> out_dims;
  for (int64_t d : kept) out_dims.push_back(dims[d]);
  EmitIndexFromLinear(kb, 31, out_dims, out_coeff, 0, base, tmp);
  EmitLoadInits(kb, ops, vmem, acc, idx);
  if (r > 0) {
    std::vector<LoopDim> loops;
    for (int64_t d : red) loops.push_back({dims[d], 0, st[d]});
    RETURN_IF_ERROR(EmitNestedLoops(kb, loops, [&]() -> Status {
      kb.Emit("simm s0, 0");
      for (size_t j = 0; j < red.size(); ++j) {
        kb.Emit("sadd s0, s0, s" + std::to_string(10 + j));
      }
      kb.Emit("vbcast.s32 " + VReg(idx) + ", s0");
      kb.Emit("vadd.s32 " + VReg(idx) + ", " + VReg(idx) + ", " + VReg(base));
      EmitGatherInputs(kb, ops, vmem, x, idx, 0);
      if (direct) {
        kb.Emit(simple + "." + LaneType(ins[0].dtype) + " " + VReg(acc[0]) +
                ", " + VReg(acc[0]) + ", " + VReg(x[0]) + " @m0");
        return Status::Ok();
      }
      return EmitScalarComputation(kb, pool, instr, comp, params, acc);
    }));
  }
  EmitStoreResults(kb, ops, vmem, acc);
  return Status::Ok();
}

}  // namespace trench::codegen
