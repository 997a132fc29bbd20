#include "triage/reduce/interestingness.h"

#include <gtest/gtest.h>

#include "tests/triage/reduce/reduce_test_util.h"

namespace trench::hlo_reduce {
namespace {

using namespace testing;  // NOLINT
using hlo_diff::Case;

// The chain without its multiply (m replaced by an add).
constexpr char kNoMultiply[] = R"(HloModule chain

ENTRY main {
  p0 = f32[4,8] parameter(0)
  p1 = f32[4,8] parameter(1)
  a = f32[4,8] add(p0, p1)
  m = f32[4,8] add(a, p1)
  ROOT t = (f32[4,8], f32[4,8]) tuple(m, a)
}
)";

// A smaller module that still multiplies.
constexpr char kSmallMultiply[] = R"(HloModule small

ENTRY main {
  p0 = f32[4,8] parameter(0)
  p1 = f32[4,8] parameter(1)
  ROOT m = f32[4,8] multiply(p0, p1)
}
)";

Json Sig(const std::string& text) {
  StatusOr<Json> j = ParseJson(text);
  EXPECT_TRUE(j.ok()) << text;
  return j.ok() ? *j : Json();
}

// A coarse signature from its JSON (without "sig").
hlo_diff::Signature Coarse(const std::string& text) {
  Json j = Sig(text);
  j["sig"] = "";
  StatusOr<hlo_diff::Signature> s = hlo_diff::Signature::FromJson(j);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : hlo_diff::Signature();
}

TEST(FingerprintTest, MismatchKeepsStatusAndDtypeButNotOps) {
  Fingerprint a = Fingerprint::FromSignature(Coarse(
      R"({"status": "mismatch", "dtype": "f32", "ops": ["add", "dot"]})"));
  Fingerprint b = Fingerprint::FromSignature(
      Coarse(R"({"status": "mismatch", "dtype": "f32", "ops": ["dot"]})"));
  Fingerprint c = Fingerprint::FromSignature(
      Coarse(R"({"status": "mismatch", "dtype": "bf16", "ops": ["dot"]})"));
  Fingerprint d = Fingerprint::FromSignature(
      Coarse(R"({"status": "nan_mismatch", "dtype": "f32", "ops": ["dot"]})"));
  EXPECT_TRUE(a.Matches(b));
  EXPECT_FALSE(a.Matches(c));
  EXPECT_FALSE(a.Matches(d));
  EXPECT_EQ(a.ToJson().Find("ops"), nullptr);
}

TEST(FingerprintTest, CrashesKeepStageMessageAndCompilePass) {
  auto crash = [](const char* status, const char* stage, const char* msg,
                  const char* pass) {
    hlo_diff::Signature s;
    s.status = *hlo_diff::ParseVerdictStatus(status);
    s.stage = stage;
    s.message = msg;
    s.pass = pass;
    return Fingerprint::FromSignature(s);
  };
  Fingerprint ref =
      crash("compile_crash", "compile", "killed by SIGSEGV", "cse");
  EXPECT_TRUE(ref.Matches(
      crash("compile_crash", "compile", "killed by SIGSEGV", "cse")));
  EXPECT_FALSE(ref.Matches(
      crash("compile_crash", "compile", "killed by SIGSEGV", "dce")));
  EXPECT_FALSE(ref.Matches(
      crash("compile_crash", "compile", "killed by SIGFPE", "cse")));
  EXPECT_FALSE(
      ref.Matches(crash("run_crash", "run", "killed by SIGSEGV", "cse")));
  // A run crash does not depend on the last pass entered.
  EXPECT_TRUE(crash("run_crash", "run", "trap", "fusion")
                  .Matches(crash("run_crash", "run", "trap", "dce")));
  EXPECT_TRUE(hlo_diff::IsFailureStatus("timeout"));
  EXPECT_FALSE(hlo_diff::IsFailureStatus("pass"));
  EXPECT_FALSE(hlo_diff::IsFailureStatus("target_unsupported"));
}

TEST(FingerprintTest, CulpritOnlyFromARefinedSignature) {
  EXPECT_EQ(CulpritFromSignature(
                Sig(R"({"status": "mismatch", "pass": "cse", "site": null})")),
            "cse");
  EXPECT_EQ(
      CulpritFromSignature(Sig(
          R"({"status": "compile_crash", "pass": "cse", "stage": "compile"})")),
      "");
  EXPECT_EQ(CulpritFromSignature(Json()), "");
}

TEST(ExternalCommandTest, ExitZeroIsInteresting) {
  TempDir tmp;
  WriteScript(tmp / "has-mul.sh", "grep -q ' multiply(' \"$1/module.hlo\"\n");
  auto t = ExternalCommandTest::Create(
      {.command = tmp / "has-mul.sh", .work_dir = tmp / "work", .jobs = 2});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_TRUE(*(*t)->RunOnce(ChainCase(), 0));
  EXPECT_FALSE(*(*t)->RunOnce(ChainCase(kNoMultiply), 1));
  EXPECT_TRUE(*(*t)->RunOnce(ChainCase(kSmallMultiply), 1));
  EXPECT_EQ((*t)->runs(), 3);
  EXPECT_FALSE((*t)->RunOnce(ChainCase(), 2).ok());  // No such worker.
  EXPECT_EQ((*t)->Describe().Find("kind")->string_value(), "command");
}

TEST(ExternalCommandTest, ModulePathAndQuoting) {
  TempDir tmp;
  WriteScript(tmp / "it's.sh",
              "case \"$1\" in *module.hlo) grep -q multiply \"$1\";; *) exit "
              "1;; esac\n");
  auto t =
      ExternalCommandTest::Create({.command = ShellQuoteArg(tmp / "it's.sh"),
                                   .module_path = true,
                                   .work_dir = tmp / "work"});
  ASSERT_TRUE(t.ok());
  EXPECT_TRUE(*(*t)->RunOnce(ChainCase(), 0));
  EXPECT_FALSE(*(*t)->RunOnce(ChainCase(kNoMultiply), 0));
}

TEST(ExternalCommandTest, TimeoutIsNotInteresting) {
  TempDir tmp;
  auto t = ExternalCommandTest::Create({.command = "sleep 20; true",
                                        .timeout_seconds = 0.3,
                                        .work_dir = tmp / "work"});
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(*(*t)->RunOnce(ChainCase(), 0));
  EXPECT_FALSE(ExternalCommandTest::Create({.command = ""}).ok());
}

// Reproduces on every other run (a counter file): rate 0.5.
TEST(ExternalCommandTest, RepeatsMeasureAndApplyTheRate) {
  TempDir tmp;
  WriteScript(tmp / "flaky.sh", "n=$(cat " + tmp / "count" +
                                    " 2>/dev/null || echo 0)\n"
                                    "echo $((n + 1)) > " +
                                    tmp / "count" +
                                    "\n"
                                    "[ $((n % 2)) -eq 0 ]\n");
  auto t = ExternalCommandTest::Create(
      {.command = tmp / "flaky.sh", .work_dir = tmp / "work"});
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE((*t)->SetRepeats(4, 0.5).ok());
  StatusOr<double> rate = (*t)->MeasureRate(ChainCase(), 0);
  ASSERT_TRUE(rate.ok());
  EXPECT_DOUBLE_EQ(*rate, 0.5);
  EXPECT_TRUE(*(*t)->IsInteresting(ChainCase(), 0));
  ASSERT_TRUE((*t)->SetRepeats(4, 0.75).ok());
  EXPECT_FALSE(*(*t)->IsInteresting(ChainCase(), 0));
  ASSERT_TRUE((*t)->SetRepeats(1, 1.0).ok());
  EXPECT_FALSE((*t)->SetRepeats(0, 0.5).ok());
  EXPECT_FALSE((*t)->SetRepeats(2, 1.5).ok());
}

TEST(SameBugTest, KeepsTheCrashAndRejectsOtherOutcomes) {
  TempDir tmp;
  auto t =
      SameBugTest::Create(ChainCase(), {.target = FakeCrashSpec(tmp.path()),
                                        .jobs = 2,
                                        .work_dir = tmp / "work"});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const Fingerprint& ref = (*t)->reference();
  EXPECT_EQ(ref.status, "compile_crash");
  EXPECT_EQ(ref.stage, "compile");
  EXPECT_EQ(ref.pass, "algsimp");
  EXPECT_EQ((*t)->culprit_note(), "none");
  StatusOr<bool> small = (*t)->RunOnce(ChainCase(kSmallMultiply), 1);
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  EXPECT_TRUE(*small);
  StatusOr<bool> none = (*t)->RunOnce(ChainCase(kNoMultiply), 0);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(*none);  // Passes on the (real) target.
  EXPECT_EQ((*t)->runs(), 3);
}

TEST(SameBugTest, CulpritPassIsChecked) {
  TempDir tmp;
  auto t =
      SameBugTest::Create(ChainCase(), {.target = FakeCrashSpec(tmp.path()),
                                        .work_dir = tmp / "work",
                                        .culprit_pass = "algsimp"});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ((*t)->culprit_note(), "checked");
  EXPECT_TRUE(*(*t)->RunOnce(ChainCase(kSmallMultiply), 0));
  EXPECT_EQ((*t)->runs(), 2 + 2);  // Reference and candidate, each + culprit.
  // The failure does not depend on cse: a wrong culprit is refused.
  auto wrong =
      SameBugTest::Create(ChainCase(), {.target = FakeCrashSpec(tmp.path()),
                                        .work_dir = tmp / "work2",
                                        .culprit_pass = "cse"});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(wrong.status().message().find("remains"), std::string::npos);
  // "codegen": the failure remains with every optional pass skipped.
  auto codegen =
      SameBugTest::Create(ChainCase(), {.target = FakeCrashSpec(tmp.path()),
                                        .work_dir = tmp / "work3",
                                        .culprit_pass = "codegen"});
  ASSERT_TRUE(codegen.ok()) << codegen.status().ToString();
  EXPECT_EQ((*codegen)->culprit_note(), "checked");
}

TEST(SameBugTest, APassingCaseIsRefused) {
  TempDir tmp;
  hlo_diff::TargetSpec spec = hlo_diff::TargetSpec::FromBinaryDir(
      BinaryDir(), hlo_diff::TargetMode::kServe);
  auto t = SameBugTest::Create(ChainCase(kNoMultiply),
                               {.target = spec, .work_dir = tmp / "work"});
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(t.status().message().find("verdict pass"), std::string::npos)
      << t.status().message();
}

}  // namespace
}  // namespace trench::hlo_reduce
