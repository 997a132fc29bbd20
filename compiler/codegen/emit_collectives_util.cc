#include "compiler/codegen/emit_collectives_util.h"

#include <algorithm>

#include "compiler/ir/opcode.h"

namespace trench::codegen::coll {
namespace {

// SMEM row of chip c: position, next, previous, then the group's members
// (s32 each).
int64_t RowBytes(const GroupMap& g) { return 4 * (3 + g.size); }

std::string S(int reg) { return "s" + std::to_string(reg); }

}  // namespace

StatusOr<std::vector<GroupClass>> MapGroupClasses(const HloInstruction& instr,
                                                  const DeviceMesh& mesh) {
  StatusOr<std::vector<std::vector<int64_t>>> groups =
      DeviceGroups(instr, mesh);
  if (!groups.ok()) {
    return InvalidArgument("hloc: " + groups.status().message());
  }
  const int chips = static_cast<int>(mesh.size());
  std::vector<GroupClass> classes;
  auto class_of = [&](int64_t size) -> GroupClass& {
    for (GroupClass& k : classes) {
      if (k.map.size == size) return k;
    }
    GroupClass k;
    k.map.chips = chips;
    k.map.size = size;
    k.map.position.assign(chips, 0);
    for (int c = 0; c < chips; ++c) k.map.members.emplace_back(size, c);
    classes.push_back(std::move(k));
    return classes.back();
  };
  for (const std::vector<int64_t>& group : *groups) {
    GroupClass& k = class_of(static_cast<int64_t>(group.size()));
    for (size_t j = 0; j < group.size(); ++j) {
      k.map.members[group[j]] = group;
      k.map.position[group[j]] = static_cast<int64_t>(j);
      k.chips.push_back(static_cast<int>(group[j]));
    }
  }
  if (classes.empty()) class_of(1);  // No groups: each chip alone.
  std::sort(classes.begin(), classes.end(),
            [](const GroupClass& a, const GroupClass& b) {
              return a.map.size < b.map.size;
            });
  for (GroupClass& k : classes) std::sort(k.chips.begin(), k.chips.end());
  return classes;
}

StatusOr<GroupMap> MapGroups(const HloInstruction& instr,
                             const DeviceMesh& mesh) {
  ASSIGN_OR_RETURN(std::vector<GroupClass> classes,
                   MapGroupClasses(instr, mesh));
  if (classes.size() != 1) {
    return InvalidArgument("hloc: " + instr.name() +
                           ": collective groups of different sizes");
  }
  return std::move(classes.front().map);
}

void EmitGroupPlace(KernelBuilder& kb, const GroupMap& g) {
  kb.Emit("chipid s0");
  const int64_t row = RowBytes(g);
  for (int c = 0; c < g.chips; ++c) {
    const std::vector<int64_t>& m = g.members[c];
    const int64_t p = g.position[c];
    std::vector<int64_t> values = {p, m[(p + 1) % g.size],
                                   m[(p + g.size - 1) % g.size]};
    values.insert(values.end(), m.begin(), m.end());
    for (size_t f = 0; f < values.size(); ++f) {
      kb.Emit("simm s13, " + I(values[f]));
      kb.Emit("sst.s32 smem[" + I(c * row + 4 * static_cast<int64_t>(f)) +
              "], s13");
    }
  }
  kb.Emit("smul s13, s0, " + I(row));
  kb.Emit("sld.s32 s10, smem[s13+0]");
  kb.Emit("sld.s32 s11, smem[s13+4]");
  kb.Emit("sld.s32 s12, smem[s13+8]");
}

void EmitMember(KernelBuilder& kb, const GroupMap& g, int64_t j, int reg) {
  kb.Emit("smul " + S(reg) + ", s0, " + I(RowBytes(g)));
  kb.Emit("sld.s32 " + S(reg) + ", smem[" + S(reg) + "+" + I(12 + 4 * j) + "]");
}

void EmitPerChip(KernelBuilder& kb, int chips,
                 const std::function<void(int)>& body) {
  const std::string end = kb.NewLabel("chip_end");
  for (int c = 0; c < chips; ++c) {
    const std::string next = kb.NewLabel("chip_next");
    kb.Emit("scmpeq s9, s0, " + I(c));
    kb.Emit("brz s9, " + next);
    body(c);
    kb.Emit("jmp " + end);
    kb.PlaceLabel(next);
  }
  kb.PlaceLabel(end);
}

void EmitOnChips(KernelBuilder& kb, const std::vector<int>& chips,
                 const std::function<void()>& body) {
  const std::string run = kb.NewLabel("chips_run");
  const std::string skip = kb.NewLabel("chips_skip");
  for (int c : chips) {
    kb.Emit("scmpeq s9, s0, " + I(c));
    kb.Emit("brnz s9, " + run);
  }
  kb.Emit("jmp " + skip);
  kb.PlaceLabel(run);
  body();
  kb.PlaceLabel(skip);
}

void EmitHandshake(KernelBuilder& kb, int chips, const ChipList& writers,
                   const ChipList& targets) {
  EmitPerChip(kb, chips, [&](int c) {
    for (int64_t w : writers(c)) {
      kb.Emit("simm s13, " + I(w));
      kb.Emit("flagsignal s13, " + I(kReadyFlagBase + c));
    }
    for (int64_t t : targets(c)) {
      kb.Emit("flagwait " + I(kReadyFlagBase + t) + ", 1");
    }
  });
}

void EmitRingHandshake(KernelBuilder& kb, const GroupMap& g) {
  auto neighbour = [&g](int c, int64_t step) -> std::vector<int64_t> {
    const int64_t p = g.position[c];
    return {g.members[c][(p + step + g.size) % g.size]};
  };
  EmitHandshake(
      kb, g.chips, [&](int c) { return neighbour(c, -1); },
      [&](int c) { return neighbour(c, 1); });
}

void EmitPositionOffset(KernelBuilder& kb, int dst, int64_t add, int64_t n,
                        int64_t scale) {
  kb.Emit("sadd " + S(dst) + ", s10, " + I(add));
  kb.Emit("srem " + S(dst) + ", " + S(dst) + ", " + I(n));
  kb.Emit("smul " + S(dst) + ", " + S(dst) + ", " + I(scale));
}

void EmitRingForward(KernelBuilder& kb, const std::string& scratch,
                     int64_t area, int64_t bytes, int64_t n, int64_t first) {
  for (int64_t k = 0; k + 1 < n; ++k) {
    EmitPositionOffset(kb, 13, first - k + 2 * n, n, bytes);
    kb.Emit("saddr s14, " + scratch);
    kb.Emit("sadd s14, s14, s13");
    const std::string at = "hbm[s14+" + I(area) + "]";
    kb.Emit("rdmastart s11, " + at + ", " + at + ", " + I(bytes) + ", " +
            I(kSendSem) + ", " + I(kDataFlag));
    kb.Emit("dmawait " + I(kSendSem));
    kb.Emit("flagwait " + I(kDataFlag) + ", 1");
  }
}

void EmitZeroVmem(KernelBuilder& kb, int64_t vmem, int64_t bytes) {
  if (bytes <= 0) return;
  kb.BeginLinearTiles(bytes);
  kb.Emit("vimm.s32 v0, 0");
  kb.StoreTile("u8", vmem, 0);
  kb.EndLinearTiles();
}

Status CheckScratch(const HloInstruction& instr, const std::string& scratch) {
  if (!scratch.empty()) return Status::Ok();
  return Internal("hloc: no collective scratch buffer for " + instr.name());
}

namespace {

// The scratch of `instr` when its groups have n members.
int64_t ScratchBytes(const HloInstruction& instr, int64_t n) {
  const HloOpcode op = instr.opcode();
  int64_t total = 0;
  for (const HloInstruction* operand : instr.operands()) {
    const Shape& s = operand->shape();
    if (!s.IsArray()) continue;
    const int64_t e = s.element_count();
    const int64_t bytes = s.byte_size();
    if (op == HloOpcode::kAllReduce && e > 0) {
      // Reduce-scatter and all-gather areas of n padded chunks each.
      total += 2 * AlignScratch(n * ((e + n - 1) / n) * (bytes / e));
    } else if (op == HloOpcode::kAllGather) {
      total += AlignScratch(n * bytes);
    } else {
      total += AlignScratch(bytes);
    }
  }
  return std::max<int64_t>(total, 512);  // Zero-size operands too.
}

}  // namespace

int64_t CollectiveScratchBytes(const HloInstruction& instr,
                               const DeviceMesh& mesh) {
  const HloOpcode op = instr.opcode();
  if (op == HloOpcode::kCollectivePermute) return ScratchBytes(instr, 1);
  if (!IsCollective(op)) return 0;
  if (op == HloOpcode::kAllReduce) {
    // Each class of group sizes lays its areas out for its own size.
    StatusOr<std::vector<GroupClass>> classes = MapGroupClasses(instr, mesh);
    if (!classes.ok()) return 0;
    int64_t bytes = 0;
    for (const GroupClass& k : *classes) {
      bytes = std::max(bytes, ScratchBytes(instr, k.map.size));
    }
    return bytes;
  }
  StatusOr<GroupMap> g = MapGroups(instr, mesh);
  return g.ok() ? ScratchBytes(instr, g->size) : 0;
}

}  // namespace trench::codegen::coll
