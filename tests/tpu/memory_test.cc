// Every memory-error kind is detected and reported with kernel, instruction
// index and text, and address.
#include "tpu/memory.h"

#include "tests/tpu/tpu_test_util.h"

namespace trench::tpu {
namespace {

using testing::RunTpux;

constexpr char kHeader[] = R"(tpux 1
buffer x input 0 f32[256] bytes=1024
buffer y output 0 f32[256] bytes=1024
)";

RunReport RunKernel(const std::string& body,
                    const SimOptions& opts = SimOptions()) {
  std::string text = std::string(kHeader) + "kernel k {\n  .vmem 8192\n" +
                     "  saddr s1, x\n  saddr s2, y\n" + body +
                     "\n}\nlaunch k\n";
  return RunTpux(text, {std::vector<uint8_t>(1024, 0)}, opts).report;
}

void ExpectError(const RunReport& r, MemoryErrorKind kind, int64_t index,
                 const std::string& text_part, const std::string& msg_part) {
  EXPECT_EQ(r.status, RunStatus::kMemoryError) << r.message;
  EXPECT_EQ(r.memory_error, kind) << r.message;
  EXPECT_EQ(r.kernel, "k");
  EXPECT_EQ(r.instruction_index, index) << r.message;
  EXPECT_NE(r.instruction.find(text_part), std::string::npos) << r.instruction;
  EXPECT_NE(r.message.find(msg_part), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("kernel k, instruction " + std::to_string(index)),
            std::string::npos)
      << r.message;
}

TEST(MemoryTest, HbmReadPastEndIsOutOfBounds) {
  // Reads 1028 bytes of a 1024-byte buffer: a DMA stride off by one element.
  RunReport r =
      RunKernel("  dmastart vmem[0], hbm[s1+4], 1024, 0\n  dmawait 0");
  ExpectError(r, MemoryErrorKind::kOutOfBounds, 2, "dmastart",
              "of buffer 'x' (size 1024), past its end, in its guard zone");
  EXPECT_EQ(r.memory_space, "hbm");
  EXPECT_GT(r.address, 0);
}

TEST(MemoryTest, HbmFarAwayIsOutOfBounds) {
  RunReport r = RunKernel("  sld.s32 s3, hbm[s2+100000]");
  ExpectError(r, MemoryErrorKind::kOutOfBounds, 2, "sld.s32", "hbm address");
}

TEST(MemoryTest, VmemBeyondDeclaredSizeIsOutOfBounds) {
  RunReport r = RunKernel("  vimm.f32 v0, 1\n  vst.f32 vmem[4096], v0, 1024");
  ExpectError(r, MemoryErrorKind::kOutOfBounds, 3, "vst.f32",
              "declares .vmem 8192");
  EXPECT_EQ(r.memory_space, "vmem");
  EXPECT_EQ(r.address, 8192);
}

TEST(MemoryTest, NegativeVmemAddressIsOutOfBounds) {
  RunReport r = RunKernel("  simm s3, -8\n  sld.s32 s4, vmem[s3]");
  ExpectError(r, MemoryErrorKind::kOutOfBounds, 3, "vmem[s3]", "vmem");
}

TEST(MemoryTest, UninitializedVmemRead) {
  RunReport r = RunKernel(
      "  vimm.f32 v0, 1\n  vst.f32 vmem[0], v0\n  vld.f32 v1, vmem[512]");
  ExpectError(r, MemoryErrorKind::kUninitializedRead, 4, "vld.f32 v1",
              "uninitialized_read");
  EXPECT_EQ(r.address, 4096);
}

TEST(MemoryTest, UninitializedHbmTempRead) {
  std::string text = std::string(kHeader) +
                     "buffer t temp f32[16] bytes=64\nkernel k {\n  .vmem 64\n"
                     "  saddr s1, t\n  dmastart vmem[0], hbm[s1], 64, 0\n"
                     "  dmawait 0\n}\nlaunch k\n";
  RunReport r = RunTpux(text, {std::vector<uint8_t>(1024)}).report;
  ExpectError(r, MemoryErrorKind::kUninitializedRead, 1, "dmastart",
              "offset 0 of buffer 't'");
}

TEST(MemoryTest, WriteToInputBuffer) {
  RunReport r = RunKernel("  simm s3, 5\n  sst.s32 hbm[s1+8], s3");
  ExpectError(r, MemoryErrorKind::kReadOnlyWrite, 3, "sst.s32",
              "offset 8 of buffer 'x'");
}

TEST(MemoryTest, WriteIntoGuardZoneIsCorruption) {
  RunReport r = RunKernel(
      "  vimm.f32 v0, 2\n  vst.f32 vmem[0], v0\n"
      "  dmastart hbm[s2+1020], vmem[0], 8, 0\n  dmawait 0");
  ExpectError(r, MemoryErrorKind::kGuardZoneCorruption, 4, "dmastart",
              "guard zone");
}

TEST(MemoryTest, WriteBeforeBufferStartIsCorruption) {
  RunReport r = RunKernel("  simm s3, 1\n  sst.u8 hbm[s2-1], s3");
  ExpectError(r, MemoryErrorKind::kGuardZoneCorruption, 3, "sst.u8",
              "before its start");
}

TEST(MemoryTest, VmemOverCapacity) {
  SimOptions opts;
  opts.vmem_bytes = 4096;
  RunReport r = RunKernel("  halt", opts);
  EXPECT_EQ(r.status, RunStatus::kMemoryError);
  EXPECT_EQ(r.memory_error, MemoryErrorKind::kVmemOverCapacity);
  EXPECT_EQ(r.kernel, "k");
  EXPECT_NE(r.message.find("8192"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("4096"), std::string::npos) << r.message;
}

TEST(MemoryTest, ReadingDmaDestinationBeforeWait) {
  RunReport r = RunKernel(
      "  dmastart vmem[0], hbm[s1], 1024, 0\n  vld.f32 v0, vmem[0], 0\n"
      "  dmawait 0");
  ExpectError(r, MemoryErrorKind::kDmaInFlight, 3, "vld.f32",
              "dma_in_flight_access");
}

TEST(MemoryTest, OutputNeverWrittenIsReported) {
  // Writes only the first 1020 bytes of y: a ragged-edge mask bug.
  RunReport r = RunKernel(
      "  dmastart vmem[0], hbm[s1], 1024, 0\n  dmawait 0\n"
      "  dmastart hbm[s2], vmem[0], 1020, 1\n  dmawait 1");
  EXPECT_EQ(r.status, RunStatus::kMemoryError);
  EXPECT_EQ(r.memory_error, MemoryErrorKind::kUninitializedOutput);
  EXPECT_NE(
      r.message.find("'y' has 4 bytes never written, first at offset 1020"),
      std::string::npos)
      << r.message;
}

TEST(MemoryTest, SmemBounds) {
  RunReport r = RunKernel("  simm s3, 1\n  sst.s64 smem[16380], s3");
  ExpectError(r, MemoryErrorKind::kOutOfBounds, 3, "smem[16380]", "SMEM size");
}

TEST(MemoryTest, GatherIndexOutOfRange) {
  // Lane 5 of the index vector points one element past the staged table.
  RunReport r = RunKernel(
      "  dmastart vmem[0], hbm[s1], 1024, 0\n  dmawait 0\n"
      "  viota v1, 2\n  vimm.s32 v2, 251\n  vadd.s32 v1, v1, v2\n"
      "  simm s3, 1\n  simm s4, 6\n  mbox m0, s3, s4\n"
      "  vgather.f32 v0, vmem[0], v1 @m0");
  ExpectError(r, MemoryErrorKind::kUninitializedRead, 10, "vgather.f32",
              "uninitialized_read");
  EXPECT_EQ(r.address, 1024);
}

TEST(MemoryTest, VmemDoesNotSurviveAcrossKernels) {
  // The second kernel reads VMEM the first one wrote: stale data is an
  // uninitialized read, so buffer reuse across kernels cannot pass silently.
  std::string text = std::string(kHeader) +
                     "kernel a {\n  .vmem 4096\n  vimm.f32 v0, 1\n"
                     "  vst.f32 vmem[0], v0\n}\n"
                     "kernel b {\n  .vmem 4096\n  vld.f32 v0, vmem[0]\n}\n"
                     "launch a\nlaunch b\n";
  RunReport r = RunTpux(text, {std::vector<uint8_t>(1024)}).report;
  EXPECT_EQ(r.status, RunStatus::kMemoryError);
  EXPECT_EQ(r.memory_error, MemoryErrorKind::kUninitializedRead);
  EXPECT_EQ(r.kernel, "b");
  EXPECT_EQ(r.launch, 1);
  EXPECT_EQ(r.instruction_index, 0);
}

TEST(RegionTest, RangeChecksReportFirstBadByte) {
  Region r;
  r.Reset(100);
  r.SetShadow(0, 50, kInitialized);
  r.SetShadow(50, 50, kUninitialized);
  MemoryErrorKind kind;
  int64_t bad;
  EXPECT_TRUE(r.CheckRead(0, 50, &kind, &bad));
  EXPECT_FALSE(r.CheckRead(10, 45, &kind, &bad));
  EXPECT_EQ(kind, MemoryErrorKind::kUninitializedRead);
  EXPECT_EQ(bad, 50);
  EXPECT_TRUE(r.CheckWrite(0, 100, &kind, &bad));
  EXPECT_FALSE(r.CheckWrite(90, 11, &kind, &bad));
  EXPECT_EQ(kind, MemoryErrorKind::kOutOfBounds);
  EXPECT_FALSE(r.CheckRead(-1, 2, &kind, &bad));
  EXPECT_FALSE(r.CheckRead(INT64_MAX - 1, 8, &kind, &bad));
}

}  // namespace
}  // namespace trench::tpu
