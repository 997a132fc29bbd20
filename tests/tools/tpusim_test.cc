// tpusim: runs programs from files, reports memory errors precisely.
#include "tools/tpusim/tpusim.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/json.h"
#include "compiler/ir/npy.h"

namespace trench {
namespace {

namespace fs = std::filesystem;

class TpusimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("tpusim_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "in");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  int Run(std::vector<std::string> args) {
    args.insert(args.begin(), "tpusim");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    out_.str("");
    err_.str("");
    return RunTpusim(static_cast<int>(argv.size()), argv.data(), out_, err_);
  }
  Json Report(const std::string& sub) {
    std::ifstream in(dir_ / sub / "report.json");
    std::stringstream ss;
    ss << in.rdbuf();
    auto j = ParseJson(ss.str());
    EXPECT_TRUE(j.ok()) << ss.str();
    return j.ok() ? *j : Json();
  }

  fs::path dir_;
  std::ostringstream out_, err_;
};

// Copies x (f32[4]) to out, reading `read` bytes (16 is right).
std::string Program(int read) {
  return "tpux 1\nbuffer x input 0 f32[4]{0} bytes=16\n"
         "buffer out output 0 f32[4]{0} bytes=16\n"
         "kernel k {\n  .vmem 64\n  saddr s1, x\n  dmastart vmem[0], "
         "hbm[s1], " +
         std::to_string(read) +
         ", 0\n  dmawait 0\n  saddr s2, out\n  dmastart hbm[s2], vmem[0], 16, "
         "1\n  dmawait 1\n}\nlaunch k\n";
}

TEST_F(TpusimTest, RunsAndWritesOutputs) {
  Literal x(Shape(PrimitiveType::F32, {4}));
  for (int i = 0; i < 4; ++i) x.mutable_data<float>()[i] = 1.5f * i;
  ASSERT_TRUE(WriteNpyFile((dir_ / "in" / "0.npy").string(), x).ok());
  std::string prog = Write("p.tpux", Program(16));
  ASSERT_EQ(Run({"run", prog, "--inputs", (dir_ / "in").string(), "--outputs",
                 (dir_ / "out").string()}),
            0)
      << err_.str();
  auto y = ReadNpyFile((dir_ / "out" / "0.npy").string());
  ASSERT_TRUE(y.ok());
  EXPECT_TRUE(*y == x);
  Json r = Report("out");
  EXPECT_EQ(*r.Find("status"), Json("ok"));
  EXPECT_GT(r.Find("cycles")->int64_value(), 0);
  EXPECT_EQ(*r.Find("bytes_moved")->Find("hbm_to_vmem"), Json(16));
}

TEST_F(TpusimTest, MemoryErrorIsReported) {
  Literal x(Shape(PrimitiveType::F32, {4}));
  ASSERT_TRUE(WriteNpyFile((dir_ / "in" / "0.npy").string(), x).ok());
  std::string prog = Write("p.tpux", Program(20));  // Reads past x.
  EXPECT_EQ(Run({"run", prog, "--inputs", (dir_ / "in").string(), "--outputs",
                 (dir_ / "out").string()}),
            5);
  Json r = Report("out");
  EXPECT_EQ(*r.Find("status"), Json("memory_error"));
  ASSERT_EQ(r.Find("memory_errors")->size(), 1u);
  const Json& e = r.Find("memory_errors")->array()[0];
  EXPECT_EQ(*e.Find("kernel"), Json("k"));
  EXPECT_EQ(*e.Find("space"), Json("hbm"));
  EXPECT_EQ(*e.Find("kind"), Json("out_of_bounds"));
  EXPECT_FALSE(fs::exists(dir_ / "out" / "0.npy"));
}

TEST_F(TpusimTest, BadInputsAndUsage) {
  EXPECT_EQ(Run({"--help"}), 0);
  EXPECT_EQ(Run({"run"}), 2);
  std::string prog = Write("p.tpux", Program(16));
  EXPECT_EQ(Run({"run", prog, "--outputs", (dir_ / "out").string()}), 2);
  // Missing input file, then a wrong shape.
  EXPECT_EQ(Run({"run", prog, "--inputs", (dir_ / "in").string(), "--outputs",
                 (dir_ / "out").string()}),
            1);
  Literal wrong(Shape(PrimitiveType::F32, {5}));
  ASSERT_TRUE(WriteNpyFile((dir_ / "in" / "0.npy").string(), wrong).ok());
  EXPECT_EQ(Run({"run", prog, "--inputs", (dir_ / "in").string(), "--outputs",
                 (dir_ / "out").string()}),
            1);
  EXPECT_NE(err_.str().find("input 0"), std::string::npos) << err_.str();
  std::string junk = Write("junk.tpux", "tpux 1\nbogus line\n");
  EXPECT_EQ(Run({"run", junk, "--outputs", (dir_ / "out").string()}), 1);
}

// Two chips swap their x (f32[4]): each sends it into the other's y and
// waits for the other's signal; `wait` false forgets the flagwait.
std::string SwapProgram(bool wait) {
  return std::string(
             "tpux 1\nslice 2\nbuffer x input 0 f32[4]{0} bytes=16\n"
             "buffer y output 0 f32[4]{0} bytes=16\n"
             "kernel swap {\n  .vmem 64\n  saddr s1, x\n  saddr s2, y\n"
             "  chipid s3\n  simm s4, 1\n  ssub s4, s4, s3\n"
             "  dmastart vmem[0], hbm[s1], 16, 0\n  dmawait 0\n"
             "  rdmastart s4, hbm[s2], vmem[0], 16, 1, 0\n  dmawait 1\n") +
         (wait ? "  flagwait 0, 1\n" : "") + "}\nlaunch swap\n";
}

class TpusimSliceTest : public TpusimTest {
 protected:
  // Chip c's x is {c, c + .5, c + 1, c + 1.5} in in/<c>/0.npy.
  Literal WriteChipInput(int chip) {
    Literal x(Shape(PrimitiveType::F32, {4}));
    for (int i = 0; i < 4; ++i) x.mutable_data<float>()[i] = chip + 0.5f * i;
    fs::create_directories(dir_ / "in" / std::to_string(chip));
    EXPECT_TRUE(
        WriteNpyFile((dir_ / "in" / std::to_string(chip) / "0.npy").string(), x)
            .ok());
    return x;
  }
  int RunSlice(const std::string& prog, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"run",       prog,
                                     "--inputs",  (dir_ / "in").string(),
                                     "--outputs", (dir_ / "out").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return Run(args);
  }
};

TEST_F(TpusimSliceTest, EachChipHasItsDirectories) {
  Literal x0 = WriteChipInput(0), x1 = WriteChipInput(1);
  std::string prog = Write("swap.tpux", SwapProgram(true));
  ASSERT_EQ(RunSlice(prog), 0) << err_.str();
  EXPECT_NE(out_.str().find("status ok"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("(2 chips, ring of 2)"), std::string::npos);
  auto y0 = ReadNpyFile((dir_ / "out" / "0" / "0.npy").string());
  auto y1 = ReadNpyFile((dir_ / "out" / "1" / "0.npy").string());
  ASSERT_TRUE(y0.ok() && y1.ok());
  EXPECT_TRUE(*y0 == x1);
  EXPECT_TRUE(*y1 == x0);
  EXPECT_FALSE(fs::exists(dir_ / "out" / "0.npy"));
  Json r = Report("out");
  EXPECT_EQ(*r.Find("status"), Json("ok"));
  EXPECT_EQ(*r.Find("chip"), Json(-1));
  EXPECT_EQ(*r.Find("chips"), Json(2));
  EXPECT_EQ(*r.Find("topology"), Json("ring of 2"));
  EXPECT_EQ(*r.Find("link_bytes_sent"), Json(32));
  ASSERT_EQ(r.Find("chip_cycles")->size(), 2u);
  const int64_t c0 = r.Find("chip_cycles")->array()[0].int64_value();
  const int64_t c1 = r.Find("chip_cycles")->array()[1].int64_value();
  EXPECT_EQ(r.Find("cycles")->int64_value(), std::max(c0, c1));
  Json chip1 = Report("out/1");
  EXPECT_EQ(*chip1.Find("status"), Json("ok"));
  EXPECT_EQ(*chip1.Find("cycles"), Json(c1));
  ASSERT_EQ(chip1.Find("outputs")->size(), 1u);
}

TEST_F(TpusimSliceTest, ChipsFlagOverridesTheProgram) {
  // One chip keeps the single-chip layout: in/0.npy, out/0.npy; the swap
  // then has no peer and traps.
  Literal x(Shape(PrimitiveType::F32, {4}));
  ASSERT_TRUE(WriteNpyFile((dir_ / "in" / "0.npy").string(), x).ok());
  std::string prog = Write("swap.tpux", SwapProgram(true));
  EXPECT_EQ(RunSlice(prog, {"--chips", "1"}), 4);
  EXPECT_NE(err_.str().find("peer chip 1 is outside the slice"),
            std::string::npos)
      << err_.str();
  Json r = Report("out");
  EXPECT_EQ(*r.Find("status"), Json("run_crash"));
  EXPECT_EQ(r.Find("chips"), nullptr);
  // A single-chip program runs on a slice when asked.
  WriteChipInput(0);
  WriteChipInput(1);
  WriteChipInput(2);
  std::string single = Write("p.tpux", Program(16));
  ASSERT_EQ(RunSlice(single, {"--chips", "3"}), 0) << err_.str();
  EXPECT_TRUE(fs::exists(dir_ / "out" / "2" / "0.npy"));
  EXPECT_EQ(*Report("out").Find("topology"), Json("ring of 3"));
}

TEST_F(TpusimSliceTest, RaceIsAMemoryErrorNamingTheChip) {
  WriteChipInput(0);
  WriteChipInput(1);
  std::string prog = Write("race.tpux", SwapProgram(false));
  EXPECT_EQ(RunSlice(prog), 5);
  Json r = Report("out");
  EXPECT_EQ(*r.Find("status"), Json("memory_error"));
  EXPECT_EQ(*r.Find("chip"), Json(0));
  ASSERT_EQ(r.Find("memory_errors")->size(), 1u);
  const Json& e = r.Find("memory_errors")->array()[0];
  EXPECT_EQ(*e.Find("kind"), Json("unsynchronized_peer_access"));
  EXPECT_EQ(*e.Find("chip"), Json(0));
  EXPECT_NE(e.Find("message")->string_value().find("chip 1 wrote them"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(dir_ / "out" / "0" / "0.npy"));
  EXPECT_EQ(*Report("out/1").Find("status"), Json("memory_error"));
}

TEST_F(TpusimSliceTest, BadSliceArguments) {
  std::string prog = Write("swap.tpux", SwapProgram(true));
  EXPECT_EQ(RunSlice(prog, {"--chips", "9"}), 2);
  EXPECT_NE(err_.str().find("--chips: a slice has 1..8 chips, got 9"),
            std::string::npos)
      << err_.str();
  EXPECT_EQ(RunSlice(prog, {"--chips", "two"}), 2);
  EXPECT_EQ(RunSlice(prog, {"--chips", "-1"}), 2);
  EXPECT_EQ(Run({"run", prog, "--outputs", (dir_ / "out").string()}), 2);
  EXPECT_NE(err_.str().find("missing --inputs"), std::string::npos);
  // Chip 1's input is missing, then has the wrong shape.
  WriteChipInput(0);
  EXPECT_EQ(RunSlice(prog), 1);
  EXPECT_NE(err_.str().find("1/0.npy"), std::string::npos) << err_.str();
  fs::create_directories(dir_ / "in" / "1");
  Literal wrong(Shape(PrimitiveType::F32, {2, 2}));
  ASSERT_TRUE(WriteNpyFile((dir_ / "in" / "1" / "0.npy").string(), wrong).ok());
  EXPECT_EQ(RunSlice(prog), 1);
  EXPECT_NE(err_.str().find("input 0 of chip 1 must be f32[4], got f32[2,2]"),
            std::string::npos)
      << err_.str();
  std::string bad = Write("bad.tpux", "tpux 1\nslice 12\n");
  EXPECT_EQ(RunSlice(bad), 1);
  EXPECT_NE(err_.str().find("2:7: slice 12"), std::string::npos) << err_.str();
}

}  // namespace
}  // namespace trench
