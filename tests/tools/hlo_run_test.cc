// hlo-run: one-shot runs equal hloc + tpusim, inputs equal hlo-eval's, and
// --serve answers every request (including malformed ones) in one process.
#include "tools/hlo-run/hlo_run.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/json.h"
#include "tools/hlo-eval/hlo_eval.h"
#include "tools/hloc/hloc.h"
#include "tools/tpusim/tpusim.h"

namespace trench {
namespace {

namespace fs = std::filesystem;

constexpr char kModule[] = R"(HloModule m
ENTRY e {
  a = f32[9,129] parameter(0)
  b = f32[129] parameter(1)
  c = f32[9,129] broadcast(b), dimensions={1}
  s = f32[9,129] multiply(a, c)
  ROOT r = (f32[9,129], f32[129,9]) tuple(s, t)
  t = f32[129,9] transpose(a), dimensions={1,0}
}
)";

class HloRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("hlo_run_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    module_ = (dir_ / "m.hlo").string();
    std::string text = kModule;
    // Definitions must precede uses: move the transpose above the root.
    std::string t = "  t = f32[129,9] transpose(a), dimensions={1,0}\n";
    text.erase(text.find(t), t.size());
    text.insert(text.find("  ROOT"), t);
    std::ofstream(module_) << text;
  }
  void TearDown() override { fs::remove_all(dir_); }

  template <typename F>
  int Call(F f, const char* tool, std::vector<std::string> args) {
    args.insert(args.begin(), tool);
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    out_.str("");
    err_.str("");
    return f(static_cast<int>(argv.size()), argv.data());
  }
  int HloRun(std::vector<std::string> args, const std::string& in = "") {
    std::istringstream input(in);
    return Call(
        [&](int c, char** v) { return RunHloRun(c, v, input, out_, err_); },
        "hlo-run", std::move(args));
  }
  static std::string Slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  fs::path dir_;
  std::string module_;
  std::ostringstream out_, err_;
};

TEST_F(HloRunTest, OneShotEqualsHlocPlusTpusim) {
  const std::string run = (dir_ / "run").string();
  ASSERT_EQ(HloRun({module_, "--random-inputs", "--seed", "7", "--output-dir",
                    run, "--taps=c"}),
            0)
      << err_.str();
  const std::string prog = (dir_ / "p.tpux").string();
  ASSERT_EQ(Call([&](int c, char** v) { return RunHloc(c, v, out_, err_); },
                 "hloc", {"compile", module_, "-o", prog, "--taps=c"}),
            0)
      << err_.str();
  const std::string sim = (dir_ / "sim").string();
  ASSERT_EQ(Call([&](int c, char** v) { return RunTpusim(c, v, out_, err_); },
                 "tpusim",
                 {"run", prog, "--inputs", run + "/inputs", "--outputs", sim}),
            0)
      << err_.str();
  for (const char* f : {"0.npy", "1.npy", "taps/c.npy"}) {
    EXPECT_EQ(Slurp(fs::path(run) / f), Slurp(fs::path(sim) / f)) << f;
    EXPECT_FALSE(Slurp(fs::path(run) / f).empty()) << f;
  }
  // The random inputs are hlo-eval's, bit for bit.
  const std::string ev = (dir_ / "eval").string();
  ASSERT_EQ(
      Call([&](int c, char** v) { return RunHloEval(c, v, out_, err_); },
           "hlo-eval",
           {module_, "--random-inputs", "--seed", "7", "--output-dir", ev}),
      0)
      << err_.str();
  for (const char* f : {"inputs/0.npy", "inputs/1.npy", "1.npy"}) {
    EXPECT_EQ(Slurp(fs::path(run) / f), Slurp(fs::path(ev) / f)) << f;
  }
  // Same inputs through --input files.
  const std::string again = (dir_ / "again").string();
  ASSERT_EQ(HloRun({module_, "--input", run + "/inputs/0.npy", "--input",
                    run + "/inputs/1.npy", "--output-dir", again}),
            0)
      << err_.str();
  EXPECT_EQ(Slurp(fs::path(run) / "0.npy"), Slurp(fs::path(again) / "0.npy"));
}

// SPMD: --mesh runs a slice, one directory per device for inputs and
// outputs; random inputs and outputs are hlo-eval's on the same mesh.
TEST_F(HloRunTest, MeshRunsEveryDeviceWithItsOwnInputs) {
  const std::string spmd = (dir_ / "spmd.hlo").string();
  std::ofstream(spmd) << "HloModule s\nENTRY e {\n"
                         "  p = s32[2,3] parameter(0)\n"
                         "  id = u32[] partition-id()\n"
                         "  c = s32[] convert(id)\n"
                         "  b = s32[2,3] broadcast(c), dimensions={}\n"
                         "  x = s32[2,3] add(p, b)\n"
                         "  ROOT g = s32[4,3] all-gather(x), channel_id=1, "
                         "replica_groups=[1,2]<=[2], dimensions={0}, "
                         "use_global_device_ids=true\n}\n";
  const std::string run = (dir_ / "run").string();
  ASSERT_EQ(HloRun({spmd, "--mesh", "1x2", "--random-inputs", "--seed", "5",
                    "--output-dir", run}),
            0)
      << err_.str();
  const std::string ev = (dir_ / "eval").string();
  ASSERT_EQ(Call([&](int c, char** v) { return RunHloEval(c, v, out_, err_); },
                 "hlo-eval",
                 {spmd, "--random-inputs", "--seed", "5", "--mesh", "1x2",
                  "--output-dir", ev}),
            0)
      << err_.str();
  for (const char* f : {"0/0.npy", "1/0.npy"}) {
    EXPECT_FALSE(Slurp(fs::path(run) / f).empty()) << f;
    EXPECT_EQ(Slurp(fs::path(run) / f), Slurp(fs::path(ev) / f)) << f;
  }
  // Each device has inputs of its own (the gathered result is everyone's).
  EXPECT_NE(Slurp(fs::path(run) / "inputs/0/0.npy"),
            Slurp(fs::path(run) / "inputs/1/0.npy"));
  StatusOr<Json> report = ParseJson(Slurp(fs::path(run) / "report.json"));
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(*report->Find("chips"), Json(2));
  EXPECT_EQ(*report->Find("status"), Json("ok"));
  EXPECT_NE(report->Find("compile"), nullptr);
  // The same inputs from a directory give the same outputs.
  const std::string again = (dir_ / "again").string();
  ASSERT_EQ(HloRun({spmd, "--mesh", "1x2", "--input-dir", run + "/inputs",
                    "--output-dir", again}),
            0)
      << err_.str();
  EXPECT_EQ(Slurp(fs::path(run) / "1/0.npy"),
            Slurp(fs::path(again) / "1/0.npy"));
  // A mesh needs per-device inputs; a mesh past the slice is refused.
  EXPECT_EQ(HloRun({spmd, "--mesh", "1x2", "--input", run + "/inputs/0/0.npy",
                    "--output-dir", (dir_ / "x").string()}),
            1);
  EXPECT_EQ(HloRun({spmd, "--mesh", "4x4", "--random-inputs", "--output-dir",
                    (dir_ / "y").string()}),
            2);
  // And through --serve.
  const std::string served = (dir_ / "served").string();
  ASSERT_EQ(HloRun({"--serve"}, "{\"module\": \"" + spmd +
                                    "\", \"mesh\": \"1x2\", \"input_dir\": \"" +
                                    run + "/inputs\", \"output_dir\": \"" +
                                    served + "\"}\n"),
            0)
      << err_.str();
  EXPECT_NE(out_.str().find("\"ok\":true"), std::string::npos) << out_.str();
  EXPECT_EQ(Slurp(fs::path(run) / "1/0.npy"),
            Slurp(fs::path(served) / "1/0.npy"));
}

// This build is not the coverage flavour: an empty point table, and serve
// answers carry no "coverage" (tests/triage/fuzz/coverage_build_test.cc
// runs the flavour itself).
TEST_F(HloRunTest, CoveragePcsOfAPlainBuildAreEmpty) {
  ASSERT_EQ(HloRun({"--coverage-pcs"}), 0) << err_.str();
  EXPECT_EQ(out_.str(), "{\"size\":0,\"pcs\":[]}\n");
}

TEST_F(HloRunTest, ExitCodes) {
  EXPECT_EQ(HloRun({"--help"}), 0);
  EXPECT_EQ(HloRun({module_}), 2);
  EXPECT_EQ(HloRun({module_, "--seed", "1", "--output-dir", "x"}), 2);
  EXPECT_EQ(HloRun({(dir_ / "none.hlo").string(), "--random-inputs",
                    "--output-dir", (dir_ / "o").string()}),
            1);
  EXPECT_EQ(HloRun({module_, "--input", module_, "--output-dir",
                    (dir_ / "o").string()}),
            1);
  EXPECT_NE(err_.str().find("bad_input"), std::string::npos);
  std::string c64 = (dir_ / "c64.hlo").string();
  std::ofstream(c64) << "HloModule f\nENTRY e {\n  a = c64[2] parameter(0)\n"
                        "  ROOT n = c64[2] exponential(a)\n}\n";
  EXPECT_EQ(
      HloRun({c64, "--random-inputs", "--output-dir", (dir_ / "o2").string()}),
      3);
  EXPECT_NE(err_.str().find("compile_error"), std::string::npos);
  EXPECT_NE(Slurp(dir_ / "o2" / "report.json").find("compile_error"),
            std::string::npos);
}

TEST_F(HloRunTest, ServeAnswersEveryRequest) {
  const std::string d = (dir_ / "s").string();
  Json text_req = Json::MakeObject();
  text_req["id"] = 2;
  text_req["module"] = std::string(
      "HloModule n\nENTRY e {\n  a = s32[300] parameter(0)\n"
      "  ROOT n = s32[300] negate(a)\n}\n");
  text_req["seed"] = 3;
  text_req["output_dir"] = d + "2";
  text_req["taps"] = "all";
  std::string in =
      "{\"id\": 1, \"module\": \"" + module_ +
      "\", \"seed\": 7, "
      "\"output_dir\": \"" +
      d + "1\", \"pass_limit\": 2}\n" + text_req.Dump() + "\n" + "{not json\n" +
      "{\"id\": 4, \"module\": \"" + module_ +
      "\", \"bogus\": 1, "
      "\"output_dir\": \"" +
      d + "4\"}\n" + "{\"id\": 5, \"module\": \"" +
      (dir_ / "none.hlo").string() + "\", \"seed\": 1, \"output_dir\": \"" + d +
      "5\"}\n" +
      "{\"id\": 6, \"module\": \"HloModule f\\nENTRY e {\\n  a = c64[2] "
      "parameter(0)\\n  ROOT n = c64[2] exponential(a)\\n}\\n\", \"seed\": 1, "
      "\"output_dir\": \"" +
      d + "6\"}\n" + "{\"id\": 7, \"module\": \"" + module_ +
      "\", \"inputs\": [\"" + d + "1/inputs/0.npy\", \"" + d +
      "1/inputs/1.npy\"], \"output_dir\": \"" + d + "7\"}\n";
  ASSERT_EQ(HloRun({"--serve"}, in), 0) << err_.str();
  std::vector<Json> answers;
  std::istringstream lines(out_.str());
  for (std::string line; std::getline(lines, line);) {
    auto j = ParseJson(line);
    ASSERT_TRUE(j.ok()) << line;
    answers.push_back(*j);
  }
  ASSERT_EQ(answers.size(), 7u) << out_.str();
  const char* want[] = {
      "ok", "ok", "bad_input", "bad_input", "bad_input", "compile_error", "ok"};
  for (size_t i = 0; i < answers.size(); ++i) {
    EXPECT_EQ(*answers[i].Find("status"), Json(want[i])) << answers[i].Dump();
  }
  EXPECT_EQ(*answers[1].Find("id"), Json(2));
  EXPECT_EQ(*answers[5].Find("exit_code"), Json(3));
  EXPECT_EQ(answers[1].Find("report")->Find("taps")->size(), 2u);
  EXPECT_EQ(Slurp(fs::path(d + "1") / "0.npy"),
            Slurp(fs::path(d + "7") / "0.npy"));
  EXPECT_FALSE(Slurp(fs::path(d + "1") / "0.npy").empty());
}

}  // namespace
}  // namespace trench
