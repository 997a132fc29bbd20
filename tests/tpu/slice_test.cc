// The slice: SPMD chips exchanging data with rdmastart and synchronizing
// with flagsignal/flagwait; races, deadlocks, bad peers, the link cost
// model and deterministic scheduling.
#include "tpu/slice.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "tests/tpu/tpu_test_util.h"

namespace trench::tpu {
namespace {

using testing::FromBytes;
using testing::ToBytes;

using SliceInputs = std::vector<std::vector<std::vector<uint8_t>>>;

// A ring all-reduce (sum) of one 8x128 f32 tile, the same executable for
// any slice: each of n-1 steps sends the tile last received (first x) to
// the right neighbour's `recv`, waits for the left neighbour's tile (flag
// 0), copies it out, tells the left neighbour its `recv` is free again
// (flag 1) and adds it. A chip sends again only once the right neighbour
// has freed its `recv`.
constexpr char kAllReduce[] = R"(tpux 1
module allreduce
slice 4
buffer x input 0 f32[8,128]{1,0} bytes=4096
buffer y output 0 f32[8,128]{1,0} bytes=4096
buffer recv temp f32[8,128] bytes=4096
kernel allreduce {
  .vmem 12288
  chipid s1
  nchips s2
  sadd s3, s1, 1
  srem s3, s3, s2          ; right = (id + 1) % n
  sadd s4, s1, s2
  ssub s4, s4, 1
  srem s4, s4, s2          ; left = (id + n - 1) % n
  saddr s5, x
  saddr s6, recv
  saddr s7, y
  dmastart vmem[4096], hbm[s5], 4096, 0
  dmawait 0
  vld.f32 v0, vmem[4096]
  ssub s8, s2, 1           ; n - 1 steps
  simm s9, 0
  brz s8, done
step:
  brz s9, send
  flagwait 1, 1            ; the right neighbour freed its recv
send:
  rdmastart s3, hbm[s6], vmem[4096], 4096, 1, 0
  dmawait 1
  flagwait 0, 1            ; the left neighbour's tile landed
  dmastart vmem[4096], hbm[s6], 4096, 2
  dmawait 2
  flagsignal s4, 1
  vld.f32 v1, vmem[4096]
  vadd.f32 v0, v0, v1
  simm s9, 1
  sloop s8, step
done:
  vst.f32 vmem[8192], v0
  dmastart hbm[s7], vmem[8192], 4096, 3
  dmawait 3
}
launch allreduce
)";

Executable Parse(const std::string& text) {
  StatusOr<Executable> exe = ReadExecutable(text);
  EXPECT_TRUE(exe.ok()) << exe.status().ToString() << "\n" << text;
  return exe.ok() ? *exe : Executable();
}

SliceRunResult RunSlice(const std::string& text, const SliceInputs& inputs,
                        SliceOptions opts = SliceOptions()) {
  opts.chips = static_cast<int>(inputs.size());
  StatusOr<SliceRunResult> r = RunSliceExecutable(Parse(text), inputs, opts);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? std::move(r).value() : SliceRunResult();
}

std::string Replace(std::string text, const std::string& from,
                    const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// Random tiles per chip, and what chip c's ring sums to, in its order:
// x[c] + x[c-1] + ... + x[c-n+1] (indices mod n), rounded in f32.
struct AllReduceCase {
  std::vector<std::vector<float>> x;
  std::vector<std::vector<float>> want;
  SliceInputs inputs;
};

AllReduceCase MakeAllReduce(int n) {
  AllReduceCase c;
  std::mt19937 rng(n);
  std::uniform_real_distribution<float> u(-100, 100);
  for (int chip = 0; chip < n; ++chip) {
    std::vector<float> x(1024);
    for (float& v : x) v = u(rng);
    c.inputs.push_back({ToBytes(x)});
    c.x.push_back(std::move(x));
  }
  for (int chip = 0; chip < n; ++chip) {
    std::vector<float> acc = c.x[chip];
    for (int s = 1; s < n; ++s) {
      const std::vector<float>& from = c.x[(chip - s + n) % n];
      for (int i = 0; i < 1024; ++i) acc[i] += from[i];
    }
    c.want.push_back(std::move(acc));
  }
  return c;
}

class RingAllReduceTest : public ::testing::TestWithParam<int> {};

TEST_P(RingAllReduceTest, EveryChipGetsTheSum) {
  const int n = GetParam();
  AllReduceCase c = MakeAllReduce(n);
  SliceRunResult r = RunSlice(kAllReduce, c.inputs);
  ASSERT_EQ(r.report.status, RunStatus::kOk) << r.report.message;
  EXPECT_EQ(r.report.chip, -1);
  ASSERT_EQ(r.chips.size(), static_cast<size_t>(n));
  int64_t slowest = 0;
  for (int chip = 0; chip < n; ++chip) {
    std::vector<float> y = FromBytes<float>(r.chips[chip].outputs[0].bytes);
    ASSERT_EQ(y.size(), 1024u);
    for (int i = 0; i < 1024; ++i) {
      ASSERT_EQ(y[i], c.want[chip][i]) << "chip " << chip << " element " << i;
    }
    const KernelStats& t = r.chips[chip].cost.total;
    EXPECT_EQ(t.link_transfers, n - 1);
    EXPECT_EQ(t.link_bytes_sent, (n - 1) * 4096);
    EXPECT_GT(t.cycles, 0);
    slowest = std::max(slowest, t.cycles);
  }
  EXPECT_EQ(r.report.cost.total.cycles, slowest);
  EXPECT_EQ(r.report.cost.total.link_bytes_sent, n * (n - 1) * 4096);
  EXPECT_GT(r.report.cost.total.flag_stall_cycles, 0);
}

INSTANTIATE_TEST_SUITE_P(Chips, RingAllReduceTest, ::testing::Values(2, 4, 8));

class MissingFlagWaitTest : public ::testing::TestWithParam<int> {};

TEST_P(MissingFlagWaitTest, ReadingBeforeTheFlagIsARace) {
  // Without waiting for the left neighbour's signal, copying `recv` out
  // reads bytes a peer wrote and nobody synchronized.
  const int n = GetParam();
  std::string text = Replace(kAllReduce, "  flagwait 0, 1 ", "  nop ");
  SliceRunResult r = RunSlice(text, MakeAllReduce(n).inputs);
  const RunReport& rep = r.report;
  ASSERT_EQ(rep.status, RunStatus::kMemoryError) << rep.message;
  EXPECT_EQ(rep.memory_error, MemoryErrorKind::kUnsynchronizedPeerAccess);
  EXPECT_EQ(rep.chip, 0);
  EXPECT_EQ(rep.kernel, "allreduce");
  EXPECT_EQ(rep.instruction, "dmastart vmem[4096], hbm[s6], 4096, 2");
  EXPECT_EQ(rep.memory_space, "hbm");
  EXPECT_GE(rep.address, 0);
  const std::string writer = "written by chip " + std::to_string(n - 1);
  for (const std::string& part :
       {std::string("chip 0: kernel allreduce, instruction"),
        std::string("unsynchronized_peer_access"), std::string("buffer 'recv'"),
        writer}) {
    EXPECT_NE(rep.message.find(part), std::string::npos)
        << part << " in " << rep.message;
  }
}

INSTANTIATE_TEST_SUITE_P(Chips, MissingFlagWaitTest,
                         ::testing::Values(2, 4, 8));

TEST(SliceTest, ResultsDoNotDependOnTheQuantumOrTheRun) {
  AllReduceCase c = MakeAllReduce(8);
  StatusOr<std::unique_ptr<SliceSimulator>> slice =
      SliceSimulator::Create(Parse(kAllReduce), SliceOptions{.chips = 8});
  ASSERT_TRUE(slice.ok()) << slice.status().ToString();
  for (int chip = 0; chip < 8; ++chip) {
    ASSERT_TRUE((*slice)->BindInputs(chip, c.inputs[chip]).ok());
  }
  StatusOr<SliceRunResult> a = (*slice)->Run();
  StatusOr<SliceRunResult> b = (*slice)->Run();
  SliceRunResult coarse =
      RunSlice(kAllReduce, c.inputs, SliceOptions{.quantum_cycles = 100000});
  SliceRunResult huge = RunSlice(
      kAllReduce, c.inputs, SliceOptions{.quantum_cycles = int64_t{1} << 62});
  ASSERT_TRUE(a.ok() && b.ok());
  for (const SliceRunResult* r : {&*a, &*b, &coarse, &huge}) {
    ASSERT_EQ(r->report.status, RunStatus::kOk) << r->report.message;
    EXPECT_EQ(r->report.cost.total.cycles, a->report.cost.total.cycles);
    EXPECT_EQ(r->report.steps, a->report.steps);
    for (int chip = 0; chip < 8; ++chip) {
      EXPECT_EQ(r->chips[chip].cost.total.cycles,
                a->chips[chip].cost.total.cycles);
      EXPECT_EQ(r->chips[chip].cost.total.flag_stall_cycles,
                a->chips[chip].cost.total.flag_stall_cycles);
      EXPECT_EQ(r->chips[chip].outputs[0].bytes,
                a->chips[chip].outputs[0].bytes);
    }
  }
}

TEST(SliceTest, ChipIdAndCount) {
  const std::string text = R"(tpux 1
buffer y output 0 s64[2] bytes=16
kernel k {
  .vmem 0
  chipid s1
  nchips s2
  saddr s3, y
  sst.s64 hbm[s3], s1
  sst.s64 hbm[s3+8], s2
}
launch k
)";
  SliceRunResult r = RunSlice(text, SliceInputs(3));
  ASSERT_EQ(r.report.status, RunStatus::kOk) << r.report.message;
  for (int chip = 0; chip < 3; ++chip) {
    EXPECT_EQ(FromBytes<int64_t>(r.chips[chip].outputs[0].bytes),
              (std::vector<int64_t>{chip, 3}));
  }
  RunResult one = testing::RunTpux(text, {});
  ASSERT_EQ(one.report.status, RunStatus::kOk) << one.report.message;
  EXPECT_EQ(FromBytes<int64_t>(one.outputs[0].bytes),
            (std::vector<int64_t>{0, 1}));
}

TEST(SliceTest, DeadlockNamesEveryBlockedChip) {
  // Chip 0 waits for two signals and gets one; chip 1 sends it, then waits
  // for a signal nobody sends; chip 2 finishes.
  const std::string text = R"(tpux 1
kernel k {
  .vmem 0
  chipid s1
  brnz s1, other
  flagwait 2, 2
  halt
other:
  scmpeq s3, s1, 2
  brnz s3, end
  simm s2, 0
  flagsignal s2, 2
  flagwait 3, 1
end:
}
launch k
)";
  SliceRunResult r = RunSlice(text, SliceInputs(3));
  const RunReport& rep = r.report;
  ASSERT_EQ(rep.status, RunStatus::kTrap) << rep.message;
  EXPECT_EQ(rep.chip, 0);
  EXPECT_EQ(rep.kernel, "k");
  EXPECT_EQ(rep.instruction_index, 2);
  EXPECT_EQ(rep.instruction, "flagwait 2, 2");
  EXPECT_EQ(rep.message,
            "deadlock: every unfinished chip is blocked in flagwait: chip 0 "
            "(kernel k, instruction 2 `flagwait 2, 2`) waits for flag 2 to "
            "reach 2 and has 1; chip 1 (kernel k, instruction 8 `flagwait "
            "3, 1`) waits for flag 3 to reach 1 and has 0");
}

TEST(SliceTest, BothChipsWaitingIsADeadlock) {
  const std::string text =
      "tpux 1\nkernel k {\n  .vmem 0\n  flagwait 0, 1\n}\nlaunch k\n";
  SliceRunResult r = RunSlice(text, SliceInputs(2));
  ASSERT_EQ(r.report.status, RunStatus::kTrap);
  EXPECT_NE(r.report.message.find("deadlock"), std::string::npos);
  EXPECT_NE(r.report.message.find("chip 0 (kernel k, instruction 0"),
            std::string::npos)
      << r.report.message;
  EXPECT_NE(r.report.message.find("chip 1 (kernel k, instruction 0"),
            std::string::npos)
      << r.report.message;
  // One chip waiting for itself is a deadlock too.
  RunResult one = testing::RunTpux(text, {});
  EXPECT_EQ(one.report.status, RunStatus::kTrap);
  EXPECT_EQ(one.report.chip, 0);
  EXPECT_EQ(one.report.message.rfind("deadlock: ", 0), 0u)
      << one.report.message;
}

TEST(SliceTest, FlagsPersistAcrossLaunchesAndResetPerRun) {
  // Chip 0 signals flag 5 three times in kernel a; chip 1 waits for two in
  // kernel b (a register count), then for two more, which never come.
  const std::string text = R"(tpux 1
kernel a {
  .vmem 0
  chipid s1
  brnz s1, end
  simm s2, 1
  flagsignal s2, 5
  flagsignal s2, 5
  flagsignal s2, 5
end:
}
kernel b {
  .vmem 0
  chipid s1
  brz s1, end
  simm s3, 2
  flagwait 5, s3
  flagwait 5, s3
end:
}
launch a
launch b
)";
  StatusOr<std::unique_ptr<SliceSimulator>> slice =
      SliceSimulator::Create(Parse(text), SliceOptions{.chips = 2});
  ASSERT_TRUE(slice.ok());
  for (int run = 0; run < 2; ++run) {
    StatusOr<SliceRunResult> r = (*slice)->Run();
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->report.status, RunStatus::kTrap) << r->report.message;
    EXPECT_EQ(r->report.chip, 1);
    EXPECT_EQ(r->report.instruction_index, 4);
    EXPECT_NE(r->report.message.find("waits for flag 5 to reach 2 and has 1"),
              std::string::npos)
        << "run " << run << ": " << r->report.message;
  }
}

// Chip 0 sends a 4 KiB tile to chip `peer`, which waits for it and copies
// it out; the other chips do nothing.
std::string SendTo(int peer, int bytes = 4096) {
  const std::string p = std::to_string(peer), b = std::to_string(bytes);
  return R"(tpux 1
buffer buf temp u8[)" +
         b + "] bytes=" + b + R"(
kernel k {
  .vmem )" +
         b + R"(
  vimm.f32 v0, 1.0
  vst.f32 vmem[0], v0
  saddr s3, buf
  chipid s1
  brnz s1, recv
  simm s2, )" +
         p +
         R"(
  rdmastart s2, hbm[s3], vmem[0], )" +
         b + R"(, 0, 0
  dmawait 0
  halt
recv:
  scmpeq s4, s1, )" +
         p + R"(
  brz s4, done
  flagwait 0, 1
  dmastart vmem[0], hbm[s3], )" +
         b + R"(, 1
  dmawait 1
done:
}
launch k
)";
}

TEST(SliceTest, LinkCostGrowsWithHopsAndStallsTheReceiver) {
  // 2x2 torus: chip 1 is one hop from chip 0, chip 3 two.
  const CostParams p;
  int64_t slice_cycles[4] = {};
  for (int peer : {1, 3}) {
    SliceRunResult r = RunSlice(SendTo(peer), SliceInputs(4));
    ASSERT_EQ(r.report.status, RunStatus::kOk) << r.report.message;
    const int hops = peer == 1 ? 1 : 2;
    // Chip 0 issues rdmastart at cycle 11 (vimm 1, vst 2, saddr, chipid,
    // brnz, simm 1 each, rdmastart 4); the tile leaves the link 4096/64
    // cycles later and lands after the hops. The receiver reaches its
    // flagwait at cycle 12 and stalls until then.
    const int64_t sent = 11 + 4096 / p.link_bytes_per_cycle;
    const int64_t land = sent + hops * p.link_latency_cycles;
    const KernelStats& rx = r.chips[peer].cost.total;
    EXPECT_EQ(rx.flag_stall_cycles, land - 12);
    const int64_t copy = p.dma_setup_cycles + 4096 / p.hbm_bytes_per_cycle;
    // Then dmastart (4) and dmawait, which stalls until the copy is done.
    EXPECT_EQ(rx.cycles,
              land + p.cycles[static_cast<int>(CostClass::kDmaOp)] + copy);
    // The sender waits only for the tile to leave.
    EXPECT_EQ(r.chips[0].cost.total.cycles,
              sent + p.cycles[static_cast<int>(CostClass::kControl)]);
    EXPECT_EQ(r.report.cost.total.cycles, rx.cycles);
    EXPECT_EQ(r.report.cost.total.link_bytes_sent, 4096);
    slice_cycles[peer] = r.report.cost.total.cycles;
  }
  EXPECT_EQ(slice_cycles[3] - slice_cycles[1], p.link_latency_cycles);
}

TEST(SliceTest, LinkCostParametersApply) {
  SliceOptions slow;
  slow.chip.cost.link_latency_cycles = 1000;
  slow.chip.cost.link_bytes_per_cycle = 16;
  SliceRunResult fast = RunSlice(SendTo(1), SliceInputs(2));
  SliceRunResult r = RunSlice(SendTo(1), SliceInputs(2), slow);
  ASSERT_EQ(r.report.status, RunStatus::kOk) << r.report.message;
  const CostParams p;
  EXPECT_EQ(r.report.cost.total.cycles - fast.report.cost.total.cycles,
            (1000 - p.link_latency_cycles) +
                (4096 / 16 - 4096 / p.link_bytes_per_cycle));
}

TEST(SliceTest, TransfersOnOneLinkAreSerialized) {
  // Two tiles to chip 1 back to back: the second leaves the link after the
  // first, so the receiver's two signals land 4096/64 cycles apart.
  const std::string text = R"(tpux 1
buffer buf temp u8[8192] bytes=8192
kernel k {
  .vmem 4096
  vimm.f32 v0, 1.0
  vst.f32 vmem[0], v0
  saddr s3, buf
  chipid s1
  brnz s1, recv
  simm s2, 1
  rdmastart s2, hbm[s3], vmem[0], 4096, 0, 0
  rdmastart s2, hbm[s3+4096], vmem[0], 4096, 0, 0
  dmawait 0
  halt
recv:
  flagwait 0, 2
}
launch k
)";
  SliceRunResult r = RunSlice(text, SliceInputs(2));
  ASSERT_EQ(r.report.status, RunStatus::kOk) << r.report.message;
  const CostParams p;
  const int64_t per_tile = 4096 / p.link_bytes_per_cycle;
  const int64_t second_sent = 11 + 2 * per_tile;
  EXPECT_EQ(r.chips[1].cost.total.cycles, second_sent + p.link_latency_cycles);
  EXPECT_EQ(r.chips[0].cost.total.cycles, second_sent + 1);
  EXPECT_EQ(r.chips[0].cost.total.link_transfers, 2);
}

TEST(SliceTest, BadPeersTrap) {
  struct Case {
    std::string instr;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {"  simm s2, 4\n  rdmastart s2, hbm[s3], vmem[0], 16, 0, 0\n",
            "chip 0: kernel k, instruction 4 `rdmastart s2, hbm[s3], "
            "vmem[0], 16, 0, 0`: rdmastart: peer chip 4 is outside the slice "
            "(chips 0..3, 2x2 torus)"},
           {"  simm s2, -1\n  flagsignal s2, 0\n",
            "chip 0: kernel k, instruction 4 `flagsignal s2, 0`: flagsignal: "
            "peer chip -1 is outside the slice (chips 0..3, 2x2 torus)"},
           {"  chipid s2\n  rdmastart s2, hbm[s3], vmem[0], 16, 0, 0\n",
            "chip 0: kernel k, instruction 4 `rdmastart s2, hbm[s3], "
            "vmem[0], 16, 0, 0`: rdmastart: peer chip 0 is this chip (a "
            "local copy is dmastart)"},
       }) {
    const std::string text =
        "tpux 1\nbuffer buf temp u8[16] bytes=16\nkernel k {\n  .vmem 4096\n"
        "  vimm.f32 v0, 1.0\n  vst.f32 vmem[0], v0\n  saddr s3, buf\n" +
        c.instr + "  dmawait 0\n}\nlaunch k\n";
    SliceRunResult r = RunSlice(text, SliceInputs(4));
    EXPECT_EQ(r.report.status, RunStatus::kTrap) << c.instr;
    EXPECT_EQ(r.report.chip, 0);
    EXPECT_EQ(r.report.message, c.message);
  }
  // A single chip has no peer at all.
  RunResult one = testing::RunTpux(
      "tpux 1\nkernel k {\n  .vmem 0\n  simm s1, 1\n  flagsignal s1, 0\n}\n"
      "launch k\n",
      {});
  EXPECT_EQ(one.report.status, RunStatus::kTrap);
  EXPECT_EQ(one.report.message,
            "kernel k, instruction 1 `flagsignal s1, 0`: flagsignal: peer "
            "chip 1 is outside the slice (chips 0..0, single chip)");
}

// Chip 0 writes 16 bytes at hbm[`target` + offset] of chip 1.
std::string RemoteWrite(const std::string& target, int offset) {
  return "tpux 1\nbuffer x input 0 u8[64] bytes=64\n"
         "buffer y output 0 u8[64] bytes=64\n"
         "kernel k {\n  .vmem 4096\n  vimm.f32 v0, 1.0\n  vst.f32 vmem[0], v0\n"
         "  saddr s3, " +
         target +
         "\n  chipid s1\n  brnz s1, done\n  simm s2, 1\n"
         "  rdmastart s2, hbm[s3+" +
         std::to_string(offset) +
         "], vmem[0], 16, 0, 0\n  dmawait 0\ndone:\n}\nlaunch k\n";
}

TEST(SliceTest, BadRemoteWritesAreTheWritersMemoryErrors) {
  struct Case {
    std::string target;
    int offset;
    MemoryErrorKind kind;
    std::string where;
  };
  for (const Case& c : std::vector<Case>{
           {"x", 0, MemoryErrorKind::kReadOnlyWrite,
            "of chip 1: offset 0 of buffer 'x' (size 64)"},
           {"y", 56, MemoryErrorKind::kGuardZoneCorruption,
            "of chip 1: offset 64 of buffer 'y' (size 64), past its end, in "
            "its guard zone"},
           {"y", 1 << 30, MemoryErrorKind::kOutOfBounds, "of chip 1"},
       }) {
    SliceInputs in(2, {std::vector<uint8_t>(64)});
    SliceRunResult r = RunSlice(RemoteWrite(c.target, c.offset), in);
    const RunReport& rep = r.report;
    ASSERT_EQ(rep.status, RunStatus::kMemoryError) << rep.message;
    EXPECT_EQ(rep.memory_error, c.kind) << rep.message;
    EXPECT_EQ(rep.chip, 0);
    EXPECT_EQ(rep.instruction_index, 6);
    EXPECT_EQ(rep.memory_space, "hbm");
    EXPECT_NE(rep.message.find("remote write (rdmastart) of 16 bytes"),
              std::string::npos)
        << rep.message;
    EXPECT_NE(rep.message.find(c.where), std::string::npos) << rep.message;
  }
}

TEST(SliceTest, AnOutputNeverSynchronizedIsReported) {
  // Chip 0 writes chip 1's output; chip 1 never waits for the signal.
  SliceInputs in(2, {std::vector<uint8_t>(64)});
  std::string text = RemoteWrite("y", 0);
  text = Replace(text, "16, 0, 0", "64, 0, 0");
  // Chip 0 writes its own output too.
  text = Replace(text, "  dmawait 0\n",
                 "  dmawait 0\n  dmastart hbm[s3], vmem[0], 64, 1\n"
                 "  dmawait 1\n");
  SliceRunResult r = RunSlice(text, in);
  const RunReport& rep = r.report;
  ASSERT_EQ(rep.status, RunStatus::kMemoryError) << rep.message;
  EXPECT_EQ(rep.memory_error, MemoryErrorKind::kUnsynchronizedPeerAccess);
  EXPECT_EQ(rep.chip, 1);
  EXPECT_EQ(rep.message,
            "chip 1: output buffer 'y' has 64 bytes not synchronized (chip 0 "
            "wrote them by rdmastart; no flagwait consumed its signal), "
            "first at offset 0");
}

TEST(SliceTest, OptionsAndBindingErrors) {
  Executable exe = Parse(kAllReduce);
  StatusOr<std::unique_ptr<SliceSimulator>> s =
      SliceSimulator::Create(exe, SliceOptions{.chips = 9});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.status().message().find("a slice has 1..8 chips, got 9"),
            std::string::npos)
      << s.status().message();
  EXPECT_EQ(
      SliceSimulator::Create(exe, SliceOptions{.chips = -1}).status().code(),
      StatusCode::kInvalidArgument);
  EXPECT_EQ(SliceSimulator::Create(exe, SliceOptions{.quantum_cycles = -1})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  SliceOptions far;
  far.chip.cost.link_latency_cycles = -5;
  EXPECT_EQ(SliceSimulator::Create(exe, far).status().code(),
            StatusCode::kInvalidArgument);
  // chips = 0: the executable's `slice 4`, a 2x2 torus.
  s = SliceSimulator::Create(exe);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ((*s)->num_chips(), 4);
  EXPECT_EQ((*s)->topology().ToString(), "2x2 torus");
  std::vector<uint8_t> tile(4096);
  Status bad = (*s)->BindInput(4, 0, tile);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.message(), "chip 4 out of range (a slice of 4 chips)");
  EXPECT_EQ((*s)->BindInput(-1, 0, tile).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*s)->BindInput(0, 1, tile).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*s)->BindInput(0, 0, std::vector<uint8_t>(3)).code(),
            StatusCode::kInvalidArgument);
  for (int chip : {0, 1, 3}) ASSERT_TRUE((*s)->BindInput(chip, 0, tile).ok());
  StatusOr<SliceRunResult> r = (*s)->Run();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("chip 2"), std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("input 0 (x) is not bound"),
            std::string::npos)
      << r.status().message();
  EXPECT_EQ(RunSliceExecutable(exe, SliceInputs(3), SliceOptions{.chips = 4})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

TEST(SliceTest, MutatedSliceProgramsNeverCrash) {
  std::mt19937 rng(11);
  const std::string base = kAllReduce;
  AllReduceCase c = MakeAllReduce(4);
  int ran = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    const std::string t =
        testing::Mutate(base, rng, 3, "0123456789-,s", 4, "0123456789,sv-\n");
    StatusOr<Executable> exe = ReadExecutable(t);
    if (!exe.ok()) continue;
    SliceOptions opts;
    opts.chips = 1 + rng() % 8;
    opts.chip.max_steps = 5000;
    opts.chip.max_hbm_bytes = 1 << 20;
    StatusOr<std::unique_ptr<SliceSimulator>> slice =
        SliceSimulator::Create(*exe, opts);
    if (!slice.ok()) continue;
    for (int chip = 0; chip < opts.chips; ++chip) {
      for (int i = 0; i < (*slice)->num_inputs(); ++i) {
        const BufferDecl* in = exe->BuffersWithRole(BufferRole::kInput)[i];
        (void)(*slice)->BindInput(chip, i,
                                  std::vector<uint8_t>(in->bytes, 0x3f));
      }
    }
    StatusOr<SliceRunResult> r = (*slice)->Run();
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    ++ran;
    if (r->report.status != RunStatus::kOk) {
      EXPECT_GE(r->report.chip, 0);
      EXPECT_LT(r->report.chip, opts.chips);
      EXPECT_FALSE(r->report.message.empty());
    }
  }
  EXPECT_GT(ran, 100);
}

}  // namespace
}  // namespace trench::tpu
