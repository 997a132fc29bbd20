// Interesting values and boundary shapes in generated programs: each
// feature occurs at a non-trivial rate over a few hundred programs (as
// measured by features.h from the programs' text and inputs), the
// programs still parse and verify, and on the clean target they pass
// the oracle comparison.
#include <gtest/gtest.h>

#include <filesystem>

#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/verifier.h"
#include "triage/fuzz/campaign.h"
#include "triage/fuzz/features.h"
#include "triage/fuzz/generator.h"
#include "triage/fuzz/interesting_values.h"
#include "triage/fuzz/mutate.h"

namespace trench::fuzz {
namespace {

namespace fs = std::filesystem;

// 1000 default programs, measured once for all tests of this file.
const FeatureRun& Run1000() {
  static const FeatureRun* run = [] {
    GeneratorOptions o;
    return new FeatureRun(MeasureFeatures(91000, 1000, o, nullptr, 0, {}));
  }();
  return *run;
}

double Share(const std::string& key) {
  const FeatureHistogram& h = Run1000().synthetic;
  return static_cast<double>(h.count(key)) / h.programs();
}

TEST(EdgeValuesTest, EveryProgramParsesAndIsCounted) {
  EXPECT_EQ(Run1000().errors, 0) << Run1000().first_error;
  EXPECT_EQ(Run1000().synthetic.programs(), 1000);
}

TEST(EdgeValuesTest, EveryValueKindOccurs) {
  for (InterestingKind k : AllInterestingKinds()) {
    const std::string name(InterestingKindName(k));
    const double constant = Share("value.const." + name);
    const double input = Share("value.input." + name);
    // NaNs appear only in programs about special values (8%).
    const double floor = InterestingKindFinite(k) ? 0.01 : 0.005;
    EXPECT_GE(constant, floor) << name << " in constants";
    EXPECT_GE(input, floor) << name << " in inputs";
  }
  // Per type: the integer boundaries of each width and the float edges of
  // each format.
  for (const char* key :
       {"value.any.s8.min", "value.any.s16.max", "value.any.s32.min_plus_one",
        "value.any.s32.max_minus_one", "value.any.u8.max", "value.any.u64.max",
        "value.any.u16.shift_count", "value.any.s64.pow2_edge",
        "value.any.f16.max_finite", "value.any.bf16.min_subnormal",
        "value.any.f32.neg_zero", "value.any.f64.min_normal",
        "value.any.f32.epsilon", "value.any.bf16.int_boundary"}) {
    EXPECT_GE(Share(key), 0.005) << key;
  }
}

TEST(EdgeValuesTest, OpsWithEdgeSemanticsReadEdgeOperands) {
  for (const char* op :
       {"shift-left", "shift-right-logical", "shift-right-arithmetic", "divide",
        "remainder", "power", "maximum", "minimum", "clamp", "convert"}) {
    EXPECT_GE(Share(std::string("edge_op.") + op), 0.03) << op;
  }
  double compare = 0;
  for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
    const double s = Share(std::string("edge_op.compare.") + dir);
    EXPECT_GT(s, 0) << dir;
    compare += s;
  }
  EXPECT_GE(compare, 0.1);
  // The three sources, in and out of constant folding's reach.
  EXPECT_GE(Share("edge_op.clamp.constant"), 0.05);
  EXPECT_GE(Share("edge_op.clamp.opaque"), 0.02);
  EXPECT_GE(Share("edge_op.clamp.param"), 0.05);
  EXPECT_GE(Share("edge_op.convert.param"), 0.05);
  EXPECT_GE(Share("fold.in_reach"), 0.05);
  EXPECT_GE(Share("fold.out_of_reach"), 0.3);
  // Converts between many type pairs.
  int pairs = 0;
  for (const auto& [key, n] : Run1000().synthetic.counts()) {
    if (key.rfind("edge_op.convert.", 0) == 0 &&
        std::count(key.begin(), key.end(), '.') == 3) {
      ++pairs;
    }
  }
  EXPECT_GE(pairs, 60);
  // Convert chains through a neighbour type (the simplifier merges them
  // when the inner convert is lossless): also u8 -> s8 -> s32 and kin.
  EXPECT_GE(Share("convert_chain"), 0.03);
  EXPECT_GE(Share("convert_chain.sign_flip"), 0.005);
  EXPECT_GE(Share("convert_chain.narrowing"), 0.005);
  EXPECT_GE(Share("convert_chain.widening"), 0.005);
}

TEST(EdgeValuesTest, ExtentsAroundEachReachableBoundary) {
  for (const char* b : {"sublanes", "lanes", "vreg", "dma_run/4", "dma_run/2",
                        "vmem_align/2"}) {
    for (const char* off : {"-1", "", "+1"}) {
      EXPECT_GE(Share(std::string("dim.") + b + off), 0.01) << b << off;
    }
  }
  EXPECT_GE(Share("program.dim_boundary"), 0.9);
}

TEST(EdgeValuesTest, KnobsTurnTheFeaturesOffAndBoundariesComeFromOptions) {
  GeneratorOptions o;
  o.edge_operands = o.edge_constants = o.edge_inputs = 0;
  o.size_boundaries = {100};
  o.long_row_probability = 0;
  FeatureRun run = MeasureFeatures(92000, 100, o, nullptr, 0, {});
  EXPECT_EQ(run.errors, 0) << run.first_error;
  // Ordinary constants and inputs hold a few interesting values by
  // chance (7, 8, 9 are shift counts of 8-bit types), so only rarely.
  EXPECT_EQ(run.synthetic.count("value.const.signaling_nan"), 0);
  EXPECT_LE(run.synthetic.count("edge_op.shift-left"), 3);
  EXPECT_LE(run.synthetic.count("edge_op.remainder"), 3);
  EXPECT_LE(run.synthetic.count("dim.lanes"), 3);
  // 100 is no boundary of the registry: count the extents directly.
  int64_t near100 = 0;
  for (uint64_t s = 92000; s < 92100; ++s) {
    auto c = GenerateSynthetic(s, o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    near100 += c->hlo_text.find("[100") != std::string::npos ||
               c->hlo_text.find(",100]") != std::string::npos ||
               c->hlo_text.find(",99]") != std::string::npos ||
               c->hlo_text.find("[101") != std::string::npos;
  }
  EXPECT_GE(near100, 10);
  // The options round-trip through JSON.
  auto back = GeneratorOptions::FromJson(o.ToJson());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->size_boundaries, o.size_boundaries);
  EXPECT_EQ(back->edge_operands, 0);
  Json bad = o.ToJson();
  bad["size_boundaries"] = Json::MakeArray();
  bad["size_boundaries"].push_back(0);
  EXPECT_FALSE(GeneratorOptions::FromJson(bad).ok());
}

TEST(EdgeValuesTest, EdgeInputsAreRecordedAndDeterministic) {
  GeneratorOptions o;
  o.edge_inputs = 1;
  int with = 0, params = 0, rare_params = 0;
  for (uint64_t s = 93000; s < 93020; ++s) {
    auto a = GenerateSynthetic(s, o), b = GenerateSynthetic(s, o);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->hlo_text, b->hlo_text);
    ASSERT_EQ(a->inputs.size(), b->inputs.size());
    for (size_t i = 0; i < a->inputs.size(); ++i) {
      EXPECT_TRUE(a->inputs[i] == b->inputs[i]);
    }
    const Json* which = a->origin.Find("edge_inputs");
    if (!which) continue;
    ++with;
    for (const Json& j : which->array()) {
      const Literal& l = a->inputs[*j.GetInt64()];
      ASSERT_GT(l.element_count(), 0);  // Empty inputs are not listed.
      int64_t interesting = 0, rare = 0;
      for (int64_t k = 0; k < l.element_count(); ++k) {
        auto kind = ClassifyInteresting(l, k);
        interesting += kind.has_value();
        rare += kind && *kind != InterestingKind::kZero &&
                *kind != InterestingKind::kOne &&
                *kind != InterestingKind::kTwo;
      }
      EXPECT_GT(interesting, 0);
      ++params;
      rare_params += rare > 0;
    }
  }
  EXPECT_GE(with, 15);
  EXPECT_GE(rare_params, params / 2);
}

TEST(EdgeValuesTest, TraceMutationPutsEdgeValuesUnderEdgeOps) {
  const std::string text = R"(HloModule m
ENTRY e {
  a = s32[4] parameter(0)
  b = s32[4] parameter(1)
  x = f32[64] parameter(2)
  y = f32[64] parameter(3)
  sh = s32[4] shift-left(a, b)
  d = f32[64] divide(x, y)
  ROOT t = (s32[4], f32[64]) tuple(sh, d)
})";
  int constants = 0, divisors = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    auto m = ParseHloModule(text);
    ASSERT_TRUE(m.ok());
    Rng rng(seed);
    const std::string what = EdgeOperand(**m, rng, false);
    ASSERT_FALSE(what.empty());
    EXPECT_EQ(what.rfind("edge %", 0), 0u) << what;
    ASSERT_TRUE(VerifyModule(**m).ok()) << what;
    for (const HloInstruction* i : (*m)->entry_computation()->instructions()) {
      if (i->opcode() != HloOpcode::kConstant) continue;
      ++constants;
      for (int64_t k = 0; k < i->literal().element_count(); ++k) {
        ASSERT_TRUE(ClassifyInteresting(i->literal(), k).has_value());
        if (IsFloat(i->shape().element_type())) {
          // No guards in traces: finite, small, and no tiny divisors.
          const double v = std::fabs(i->literal().GetAsDouble(k));
          EXPECT_LE(v, 4);
          if (what.find("%d operand 1") != std::string::npos) {
            EXPECT_GE(v, 0.5);
            ++divisors;
          }
        }
      }
    }
  }
  EXPECT_EQ(constants, 40);
  EXPECT_GT(divisors, 0);
}

// The clean target against the oracle on programs full of edge values: no
// finding. (This fuzzer found that the simulator's vpow returned NaN for
// pow(-inf, y) with y not an integer, where C99 Annex F says +0 or +inf;
// fixed in tpu/transcendental.cc ApproxPow.)
TEST(EdgeValuesTest, CleanTargetPassesProgramsFullOfEdges) {
  const fs::path out = fs::path(::testing::TempDir()) / "edge_values_campaign";
  fs::remove_all(out);
  CampaignOptions o;
  o.budget_seconds = 900;
  o.max_programs = 150;
  o.jobs = 2;
  o.out_dir = out.string();
  o.seed = 94001;
  o.generator.instructions = 12;
  o.generator.max_elements = 1 << 12;
  o.generator.edge_operands = 0.8;
  o.generator.edge_constants = 0.6;
  o.generator.edge_inputs = 0.4;
  o.generator.special_values = 0.25;
  o.target = hlo_diff::TargetSpec::FromBinaryDir(TRENCH_BINARY_DIR,
                                                 hlo_diff::TargetMode::kServe);
  o.target.timeout_seconds = 120;
  o.localize = false;
  StatusOr<CampaignSummary> s = RunCampaign(o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->programs, 150);
  EXPECT_EQ(s->generator_errors, 0) << s->first_generator_error;
  std::string findings;
  for (const Finding& f : s->findings) findings += f.case_dir + " ";
  EXPECT_TRUE(s->findings.empty()) << findings;
  auto it = s->statuses.find("pass");
  EXPECT_GE(it == s->statuses.end() ? 0 : it->second, 140);
}

}  // namespace
}  // namespace trench::fuzz
