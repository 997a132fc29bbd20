// Every XLA-derived conformance case (shared/conformance/xla_tests/)
// through the target: compiled the way hloc does (compile.h Compile(): the
// pass pipeline, then the back end) and run on the simulator, compared with
// the case's expected literal (XLA's own answer) in the case's own mode and
// tolerance. The oracle plays no part: the expected values are XLA's.
// Two kinds of case are skipped with the reason: a module the verifier
// rejects (Compile requires a verified module; some of XLA's evaluator
// tests would not pass XLA's verifier either) and one the target refuses
// (Unimplemented: an op or type it does not compile). How many of each is
// recorded below (CodegenConformanceTestRecord): one more fails.
// Everything else must agree: another compile failure, a run that does not
// end ok or a wrong answer is a failure here.
//
// Suites CodegenConformanceTest and CodegenConformanceTestRecord (slow:
// they match *ConformanceTest*).
#include <gtest/gtest.h>

#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "tests/compiler/codegen/codegen_test_util.h"
#include "tests/xla_conformance_cases.h"

namespace trench::codegen {
namespace {

class CodegenConformanceTest : public ::testing::TestWithParam<std::string> {};

// Why a case is skipped (verifier rejection or target refusal), or
// nullopt when it must agree. `compiled` gets the compilation.
std::optional<std::string> SkipReason(const conformance::Case& c,
                                      StatusOr<Compilation>* compiled) {
  if (!c.verified.ok()) {
    return "verifier rejects the module (Compile requires a verified "
           "module): " +
           c.verified.message();
  }
  *compiled = Compile(*c.module, CompileOptions());
  if (!compiled->ok() &&
      compiled->status().code() == StatusCode::kUnimplemented) {
    return "the target refuses it: " + compiled->status().message();
  }
  return std::nullopt;
}

TEST_P(CodegenConformanceTest, TargetMatchesExpected) {
  auto loaded = conformance::LoadCase(GetParam());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  conformance::Case& c = *loaded;
  StatusOr<Compilation> compiled = Internal("not compiled");
  if (std::optional<std::string> why = SkipReason(c, &compiled)) {
    GTEST_SKIP() << *why;
  }
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

// Skipped cases, as measured when this was recorded (fewer is fine: lower
// the number when the target or the verifier learns more).
constexpr int kRecordedSkips = 54;

TEST(CodegenConformanceTestRecord, SkippedCasesStayWithinTheRecord) {
  std::string skipped;
  int count = 0;
  for (const std::string& name : conformance::CaseNames()) {
    auto loaded = conformance::LoadCase(name);
    ASSERT_TRUE(loaded.ok()) << name << ": " << loaded.status().ToString();
    StatusOr<Compilation> compiled = Internal("not compiled");
    if (std::optional<std::string> why = SkipReason(*loaded, &compiled)) {
      ++count;
      skipped += "  " + name + ": " + *why + "\n";
    }
  }
  EXPECT_LE(count, kRecordedSkips)
      << "more conformance cases are skipped than recorded:\n"
      << skipped;
  std::cout << count << " of " << conformance::CaseNames().size()
            << " cases skipped (recorded " << kRecordedSkips << "):\n"
            << skipped;
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
