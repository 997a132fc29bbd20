// `trench triage CASE_DIR` (cmd_triage.cc), in-process: a passing case
// (nothing to reduce), a case failing on a target wrapped to crash on one
// opcode (reduced and localized), and (slow, BugZooCli*) a zoo bug's
// witness on a patched build of the target.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/json.h"
#include "orchestrator/cli/cli.h"
#include "tests/bugzoo/zoo_build.h"
#include "tests/orchestrator/cli/cli_test_util.h"

namespace trench::cli {
namespace {

namespace fs = std::filesystem;

const fs::path kBin = TRENCH_BINARY_DIR;
const fs::path kWitness = fs::path(TRENCH_SOURCE_DIR) / "tests" / "bugzoo" /
                          "05-algsimp-sub-self-float" / "witness";

using testing::CliRun;
using testing::RunTrench;

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void ExpectHas(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos)
      << "missing \"" << part << "\" in:\n"
      << text;
}

class TriageTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = ::testing::TempDir() + "trench-triage-XXXXXX";
    ASSERT_NE(mkdtemp(t.data()), nullptr);
    dir_ = t;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(TriageTest, PassingCaseHasNothingToReduce) {
  const fs::path out = dir_ / "out";
  // hlo-run one-shot (cli_test depends on hlo-run, not on hloc + tpusim).
  const std::string hlo_run = (kBin / "hlo-run").string();
  CliRun r = RunTrench({"triage", kWitness.string(), "--out", out.string(),
                        "--hlo-run", hlo_run});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectHas(r.out, "# Triage of " + kWitness.string());
  ExpectHas(r.out, "verdict: pass");
  ExpectHas(r.out, "nothing to reduce: the case does not fail (pass)");
  ExpectHas(r.out, "nothing to localize");
  EXPECT_EQ(Slurp(out / "report.md"), r.out);
  StatusOr<Json> verdict = ParseJson(Slurp(out / "verdict.json"));
  ASSERT_TRUE(verdict.ok());
  EXPECT_EQ(verdict->Find("status")->string_value(), "pass");
  EXPECT_FALSE(fs::exists(out / "reduce"));
  // --json gives the triage object; a used --out is refused.
  r = RunTrench({"triage", kWitness.string(), "--out", (dir_ / "o2").string(),
                 "--hlo-run", hlo_run, "--json"});
  ASSERT_EQ(r.code, 0) << r.err;
  StatusOr<Json> j = ParseJson(r.out);
  ASSERT_TRUE(j.ok()) << r.out;
  EXPECT_EQ(j->Find("verdict")->Find("status")->string_value(), "pass");
  r = RunTrench({"triage", kWitness.string(), "--out", out.string()});
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err, "exists and is not empty");
}

TEST_F(TriageTest, UsageAndBadCases) {
  EXPECT_EQ(RunTrench({"triage"}).code, 2);
  EXPECT_EQ(RunTrench({"triage", "a", "b"}).code, 2);
  EXPECT_EQ(RunTrench({"triage", kWitness.string(), "--levels"}).code, 2);
  CliRun r = RunTrench({"triage", (dir_ / "none").string()});
  EXPECT_EQ(r.code, 1);
  ExpectHas(r.err, "is not a case directory");
  // A directory that is no case: hlo-diff's invalid_input verdict.
  fs::create_directories(dir_ / "empty");
  r = RunTrench({"triage", (dir_ / "empty").string(), "--out",
                 (dir_ / "o").string(), "--bin-dir", kBin.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectHas(r.out, "verdict: invalid_input");
  ExpectHas(r.out, "nothing to reduce");
}

// A target that crashes compiling any module with an exponential and
// otherwise is the real hlo-run: the witness fails, and the reduced case
// keeps an exponential and nothing else it does not need.
TEST_F(TriageTest, FailingCaseIsReducedAndLocalized) {
  const fs::path script = dir_ / "crashy-hlo-run";
  std::ofstream(script)
      << "#!/bin/sh\n"
         "for a in \"$@\"; do case \"$a\" in *.hlo) f=\"$a\";; esac; done\n"
         "if [ -n \"$f\" ] && grep -q exponential \"$f\"; then\n"
         "  echo 'INTERNAL: exponential lowering broke' >&2; exit 3\n"
         "fi\n"
         "exec "
      << bugzoo::ShellQuote((kBin / "hlo-run").string()) << " \"$@\"\n";
  ASSERT_EQ(chmod(script.c_str(), 0755), 0);
  const fs::path out = dir_ / "out";
  CliRun r = RunTrench({"triage", kWitness.string(), "--out", out.string(),
                        "--hlo-run", script.string(), "--target", "hlo-run",
                        "--max-tests", "300"});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectHas(r.out, "verdict: compile_crash (");
  ExpectHas(r.out, "before: 4 instructions");
  ExpectHas(r.out, "case: " + (out / "reduce" / "best").string());
  const std::string best = Slurp(out / "reduce" / "best" / "module.hlo");
  EXPECT_NE(best.find("exponential"), std::string::npos) << best;
  EXPECT_EQ(best.find("subtract"), std::string::npos) << best;
  ExpectHas(r.out, "```hlo\n" + best);
  // Localization ran on the reduced case (found or not, it reports).
  StatusOr<Json> t = ParseJson(Slurp(out / "triage.json"));
  ASSERT_TRUE(t.ok());
  const Json* loc = t->Find("localization");
  const Json* notes = t->Find("notes");
  ASSERT_TRUE((loc && loc->is_object()) || (notes && notes->size() > 0))
      << r.out;
  if (loc != nullptr && loc->is_object()) {
    EXPECT_EQ(loc->Find("case")->string_value(),
              (out / "reduce" / "best").string());
    ExpectHas(r.out, "levels:\n  pass: ");
  }
}

// The real thing (slow: a patched target-only build): zoo bug 05 makes
// algsimp fold x - x to 0 for floats; the triage localizes it there.
TEST(BugZooCliTest, TriageLocalizesAZooBug) {
  if (!bugzoo::HasTool("cmake") || !bugzoo::HasTool("git")) {
    GTEST_SKIP() << "needs cmake and git";
  }
  std::string t = ::testing::TempDir() + "trench-zoo-cli-XXXXXX";
  ASSERT_NE(mkdtemp(t.data()), nullptr);
  const fs::path dir = t;
  bugzoo::ZooBuild zoo(TRENCH_SOURCE_DIR, dir / "zoo");
  ASSERT_TRUE(zoo.Configure()) << Slurp(zoo.log());
  ASSERT_TRUE(zoo.Patch(kWitness.parent_path())) << "patch does not apply";
  ASSERT_TRUE(zoo.Build("hlo-run")) << Slurp(zoo.log());
  CliRun r =
      RunTrench({"triage", kWitness.string(), "--out", (dir / "out").string(),
                 "--hlo-run", (zoo.build_dir() / "hlo-run").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  ExpectHas(r.out, "verdict: ");
  EXPECT_EQ(r.out.find("verdict: pass"), std::string::npos) << r.out;
  ExpectHas(r.out, "## Minimized case\ncase: ");
  ExpectHas(r.out, "pass: algsimp");
  ExpectHas(r.out, "subtract");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trench::cli
