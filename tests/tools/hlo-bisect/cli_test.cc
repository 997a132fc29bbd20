// hlo-bisect's command line: usage errors, unreadable and passing cases,
// and a whole localization through a scripted hlo-run (a shell script
// speaking the target contract whose outputs go wrong from
// --pass-limit=3 on).
#include <gtest/gtest.h>

#include <sstream>

#include "compiler/ir/npy.h"
#include "tests/triage/case/hlo_diff_test_util.h"
#include "tools/hlo-bisect/hlo_bisect.h"
#include "triage/localize/localize.h"

namespace trench {
namespace {

using hlo_diff::testing::TempDir;

struct Result {
  int code;
  std::string out, err;
};

Result Bisect(std::vector<std::string> args) {
  args.insert(args.begin(), "hlo-bisect");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  const int code =
      RunHloBisect(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

TEST(HloBisectCliTest, UsageErrors) {
  Result r = Bisect({});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("missing CASE_DIR"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("usage: hlo-bisect"), std::string::npos);
  r = Bisect({"case", "--frobnicate=1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown flag --frobnicate"), std::string::npos);
  r = Bisect({"case", "--levels=pass,blame"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("unknown level 'blame'"), std::string::npos) << r.err;
  r = Bisect({"case", "--hlo-run", "x", "--hloc", "y"});
  EXPECT_EQ(r.code, 2);
  r = Bisect({"case", "--timeout=-1"});
  EXPECT_EQ(r.code, 2);
  r = Bisect({"a", "b"});
  EXPECT_EQ(r.code, 2);
  r = Bisect({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--levels"), std::string::npos);
}

TEST(HloBisectCliTest, CommitsGoToTheCommitLevel) {
  Result r = Bisect({"commits", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("usage: hlo-bisect commits"), std::string::npos)
      << r.out;
  r = Bisect({"commits"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.find("missing CASE_DIR\nusage: hlo-bisect CASE_DIR"),
            std::string::npos)
      << "not handled as a case directory named 'commits'";
}

TEST(HloBisectCliTest, UnreadableCase) {
  TempDir tmp;
  Result r = Bisect({tmp / "nope"});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find(tmp / "nope"), std::string::npos) << r.err;
}

TEST(HloBisectCliTest, ACaseThatPassesHasNothingToLocalize) {
  TempDir tmp;
  ASSERT_TRUE(
      hlo_diff::WriteCase(tmp / "case", hlo_diff::testing::AddCase()).ok());
  Result r = Bisect({tmp / "case", "--bin-dir", hlo_diff::testing::BinaryDir(),
                     "--hlo-run", hlo_diff::testing::BinaryDir() + "/hlo-run"});
  EXPECT_EQ(r.code, 1) << r.err << r.out;
  EXPECT_NE(r.err.find("does not fail (status 'pass')"), std::string::npos)
      << r.err;
}

// Writes the fake target: correct outputs below --pass-limit=3, wrong ones
// from 3 on (and without a limit); a compile report of 5 executions.
std::string FakeTarget(const TempDir& tmp) {
  Literal sum = hlo_diff::testing::F32({2, 3}, {1.5, 1, 5.25, 12, 2, 6});
  Literal half(Shape(PrimitiveType::BF16, {2, 3}));
  Literal bad = sum;
  for (int64_t i = 0; i < 6; ++i) {
    half.SetFromDouble(i, -sum.GetAsDouble(i));
    bad.SetFromDouble(i, sum.GetAsDouble(i) + (i == 2 ? 1 : 0));
  }
  EXPECT_TRUE(WriteNpyFile(tmp / "good0.npy", sum).ok());
  EXPECT_TRUE(WriteNpyFile(tmp / "bad0.npy", bad).ok());
  EXPECT_TRUE(WriteNpyFile(tmp / "1.npy", half).ok());
  std::string passes;
  for (int e = 1; e <= 5; ++e) {
    passes += std::string(e > 1 ? "," : "") + "{\"pass\":\"p" +
              std::to_string(e) + "\",\"execution\":" + std::to_string(e) +
              ",\"required\":false}";
  }
  const std::string report =
      "{\"status\":\"ok\",\"taps\":[],\"compile\":{\"pass_executions\":5,"
      "\"passes\":[" +
      passes +
      "],\"rewrites_allowed\":2,\"rewrite_decisions\":2,"
      "\"last_rewrite\":null}}";
  return hlo_diff::testing::WriteScript(
      tmp / "hlo-run",
      "out=''; limit=99\n"
      "while [ $# -gt 0 ]; do\n"
      "  case \"$1\" in\n"
      "    --output-dir) out=\"$2\"; shift;;\n"
      "    --pass-limit=*) limit=\"${1#--pass-limit=}\";;\n"
      "  esac\n"
      "  shift\n"
      "done\n"
      "mkdir -p \"$out\"\n"
      "if [ \"$limit\" -ge 3 ]; then cp " +
          tmp / "bad0.npy" + " \"$out/0.npy\"; else cp " + tmp / "good0.npy" +
          " \"$out/0.npy\"; fi\n"
          "cp " +
          tmp / "1.npy" +
          " \"$out/1.npy\"\n"
          "echo '" +
          report + "' > \"$out/report.json\"\n");
}

TEST(HloBisectCliTest, LocalizesThroughAScriptedTarget) {
  TempDir tmp;
  ASSERT_TRUE(
      hlo_diff::WriteCase(tmp / "case", hlo_diff::testing::AddCase()).ok());
  const std::string target = FakeTarget(tmp);
  Result r = Bisect({tmp / "case", "--hlo-run", target, "--levels=pass,rewrite",
                     "--keep", tmp / "work"});
  ASSERT_EQ(r.code, 0) << r.err;
  StatusOr<Json> j = ParseJson(r.out);
  ASSERT_TRUE(j.ok()) << r.out;
  EXPECT_EQ((*j)["status"].string_value(), "mismatch");
  EXPECT_EQ((*j)["findings"]["pass"].string_value(), "p3");
  EXPECT_EQ((*j)["findings"]["pass_execution"].int64_value(), 3);
  EXPECT_EQ((*j)["signature"]["pass"].string_value(), "p3");
  EXPECT_TRUE((*j)["signature"]["site"].is_null());  // Rewrites don't matter.
  EXPECT_EQ((*j)["levels"].array()[1].Find("result")->string_value(), "none");
  // Baseline, limits 0, 3, 1, 2 (or fewer), the dumped run, rewrite 0.
  EXPECT_LE((*j)["runs"]["localize"].int64_value(), 1 + 4 + 1 + 1);
  EXPECT_EQ((*j)["runs"]["linear_scan"].int64_value(), 1 + (5 + 1 + 1) + 2);

  r = Bisect({tmp / "case", "--hlo-run", target, "--levels=pass", "--text",
              "--out", tmp / "report.txt"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  StatusOr<std::string> text = hlo_bisect::ReadTextFile(tmp / "report.txt");
  ASSERT_TRUE(text.ok());
  EXPECT_NE(text->find("pass execution 3 ('p3') introduces the failure"),
            std::string::npos)
      << *text;
}

}  // namespace
}  // namespace trench
