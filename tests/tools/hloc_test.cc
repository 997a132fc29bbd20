// hloc: capabilities, compile with dumps, exit codes.
#include "tools/hloc/hloc.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/json.h"
#include "tpu/executable.h"

namespace trench {
namespace {

namespace fs = std::filesystem;

class HlocTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("hloc_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }
  int Run(std::vector<std::string> args) {
    args.insert(args.begin(), "hloc");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    out_.str("");
    err_.str("");
    return RunHloc(static_cast<int>(argv.size()), argv.data(), out_, err_);
  }

  fs::path dir_;
  std::ostringstream out_, err_;
};

constexpr char kModule[] = R"(HloModule add
ENTRY e {
  a = f32[9,129] parameter(0)
  n = f32[9,129] negate(a)
  ROOT s = f32[9,129] add(a, n)
}
)";

TEST_F(HlocTest, CompilesAndDumps) {
  std::string m = Write("m.hlo", kModule);
  std::string prog = (dir_ / "p.tpux").string();
  ASSERT_EQ(
      Run({"compile", m, "-o", prog, "--taps=n", "--pass-limit=3",
           "--disable-passes=cse,dce", "--dump-dir", (dir_ / "d").string()}),
      0)
      << err_.str();
  auto exe = tpu::ReadExecutableFile(prog);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  EXPECT_EQ(exe->BuffersWithRole(tpu::BufferRole::kInput).size(), 1u);
  ASSERT_EQ(exe->BuffersWithRole(tpu::BufferRole::kTap).size(), 1u);
  EXPECT_EQ(exe->BuffersWithRole(tpu::BufferRole::kTap)[0]->label, "n");
  EXPECT_TRUE(fs::exists(dir_ / "d" / "module.hlo"));
  EXPECT_TRUE(fs::exists(dir_ / "d" / "prog.tpux"));
  EXPECT_FALSE(fs::is_empty(dir_ / "d" / "kernels"));
  std::ifstream opts(dir_ / "d" / "options.json");
  std::stringstream ss;
  ss << opts.rdbuf();
  auto j = ParseJson(ss.str());
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(*j->Find("pass_limit"), Json(3));
  EXPECT_EQ(j->Find("disable_passes")->size(), 2u);
  // The pipeline's dumps, the optimized module and the decisions.
  EXPECT_TRUE(fs::exists(dir_ / "d" / "passes" / "00.input.hlo"));
  EXPECT_TRUE(fs::exists(dir_ / "d" / "optimized.hlo"));
  EXPECT_TRUE(fs::exists(dir_ / "d" / "rewrites.log"));
  EXPECT_TRUE(fs::exists(dir_ / "d" / "compile.json"));
  // The compile report on stdout.
  auto report = ParseJson(out_.str());
  ASSERT_TRUE(report.ok()) << out_.str();
  EXPECT_EQ(*report->Find("status"), Json("ok"));
  EXPECT_EQ(*report->Find("pass_executions"), Json(3));
  for (const Json& p : report->Find("passes")->array()) {
    if (*p.Find("pass") == Json("cse") || *p.Find("pass") == Json("dce")) {
      EXPECT_EQ(*p.Find("skipped"), Json(true));
    }
  }
}

TEST_F(HlocTest, RewriteLimitNamesTheLastRewrite) {
  std::string m = Write("m.hlo", kModule);
  std::string prog = (dir_ / "p.tpux").string();
  ASSERT_EQ(Run({"compile", m, "-o", prog, "--rewrite-limit=0"}), 0)
      << err_.str();
  auto none = ParseJson(out_.str());
  ASSERT_TRUE(none.ok()) << out_.str();
  EXPECT_EQ(*none->Find("rewrites_allowed"), Json(0));
  EXPECT_TRUE(none->Find("last_rewrite")->is_null());
  ASSERT_EQ(Run({"compile", m, "-o", prog, "--rewrite-limit=1"}), 0)
      << err_.str();
  auto one = ParseJson(out_.str());
  ASSERT_TRUE(one.ok()) << out_.str();
  EXPECT_EQ(*one->Find("rewrites_allowed"), Json(1));
  const Json* last = one->Find("last_rewrite");
  ASSERT_TRUE(last != nullptr && last->is_object()) << out_.str();
  EXPECT_EQ(*last->Find("index"), Json(0)) << out_.str();
  EXPECT_FALSE(last->Find("pass")->string_value().empty());
  EXPECT_FALSE(last->Find("site")->string_value().empty());
}

TEST_F(HlocTest, Capabilities) {
  ASSERT_EQ(Run({"--capabilities"}), 0);
  auto j = ParseJson(out_.str());
  ASSERT_TRUE(j.ok()) << out_.str();
  bool has_dot = false;
  for (const Json& op : j->Find("ops")->array()) has_dot |= op == Json("dot");
  EXPECT_TRUE(has_dot);
  EXPECT_EQ(j->Find("flags")->size(), 6u);
  bool has_algsimp = false;
  for (const Json& p : j->Find("passes")->array()) {
    has_algsimp |= *p.Find("name") == Json("algsimp");
  }
  EXPECT_TRUE(has_algsimp);
  EXPECT_EQ(*j->Find("exit_codes")->Find("compile_error"), Json(3));
  // The coverage build flavour: how to build it; this build is not it.
  const Json* cov = j->Find("coverage");
  ASSERT_NE(cov, nullptr);
  EXPECT_EQ(cov->Find("cmake_flags")->array().at(0),
            Json("-DTRENCH_TARGET_COVERAGE=ON"));
  EXPECT_EQ(*cov->Find("instrumented"), Json(false));
  EXPECT_EQ(*cov->Find("points"), Json(0));
  // A slice of up to 8 chips and the collectives compiled for it.
  const Json* slice = j->Find("slice");
  ASSERT_NE(slice, nullptr);
  EXPECT_EQ(*slice->Find("chips"), Json(8));
  std::vector<std::string> collectives;
  for (const Json& c : slice->Find("collectives")->array()) {
    collectives.push_back(c.string_value());
  }
  EXPECT_EQ(collectives,
            (std::vector<std::string>{"all-gather", "all-reduce", "all-to-all",
                                      "collective-permute", "partition-id",
                                      "reduce-scatter", "replica-id"}));
  EXPECT_NE(j->Find("flags")->Dump().find("--mesh"), std::string::npos);
}

TEST_F(HlocTest, ExitCodesDistinguishFailures) {
  EXPECT_EQ(Run({"--help"}), 0);
  EXPECT_NE(out_.str().find("usage: hloc"), std::string::npos);
  EXPECT_EQ(Run({"compile"}), 2);
  EXPECT_EQ(Run({"compile", "x.hlo", "-o", "y", "--disable-passes=nope"}), 2);
  EXPECT_NE(err_.str().find("unknown pass 'nope'"), std::string::npos)
      << err_.str();
  EXPECT_EQ(Run({"compile", "x.hlo", "-o", "y", "--bogus=1"}), 2);
  EXPECT_EQ(Run({"compile", "x.hlo", "-o", "y", "--pass-limit=abc"}), 2);
  EXPECT_EQ(Run({"compile", (dir_ / "missing.hlo").string(), "-o", "y"}), 1);
  std::string bad =
      Write("bad.hlo", "HloModule b\nENTRY e {\n  ROOT x = f32[2] add(\n}\n");
  EXPECT_EQ(Run({"compile", bad, "-o", (dir_ / "p").string()}), 1);
  EXPECT_NE(err_.str().find("bad.hlo"), std::string::npos) << err_.str();
  std::string c64 = Write("c64.hlo",
                          "HloModule f\nENTRY e {\n  a = c64[2] parameter(0)\n"
                          "  ROOT n = c64[2] exponential(a)\n}\n");
  EXPECT_EQ(Run({"compile", c64, "-o", (dir_ / "p").string()}), 3);
  EXPECT_NE(err_.str().find("hloc: cannot compile exponential for c64"),
            std::string::npos)
      << err_.str();
  std::string m = Write("m.hlo", kModule);
  EXPECT_EQ(Run({"compile", m, "-o", (dir_ / "p").string(), "--taps=zzz"}), 3);
}

}  // namespace
}  // namespace trench
