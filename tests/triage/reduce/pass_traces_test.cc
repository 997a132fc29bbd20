// Every pass on real modules (shared/traces): valid candidates, smaller,
// deterministic; and a full greedy reduction to a tiny module.
#include <cmath>
#include <filesystem>
#include <map>

#include "tests/triage/reduce/pass_test_util.h"

namespace trench::hlo_reduce {
namespace {

using testing::CaseOf;

// Real modules that parse and verify, from a few trace files.
std::vector<hlo_diff::Case> TraceCases() {
  std::vector<hlo_diff::Case> out;
  for (const char* rel :
       {"hlo/translate/hlo_to_mhlo/tests/fully_connected_reference_model.hlo",
        "hlo/translate/hlo_to_mhlo/tests/fusion.hlo",
        "hlo/translate/hlo_to_mhlo/tests/call.hlo",
        "hlo/translate/hlo_to_mhlo/tests/while.hlo",
        "hlo/translate/hlo_to_mhlo/tests/if_conditional.hlo"}) {
    for (const std::string& text : testing::TraceModules(rel)) {
      if (!hlo_diff::ParseCaseModule(text, rel).ok()) continue;
      out.push_back(CaseOf(text, 5));
    }
  }
  return out;
}

// Passes whose every single opportunity must give a valid candidate.
constexpr const char* kAlwaysValid[] = {"remove-outputs",
                                        "remove-instructions",
                                        "replace-subgraphs",
                                        "inline-calls",
                                        "unfuse",
                                        "simplify-constants",
                                        "simplify-inputs",
                                        "drop-attributes"};

TEST(PassTracesTest, SingleAndAllOpportunitiesAreValid) {
  const auto cases = TraceCases();
  ASSERT_GE(cases.size(), 4u);
  int64_t tried = 0;
  std::map<std::string, int64_t> singles, smaller;
  for (const hlo_diff::Case& c : cases) {
    for (const char* name : kAlwaysValid) {
      auto pass = testing::PassNamed(name);
      const int64_t n = pass->Count(c);
      for (int64_t k = 0; k < std::min<int64_t>(n, 40); ++k) {
        auto out = testing::Apply(*pass, c, {k});
        ASSERT_TRUE(out.ok()) << name << " " << k << out.status().ToString();
        // Smaller, or (passes that change values) different.
        smaller[name] +=
            testing::Smaller(MeasureCase(*out), MeasureCase(c)) ||
            (std::string(name).starts_with("simplify-") &&
             (out->inputs != c.inputs || out->module_text != c.module_text));
        ++singles[name];
        Status valid = ValidateCandidate(*out);
        EXPECT_TRUE(valid.ok())
            << name << " " << k << ": " << valid.ToString() << "\n"
            << out->module_text;
        ++tried;
      }
      if (n == 0) continue;
      auto all = pass->Apply(c, testing::Iota(n));
      if (!all.ok()) {
        EXPECT_EQ(all.status().code(), StatusCode::kFailedPrecondition);
        continue;
      }
      EXPECT_TRUE(ValidateCandidate(*all).ok()) << name << "\n"
                                                << all->module_text;
      if (!std::string(name).starts_with("simplify-")) {
        EXPECT_TRUE(testing::Smaller(MeasureCase(*all), MeasureCase(c)))
            << name;
      }
      EXPECT_EQ(all->module_text,
                pass->Apply(c, testing::Iota(n))->module_text);
    }
  }
  EXPECT_GT(tried, 100);
  // Most single opportunities shrink the case (some cannot: a dead
  // instruction's operand replaced by a parameter of its size).
  for (const auto& [name, n] : singles) {
    EXPECT_GE(smaller[name] * 4, n * 3)
        << name << ": " << smaller[name] << " of " << n;
  }
}

TEST(PassTracesTest, ShrinkShapesOftenValid) {
  int64_t valid = 0, total = 0;
  auto pass = testing::PassNamed("shrink-shapes");
  for (const hlo_diff::Case& c : TraceCases()) {
    const int64_t n = pass->Count(c);
    for (int64_t k = 0; k < std::min<int64_t>(n, 20); ++k) {
      auto out = testing::Apply(*pass, c, {k});
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      ++total;
      Status v = ValidateCandidate(*out);
      if (v.ok()) {
        ++valid;
        EXPECT_LT(MeasureCase(*out).elements, MeasureCase(c).elements);
      }
    }
  }
  EXPECT_GT(total, 10);
  EXPECT_GE(valid * 2, total) << valid << " of " << total;
}

TEST(PassTracesTest, GreedyReducesARealModelToTheDot) {
  const std::string text = testing::TraceModules(
      "hlo/translate/hlo_to_mhlo/tests/fully_connected_reference_model.hlo")[0];
  hlo_diff::Case c = CaseOf(text, 9);
  const CaseSize before = MeasureCase(c);
  int64_t tests = 0;
  hlo_diff::Case out = testing::GreedyReduce(
      AllReductionPasses(), c,
      [](const hlo_diff::Case& k) { return testing::HasOpcode(k, "dot"); },
      &tests);
  const CaseSize after = MeasureCase(out);
  EXPECT_TRUE(testing::HasOpcode(out, "dot"));
  EXPECT_GT(before.instructions, 30);
  EXPECT_LE(after.instructions, 3) << out.module_text;
  EXPECT_LE(after.elements, 8) << out.module_text;
  EXPECT_LT(tests, 2000);
}

// The zoo's witnesses, as the reducer gets them: every pass counts, its
// single opportunities and all of them at once apply without a crash and,
// but for shrink-shapes, give valid candidates.
TEST(PassTracesTest, BugZooWitnesses) {
  const std::string zoo = std::string(TRENCH_SOURCE_DIR) + "/tests/bugzoo/";
  int64_t cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(zoo)) {
    if (!std::filesystem::exists(entry.path() / "witness")) continue;
    auto c = hlo_diff::ReadCase((entry.path() / "witness").string());
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    ++cases;
    for (const auto& pass : AllReductionPasses()) {
      const bool must_be_valid = pass->name() != "shrink-shapes";
      const int64_t n = pass->Count(*c);
      std::vector<std::vector<int64_t>> choices = {testing::Iota(n)};
      for (int64_t k = 0; k < std::min<int64_t>(n, 12); ++k) {
        choices.push_back({k});
      }
      for (const auto& chosen : choices) {
        auto out = pass->Apply(*c, chosen);
        if (!out.ok()) {
          EXPECT_EQ(out.status().code(), StatusCode::kFailedPrecondition)
              << entry.path() << " " << pass->name() << ": "
              << out.status().ToString();
          continue;
        }
        if (must_be_valid) {
          EXPECT_TRUE(ValidateCandidate(*out).ok())
              << entry.path() << " " << pass->name() << "\n"
              << out->module_text;
        }
      }
    }
  }
  EXPECT_GE(cases, 12);
}

// Bug 05's witness (exp(x) - exp(x), whose Inf - Inf must stay NaN) with
// an oracle-only stand-in for "still the same bug": an exponential and a
// subtract remain and the result has a NaN that no input has. (A bare
// "the result has a NaN" slips to a NaN input: the real test compares
// signatures.) The inputs that make the Inf survive; the rest shrinks.
TEST(PassTracesTest, GreedyKeepsTheInfOfBug05) {
  auto c =
      hlo_diff::ReadCase(std::string(TRENCH_SOURCE_DIR) +
                         "/tests/bugzoo/05-algsimp-sub-self-float/witness");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  auto any_nan = [](const Literal& l) {
    for (int64_t j = 0; j < l.element_count(); ++j) {
      if (std::isnan(l.GetAsDouble(j))) return true;
    }
    return false;
  };
  auto has_nan = [&](const hlo_diff::Case& k) {
    for (const Literal& in : k.inputs) {
      if (any_nan(in)) return false;
    }
    if (!testing::HasOpcode(k, "exponential") ||
        !testing::HasOpcode(k, "subtract")) {
      return false;
    }
    auto r = testing::Run(k);
    return r.ok() && r->shape().IsArray() && any_nan(*r);
  };
  ASSERT_TRUE(has_nan(*c));
  hlo_diff::Case out = testing::GreedyReduce(AllReductionPasses(), *c, has_nan);
  EXPECT_TRUE(has_nan(out));
  EXPECT_TRUE(testing::HasOpcode(out, "subtract")) << out.module_text;
  EXPECT_LE(MeasureCase(out).instructions, 4) << out.module_text;
  EXPECT_LE(MeasureCase(out).elements, 4 * 8) << out.module_text;
  EXPECT_LT(MeasureCase(out).elements, MeasureCase(*c).elements / 16);
}

}  // namespace
}  // namespace trench::hlo_reduce
