// Elementwise ops (and map, real/imag/complex): one kernel that DMAs the
// operands into VMEM, walks the output in 8x128 tiles (ragged tail masked by
// m0), loads each operand's tile (vld converts memory types to lane forms),
// computes the op with EmitVectorOp and stores the tile with a converting vst.
// Scalar clamp bounds are splatted once before the loop (vgather of
// element 0). bitcast-convert between different widths moves bytes only:
// the row-major bytes are the same, so it is a VMEM-staged copy (or one
// HBM-to-HBM DMA when it does not fit in VMEM).
//
// Streaming (streaming.h): when StreamingPays (the operands do not fit in
// the VMEM left, or there are at least two default chunks of 32768
// elements), the array operands and the result flow through double
// buffered VMEM chunks instead of being staged whole, so DMA overlaps
// compute; scalar clamp bounds are still staged and splatted first.
// Complex operands load as register pairs (c64, vld.u64) or quads (c128,
// two u64 gathers; KernelBuilder::LoadTile). The
// result may be written in place over an operand (buffer assignment's
// in-place rule): the stream reads every chunk before writing it back.
#include "compiler/codegen/emitters.h"
#include "compiler/codegen/streaming.h"
#include "compiler/codegen/vector_ops.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {
namespace {

// bitcast-convert between element types of different widths.
Status EmitByteCopy(const HloInstruction& instr, const ArrayBuffer& in,
                    const ArrayBuffer& out, KernelBuilder& kb) {
  if (in.bytes != out.bytes || in.dtype == "pred" || out.dtype == "pred") {
    return CannotCompile(instr, in.dtype + " -> " + out.dtype);
  }
  if (out.bytes == 0) return Status::Ok();
  if (kb.vmem_used() + out.bytes > kb.vmem_capacity()) {
    kb.Emit("saddr s28, " + in.name);
    kb.Emit("saddr s29, " + out.name);
    kb.Emit("dmastart hbm[s29], hbm[s28], " + std::to_string(out.bytes) +
            ", 0");
    kb.Emit("dmawait 0");
    return Status::Ok();
  }
  const int64_t region = kb.AllocVmem(out.bytes);
  kb.DmaIn(region, in.name, in.bytes);
  kb.DmaOut(out.name, region, out.bytes);
  return Status::Ok();
}

}  // namespace

Status CannotCompile(const HloInstruction& instr, const std::string& type) {
  return Unimplemented("hloc: cannot compile " +
                       std::string(OpcodeName(instr.opcode())) + " for " +
                       type);
}

Status EmitElementwise(const HloInstruction& instr, const BufferPlan& plan,
                       KernelBuilder& kb) {
  const ArrayBuffer out = plan.Array(&instr);
  std::vector<ArrayBuffer> ins;
  std::vector<bool> scalar;
  for (int64_t i = 0; i < instr.operand_count(); ++i) {
    ins.push_back(plan.Array(instr.operand(i)));
    const bool bound = instr.opcode() == HloOpcode::kClamp && i != 1;
    scalar.push_back(ins.back().dims != out.dims && bound &&
                     ins.back().dims.empty());
    if (ins.back().dims != out.dims && !scalar.back()) {
      if (instr.opcode() == HloOpcode::kBitcastConvert) {
        return EmitByteCopy(instr, ins[0], out, kb);
      }
      return CannotCompile(instr,
                           "implicitly broadcast operands " +
                               instr.operand(i)->shape().ToString(false));
    }
  }
  // Registers: one per distinct operand and the result (pairs for 64-bit
  // types, quads for c128); map(x, x) reads x from one register set.
  VRegPool pool;
  std::vector<int> srcs;
  for (size_t i = 0; i < ins.size(); ++i) {
    int r = -1;
    for (size_t j = 0; j < i; ++j) {
      if (instr.operand(j) == instr.operand(i)) r = srcs[j];
    }
    if (r < 0) {
      ASSIGN_OR_RETURN(r, pool.AllocN(RegCount(ins[i].dtype)));
    }
    srcs.push_back(r);
  }
  ASSIGN_OR_RETURN(int dst, pool.AllocN(RegCount(out.dtype)));
  {
    // Check the op/type pair before emitting anything.
    KernelBuilder dry("dry", 0);
    VRegPool dry_pool = pool;
    RETURN_IF_ERROR(EmitVectorOp(dry, dry_pool, instr, dst, srcs));
  }
  if (out.elements == 0) return Status::Ok();
  auto aligned = [](int64_t b) { return (b + 511) / 512 * 512; };
  int64_t whole = aligned(out.bytes), scalars = 0;
  std::vector<StreamArray> streamed;
  for (size_t i = 0; i < ins.size(); ++i) {
    whole += aligned(ins[i].bytes);
    if (scalar[i]) {
      scalars += aligned(ins[i].bytes);
    } else {
      streamed.push_back({ins[i].name, ins[i].dtype});
    }
  }
  const int64_t avail = kb.vmem_capacity() - kb.vmem_used();
  const bool stream = StreamingPays(out.elements, whole, avail);
  std::vector<int64_t> regions;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (stream && !scalar[i]) {
      regions.push_back(-1);
      continue;
    }
    regions.push_back(kb.AllocVmem(ins[i].bytes));
    kb.DmaIn(regions.back(), ins[i].name, ins[i].bytes);
  }
  const int64_t out_region = stream ? -1 : kb.AllocVmem(out.bytes);
  bool any_scalar = false;
  for (bool s : scalar) any_scalar |= s;
  if (any_scalar) {
    ASSIGN_OR_RETURN(int zero, pool.Alloc(false));
    kb.Emit("vimm.s32 v" + std::to_string(zero) + ", 0");
    for (size_t i = 0; i < ins.size(); ++i) {
      if (!scalar[i]) continue;
      kb.Gather(srcs[i], ins[i].dtype,
                "vmem[" + std::to_string(regions[i]) + "]", zero, "");
    }
    pool.Free(zero, false);
  }
  if (stream) {
    std::vector<StreamArray> all = streamed;
    all.push_back({out.name, out.dtype});
    const int64_t chunk = ChooseStreamChunk(out.elements, all, avail - scalars);
    if (chunk == 0) {
      return ResourceExhausted("hloc: " + instr.name() +
                               ": not even a 1024-element stream chunk of "
                               "its operands fits in VMEM");
    }
    ASSIGN_OR_RETURN(StreamLoop loop,
                     StreamLoop::Create(kb, out.elements, streamed,
                                        {{out.name, out.dtype}}, chunk));
    loop.Begin();
    for (size_t i = 0, j = 0; i < ins.size(); ++i) {
      if (!scalar[i]) loop.Load(srcs[i], static_cast<int>(j++));
    }
    RETURN_IF_ERROR(EmitVectorOp(kb, pool, instr, dst, srcs));
    loop.Store(0, dst);
    loop.End();
    return Status::Ok();
  }
  kb.BeginLinearTiles(out.elements);
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!scalar[i]) kb.LoadTile(srcs[i], ins[i].dtype, regions[i]);
  }
  RETURN_IF_ERROR(EmitVectorOp(kb, pool, instr, dst, srcs));
  kb.StoreTile(out.dtype, out_region, dst);
  kb.EndLinearTiles();
  kb.DmaOut(out.name, out_region, out.bytes);
  return Status::Ok();
}

}  // namespace trench::codegen
