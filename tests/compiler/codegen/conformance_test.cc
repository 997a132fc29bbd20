// Every XLA-derived conformance case (shared/conformance/xla_tests/) that
// the oracle passes must also pass through the target: compiled the way
// hloc does (compile.h Compile(): the pass pipeline, then the back end) +
// run on the simulator, compared with the case's expected literal in the
// case's own mode and tolerance. A case the oracle does not pass
// (Unimplemented op or type, or a wrong answer) is skipped with the reason;
// so is a module the verifier rejects, since Compile() requires a verified
// module. Everything else must agree: a compile
// failure ("hloc: cannot compile ...") is a failure here.
//
// Suite CodegenConformanceTest (slow: matches *ConformanceTest*).
#include <gtest/gtest.h>

#include <iostream>
#include <string>
#include <vector>

#include "tests/compiler/codegen/codegen_test_util.h"
#include "tests/xla_conformance_cases.h"

namespace trench::codegen {
namespace {

class CodegenConformanceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CodegenConformanceTest, TargetMatchesExpected) {
  auto loaded = conformance::LoadCase(GetParam());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  conformance::Case& c = *loaded;
  if (!c.verified.ok()) {
    GTEST_SKIP() << "verifier rejects the module (Compile requires a "
                    "verified module): "
                 << c.verified.message();
  }
  auto oracle = Evaluate(*c.module, c.args);
  if (!oracle.ok()) {
    GTEST_SKIP() << "oracle does not evaluate it: "
                 << oracle.status().message();
  }
  const ComparisonResult oracle_result =
      CompareLiterals(*oracle, c.expected, c.options);
  if (!oracle_result.ok()) {
    GTEST_SKIP() << "oracle does not pass it: " << oracle_result.ToText();
  }

  auto compiled = Compile(*c.module, CompileOptions());
  ASSERT_TRUE(compiled.ok()) << "[compile] " << compiled.status().ToString();
  auto run =
      tpu::RunExecutable(compiled->executable, testing::InputBytes(c.args));
  ASSERT_TRUE(run.ok()) << "[run] " << run.status().ToString();
  ASSERT_EQ(run->report.status, tpu::RunStatus::kOk)
      << "[run] " << tpu::RunStatusName(run->report.status) << ": "
      << run->report.message << " at " << run->report.kernel << ": "
      << run->report.instruction;
  std::vector<Literal> leaves;
  for (const tpu::OutputBuffer& b : run->outputs) {
    leaves.push_back(testing::ToLiteral(b));
  }
  ASSERT_FALSE(leaves.empty()) << "[run] no outputs";
  Literal actual = c.expected.shape().IsTuple()
                       ? Literal::Tuple(std::move(leaves))
                       : std::move(leaves.at(0));
  const ComparisonResult result =
      CompareLiterals(actual, c.expected, c.options);
  EXPECT_TRUE(result.ok()) << "[mismatch] " << result.ToText()
                           << "actual: " << actual.Summary(64)
                           << "\nexpected: " << c.expected.Summary(64);
}

INSTANTIATE_TEST_SUITE_P(XlaTests, CodegenConformanceTest,
                         ::testing::ValuesIn(conformance::CaseNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return conformance::ParamName(info.param);
                         });

TEST(CodegenConformanceCorpus, CasesArePresent) {
  EXPECT_GE(conformance::CaseNames().size(), 100u)
      << "no cases under " << conformance::CasesDir();
}

}  // namespace
}  // namespace trench::codegen
