// The synthetic generator: reproducible, always verifies, evaluates on the
// oracle without unsupported ops or non-finite values, and covers every op
// and dtype it claims.
#include "triage/fuzz/generator.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "compiler/ir/hlo_parser.h"
#include "oracle/evaluator.h"

namespace trench::fuzz {
namespace {

// Number of non-finite float/complex elements in a literal.
int64_t NonFinite(const Literal& l) {
  int64_t n = 0;
  if (l.shape().IsTuple()) {
    for (const Literal& e : l.tuple_elements()) n += NonFinite(e);
    return n;
  }
  const PrimitiveType t = l.element_type();
  if (!IsFloat(t) && !IsComplex(t)) return 0;
  const int64_t count = l.element_count() * (IsComplex(t) ? 2 : 1);
  for (int64_t i = 0; i < count; ++i) {
    double v = 0;
    const uint8_t* p = l.bytes().data();
    switch (t) {
      case PrimitiveType::F16:
        v = F16BitsToF32(reinterpret_cast<const uint16_t*>(p)[i]);
        break;
      case PrimitiveType::BF16:
        v = Bf16BitsToF32(reinterpret_cast<const uint16_t*>(p)[i]);
        break;
      case PrimitiveType::F32:
      case PrimitiveType::C64:
        v = reinterpret_cast<const float*>(p)[i];
        break;
      default:
        v = reinterpret_cast<const double*>(p)[i];
    }
    n += !std::isfinite(v);
  }
  return n;
}

void CollectOps(const HloModule& m, std::set<HloOpcode>* ops,
                std::set<PrimitiveType>* types) {
  for (const HloComputation* c : m.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      ops->insert(i->opcode());
      ForEachLeafShape(
          i->shape(), [&](const Shape& s) { types->insert(s.element_type()); });
    }
  }
}

TEST(GeneratorTest, SameSeedSameProgramAndInputs) {
  GeneratorOptions o;
  o.instructions = 30;
  for (uint64_t seed : {1ull, 42ull, 0xdeadbeefull}) {
    auto a = GenerateSynthetic(seed, o);
    auto b = GenerateSynthetic(seed, o);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    ASSERT_TRUE(b.ok()) << b.status().ToString();
    EXPECT_EQ(a->hlo_text, b->hlo_text);
    ASSERT_EQ(a->inputs.size(), b->inputs.size());
    for (size_t i = 0; i < a->inputs.size(); ++i) {
      EXPECT_TRUE(
          std::equal(a->inputs[i].bytes().begin(), a->inputs[i].bytes().end(),
                     b->inputs[i].bytes().begin(), b->inputs[i].bytes().end()));
    }
    EXPECT_EQ(a->origin.Find("seed")->int64_value(),
              static_cast<int64_t>(seed));
    EXPECT_EQ(a->origin.Find("kind")->string_value(), "synthetic");
  }
  auto c = GenerateSynthetic(2, o);
  auto d = GenerateSynthetic(3, o);
  ASSERT_TRUE(c.ok() && d.ok());
  EXPECT_NE(c->hlo_text, d->hlo_text);
}

TEST(GeneratorTest, OptionsRoundTripThroughJson) {
  GeneratorOptions o;
  o.instructions = 7;
  o.weights["dot"] = 3;
  o.focus = {"reduction", "add"};
  o.dtypes = {PrimitiveType::BF16, PrimitiveType::S8};
  o.allow_nonfinite = true;
  auto back = GeneratorOptions::FromJson(o.ToJson());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToJson().Dump(), o.ToJson().Dump());
  Json bad = o.ToJson();
  bad["dtypes"] = Json(Json::Array{Json("f7")});
  EXPECT_FALSE(GeneratorOptions::FromJson(bad).ok());
}

TEST(GeneratorTest, RejectsUnknownFocusAndEmptyDtypes) {
  GeneratorOptions o;
  o.focus = {"no-such-op"};
  EXPECT_EQ(GenerateSynthetic(1, o).status().code(),
            StatusCode::kInvalidArgument);
  o.focus = {};
  o.weights["nope"] = 1;
  EXPECT_FALSE(GenerateSynthetic(1, o).ok());
}

TEST(GeneratorTest, FocusAndDtypesRestrictTheProgram) {
  GeneratorOptions o;
  o.instructions = 15;
  o.focus = {"sort"};
  o.dtypes = {PrimitiveType::F32};
  for (uint64_t seed = 0; seed < 10; ++seed) {
    auto c = GenerateSynthetic(seed, o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    auto m = ParseHloModule(c->hlo_text);
    ASSERT_TRUE(m.ok());
    std::set<HloOpcode> ops;
    std::set<PrimitiveType> types;
    CollectOps(**m, &ops, &types);
    EXPECT_TRUE(ops.count(HloOpcode::kSort)) << c->hlo_text;
    EXPECT_FALSE(ops.count(HloOpcode::kDot)) << c->hlo_text;
    // f32 values only, plus pred (sort comparators) and s32 (indices).
    for (PrimitiveType t : types) {
      EXPECT_TRUE(t == PrimitiveType::F32 || t == PrimitiveType::PRED ||
                  t == PrimitiveType::S32)
          << PrimitiveTypeName(t) << "\n"
          << c->hlo_text;
    }
  }
}

// Found by the 100,000-program false-alarm campaign: a complex divisor
// whose bound was near the type's limit got an offset of bound + 1 to keep
// its real part >= 1, and the sum's constant (2 * f32 max) did not fit c64.
// Long chains of complex divisions must stay finite in the type.
TEST(GeneratorTest, ComplexDivisorGuardsStayInRange) {
  EXPECT_TRUE(
      GenerateSynthetic(12324550382033465502ull, GeneratorOptions()).ok());
  GeneratorOptions o;
  o.instructions = 40;
  o.focus = {"divide", "add", "multiply"};
  o.dtypes = {PrimitiveType::C64};
  for (uint64_t seed = 0; seed < 40; ++seed) {
    auto c = GenerateSynthetic(seed, o);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
  }
}

// The quality check at scale: 300 programs of 5..40 ops.
TEST(GeneratorTest, ThreeHundredProgramsVerifyEvaluateAndCover) {
  std::set<HloOpcode> ops;
  std::set<PrimitiveType> types;
  int unsupported = 0, nonfinite = 0, other_errors = 0, generator_failures = 0;
  std::map<std::string, int> errors;
  const int kPrograms = 300;
  for (int seed = 0; seed < kPrograms; ++seed) {
    GeneratorOptions o;
    o.instructions = 5 + seed % 36;
    o.max_elements = 1 << 12;
    auto c = GenerateSynthetic(1000 + seed, o);
    if (!c.ok()) {
      if (++generator_failures <= 5) ADD_FAILURE() << c.status().ToString();
      continue;
    }
    auto m = ParseHloModule(c->hlo_text);
    ASSERT_TRUE(m.ok());
    CollectOps(**m, &ops, &types);
    EvaluatorOptions eo;
    eo.threads = 1;
    auto r = Evaluate(**m, c->inputs, eo);
    if (!r.ok()) {
      const bool unsup = r.status().code() == StatusCode::kUnimplemented;
      (unsup ? unsupported : other_errors)++;
      errors[r.status().message().substr(0, 80)]++;
      continue;
    }
    // Programs about special values may compute NaN and inf on purpose.
    if (c->origin.Find("special_values") == nullptr && NonFinite(*r) > 0 &&
        ++nonfinite <= 3) {
      ADD_FAILURE() << "non-finite output, seed " << 1000 + seed << "\n"
                    << c->hlo_text;
    }
  }
  for (const auto& [e, n] : errors) std::printf("  %3d x %s\n", n, e.c_str());
  std::printf(
      "synthetic: %d programs, generator failures %d, unsupported %d, "
      "other errors %d, non-finite %d\n",
      kPrograms, generator_failures, unsupported, other_errors, nonfinite);
  EXPECT_EQ(generator_failures, 0);
  EXPECT_LE(unsupported, kPrograms * 3 / 100);
  EXPECT_EQ(other_errors, 0);
  EXPECT_EQ(nonfinite, 0);
  for (HloOpcode op : SyntheticOps()) {
    EXPECT_TRUE(ops.count(op)) << "never generated: " << OpcodeName(op);
  }
  for (PrimitiveType t : AllDtypes()) {
    EXPECT_TRUE(types.count(t)) << "never generated: " << PrimitiveTypeName(t);
  }
}

TEST(GeneratorTest, GeneratedOpsAreOracleOps) {
  for (HloOpcode op : SyntheticOps()) {
    EXPECT_TRUE(OracleEvaluates(op)) << OpcodeName(op);
  }
  EXPECT_FALSE(OracleEvaluates(HloOpcode::kCustomCall));
  EXPECT_FALSE(OracleEvaluates(HloOpcode::kAllReduce));
  EXPECT_FALSE(OracleEvaluates(HloOpcode::kRng));
}

}  // namespace
}  // namespace trench::fuzz
