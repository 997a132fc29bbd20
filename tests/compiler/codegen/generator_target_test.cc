// Programs of the fuzzer's synthetic generator (tools/hlo-fuzz) through the
// target: compile (Compile: passes + codegen), run on the simulator, compare
// with the oracle under the numerics contract (oracle/numerics_contract.h).
//
// Each test fails on a compile error that is not a refusal
// (Unimplemented/ResourceExhausted), a run that does not end ok, an oracle
// that cannot evaluate a generated program, or a disagreement beyond the
// numerics contract's bounds:
// - SmokeMixedPrograms: 24 mixed programs of 6 ops;
// - GeneratorTargetSurvey.EveryOpAndDtype (slow): for every synthetic op
//   and dtype, tiny programs focused on that op (guards and adapters around
//   it); it prints the cells that are refused;
// - GeneratorTargetSurvey.MixedPrograms (slow): 300 mixed programs of 12
//   ops.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "compiler/codegen/compile.h"
#include "compiler/ir/hlo_parser.h"
#include "oracle/numerics_contract.h"
#include "tests/compiler/codegen/codegen_test_util.h"
#include "triage/fuzz/generator.h"

namespace trench::codegen::testing {
namespace {

enum class Outcome {
  kAgree,
  kRefused,
  kCompileError,
  kRunError,
  kMismatch,
  kOracle
};

const char* OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kAgree:
      return "agree";
    case Outcome::kRefused:
      return "refused";
    case Outcome::kCompileError:
      return "compile-error";
    case Outcome::kRunError:
      return "run-error";
    case Outcome::kMismatch:
      return "mismatch";
    default:
      return "oracle-error";
  }
}

// Compiles, runs and compares one case; `why` gets a one-line reason.
Outcome Check(const fuzz::GeneratedCase& c, std::string* why) {
  auto m = ParseHloModule(c.hlo_text);
  if (!m.ok()) {
    *why = m.status().ToString();
    return Outcome::kOracle;
  }
  NumericsOptions no;
  no.evaluator.threads = 1;
  auto expected = EvaluateWithBounds(**m, c.inputs, no);
  if (!expected.ok()) {
    *why = expected.status().ToString();
    return Outcome::kOracle;
  }
  // The whole compiler (pass pipeline, then code generation), as hloc.
  auto compiled = Compile(**m, CompileOptions());
  auto exe = compiled.ok()
                 ? StatusOr<tpu::Executable>(std::move(compiled->executable))
                 : StatusOr<tpu::Executable>(compiled.status());
  if (!exe.ok()) {
    *why = exe.status().message().substr(0, 120);
    return exe.status().code() == StatusCode::kUnimplemented ||
                   exe.status().code() == StatusCode::kResourceExhausted
               ? Outcome::kRefused
               : Outcome::kCompileError;
  }
  auto r = tpu::RunExecutable(*exe, InputBytes(c.inputs));
  if (!r.ok() || r->report.status != tpu::RunStatus::kOk) {
    *why = r.ok() ? r->report.message + " at " + r->report.kernel + ": " +
                        r->report.instruction
                  : r.status().ToString();
    return Outcome::kRunError;
  }
  std::vector<Literal> leaves;
  for (const tpu::OutputBuffer& b : r->outputs) leaves.push_back(ToLiteral(b));
  Literal actual = expected->nominal.shape().IsTuple()
                       ? Literal::Tuple(std::move(leaves))
                       : std::move(leaves.at(0));
  ComparisonResult cmp = CompareWithBounds(actual, *expected);
  if (!cmp.ok()) {
    *why = cmp.ToText().substr(0, 300);
    return Outcome::kMismatch;
  }
  return Outcome::kAgree;
}

TEST(GeneratorTargetTest, SmokeMixedPrograms) {
  std::map<std::string, int> counts;
  for (uint64_t seed = 0; seed < 24; ++seed) {
    fuzz::GeneratorOptions o;
    o.instructions = 6;
    o.max_elements = 2048;
    o.body_instructions = 2;
    auto c = fuzz::GenerateSynthetic(seed, o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    std::string why;
    const Outcome out = Check(*c, &why);
    counts[OutcomeName(out)]++;
    EXPECT_NE(out, Outcome::kOracle) << why << "\n" << c->hlo_text;
    EXPECT_NE(out, Outcome::kCompileError) << why << "\n" << c->hlo_text;
    EXPECT_NE(out, Outcome::kRunError) << why << "\n" << c->hlo_text;
    EXPECT_NE(out, Outcome::kMismatch) << why << "\n" << c->hlo_text;
  }
  for (const auto& [k, n] : counts) std::printf("  %-14s %d\n", k.c_str(), n);
}

// True for the outcomes a correct target may give: agreement or refusal.
bool Acceptable(Outcome o) {
  return o == Outcome::kAgree || o == Outcome::kRefused;
}

TEST(GeneratorTargetSurvey, EveryOpAndDtype) {
  std::map<std::string, int> cells;  // Outcome set -> count.
  int judged = 0;
  for (HloOpcode op : fuzz::SyntheticOps()) {
    const std::string name(OpcodeName(op));
    for (PrimitiveType t : fuzz::AllDtypes()) {
      const std::string dtype(PrimitiveTypeName(t));
      std::set<std::string> seen;
      for (uint64_t seed = 0; seed < 3; ++seed) {
        fuzz::GeneratorOptions o;
        o.instructions = 2;
        o.max_elements = 1024;
        o.body_instructions = 1;
        o.focus = {name};
        o.dtypes = {t};
        auto c = fuzz::GenerateSynthetic(seed, o);
        if (!c.ok()) continue;  // The op has no program of this dtype.
        if (c->hlo_text.find(" " + name + "(") == std::string::npos) continue;
        std::string why;
        const Outcome out = Check(*c, &why);
        ++judged;
        seen.insert(OutcomeName(out));
        EXPECT_TRUE(Acceptable(out))
            << name << " " << dtype << " seed " << seed << ": "
            << OutcomeName(out) << ": " << why << "\n"
            << c->hlo_text;
        if (out == Outcome::kRefused) {
          std::printf("refused %-24s %-5s %s\n", name.c_str(), dtype.c_str(),
                      why.c_str());
        }
      }
      std::string cell;
      for (const std::string& k : seen) cell += (cell.empty() ? "" : "+") + k;
      ++cells[cell.empty() ? "n/a" : cell];
    }
  }
  // The generator makes focused programs for most pairs: a survey that
  // judges almost nothing says nothing.
  EXPECT_GE(judged, 1500);  // 2,280 when this was written.
  std::printf("  programs judged: %d\n", judged);
  for (const auto& [k, n] : cells) {
    std::printf("  cells %-28s %d\n", k.c_str(), n);
  }
}

TEST(GeneratorTargetSurvey, MixedPrograms) {
  std::map<std::string, int> counts;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    fuzz::GeneratorOptions o;
    o.instructions = 12;
    o.max_elements = 4096;
    auto c = fuzz::GenerateSynthetic(seed, o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    std::string why;
    const Outcome out = Check(*c, &why);
    counts[OutcomeName(out)]++;
    EXPECT_TRUE(Acceptable(out))
        << "seed " << seed << ": " << OutcomeName(out) << ": " << why << "\n"
        << c->hlo_text;
  }
  EXPECT_GE(counts["agree"], 250)  // 300 of 300 when this was written.
      << "most mixed programs must compile";
  for (const auto& [k, n] : counts) std::printf("  %-14s %d\n", k.c_str(), n);
}

}  // namespace
}  // namespace trench::codegen::testing
