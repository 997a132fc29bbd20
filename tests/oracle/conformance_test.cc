// Runs the evaluator on every case extracted from XLA's own tests
// (shared/conformance/xla_tests/, see its README.md): parse module.hlo,
// verify (a rejection is noted, see below), evaluate on case.json's inputs and
// compare with "expected" in the case's mode (exact: bitwise with NaN == NaN;
// near: the case's ErrorSpec with XLA's abs-OR-rel rule). A case the evaluator
// answers Unimplemented for (an op or type outside its supported list) is
// skipped with the evaluator's message as the reason; every other case must
// pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "base/json.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/literal_json.h"
#include "compiler/ir/verifier.h"
#include "oracle/comparator.h"
#include "oracle/evaluator.h"

namespace trench {
namespace {

namespace fs = std::filesystem;

const fs::path kCasesDir =
    fs::path(TRENCH_SHARED_DIR) / "conformance" / "xla_tests";

std::vector<std::string> CaseNames() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(kCasesDir, ec)) {
    if (entry.is_directory() && fs::exists(entry.path() / "case.json")) {
      names.push_back(entry.path().filename().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The case's comparison options, or an error for a malformed case.
StatusOr<ComparisonOptions> CompareOptions(const Json& c) {
  const Json* compare = c.Find("compare");
  if (compare == nullptr || !compare->is_string()) {
    return InvalidArgument("case.json: missing \"compare\"");
  }
  if (compare->string_value() == "exact") return ComparisonOptions::Exact();
  if (compare->string_value() != "near") {
    return InvalidArgument("case.json: unknown compare mode " +
                           compare->Dump());
  }
  const Json* error = c.Find("error");
  if (error == nullptr) return InvalidArgument("case.json: near needs error");
  ASSIGN_OR_RETURN(double abs, error->Find("abs")
                                   ? error->Find("abs")->GetDouble()
                                   : StatusOr<double>(0.0));
  ASSIGN_OR_RETURN(double rel, error->Find("rel")
                                   ? error->Find("rel")->GetDouble()
                                   : StatusOr<double>(0.0));
  return ComparisonOptions::Near(abs, rel);
}

TEST(ConformanceCorpusTest, CasesArePresent) {
  EXPECT_GE(CaseNames().size(), 100u) << "no cases under " << kCasesDir;
}

class ConformanceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ConformanceTest, MatchesExpected) {
  const fs::path dir = kCasesDir / GetParam();
  auto parsed = ParseJson(ReadText(dir / "case.json"));
  ASSERT_TRUE(parsed.ok()) << "case.json: " << parsed.status().ToString();
  const Json& c = *parsed;
  auto options = CompareOptions(c);
  ASSERT_TRUE(options.ok()) << options.status().ToString();

  auto module = ParseHloModule(ReadText(dir / "module.hlo"));
  ASSERT_TRUE(module.ok()) << "module.hlo:" << module.status().ToString();
  // Many cases come from XLA's HloEvaluator tests, which evaluate modules
  // without verifying them (some would not pass XLA's verifier either,
  // e.g. a copy that changes the element type). So a verifier rejection
  // is recorded, not fatal; the evaluator checks what it relies on.
  const Status verified = VerifyModule(**module);
  if (!verified.ok()) {
    RecordProperty("verifier", verified.message());
    std::cout << "note: the verifier rejects this module: "
              << verified.message() << "\n";
  }
  const HloComputation& entry = *(*module)->entry_computation();

  const Json* inputs = c.Find("inputs");
  ASSERT_TRUE(inputs != nullptr && inputs->is_array());
  ASSERT_EQ(inputs->size(), static_cast<size_t>(entry.num_parameters()));
  std::vector<Literal> args;
  for (size_t i = 0; i < inputs->size(); ++i) {
    auto lit = LiteralFromJson(inputs->array()[i]);
    ASSERT_TRUE(lit.ok()) << "inputs[" << i << "]: " << lit.status().ToString();
    // case.json values are logical row-major; the parameter's layout is
    // metadata on the argument.
    lit->set_layout(entry.parameter_instruction(i)->shape().layout());
    args.push_back(std::move(*lit));
  }
  auto expected = LiteralFromJson(*c.Find("expected"));
  ASSERT_TRUE(expected.ok()) << "expected: " << expected.status().ToString();

  auto actual = Evaluate(**module, args);
  if (!actual.ok() && actual.status().code() == StatusCode::kUnimplemented) {
    GTEST_SKIP() << actual.status().message();
  }
  ASSERT_TRUE(actual.ok()) << "evaluate: " << actual.status().ToString()
                           << (verified.ok() ? "" : "\nverifier: ")
                           << (verified.ok() ? "" : verified.message());
  const ComparisonResult result = CompareLiterals(*actual, *expected, *options);
  EXPECT_TRUE(result.ok()) << GetParam() << "\n"
                           << result.ToText()
                           << "actual: " << actual->Summary(64)
                           << "\nexpected: " << expected->Summary(64);
}

INSTANTIATE_TEST_SUITE_P(XlaTests, ConformanceTest,
                         ::testing::ValuesIn(CaseNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch)))
                               ch = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace trench
