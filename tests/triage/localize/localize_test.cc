// The search logic of hlo-bisect's pass and rewrite levels on a scripted
// target whose failure is a monotone function of --pass-limit and
// --rewrite-limit.
#include "triage/localize/localize.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/triage/case/hlo_diff_test_util.h"
#include "triage/localize/localization_report.h"

namespace trench::hlo_bisect {
namespace {

using hlo_diff::CaseOptions;

// Fails iff pass_limit >= pass_threshold and rewrite_limit >=
// rewrite_threshold (an unset limit is the unlimited compile: E + 1
// executions, R rewrites).
class ScriptedProber : public Prober {
 public:
  int64_t executions = 10, rewrites = 20;
  int64_t pass_threshold = 4, rewrite_threshold = 7;
  std::string fail_status = "mismatch", fail_stage = "run";
  std::vector<CaseOptions> calls;

  static std::string PassName(int64_t e) { return "pass" + std::to_string(e); }

  StatusOr<Probe> Run(const CaseOptions& o, bool /*dump*/) override {
    calls.push_back(o);
    const int64_t pl = o.pass_limit.value_or(executions + 1);
    const int64_t rl = std::min(o.rewrite_limit.value_or(rewrites), rewrites);
    const bool fails = pl >= pass_threshold && rl >= rewrite_threshold;
    Probe p;
    p.status = fails ? fail_status : "pass";
    p.stage = fails ? fail_stage : "run";
    Json c = Json::MakeObject();
    c["pass_executions"] = executions;
    c["rewrite_decisions"] = rewrites;
    c["rewrites_allowed"] = rl;
    Json passes = Json::MakeArray();
    for (int64_t e = 1; e <= executions; ++e) {
      Json x = Json::MakeObject();
      x["pass"] = PassName(e);
      x["execution"] = e;
      x["required"] = false;
      passes.push_back(std::move(x));
    }
    c["passes"] = std::move(passes);
    if (rl > 0) {
      Json last = Json::MakeObject();
      last["pass"] = "algsimp";
      last["site"] = "site-" + std::to_string(rl);
      last["instruction"] = "neg";
      last["index"] = rl - 1;
      c["last_rewrite"] = std::move(last);
    } else {
      c["last_rewrite"] = Json();
    }
    p.compile = std::move(c);
    return p;
  }
};

LocalizeOptions PassAndRewrite() {
  LocalizeOptions o;
  o.graph = o.fusion = o.callee = o.branch = false;
  return o;
}

TEST(FirstFailingTest, FindsEveryThresholdWithLogarithmicRuns) {
  for (int64_t hi : {1, 2, 7, 64, 1000}) {
    for (int64_t t = 0; t <= hi; ++t) {
      int64_t runs = 0;
      StatusOr<int64_t> n =
          FirstFailing(0, hi, [&](int64_t k) -> StatusOr<bool> {
            ++runs;
            EXPECT_LT(k, hi) << "fails(hi) is known and must not be run";
            return k >= t;
          });
      ASSERT_TRUE(n.ok());
      EXPECT_EQ(*n, t) << "hi " << hi;
      EXPECT_LE(runs, 1 + static_cast<int64_t>(std::ceil(std::log2(hi))))
          << "hi " << hi << " t " << t;
    }
  }
}

TEST(FirstFailingTest, PassesErrorsOn) {
  StatusOr<int64_t> n = FirstFailing(0, 8, [](int64_t k) -> StatusOr<bool> {
    if (k == 4) return Internal("boom");
    return k >= 6;
  });
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().message(), "boom");
}

TEST(SameFailureTest, ValueClassesAndCrashes) {
  Probe mismatch{.status = "mismatch"}, nan{.status = "nan_mismatch"},
      pass{.status = "pass"};
  Probe crash{.status = "run_crash", .stage = "run"};
  Probe crash_compile{.status = "run_crash", .stage = "compile"};
  Probe timeout{.status = "timeout", .stage = "run"};
  EXPECT_TRUE(SameFailure(mismatch, nan));
  EXPECT_TRUE(SameFailure(nan, mismatch));
  EXPECT_FALSE(SameFailure(mismatch, pass));
  EXPECT_FALSE(SameFailure(mismatch, crash));
  EXPECT_TRUE(SameFailure(crash, crash));
  EXPECT_FALSE(SameFailure(crash, crash_compile));
  EXPECT_FALSE(SameFailure(crash, timeout));
  EXPECT_FALSE(SameFailure(crash, mismatch));
}

TEST(ParseLevelsTest, SubsetsAndErrors) {
  LocalizeOptions o;
  ASSERT_TRUE(ParseLevels("rewrite,pass", &o).ok());
  EXPECT_TRUE(o.pass && o.rewrite && !o.graph && !o.fusion && !o.callee &&
              !o.branch);
  ASSERT_TRUE(ParseLevels("graph,callee", &o).ok());
  EXPECT_TRUE(o.graph && o.callee && !o.pass && !o.fusion && !o.branch);
  ASSERT_TRUE(ParseLevels("branch", &o).ok());
  EXPECT_TRUE(o.branch && !o.graph && !o.callee);
  Status bad = ParseLevels("pass,commit", &o);
  EXPECT_EQ(bad.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("'commit'"), std::string::npos);
  EXPECT_FALSE(ParseLevels("", &o).ok());
}

TEST(LocalizeTest, NamesThePassExecutionAndTheRewrite) {
  for (int64_t t = 1; t <= 10; ++t) {
    ScriptedProber target;
    target.pass_threshold = t;
    StatusOr<Localization> l =
        Localize(hlo_diff::testing::AddCase(), target, PassAndRewrite());
    ASSERT_TRUE(l.ok()) << l.status().message();
    EXPECT_EQ(l->findings.pass, ScriptedProber::PassName(t));
    EXPECT_EQ(l->findings.pass_execution, t);
    ASSERT_TRUE(l->findings.rewrite.is_object());
    EXPECT_EQ(l->findings.rewrite["site"].string_value(), "site-7");
    EXPECT_EQ(l->findings.rewrite_opcode, "negate");
    // Baseline + <= 1 + ceil(log2(12)) pass probes + the dumped run +
    // <= 1 + ceil(log2(20)) rewrite probes.
    EXPECT_LE(l->runs, 1 + 5 + 1 + 6);
    EXPECT_EQ(l->runs, static_cast<int64_t>(target.calls.size()));
    EXPECT_EQ(l->linear_runs, 1 + (10 + 1 + 1) + 20);
    ASSERT_EQ(l->levels.size(), 2u);
    EXPECT_EQ(l->levels[0].result, "found");
    EXPECT_EQ(l->levels[0].evidence["first_failing_limit"].int64_value(), t);
  }
}

// The report of a localization, as hlo-bisect prints it, reads back as the
// record and prints the same text again.
TEST(LocalizeTest, TheReportTextReadsBackAsTheRecord) {
  ScriptedProber target;
  StatusOr<Localization> l =
      Localize(hlo_diff::testing::AddCase(), target, PassAndRewrite());
  ASSERT_TRUE(l.ok()) << l.status().message();
  const std::string text = LocalizationJson(*l, "cases/add").DumpPretty();
  StatusOr<LocalizationReport> r = ParseLocalizationReport(text);
  ASSERT_TRUE(r.ok()) << r.status().ToString() << "\n" << text;
  EXPECT_EQ(*r, MakeLocalizationReport(*l, "cases/add"));
  EXPECT_EQ(r->findings.RewriteSite(), "site-7");
  EXPECT_EQ(FromJsonDoc(ToJson(*r)).DumpPretty(), text);
}

TEST(LocalizeTest, LimitZeroIsCodegenAndTheLastIsBufferAssignment) {
  ScriptedProber codegen;
  codegen.pass_threshold = 0;
  codegen.rewrite_threshold = 0;
  StatusOr<Localization> l =
      Localize(hlo_diff::testing::AddCase(), codegen, PassAndRewrite());
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->findings.pass, "codegen");
  EXPECT_TRUE(l->findings.rewrite.is_null());
  EXPECT_EQ(l->levels[1].result, "none");
  EXPECT_EQ(l->runs, 3);  // Baseline, --pass-limit=0, --rewrite-limit=0.

  ScriptedProber reuse;
  reuse.pass_threshold = reuse.executions + 1;
  l = Localize(hlo_diff::testing::AddCase(), reuse, PassAndRewrite());
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->findings.pass, "buffer-assignment");
}

TEST(LocalizeTest, CrashesMustRepeatTheirStatus) {
  ScriptedProber target;
  target.fail_status = "memory_error";
  target.pass_threshold = 6;
  StatusOr<Localization> l =
      Localize(hlo_diff::testing::AddCase(), target, PassAndRewrite());
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->findings.pass, "pass6");
  // A compile crash inside a pass is named by the pass trace, no search.
  class TraceProber : public Prober {
   public:
    int runs = 0;
    StatusOr<Probe> Run(const CaseOptions&, bool) override {
      ++runs;
      return Probe{.status = "compile_crash",
                   .stage = "compile",
                   .last_pass = "dot-decomposer"};
    }
  } crash;
  LocalizeOptions only_pass;
  ASSERT_TRUE(ParseLevels("pass", &only_pass).ok());
  l = Localize(hlo_diff::testing::AddCase(), crash, only_pass);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->findings.pass, "dot-decomposer");
  EXPECT_EQ(crash.runs, 1);
}

TEST(LocalizeTest, RefusesACaseThatPasses) {
  ScriptedProber target;
  target.fail_status = "pass";
  StatusOr<Localization> l =
      Localize(hlo_diff::testing::AddCase(), target, PassAndRewrite());
  ASSERT_FALSE(l.ok());
  EXPECT_EQ(l.status().code(), StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace trench::hlo_bisect
