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

}  // namespace
}  // namespace trench
