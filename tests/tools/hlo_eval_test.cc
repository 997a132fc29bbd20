#include "tools/hlo-eval/hlo_eval.h"

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

constexpr char kAdd[] = R"(
HloModule add
ENTRY main {
  a = f32[2,2] parameter(0)
  b = f32[2,2] parameter(1)
  ROOT s = f32[2,2] add(a, b)
}
)";

constexpr char kTupleBf16[] = R"(
HloModule t
ENTRY main {
  p = (bf16[3], s32[]) parameter(0)
  x = bf16[3] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  y = bf16[3] multiply(x, x)
  ROOT r = (bf16[3], s32[]) tuple(y, n)
}
)";

class HloEvalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("hlo_eval_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string WriteFile(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p) << text;
    return p.string();
  }

  int Run(std::vector<std::string> args) {
    args.insert(args.begin(), "hlo-eval");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    out_.str("");
    err_.str("");
    return RunHloEval(static_cast<int>(argv.size()), argv.data(), out_, err_);
  }

  Literal ReadOut(const std::string& rel,
                  std::optional<PrimitiveType> as = {}) {
    auto lit = ReadNpyFile((dir_ / rel).string(), as);
    EXPECT_TRUE(lit.ok()) << lit.status().ToString();
    return lit.ok() ? std::move(*lit) : Literal();
  }

  fs::path dir_;
  std::ostringstream out_, err_;
};

Literal F32(std::vector<float> v) {
  Literal lit(Shape(PrimitiveType::F32, {2, 2}));
  for (size_t i = 0; i < v.size(); ++i) lit.mutable_data<float>()[i] = v[i];
  return lit;
}

TEST_F(HloEvalTest, HelpAndUsage) {
  EXPECT_EQ(Run({"--help"}), kHloEvalOk);
  EXPECT_NE(out_.str().find("usage: hlo-eval"), std::string::npos);
  EXPECT_EQ(Run({}), kHloEvalUsage);
  EXPECT_NE(err_.str().find("missing MODULE"), std::string::npos);
  EXPECT_EQ(Run({"m.hlo", "--bogus", "--output-dir", "d"}), kHloEvalUsage);
  EXPECT_NE(err_.str().find("unknown flag --bogus"), std::string::npos);
  EXPECT_EQ(Run({"m.hlo"}), kHloEvalUsage);
  EXPECT_EQ(Run({"m.hlo", "--output-dir=d", "--seed", "1"}), kHloEvalUsage);
  EXPECT_EQ(
      Run({"m.hlo", "--output-dir=d", "--random-inputs", "--input", "x.npy"}),
      kHloEvalUsage);
  EXPECT_EQ(Run({"m.hlo", "--output-dir=d", "--threads", "x"}), kHloEvalUsage);
  const std::string m = WriteFile("add.hlo", kAdd);
  EXPECT_EQ(Run({m, "--output-dir", (dir_ / "o").string()}), kHloEvalUsage);
  EXPECT_NE(err_.str().find("give --input files or --random-inputs"),
            std::string::npos);
}

TEST_F(HloEvalTest, EvaluatesInputFiles) {
  const std::string m = WriteFile("add.hlo", kAdd);
  ASSERT_TRUE(WriteNpyFile((dir_ / "a.npy").string(), F32({1, 2, 3, 4})).ok());
  ASSERT_TRUE(
      WriteNpyFile((dir_ / "b.npy").string(), F32({10, 20, 30, 40})).ok());
  ASSERT_EQ(Run({m, "--input", (dir_ / "a.npy").string(),
                 "--input=" + (dir_ / "b.npy").string(), "--output-dir",
                 (dir_ / "out").string()}),
            kHloEvalOk)
      << err_.str();
  EXPECT_EQ(ReadOut("out/0.npy"), F32({11, 22, 33, 44}));
  EXPECT_NE(out_.str().find("output 0: f32[2,2] {11, 22, 33, 44} -> "),
            std::string::npos)
      << out_.str();
  std::ifstream manifest(dir_ / "out" / "outputs.json");
  std::stringstream text;
  text << manifest.rdbuf();
  auto j = ParseJson(text.str());
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ(j->Find("outputs")->array()[0].Find("file")->string_value(),
            "0.npy");
  EXPECT_EQ(j->Find("inputs")->Find("mode")->string_value(), "files");
  EXPECT_EQ(j->Find("inputs")
                ->Find("files")
                ->array()[1]
                .Find("dtype")
                ->string_value(),
            "f32");
}

TEST_F(HloEvalTest, RandomInputsAreWrittenAndReproduce) {
  const std::string m = WriteFile("t.hlo", kTupleBf16);
  ASSERT_EQ(Run({m, "--random-inputs", "--seed", "7", "--output-dir",
                 (dir_ / "r").string()}),
            kHloEvalOk)
      << err_.str();
  const Literal x = ReadOut("r/inputs/0.npy", PrimitiveType::BF16);
  const Literal y = ReadOut("r/0.npy", PrimitiveType::BF16);
  ASSERT_EQ(y.element_count(), 3);
  for (int i = 0; i < 3; ++i) {
    const float xv = static_cast<float>(x.data<bf16>()[i]);
    EXPECT_EQ(y.data<bf16>()[i], bf16(xv * xv));
  }
  EXPECT_EQ(ReadOut("r/1.npy"), ReadOut("r/inputs/1.npy"));
  std::ifstream manifest(dir_ / "r" / "outputs.json");
  std::stringstream text;
  text << manifest.rdbuf();
  auto j = ParseJson(text.str());
  ASSERT_TRUE(j.ok());
  const Json& out0 = j->Find("outputs")->array()[0];
  EXPECT_EQ(out0.Find("dtype")->string_value(), "bf16");
  EXPECT_EQ(out0.Find("npy_descr")->string_value(), "<u2");
  EXPECT_EQ(j->Find("inputs")->Find("seed")->int64_value(), 7);
  // Replaying the written inputs gives the same outputs.
  ASSERT_EQ(Run({m, "--input", (dir_ / "r/inputs/0.npy").string(), "--input",
                 (dir_ / "r/inputs/1.npy").string(), "--output-dir",
                 (dir_ / "replay").string()}),
            kHloEvalOk)
      << err_.str();
  EXPECT_EQ(ReadOut("replay/0.npy", PrimitiveType::BF16), y);
  // Another seed, other inputs.
  ASSERT_EQ(Run({m, "--random-inputs", "--seed=8", "--output-dir",
                 (dir_ / "r8").string()}),
            kHloEvalOk);
  EXPECT_FALSE(ReadOut("r8/inputs/0.npy") == ReadOut("r/inputs/0.npy"));
}

TEST_F(HloEvalTest, BadInputsExitOne) {
  const std::string bad = WriteFile(
      "bad.hlo", "HloModule m\nENTRY e {\n  x = f32[ parameter(0)\n}\n");
  EXPECT_EQ(Run({bad, "--random-inputs", "--output-dir", dir_.string()}),
            kHloEvalBadInput);
  EXPECT_NE(err_.str().find(bad + ":3:"), std::string::npos) << err_.str();
  EXPECT_EQ(Run({(dir_ / "missing.hlo").string(), "--random-inputs",
                 "--output-dir", dir_.string()}),
            kHloEvalBadInput);
  const std::string m = WriteFile("add.hlo", kAdd);
  const std::string a = (dir_ / "a.npy").string();
  ASSERT_TRUE(WriteNpyFile(a, F32({1, 2, 3, 4})).ok());
  EXPECT_EQ(Run({m, "--input", a, "--output-dir", dir_.string()}),
            kHloEvalBadInput);
  EXPECT_NE(err_.str().find("takes 2 array inputs, got 1"), std::string::npos)
      << err_.str();
  Literal s32(Shape(PrimitiveType::S32, {2, 2}));
  const std::string wrong = (dir_ / "wrong.npy").string();
  ASSERT_TRUE(WriteNpyFile(wrong, s32).ok());
  EXPECT_EQ(
      Run({m, "--input", a, "--input", wrong, "--output-dir", dir_.string()}),
      kHloEvalBadInput);
  EXPECT_NE(err_.str().find("does not match the expected f32"),
            std::string::npos)
      << err_.str();
  const std::string junk = WriteFile("junk.npy", "not an npy file");
  EXPECT_EQ(
      Run({m, "--input", a, "--input", junk, "--output-dir", dir_.string()}),
      kHloEvalBadInput);
}

TEST_F(HloEvalTest, ModulesWithoutParametersNeedNoInputs) {
  const std::string m = WriteFile("c.hlo", R"(
HloModule c
ENTRY e {
  a = s32[3] constant({1, 2, 3})
  t = token[] after-all()
  ROOT r = (s32[3], token[]) tuple(a, t)
}
)");
  ASSERT_EQ(Run({m, "--output-dir", (dir_ / "c").string()}), kHloEvalOk)
      << err_.str();
  EXPECT_EQ(ReadOut("c/0.npy").data<int32_t>()[2], 3);
  EXPECT_FALSE(fs::exists(dir_ / "c" / "1.npy"));  // Tokens get no file.
  EXPECT_NE(out_.str().find("output 1: token[]"), std::string::npos)
      << out_.str();
}

// --mesh: every device runs the module on its own inputs; the all-reduce
// sums device 0's and device 1's inputs, and each device's outputs and
// inputs have a directory of their own.
TEST_F(HloEvalTest, AMeshRunsEveryDeviceAndTheirCollectives) {
  const std::string m = WriteFile("ar.hlo", R"(
HloModule ar
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[2,2] parameter(0)
  pid = u32[] partition-id()
  r = f32[2,2] all-reduce(p), channel_id=1, replica_groups={{0,1}}, use_global_device_ids=true, to_apply=sum
  ROOT t = (f32[2,2], u32[]) tuple(r, pid)
}
)");
  const std::string a = (dir_ / "a.npy").string(),
                    b = (dir_ / "b.npy").string();
  ASSERT_TRUE(WriteNpyFile(a, F32({1, 2, 3, 4})).ok());
  ASSERT_TRUE(WriteNpyFile(b, F32({10, 20, 30, 40})).ok());
  ASSERT_EQ(Run({m, "--mesh", "2", "--input", a, "--input", b, "--output-dir",
                 (dir_ / "o").string()}),
            kHloEvalOk)
      << err_.str();
  for (const char* d : {"o/0/0.npy", "o/1/0.npy"}) {
    EXPECT_EQ(ReadOut(d), F32({11, 22, 33, 44})) << d;
  }
  EXPECT_EQ(ReadOut("o/1/1.npy").GetAsInt64(0), 1);
  EXPECT_NE(out_.str().find("device 1 output 1"), std::string::npos)
      << out_.str();
  std::ifstream manifest(dir_ / "o" / "outputs.json");
  std::stringstream text;
  text << manifest.rdbuf();
  auto j = ParseJson(text.str());
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->Find("mesh")->Find("partitions")->int64_value(), 2);
  EXPECT_EQ(j->Find("devices")->size(), 2u);
  // Random inputs differ per device and are written per device.
  ASSERT_EQ(Run({m, "--mesh=1x2", "--random-inputs", "--output-dir",
                 (dir_ / "r").string()}),
            kHloEvalOk)
      << err_.str();
  EXPECT_FALSE(ReadOut("r/inputs/0/0.npy") == ReadOut("r/inputs/1/0.npy"));
  // Bad meshes and input counts are named.
  EXPECT_EQ(Run({m, "--mesh", "2x", "--random-inputs", "--output-dir",
                 (dir_ / "x").string()}),
            kHloEvalUsage);
  EXPECT_NE(err_.str().find("--mesh: expected RxP or P"), std::string::npos)
      << err_.str();
  EXPECT_EQ(Run({m, "--mesh", "3", "--input", a, "--input", b, "--output-dir",
                 (dir_ / "y").string()}),
            kHloEvalBadInput);
  EXPECT_NE(err_.str().find("do not split among 3 devices"), std::string::npos)
      << err_.str();
}

TEST_F(HloEvalTest, UnsupportedOpsExitThree) {
  const std::string m = WriteFile("cc.hlo", R"(
HloModule cc
ENTRY e {
  p = f32[2] parameter(0)
  ROOT c = f32[2] custom-call(p), custom_call_target="my_op"
}
)");
  EXPECT_EQ(Run({m, "--random-inputs", "--output-dir", dir_.string()}),
            kHloEvalEvalError);
  EXPECT_NE(err_.str().find("UNIMPLEMENTED"), std::string::npos) << err_.str();
}

}  // namespace
}  // namespace trench
