// The graph and fusion levels on scripted tapped runs: tap files written by
// the test (the oracle's values, one of them perturbed) and an optimized
// module with a fusion, so the levels' comparison logic is checked without
// a miscompiling target.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "compiler/ir/npy.h"
#include "tests/triage/case/hlo_diff_test_util.h"
#include "triage/localize/localize.h"

namespace trench::hlo_bisect {
namespace {

namespace fs = std::filesystem;
using hlo_diff::CaseOptions;
using hlo_diff::testing::TempDir;
using hlo_diff::testing::WriteText;

// AddCase's module after a fusion pass: neg and half fused.
constexpr char kFusedModule[] = R"(HloModule add_case

fused_computation {
  param_0 = f32[2,3] parameter(0)
  neg = f32[2,3] negate(param_0)
  ROOT half = bf16[2,3] convert(neg)
}

ENTRY main {
  p0 = f32[2,3] parameter(0)
  p1 = f32[2,3] parameter(1)
  sum = f32[2,3] add(p0, p1)
  fusion = bf16[2,3] fusion(sum), kind=kLoop, calls=fused_computation
  ROOT out = (f32[2,3], bf16[2,3]) tuple(sum, fusion)
}
)";

Literal Values(PrimitiveType t, std::vector<double> v) {
  Literal l(Shape(t, {2, 3}));
  for (size_t i = 0; i < v.size(); ++i) l.SetFromDouble(i, v[i]);
  return l;
}

// A tapped run with the given tap values; full runs fail.
class TapProber : public Prober {
 public:
  explicit TapProber(std::string dir) : dir_(std::move(dir)) {}
  std::map<std::string, Literal> taps;
  std::string optimized = kFusedModule;
  int runs = 0;

  StatusOr<Probe> Run(const CaseOptions& o, bool dump) override {
    ++runs;
    Probe p;
    p.status = "mismatch";
    p.stage = "run";
    if (o.taps != "all") return p;
    const std::string run = dir_ + "/run" + std::to_string(runs);
    p.out_dir = run + "/out";
    fs::create_directories(p.out_dir + "/taps");
    for (const auto& [label, value] : taps) {
      const std::string file = "taps/" + label + ".npy";
      EXPECT_TRUE(WriteNpyFile(p.out_dir + "/" + file, value).ok());
      Json t = Json::MakeObject();
      t["label"] = label;
      t["file"] = file;
      p.taps.push_back(std::move(t));
    }
    if (dump) {
      p.dump_dir = run + "/dump";
      fs::create_directories(p.dump_dir);
      WriteText(p.dump_dir + "/optimized.hlo", optimized);
    }
    return p;
  }

 private:
  std::string dir_;
};

// The oracle's values of AddCase: sum = p0 + p1, neg = -sum, half = bf16.
const std::vector<double> kSum = {1.5, 1, 5.25, 12, 2, 6};
std::vector<double> Neg(std::vector<double> v) {
  for (double& x : v) x = -x;
  return v;
}

void TapEverything(TapProber& t, double neg_offset) {
  std::vector<double> neg = Neg(kSum);
  neg[4] += neg_offset;
  t.taps.emplace("p0", Values(PrimitiveType::F32, {1, 2, 3, 4, 5, 6}));
  t.taps.emplace("sum", Values(PrimitiveType::F32, kSum));
  t.taps.emplace("neg", Values(PrimitiveType::F32, neg));
  t.taps.emplace("half", Values(PrimitiveType::BF16, neg));
  t.taps.emplace("fusion", Values(PrimitiveType::BF16, neg));
}

LocalizeOptions GraphAndFusion() {
  LocalizeOptions o;
  o.pass = o.rewrite = o.callee = o.branch = false;
  return o;
}

TEST(LevelGraphTest, NamesTheFirstDivergingInstructionAndTheFusedMember) {
  TempDir tmp;
  TapProber target(tmp.path());
  TapEverything(target, 0.5);
  StatusOr<Localization> l =
      Localize(hlo_diff::testing::AddCase(), target, GraphAndFusion());
  ASSERT_TRUE(l.ok()) << l.status().message();
  ASSERT_EQ(l->levels.size(), 2u);
  const LevelResult& g = l->levels[0];
  EXPECT_EQ(g.result, "found") << g.summary;
  EXPECT_EQ(l->findings.instruction, "neg");
  EXPECT_EQ(l->findings.opcode, "negate");
  Json& culprit = l->levels[0].evidence["instruction"];
  EXPECT_EQ(culprit["check"]["max_abs_error"].number_value(), 0.5);
  EXPECT_EQ(culprit["check"]["mismatches"].int64_value(), 1);
  EXPECT_EQ(culprit["operands"].array()[0].Find("value")->string_value(),
            "agrees");
  EXPECT_EQ(g.runs, 1);
  EXPECT_EQ(g.linear_runs, 3);  // sum, neg, half (tuples are not values).

  const LevelResult& f = l->levels[1];
  EXPECT_EQ(f.result, "found") << f.summary;
  EXPECT_EQ(l->findings.fusion, "fusion");
  EXPECT_EQ(l->findings.fused_instruction, "neg");
  EXPECT_EQ(l->findings.fused_opcode, "negate");
  EXPECT_EQ(f.runs, 0);
  EXPECT_EQ(l->runs, 2);  // Baseline and the tapped run.
}

TEST(LevelGraphTest, AnExactAddAllowsNoRounding) {
  TempDir tmp;
  TapProber target(tmp.path());
  TapEverything(target, 0);
  // The add of exact, representable values has a zero rounding term in the
  // numerics contract: one f32 ulp off is a divergence (at the add, not at
  // its users).
  target.taps.erase("sum");
  std::vector<double> sum = kSum;
  sum[3] = std::nextafter(12.0f, 13.0f);
  target.taps.emplace("sum", Values(PrimitiveType::F32, sum));
  StatusOr<Localization> l =
      Localize(hlo_diff::testing::AddCase(), target, GraphAndFusion());
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->levels[0].result, "found") << l->levels[0].summary;
  EXPECT_EQ(l->findings.instruction, "sum");
  const Json& check = l->levels[0].evidence["instruction"]["check"];
  EXPECT_LT(check.Find("max_allowed")->number_value(), 1e-30);
  EXPECT_EQ(
      check.Find("first_mismatch")->Find("index")->array()[1].int64_value(), 0);
  // sum is not fused: nothing to look inside.
  EXPECT_EQ(l->levels[1].result, "not_applicable");
}

TEST(LevelGraphTest, RemovedInstructionsAreSkipped) {
  TempDir tmp;
  TapProber target(tmp.path());
  TapEverything(target, 0);
  // neg has no tap (a pass removed it); half is wrong.
  target.taps.erase("neg");
  target.taps.erase("half");
  target.taps.emplace("half", Values(PrimitiveType::BF16, kSum));
  target.optimized = R"(HloModule add_case
ENTRY main {
  p0 = f32[2,3] parameter(0)
  p1 = f32[2,3] parameter(1)
  sum = f32[2,3] add(p0, p1)
  half = bf16[2,3] convert(sum)
  ROOT out = (f32[2,3], bf16[2,3]) tuple(sum, half)
}
)";
  StatusOr<Localization> l =
      Localize(hlo_diff::testing::AddCase(), target, GraphAndFusion());
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->findings.instruction, "half");
  EXPECT_EQ(l->levels[0].evidence["unavailable"].int64_value(), 1);
  Json& culprit = l->levels[0].evidence["instruction"];
  EXPECT_EQ(culprit["operands"].array()[0].Find("value")->string_value(),
            "unavailable");
  EXPECT_EQ(l->levels[1].result, "not_applicable");  // half is not fused.
}

TEST(LevelGraphTest, CrashesHaveNoValues) {
  class Crash : public Prober {
   public:
    StatusOr<Probe> Run(const CaseOptions&, bool) override {
      return Probe{.status = "run_crash", .stage = "run"};
    }
  } target;
  StatusOr<Localization> l =
      Localize(hlo_diff::testing::AddCase(), target, GraphAndFusion());
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->levels[0].result, "not_applicable");
  EXPECT_EQ(l->runs, 1);
}

TEST(AllValuesModuleTest, EveryArrayInstructionInPostOrder) {
  auto m = hlo_diff::ParseCaseModule(kFusedModule, "m");
  ASSERT_TRUE(m.ok());
  std::vector<std::string> names;
  auto all = AllValuesModule(**m, "fused_computation", &names);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(names, (std::vector<std::string>{"neg", "half"}));
  EXPECT_EQ((*all)->entry_computation()->name(), "fused_computation");
  names.clear();
  EXPECT_FALSE(AllValuesModule(**m, "nope", &names).ok());
}

}  // namespace
}  // namespace trench::hlo_bisect
