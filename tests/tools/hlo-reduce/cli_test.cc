#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "base/subprocess.h"
#include "tests/triage/reduce/reduce_test_util.h"
#include "tools/hlo-reduce/hlo_reduce.h"
#include "triage/reduce/reduction_pass.h"

namespace trench {
namespace {

using namespace hlo_reduce::testing;  // NOLINT

struct CliResult {
  int code;
  std::string out, err;
  Json summary;
};

CliResult Cli(std::vector<std::string> args) {
  args.insert(args.begin(), "hlo-reduce");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  CliResult r;
  r.code = RunHloReduce(int(argv.size()), argv.data(), out, err);
  r.out = out.str();
  r.err = err.str();
  StatusOr<Json> j = ParseJson(r.out);
  if (j.ok()) r.summary = *j;
  return r;
}

int64_t Size(const Json& s, const char* when, const char* what) {
  return s.Find(when)->Find(what)->int64_value();
}

std::string WriteChainCase(const TempDir& tmp,
                           const std::string& name = "case") {
  EXPECT_TRUE(hlo_diff::WriteCase(tmp / name, ChainCase()).ok());
  return tmp / name;
}

TEST(HloReduceCliTest, UsageErrorsNameTheProblem) {
  TempDir tmp;
  const std::string c = WriteChainCase(tmp);
  struct {
    std::vector<std::string> args;
    int code;
    std::string names;
  } cases[] = {
      {{}, 2, "missing CASE_DIR"},
      {{c}, 2, "missing --out"},
      {{c, "--out", tmp / "o", "--frobnicate", "1"}, 2, "--frobnicate"},
      {{c, "--out", tmp / "o", "--jobs", "0"}, 2, "--jobs"},
      {{c, "--out", tmp / "o", "--jobs=x"}, 2, "'x'"},
      {{c, "--out", tmp / "o", "--min-rate", "2"}, 2, "--min-rate"},
      {{c, "--out", tmp / "o", "--passes=remove-instructions,bogus"},
       2,
       "'bogus'"},
      {{c, "--out", tmp / "o", "--target", "gpu"}, 2, "--target"},
      {{c, "--out", tmp / "o", "--test", "true", "--culprit-pass", "cse"},
       2,
       "--culprit-pass"},
      {{c, tmp / "other", "--out", tmp / "o"}, 2, "more than one case"},
      {{tmp / "missing", "--out", tmp / "o"}, 1, tmp / "missing"},
  };
  for (const auto& k : cases) {
    CliResult r = Cli(k.args);
    EXPECT_EQ(r.code, k.code) << k.names << "\n" << r.err;
    EXPECT_NE(r.err.find(k.names), std::string::npos) << r.err;
  }
  WriteText(tmp / "case/case.json", "{\"format\": 1,, }");
  CliResult r = Cli({c, "--out", tmp / "o"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(tmp / "case/case.json:1:"), std::string::npos) << r.err;
}

TEST(HloReduceCliTest, ListPassesAndDryRun) {
  CliResult r = Cli({"--list-passes"});
  EXPECT_EQ(r.code, 0);
  for (const auto& p : hlo_reduce::AllReductionPasses()) {
    EXPECT_NE(r.out.find(std::string(p->name()) + "\t"), std::string::npos);
  }
  TempDir tmp;
  r = Cli({WriteChainCase(tmp), "--dry-run",
           "--passes=remove-instructions,remove-outputs"});
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(r.summary.is_object()) << r.out;
  const Json* passes = r.summary.Find("passes");
  ASSERT_EQ(passes->size(), 2u);
  EXPECT_EQ(passes->array()[0].Find("pass")->string_value(),
            "remove-instructions");
  EXPECT_GT(passes->array()[0].Find("max_tests")->int64_value(), 0);
  EXPECT_EQ(Size(r.summary, "size", "instructions"), 8);
  EXPECT_FALSE(std::filesystem::exists(tmp / "o"));
}

TEST(HloReduceCliTest, ExternalTestReducesAndResumes) {
  TempDir tmp;
  const std::string c = WriteChainCase(tmp);
  WriteScript(tmp / "has-mul.sh", "grep -q ' multiply(' \"$1/module.hlo\"\n");
  // (simplify-constants is left out: it may toggle a constant between two
  // equally simple values, which a resumed run, not knowing the first
  // value, takes as progress.)
  const std::string passes =
      "--passes=remove-outputs,remove-instructions,shrink-shapes";
  CliResult r = Cli({c, "--out", tmp / "o", "--test", tmp / "has-mul.sh",
                     "--jobs", "2", passes});
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(r.summary.is_object()) << r.out;
  EXPECT_EQ(r.summary.Find("test")->Find("kind")->string_value(), "command");
  EXPECT_EQ(r.summary.Find("initial_rate")->number_value(), 1.0);
  EXPECT_LT(Size(r.summary, "after", "instructions"),
            Size(r.summary, "before", "instructions"));
  StatusOr<hlo_diff::Case> best = hlo_diff::ReadCase(tmp / "o/best");
  ASSERT_TRUE(best.ok());
  EXPECT_NE(best->module_text.find(" multiply("), std::string::npos);
  const int64_t tests = r.summary.Find("stats")->Find("tests")->int64_value();
  EXPECT_GT(tests, 0);
  // The initial case, each test, and OUT/best read back once more.
  EXPECT_EQ(r.summary.Find("target_runs")->int64_value(), tests + 2);
  EXPECT_TRUE(r.summary.Find("replayed")->bool_value());
  // The same OUT again: refused without --resume; with it, nothing is left.
  r = Cli({c, "--out", tmp / "o", "--test", tmp / "has-mul.sh"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--resume"), std::string::npos) << r.err;
  r = Cli({c, "--out", tmp / "o", "--test", tmp / "has-mul.sh", "--resume",
           passes});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.summary.Find("stats")->Find("accepted")->int64_value(), 0);
}

TEST(HloReduceCliTest, UninterestingCaseIsExitThree) {
  TempDir tmp;
  CliResult r =
      Cli({WriteChainCase(tmp), "--out", tmp / "o", "--test", "false"});
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("not interesting"), std::string::npos) << r.err;
}

TEST(HloReduceCliTest, FlakyTestReportsItsRate) {
  TempDir tmp;
  WriteScript(
      tmp / "flaky.sh",
      "n=$(cat " + tmp / "count" +
          " 2>/dev/null || echo 0)\n"
          "echo $((n + 1)) > " +
          tmp / "count" +
          "\n"
          "[ $((n % 2)) -eq 0 ] && grep -q ' multiply(' \"$1/module.hlo\"\n");
  CliResult r = Cli({WriteChainCase(tmp), "--out", tmp / "o", "--test",
                     tmp / "flaky.sh", "--repeats", "4", "--min-rate", "0.25",
                     "--passes=remove-instructions"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.summary.Find("initial_rate")->number_value(), 0.5);
  StatusOr<hlo_diff::Case> best = hlo_diff::ReadCase(tmp / "o/best");
  ASSERT_TRUE(best.ok());
  EXPECT_NE(best->module_text.find(" multiply("), std::string::npos);
  r = Cli({WriteChainCase(tmp, "case2"), "--out", tmp / "o2", "--test",
           tmp / "flaky.sh", "--repeats", "4", "--min-rate", "0.75"});
  EXPECT_EQ(r.code, 3) << r.err;
}

// The same bug on a fake buggy target (reduce_test_util.h): the reduced
// case still crashes in algsimp, and disabling algsimp still fixes it.
TEST(HloReduceCliTest, SameBugKeepsTheCrashAndItsCulprit) {
  TempDir tmp;
  const std::string fake = WriteFakeCrashTarget(tmp.path());
  CliResult r = Cli({WriteChainCase(tmp), "--out", tmp / "o", "--bin-dir",
                     BinaryDir(), "--hlo-run", fake, "--target", "hlo-run",
                     "--culprit-pass", "algsimp", "--jobs", "2",
                     "--passes=remove-outputs,remove-instructions"});
  ASSERT_EQ(r.code, 0) << r.err;
  const Json* test = r.summary.Find("test");
  EXPECT_EQ(test->Find("kind")->string_value(), "same_bug");
  EXPECT_EQ(test->Find("culprit_check")->string_value(), "checked");
  EXPECT_EQ(test->Find("reference")->Find("status")->string_value(),
            "compile_crash");
  EXPECT_LE(Size(r.summary, "after", "instructions"), 4);
  StatusOr<hlo_diff::Case> best = hlo_diff::ReadCase(tmp / "o/best");
  ASSERT_TRUE(best.ok());
  EXPECT_NE(best->module_text.find(" multiply("), std::string::npos);
}

TEST(HloReduceCliTest, SameBugRefusesAPassingCase) {
  TempDir tmp;
  constexpr char kPassing[] = R"(HloModule ok
ENTRY main {
  p0 = f32[4,8] parameter(0)
  p1 = f32[4,8] parameter(1)
  ROOT a = f32[4,8] add(p0, p1)
})";
  ASSERT_TRUE(hlo_diff::WriteCase(tmp / "case", ChainCase(kPassing)).ok());
  CliResult r =
      Cli({tmp / "case", "--out", tmp / "o", "--bin-dir", BinaryDir()});
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("verdict pass"), std::string::npos) << r.err;
}

// The binary itself (exit code and output of a quick command).
TEST(HloReduceCliTest, BinaryListsPasses) {
  hlo_diff::ProcessSpec spec;
  spec.argv = {BinaryDir() + "/hlo-reduce", "--list-passes"};
  StatusOr<hlo_diff::ProcessResult> p = hlo_diff::RunProcess(spec);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->exit_code, 0) << p->err;
  EXPECT_NE(p->out.find("remove-instructions"), std::string::npos);
}

}  // namespace
}  // namespace trench
