// .tpux write/read round trips, malformed files, the simulator API contract.
#include "tpu/executable.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>

#include "tests/tpu/tpu_test_util.h"
#include "tpu/assembler.h"

namespace trench::tpu {
namespace {

constexpr char kExe[] = R"(tpux 1
module add_one
buffer x input 0 f32[2,3]{1,0} bytes=24
buffer y output 0 f32[2,3]{1,0} bytes=24
buffer one constant f32[1]{0} bytes=4 data=0000803f
buffer scratch temp u8[64] bytes=64
buffer t0 tap 0 f32[2,3]{1,0} bytes=24 label="fusion.1/add.2 \"x\""
kernel k {
  .vmem 4096
  saddr s1, x
  saddr s2, one
  dmastart vmem[0], hbm[s1], 24, 0
  dmastart vmem[512], hbm[s2], 4, 0, 6, 0, 4
  dmawait 0
  simm s3, 1
  simm s4, 6
  mbox m0, s3, s4
  vld.f32 v0, vmem[0] @m0
  vld.f32 v1, vmem[512] @m0
  vadd.f32 v2, v0, v1 @m0
  vst.f32 vmem[1024], v2 @m0
  saddr s5, y
  dmastart hbm[s5], vmem[1024], 24, 1
  saddr s6, t0
  dmastart hbm[s6], vmem[0], 24, 1
  dmawait 1
}
launch k
)";

TEST(ExecutableTest, WriteReadRoundTrip) {
  StatusOr<Executable> exe = ReadExecutable(kExe);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  EXPECT_EQ(exe->module, "add_one");
  ASSERT_EQ(exe->buffers.size(), 5u);
  EXPECT_EQ(exe->buffers[4].label, "fusion.1/add.2 \"x\"");
  EXPECT_EQ(exe->buffers[2].data, (std::vector<uint8_t>{0, 0, 0x80, 0x3f}));
  EXPECT_EQ(exe->buffers[0].layout, (std::vector<int64_t>{1, 0}));
  std::string text = WriteExecutable(*exe);
  StatusOr<Executable> back = ReadExecutable(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << text;
  EXPECT_EQ(*exe, *back);
  EXPECT_EQ(text, WriteExecutable(*back));
  // This process's own file: other runs may share the directory.
  std::string path =
      ::testing::TempDir() + "/rt_" + std::to_string(::getpid()) + ".tpux";
  ASSERT_TRUE(WriteExecutableFile(*exe, path).ok());
  StatusOr<Executable> file = ReadExecutableFile(path);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(*file, *exe);
  EXPECT_EQ(ReadExecutableFile(path + ".missing").status().code(),
            StatusCode::kIoError);
}

TEST(ExecutableTest, RunsWithTapsAndSignature) {
  StatusOr<Executable> exe = ReadExecutable(kExe);
  ASSERT_TRUE(exe.ok());
  std::vector<float> x = {1, 2, 3, 4, 5, 6};
  StatusOr<RunResult> r = RunExecutable(*exe, {testing::ToBytes(x)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->report.status, RunStatus::kOk) << r->report.message;
  ASSERT_EQ(r->outputs.size(), 1u);
  ASSERT_EQ(r->taps.size(), 1u);
  EXPECT_EQ(r->outputs[0].name, "y");
  EXPECT_EQ(r->outputs[0].dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r->taps[0].label, "fusion.1/add.2 \"x\"");
  std::vector<float> y = testing::FromBytes<float>(r->outputs[0].bytes);
  std::vector<float> t = testing::FromBytes<float>(r->taps[0].bytes);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(y[i], x[i] + 1);
    EXPECT_EQ(t[i], x[i]);
  }
}

TEST(ExecutableTest, SimulatorApiErrors) {
  StatusOr<Executable> exe = ReadExecutable(kExe);
  ASSERT_TRUE(exe.ok());
  StatusOr<std::unique_ptr<Simulator>> sim = Simulator::Create(*exe);
  ASSERT_TRUE(sim.ok());
  EXPECT_EQ((*sim)->Run().status().code(), StatusCode::kFailedPrecondition);
  std::vector<uint8_t> small(8);
  EXPECT_EQ((*sim)->BindInput(0, small).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*sim)->BindInput(1, small).code(), StatusCode::kInvalidArgument);
  std::vector<uint8_t> ok(24);
  ASSERT_TRUE((*sim)->BindInput(0, ok).ok());
  // Runs are repeatable on one simulator.
  StatusOr<RunResult> a = (*sim)->Run();
  StatusOr<RunResult> b = (*sim)->Run();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->outputs[0].bytes, b->outputs[0].bytes);
  EXPECT_EQ(a->report.cost.total.cycles, b->report.cost.total.cycles);
  SimOptions tiny;
  tiny.max_hbm_bytes = 1000;
  EXPECT_EQ(Simulator::Create(*exe, tiny).status().code(),
            StatusCode::kResourceExhausted);
}

void ExpectBad(const std::string& text, const std::string& part) {
  StatusOr<Executable> exe = ReadExecutable(text);
  ASSERT_FALSE(exe.ok()) << text;
  EXPECT_NE(exe.status().message().find(part), std::string::npos)
      << exe.status().message();
}

TEST(ExecutableTest, MalformedFilesGiveClearErrors) {
  ExpectBad("", "no 'tpux' header");
  ExpectBad("ELF\x7f", "no 'tpux' header");
  EXPECT_EQ(ReadExecutable("tpux 2\n").status().code(),
            StatusCode::kUnimplemented);
  ExpectBad("tpux 1\nbuffer x sideways 0 f32[1] bytes=4\n",
            "2:10: unknown buffer role");
  ExpectBad("tpux 1\nbuffer x input 0 f32[2] bytes=4\n", "shape needs 8");
  ExpectBad("tpux 1\nbuffer x input 0 f32[1 bytes=4\n", "2:");
  ExpectBad("tpux 1\nbuffer x input 1 f32[1] bytes=4\n", "without gaps");
  ExpectBad("tpux 1\nbuffer x constant f32[1] bytes=4 data=00\n", "data");
  ExpectBad("tpux 1\nbuffer x constant f32[1] bytes=4 data=0000g000\n",
            "bad character");
  ExpectBad("tpux 1\nbuffer x temp f32[1]\n", "needs bytes=");
  ExpectBad(
      "tpux 1\nbuffer x temp u8[1] bytes=1\nbuffer x temp u8[1] bytes=1\n",
      "duplicate buffer");
  ExpectBad("tpux 1\nlaunch nothing\n", "unknown kernel");
  ExpectBad("tpux 1\nkernel k {\n  saddr s1, ghost\n}\n",
            "unknown buffer ghost");
  ExpectBad("tpux 1\nkernel k {\n  vadd.f32 v0, v1\n}\n", "3:");
  ExpectBad("tpux 1\nkernel k {\n  halt\n", "not closed");
  ExpectBad("tpux 1\nwhat is this\n", "2:1: expected module");
  ExpectBad("tpux 1\nbuffer x temp u8[99999999999999999999] bytes=1\n",
            "out of range");
}

TEST(ExecutableTest, SliceRoundTrip) {
  std::string text = kExe;
  text.insert(text.find("buffer"), "slice 4\n");
  StatusOr<Executable> exe = ReadExecutable(text);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  EXPECT_EQ(exe->slice, 4);
  std::string written = WriteExecutable(*exe);
  EXPECT_NE(written.find("module add_one\nslice 4\nbuffer"), std::string::npos)
      << written;
  StatusOr<Executable> back = ReadExecutable(written);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, *exe);
  // Absent means one chip, and one chip is not written.
  StatusOr<Executable> one = ReadExecutable(kExe);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->slice, 1);
  EXPECT_EQ(WriteExecutable(*one).find("slice"), std::string::npos);
  one->slice = 9;
  Status bad = ValidateExecutable(*one);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("a slice has 1..8 chips"), std::string::npos)
      << bad.message();
}

TEST(ExecutableTest, BadSliceLines) {
  ExpectBad("tpux 1\nmodule m\nslice 9\n", "3:7: slice 9: a slice has 1..8");
  ExpectBad("tpux 1\nslice 0\n", "2:7: slice 0: a slice has 1..8");
  ExpectBad("tpux 1\nslice -2\n", "2:7: slice -2");
  ExpectBad("tpux 1\nslice four\n", "2:7:");
  ExpectBad("tpux 1\nslice\n", "2:6:");
  ExpectBad("tpux 1\nslice 2 3\n", "2:9: unexpected text");
  ExpectBad("tpux 1\nslice 2\nslice 2\n", "3:6: a second 'slice' line");
  ExpectBad("tpux 1\nslice 99999999999999999999\n", "2:7:");
}

TEST(ExecutableTest, MutatedFilesNeverCrash) {
  std::mt19937 rng(7);
  const std::string base = kExe;
  int parsed = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    const std::string t =
        testing::Mutate(base, rng, 4, "", 8, "0123456789,[]{}-sv@x\n");
    StatusOr<Executable> exe = ReadExecutable(t);
    if (!exe.ok()) continue;
    ++parsed;
    SimOptions opts;
    opts.max_steps = 10000;
    opts.max_hbm_bytes = 1 << 20;
    std::vector<std::vector<uint8_t>> inputs;
    for (const BufferDecl* b : exe->BuffersWithRole(BufferRole::kInput)) {
      inputs.emplace_back(b->bytes, 1);
    }
    StatusOr<RunResult> r = RunExecutable(*exe, inputs, opts);
    (void)r;
  }
  EXPECT_GT(parsed, 10);
}

}  // namespace
}  // namespace trench::tpu
