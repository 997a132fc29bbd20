// Collectives that move data without reducing it (all-gather, all-to-all,
// collective-permute) and the device ids (partition-id, replica-id), over
// the link protocol of emit_collectives_util.h. They move bytes only, so
// every element type works.
//
// all-gather (ring): member p copies its operand into block p of its
//   scratch (n blocks, group order), then at step k = 0..n-2 forwards
//   block (p - k) mod n to the next member and receives (p - k - 1) mod n
//   from the previous one; the blocks then go to the result, concatenated
//   along dimensions[0] (one strided DMA per block).
// all-to-all (direct, array form): member p sends chunk j of its operand
//   (the n chunks along the split dimension, each gathered by one strided
//   DMA straight from HBM) into slot p of member j's scratch, keeps chunk
//   p in its own slot p, and concatenates the slots along the concat
//   dimension.
// all-to-all (direct, tuple form: no dimensions, one operand per member,
//   all of one shape): member p sends operand j into slot p of member j's
//   scratch (keeping operand p in its own slot p), and result i is slot i.
// collective-permute (direct): a source sends its operand into its
//   target's scratch; a target copies it to its result; a chip no pair
//   targets writes zeros.
// partition-id / replica-id: chip c is device c of the R x P mesh:
//   partition c % P, replica c / P.
#include <algorithm>
#include <functional>
#include <map>

#include "compiler/codegen/emit_collectives_util.h"
#include "compiler/codegen/emit_reduce_util.h"
#include "compiler/codegen/emitters.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {
namespace {

using coll::GroupMap;

std::string Sem(int s) { return I(s); }

// One strided copy of `outer` pieces of `piece` bytes each: source stride
// `src_stride`, destination stride `dst_stride`.
std::string Strided(int64_t outer, int64_t src_stride, int64_t dst_stride) {
  if (outer <= 1) return "";
  return ", " + I(outer) + ", " + I(src_stride) + ", " + I(dst_stride);
}

// Bytes of the dimensions after `d` times the element size, and the
// element count of those before it.
void OuterInner(const ArrayBuffer& a, int64_t d, int64_t* outer,
                int64_t* inner) {
  *outer = 1;
  *inner = a.elements > 0 ? a.bytes / a.elements : 0;
  for (int64_t i = 0; i < d; ++i) *outer *= a.dims[i];
  for (size_t i = d + 1; i < a.dims.size(); ++i) *inner *= a.dims[i];
}

}  // namespace

Status EmitAllGather(const HloInstruction& instr, const BufferPlan& plan,
                     KernelBuilder& kb) {
  ASSIGN_OR_RETURN(GroupMap g, coll::MapGroups(instr, plan.mesh));
  RETURN_IF_ERROR(coll::CheckScratch(instr, plan.collective_scratch));
  if (instr.dimensions().size() != 1) {
    return CannotCompile(instr, "all-gather without one dimension");
  }
  const int64_t d = instr.dimensions()[0];
  const int64_t n = g.size;
  const std::string& scratch = plan.collective_scratch;
  coll::EmitGroupPlace(kb, g);
  if (n > 1) coll::EmitRingHandshake(kb, g);
  int64_t area = 0;
  for (size_t i = 0; i < instr.operands().size(); ++i) {
    const ArrayBuffer in = plan.Array(instr.operand(i));
    const ArrayBuffer out = plan.LeafArray(&instr, static_cast<int64_t>(i));
    const int64_t eb = in.bytes;
    const int64_t here = area;
    area += coll::AlignScratch(n * eb);
    if (eb == 0) continue;
    if (d < 0 || d >= static_cast<int64_t>(in.dims.size())) {
      return CannotCompile(instr, "a gather dimension out of range");
    }
    coll::EmitPositionOffset(kb, 13, 0, n, eb);
    kb.Emit("saddr s14, " + scratch);
    kb.Emit("sadd s14, s14, s13");
    kb.Emit("saddr s15, " + in.name);
    kb.Emit("dmastart hbm[s14+" + I(here) + "], hbm[s15], " + I(eb) + ", " +
            Sem(coll::kLocalSem));
    kb.Emit("dmawait " + Sem(coll::kLocalSem));
    coll::EmitRingForward(kb, scratch, here, eb, n, 0);
    int64_t outer = 0, inner = 0;
    OuterInner(in, d, &outer, &inner);
    inner *= in.dims[d];  // Bytes of one outer index of a block.
    kb.Emit("saddr s14, " + scratch);
    kb.Emit("saddr s15, " + out.name);
    for (int64_t j = 0; j < n; ++j) {
      kb.Emit("dmastart hbm[s15+" + I(j * inner) + "], hbm[s14+" +
              I(here + j * eb) + "], " + I(inner) + ", " +
              Sem(coll::kLocalSem) + Strided(outer, inner, n * inner));
    }
    kb.Emit("dmawait " + Sem(coll::kLocalSem));
  }
  return Status::Ok();
}

namespace {

// The ready handshake of an all-to-all: every member writes into every
// other member's scratch.
void AllToAllHandshake(KernelBuilder& kb, const GroupMap& g) {
  auto others = [&g](int c) {
    std::vector<int64_t> o;
    for (int64_t m : g.members[c]) {
      if (m != c) o.push_back(m);
    }
    return o;
  };
  if (g.size > 1) coll::EmitHandshake(kb, g.chips, others, others);
}

// The all-to-all exchange: piece j of this chip's data goes into its slot
// (`slot` bytes apart, group order) of member j's scratch, piece p (its
// own position) into its own slot, straight from HBM. `source(j)` emits
// what addresses piece j and returns its HBM operand text; a piece is
// `chunk` bytes, or `strided` (Strided's text) pieces of it. Then waits
// until every other member's piece has landed here. Registers: s9, s14,
// s15, s16, and what `source` uses. REQUIRES: EmitGroupPlace,
// AllToAllHandshake.
void EmitAllToAllExchange(KernelBuilder& kb, const GroupMap& g,
                          const std::string& scratch, int64_t slot,
                          int64_t chunk, const std::string& strided,
                          const std::function<std::string(int64_t)>& source) {
  const int64_t n = g.size;
  // s14 = this chip's slot in every member's scratch.
  coll::EmitPositionOffset(kb, 14, 0, n, slot);
  kb.Emit("saddr s15, " + scratch);
  kb.Emit("sadd s14, s14, s15");
  for (int64_t j = 0; j < n; ++j) {
    const std::string skip = kb.NewLabel("self");
    const std::string done = kb.NewLabel("sent");
    const std::string from = source(j);
    kb.Emit("scmpeq s9, s10, " + I(j));
    kb.Emit("brnz s9, " + skip);
    coll::EmitMember(kb, g, j, 16);
    kb.Emit("rdmastart s16, hbm[s14], " + from + ", " + I(chunk) + ", " +
            Sem(coll::kSendSem) + ", " + I(coll::kDataFlag) + strided);
    kb.Emit("jmp " + done);
    kb.PlaceLabel(skip);
    kb.Emit("dmastart hbm[s14], " + from + ", " + I(chunk) + ", " +
            Sem(coll::kLocalSem) + strided);
    kb.Emit("dmawait " + Sem(coll::kLocalSem));
    kb.PlaceLabel(done);
  }
  if (n > 1) {
    kb.Emit("dmawait " + Sem(coll::kSendSem));
    kb.Emit("flagwait " + I(coll::kDataFlag) + ", " + I(n - 1));
  }
}

// The tuple form (see the file comment). REQUIRES: CheckScratch.
Status EmitTupleAllToAll(const HloInstruction& instr, const BufferPlan& plan,
                         const GroupMap& g, KernelBuilder& kb) {
  const int64_t n = g.size;
  std::vector<ArrayBuffer> outs = LeafBuffers(plan, &instr);
  if (static_cast<int64_t>(instr.operands().size()) != n ||
      static_cast<int64_t>(outs.size()) != n) {
    return CannotCompile(instr,
                         "a tuple all-to-all without one operand "
                         "per group member");
  }
  std::vector<ArrayBuffer> ins;
  for (const HloInstruction* operand : instr.operands()) {
    ins.push_back(plan.Array(operand));
    if (ins.back().bytes != ins.front().bytes ||
        outs[ins.size() - 1].bytes != ins.front().bytes) {
      return CannotCompile(instr, "a tuple all-to-all of different shapes");
    }
  }
  const int64_t bytes = ins.front().bytes;
  if (bytes == 0) return Status::Ok();
  const int64_t slot = coll::AlignScratch(bytes);
  const std::string& scratch = plan.collective_scratch;
  coll::EmitGroupPlace(kb, g);
  AllToAllHandshake(kb, g);
  EmitAllToAllExchange(kb, g, scratch, slot, bytes, "", [&](int64_t j) {
    kb.Emit("saddr s17, " + ins[j].name);
    return std::string("hbm[s17]");
  });
  kb.Emit("saddr s16, " + scratch);
  for (int64_t i = 0; i < n; ++i) {
    kb.Emit("saddr s15, " + outs[i].name);
    kb.Emit("dmastart hbm[s15], hbm[s16+" + I(i * slot) + "], " + I(bytes) +
            ", " + Sem(coll::kLocalSem));
  }
  kb.Emit("dmawait " + Sem(coll::kLocalSem));
  return Status::Ok();
}

}  // namespace

Status EmitAllToAll(const HloInstruction& instr, const BufferPlan& plan,
                    KernelBuilder& kb) {
  ASSIGN_OR_RETURN(GroupMap g, coll::MapGroups(instr, plan.mesh));
  RETURN_IF_ERROR(coll::CheckScratch(instr, plan.collective_scratch));
  if (instr.dimensions().empty()) return EmitTupleAllToAll(instr, plan, g, kb);
  if (instr.dimensions().size() != 1 || instr.operands().size() != 1 ||
      instr.shape().IsTuple()) {
    return CannotCompile(instr,
                         "all-to-all other than one array along one "
                         "dimension");
  }
  const ArrayBuffer in = plan.Array(instr.operand(0));
  const ArrayBuffer out = plan.Array(&instr);
  const int64_t d = instr.dimensions()[0];
  const int64_t n = g.size;
  if (in.bytes == 0) return Status::Ok();
  if (d < 0 || d >= static_cast<int64_t>(in.dims.size()) ||
      in.dims[d] % n != 0) {
    return CannotCompile(instr, "a split dimension the group does not divide");
  }
  int64_t outer = 0, inner = 0;
  OuterInner(in, d, &outer, &inner);
  const int64_t row = in.dims[d] * inner;  // Bytes per outer index.
  const int64_t slab = row / n;
  const int64_t cb = in.bytes / n;  // A chunk: `outer` slabs.
  const std::string& scratch = plan.collective_scratch;
  coll::EmitGroupPlace(kb, g);
  AllToAllHandshake(kb, g);
  // Chunk j (`outer` slabs, `row` bytes apart) lands contiguous in its
  // slot, straight from HBM: nothing is staged in VMEM.
  kb.Emit("saddr s13, " + in.name);
  EmitAllToAllExchange(
      kb, g, scratch, cb, slab, Strided(outer, row, slab),
      [&](int64_t j) { return "hbm[s13+" + I(j * slab) + "]"; });
  // Slot j (outer slabs) goes to the j-th slab of every outer index.
  kb.Emit("saddr s15, " + out.name);
  kb.Emit("saddr s16, " + scratch);
  for (int64_t j = 0; j < n; ++j) {
    kb.Emit("dmastart hbm[s15+" + I(j * slab) + "], hbm[s16+" + I(j * cb) +
            "], " + I(slab) + ", " + Sem(coll::kLocalSem) +
            Strided(outer, slab, row));
  }
  kb.Emit("dmawait " + Sem(coll::kLocalSem));
  return Status::Ok();
}

Status EmitCollectivePermute(const HloInstruction& instr,
                             const BufferPlan& plan, KernelBuilder& kb) {
  // One operand, or the combined form: k operands, a tuple of k results,
  // each operand permuted alike (its own area of the target's scratch).
  std::vector<ArrayBuffer> outs = LeafBuffers(plan, &instr);
  if (outs.size() != instr.operands().size() ||
      instr.shape().IsTuple() != (instr.operand_count() > 1)) {
    return CannotCompile(instr, "collective-permute in place");
  }
  StatusOr<std::vector<std::pair<int64_t, int64_t>>> pairs =
      PermutePairs(instr, plan.mesh);
  if (!pairs.ok()) return InvalidArgument("hloc: " + pairs.status().message());
  RETURN_IF_ERROR(coll::CheckScratch(instr, plan.collective_scratch));
  struct Leaf {
    ArrayBuffer in, out;
    int64_t scratch = 0;  // Its area in the target's scratch.
  };
  std::vector<Leaf> leaves;
  int64_t offset = 0;
  for (size_t i = 0; i < outs.size(); ++i) {
    Leaf l{plan.Array(instr.operand(i)), outs[i], offset};
    if (l.in.bytes != l.out.bytes) {
      return CannotCompile(instr, "an operand and result of unequal sizes");
    }
    offset += coll::AlignScratch(l.in.bytes);
    if (l.in.bytes > 0) leaves.push_back(std::move(l));
  }
  if (leaves.empty()) return Status::Ok();
  const int64_t arrivals = static_cast<int64_t>(leaves.size());
  const int chips = static_cast<int>(plan.mesh.size());
  std::map<int64_t, int64_t> source_of, target_of;
  for (auto [s, t] : *pairs) {
    source_of[t] = s;
    target_of[s] = t;
  }
  const std::string& scratch = plan.collective_scratch;
  kb.Emit("chipid s0");
  kb.Emit("simm s19, 0");  // 1: this chip receives nothing (zeros).
  auto list = [](const std::map<int64_t, int64_t>& m, int c) {
    auto it = m.find(c);
    return it == m.end() || it->second == c ? std::vector<int64_t>{}
                                            : std::vector<int64_t>{it->second};
  };
  coll::EmitHandshake(
      kb, chips, [&](int c) { return list(source_of, c); },
      [&](int c) { return list(target_of, c); });
  kb.Emit("saddr s14, " + scratch);
  coll::EmitPerChip(kb, chips, [&](int c) {
    auto t = target_of.find(c);
    if (t != target_of.end() && t->second != c) {
      kb.Emit("simm s13, " + I(t->second));
      for (const Leaf& l : leaves) {
        kb.Emit("saddr s15, " + l.in.name);
        kb.Emit("rdmastart s13, hbm[s14+" + I(l.scratch) + "], hbm[s15], " +
                I(l.in.bytes) + ", " + Sem(coll::kSendSem) + ", " +
                I(coll::kDataFlag));
      }
      kb.Emit("dmawait " + Sem(coll::kSendSem));
    }
    auto s = source_of.find(c);
    if (s == source_of.end()) {
      kb.Emit("simm s19, 1");
      return;
    }
    const bool self = s->second == c;
    if (!self) kb.Emit("flagwait " + I(coll::kDataFlag) + ", " + I(arrivals));
    for (const Leaf& l : leaves) {
      kb.Emit("saddr s16, " + l.out.name);
      if (self) {
        kb.Emit("saddr s15, " + l.in.name);
        kb.Emit("dmastart hbm[s16], hbm[s15], " + I(l.in.bytes) + ", " +
                Sem(coll::kLocalSem));
      } else {
        kb.Emit("dmastart hbm[s16], hbm[s14+" + I(l.scratch) + "], " +
                I(l.in.bytes) + ", " + Sem(coll::kLocalSem));
      }
    }
    kb.Emit("dmawait " + Sem(coll::kLocalSem));
  });
  // A chip no pair targets: zeros, from one VMEM block of at most 64 KiB
  // copied over each result (source stride 0), so that results of any
  // size take no more VMEM than that.
  const std::string received = kb.NewLabel("received");
  kb.Emit("brz s19, " + received);
  int64_t largest = 0;
  for (const Leaf& l : leaves) largest = std::max(largest, l.out.bytes);
  const int64_t block = std::min<int64_t>(largest, 64 << 10);
  const int64_t zeros = kb.AllocVmem(block);
  coll::EmitZeroVmem(kb, zeros, block);
  for (const Leaf& l : leaves) {
    const int64_t whole = l.out.bytes / block;
    const int64_t tail = l.out.bytes % block;
    kb.Emit("saddr s16, " + l.out.name);
    if (whole > 0) {
      kb.Emit("dmastart hbm[s16], vmem[" + I(zeros) + "], " + I(block) + ", " +
              Sem(coll::kLocalSem) + Strided(whole, 0, block));
    }
    if (tail > 0) {
      kb.Emit("dmastart hbm[s16+" + I(whole * block) + "], vmem[" + I(zeros) +
              "], " + I(tail) + ", " + Sem(coll::kLocalSem));
    }
  }
  kb.Emit("dmawait " + Sem(coll::kLocalSem));
  kb.PlaceLabel(received);
  return Status::Ok();
}

Status EmitDeviceId(const HloInstruction& instr, const BufferPlan& plan,
                    KernelBuilder& kb) {
  const ArrayBuffer out = plan.Array(&instr);
  if (out.bytes != 4) return CannotCompile(instr, out.dtype);
  const int64_t p = plan.mesh.partitions;
  kb.Emit("chipid s0");
  kb.Emit(
      std::string(instr.opcode() == HloOpcode::kPartitionId ? "srem" : "sdiv") +
      " s1, s0, " + I(p));
  const int64_t v = kb.AllocVmem(4);
  kb.Emit("sst.u32 vmem[" + I(v) + "], s1");
  kb.DmaOut(out.name, v, 4);
  return Status::Ok();
}

}  // namespace trench::codegen
