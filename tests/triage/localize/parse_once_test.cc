// The localizer takes the case's parsed module: Localize and the
// TargetProber's runs do not parse the case's module text again
// (hlo_diff::CaseModuleParseCount counts the parses).
#include <gtest/gtest.h>

#include "tests/triage/case/hlo_diff_test_util.h"
#include "triage/localize/localize.h"

namespace trench::hlo_bisect {
namespace {

using hlo_diff::CaseModuleParseCount;
using hlo_diff::CaseOptions;
using hlo_diff::testing::AddCase;
using hlo_diff::testing::RealTarget;
using hlo_diff::testing::TempDir;

// Fails from pass execution 3 on (a value failure).
class Scripted : public Prober {
 public:
  StatusOr<Probe> Run(const CaseOptions& o, bool) override {
    const bool fails = o.pass_limit.value_or(10) >= 3;
    Probe p{.status = fails ? "mismatch" : "pass", .stage = "run"};
    p.compile = Json::MakeObject();
    p.compile["pass_executions"] = 5;
    p.compile["rewrites_allowed"] = 0;
    return p;
  }
};

TEST(ParseOnceTest, LocalizeUsesTheGivenModule) {
  const hlo_diff::Case c = AddCase();
  auto module = hlo_diff::ParseCaseModule(c.module_text, "module.hlo");
  ASSERT_TRUE(module.ok());
  Scripted prober;
  LocalizeOptions o;
  o.graph = o.fusion = false;
  const int64_t before = CaseModuleParseCount();
  StatusOr<Localization> l = Localize(c, **module, prober, o);
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(CaseModuleParseCount(), before);
}

TEST(ParseOnceTest, TargetProberRunsWithoutParsing) {
  TempDir tmp;
  const hlo_diff::Case c = AddCase();
  auto module = hlo_diff::ParseCaseModule(c.module_text, "module.hlo");
  ASSERT_TRUE(module.ok());
  TargetProber prober(c, std::move(module).value(),
                      RealTarget(hlo_diff::TargetMode::kHloRun), tmp.path());
  const int64_t before = CaseModuleParseCount();
  for (int i = 0; i < 2; ++i) {
    StatusOr<Probe> p = prober.Run(c.options, false);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(p->status, "pass");
    EXPECT_EQ(p->verdict.status, hlo_diff::VerdictStatus::kPass);
  }
  EXPECT_EQ(CaseModuleParseCount(), before);
}

}  // namespace
}  // namespace trench::hlo_bisect
