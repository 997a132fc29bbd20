// Runs the evaluator on every case extracted from XLA's own tests
// (shared/conformance/xla_tests/, see its README.md): parse module.hlo,
// verify (a rejection is noted, see below), evaluate on case.json's inputs and
// compare with "expected" in the case's mode (exact: bitwise with NaN == NaN;
// near: the case's ErrorSpec with XLA's abs-OR-rel rule). A case the evaluator
// answers Unimplemented for (an op or type outside its supported list) is
// skipped with the evaluator's message as the reason; every other case must
// pass. The number of such cases is recorded below
// (ConformanceTestRecord): one more fails, so a change that makes the
// oracle refuse what it evaluated before cannot hide behind a skip.
#include <gtest/gtest.h>

#include <iostream>

#include "oracle/comparator.h"
#include "oracle/evaluator.h"
#include "tests/xla_conformance_cases.h"

namespace trench {
namespace {

using conformance::CaseNames;
using conformance::CasesDir;

// Cases the evaluator answers Unimplemented for, as measured when this was
// recorded (fewer is fine: lower it when the oracle learns an op).
constexpr int kRecordedUnimplemented = 52;

TEST(ConformanceTestRecord, UnimplementedCasesStayWithinTheRecord) {
  std::string skipped;
  int count = 0;
  for (const std::string& name : CaseNames()) {
    auto loaded = conformance::LoadCase(name);
    ASSERT_TRUE(loaded.ok()) << name << ": " << loaded.status().ToString();
    auto actual = Evaluate(*loaded->module, loaded->args);
    if (!actual.ok() && actual.status().code() == StatusCode::kUnimplemented) {
      ++count;
      skipped += "  " + name + ": " + actual.status().message() + "\n";
    }
  }
  EXPECT_LE(count, kRecordedUnimplemented)
      << "the oracle now refuses more conformance cases than recorded:\n"
      << skipped;
  std::cout << count << " of " << CaseNames().size()
            << " cases unimplemented (recorded " << kRecordedUnimplemented
            << "):\n"
            << skipped;
}

TEST(ConformanceCorpusTest, CasesArePresent) {
  EXPECT_GE(CaseNames().size(), 100u) << "no cases under " << CasesDir();
}

class ConformanceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ConformanceTest, MatchesExpected) {
  auto loaded = conformance::LoadCase(GetParam());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const conformance::Case& c = *loaded;
  // Many cases come from XLA's HloEvaluator tests, which evaluate modules
  // without verifying them (some would not pass XLA's verifier either,
  // e.g. a copy that changes the element type). So a verifier rejection
  // is recorded, not fatal; the evaluator checks what it relies on.
  const Status& verified = c.verified;
  if (!verified.ok()) {
    RecordProperty("verifier", verified.message());
    std::cout << "note: the verifier rejects this module: "
              << verified.message() << "\n";
  }

  auto actual = Evaluate(*c.module, c.args);
  if (!actual.ok() && actual.status().code() == StatusCode::kUnimplemented) {
    GTEST_SKIP() << actual.status().message();
  }
  ASSERT_TRUE(actual.ok()) << "evaluate: " << actual.status().ToString()
                           << (verified.ok() ? "" : "\nverifier: ")
                           << (verified.ok() ? "" : verified.message());
  const ComparisonResult result =
      CompareLiterals(*actual, c.expected, c.options);
  EXPECT_TRUE(result.ok()) << GetParam() << "\n"
                           << result.ToText()
                           << "actual: " << actual->Summary(64)
                           << "\nexpected: " << c.expected.Summary(64);
}

INSTANTIATE_TEST_SUITE_P(XlaTests, ConformanceTest,
                         ::testing::ValuesIn(CaseNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return conformance::ParamName(info.param);
                         });

}  // namespace
}  // namespace trench
