// The generator's stress knobs: special values, x op x, size-0 dims, long
// rows, reduces with multi-output fusion siblings, and their flags.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "compiler/ir/hlo_parser.h"
#include "oracle/evaluator.h"
#include "triage/fuzz/fuzz_flags.h"
#include "triage/fuzz/generator.h"

namespace trench::fuzz {
namespace {

using P = PrimitiveType;

std::unique_ptr<HloModule> Parse(const GeneratedCase& c) {
  auto m = ParseHloModule(c.hlo_text);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? std::move(*m) : nullptr;
}

// Elements that are inf, NaN, -0 or subnormal.
int64_t SpecialElements(const Literal& l) {
  if (!l.shape().IsArray() || !IsFloat(l.element_type())) return 0;
  int64_t n = 0;
  for (int64_t i = 0; i < l.element_count(); ++i) {
    const double v = l.GetAsDouble(i);
    const bool tiny = v != 0 && std::fabs(v) <= std::ldexp(1.0, -14);
    n += !std::isfinite(v) || (v == 0 && std::signbit(v)) || tiny;
  }
  return n;
}

// Calls f on every instruction of every computation.
template <typename F>
void ForEachInstruction(const HloModule& m, F f) {
  for (const HloComputation* c : m.computations()) {
    for (const HloInstruction* i : c->instructions()) f(*i);
  }
}

TEST(GeneratorStressTest, SpecialValueProgramsSayItAndGetSpecialInputs) {
  GeneratorOptions o;
  o.instructions = 12;
  o.special_values = 1;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto c = GenerateSynthetic(seed, o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    const Json* which = c->origin.Find("special_values");
    ASSERT_NE(which, nullptr) << seed;
    for (const Json& j : which->array()) {
      const int64_t i = j.int64_value();
      ASSERT_LT(i, static_cast<int64_t>(c->inputs.size()));
      EXPECT_GT(SpecialElements(c->inputs[i]), 0) << seed << " input " << i;
    }
    // The oracle evaluates them (NaN and inf are values like any other).
    auto m = Parse(*c);
    ASSERT_NE(m, nullptr);
    EvaluatorOptions eo;
    eo.threads = 1;
    auto r = Evaluate(*m, c->inputs, eo);
    EXPECT_TRUE(r.ok() || r.status().code() == StatusCode::kUnimplemented)
        << r.status().ToString() << "\n"
        << c->hlo_text;
  }
  o.special_values = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto c = GenerateSynthetic(seed, o);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->origin.Find("special_values"), nullptr);
    for (const Literal& l : c->inputs) {
      for (int64_t i = 0; l.shape().IsArray() && IsFloat(l.element_type()) &&
                          i < l.element_count();
           ++i) {
        EXPECT_TRUE(std::isfinite(l.GetAsDouble(i)));
      }
    }
  }
}

TEST(GeneratorStressTest, SameOperandTwice) {
  GeneratorOptions o;
  o.instructions = 20;
  o.focus = {"elementwise_binary"};
  o.same_operand_probability = 1;
  o.special_values = 0;
  int same = 0;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    auto c = GenerateSynthetic(seed, o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    auto m = Parse(*c);
    ASSERT_NE(m, nullptr);
    ForEachInstruction(*m, [&](const HloInstruction& i) {
      const HloOpcode op = i.opcode();
      if ((op == HloOpcode::kSubtract || op == HloOpcode::kAdd ||
           op == HloOpcode::kMultiply || op == HloOpcode::kMaximum) &&
          i.operand(0) == i.operand(1)) {
        ++same;
      }
    });
  }
  EXPECT_GE(same, 20);
}

// Size-0 dims everywhere: every program verifies and the oracle evaluates
// it without errors or non-finite outputs; dots and reduces see them.
TEST(GeneratorStressTest, ZeroSizedDimsAreValidEverywhere) {
  GeneratorOptions o;
  o.zero_dim_probability = 0.5;
  o.special_values = 0;
  o.max_elements = 1 << 12;
  int empty_dots = 0, empty_reduces = 0;
  for (uint64_t seed = 0; seed < 120; ++seed) {
    o.instructions = 5 + seed % 25;
    auto c = GenerateSynthetic(500 + seed, o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    auto m = Parse(*c);
    ASSERT_NE(m, nullptr);
    ForEachInstruction(*m, [&](const HloInstruction& i) {
      if (i.opcode() == HloOpcode::kDot &&
          i.operand(0)->shape().element_count() == 0) {
        ++empty_dots;
      }
      if (i.opcode() == HloOpcode::kReduce &&
          i.operand(0)->shape().element_count() == 0) {
        ++empty_reduces;
      }
    });
    EvaluatorOptions eo;
    eo.threads = 1;
    auto r = Evaluate(*m, c->inputs, eo);
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), StatusCode::kUnimplemented)
          << r.status().ToString() << "\n"
          << c->hlo_text;
      continue;
    }
    for (const Literal* l : r->Leaves()) {
      for (int64_t k = 0; IsFloat(l->element_type()) && k < l->element_count();
           ++k) {
        ASSERT_TRUE(std::isfinite(l->GetAsDouble(k)))
            << "seed " << 500 + seed << "\n"
            << c->hlo_text;
      }
    }
  }
  EXPECT_GT(empty_dots, 0);
  EXPECT_GT(empty_reduces, 0);
}

TEST(GeneratorStressTest, LongRowsStayWithinTheElementBudget) {
  GeneratorOptions o;
  o.long_row_probability = 1;
  o.large_probability = 0;  // Large programs have a budget of their own.
  o.focus = {"reduce"};
  o.instructions = 6;
  int long_reduces = 0;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    auto c = GenerateSynthetic(seed, o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    auto m = Parse(*c);
    ASSERT_NE(m, nullptr);
    ForEachInstruction(*m, [&](const HloInstruction& i) {
      if (!i.shape().IsArray()) return;
      EXPECT_LE(i.shape().element_count(), o.max_elements);
      if (i.opcode() == HloOpcode::kReduce) {
        const Shape& s = i.operand(0)->shape();
        if (s.rank() >= 1 && s.dim(s.rank() - 1) >= 1024) ++long_reduces;
      }
    });
  }
  EXPECT_GE(long_reduces, 10);
}

// Large programs: the first input is streamed-sized around the largest
// size boundary b (the stream chunk), arrays stay within about 3b + 1
// elements. Whether a program is large comes from a
// stream of its own: the programs that are not large are the same with or
// without large ones.
TEST(GeneratorStressTest, LargeProgramsReachTheStreamingSizes) {
  GeneratorOptions o;
  o.large_probability = 1;
  const int64_t b = 32768;  // size_boundaries.def kStreamChunk.
  const std::set<int64_t> streamed = {2 * b - 1, 2 * b, 2 * b + 1, 3 * b};
  for (uint64_t seed = 0; seed < 12; ++seed) {
    auto c = GenerateSynthetic(seed, o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    EXPECT_EQ(*c->origin.Find("large"), Json(true));
    auto m = Parse(*c);
    ASSERT_NE(m, nullptr);
    const HloComputation& entry = *m->entry_computation();
    const int64_t first =
        entry.parameter_instruction(0)->shape().element_count();
    // Rank 2 splits n into rows of n / rows (rounded down).
    bool near = false;
    for (int64_t n : streamed) near |= first <= n && first * 9 / 8 >= n;
    EXPECT_TRUE(near) << first;
    // (A concatenate may append a few elements past the budget.)
    ForEachInstruction(*m, [&](const HloInstruction& i) {
      if (i.shape().IsArray()) {
        EXPECT_LE(i.shape().element_count(), 3 * b + 64) << i.ShortString();
      }
    });
  }
  // A size of the target's own (hloc's "large_arrays" from_elements).
  GeneratorOptions sized;
  sized.large_probability = 1;
  sized.large_elements = 5000;
  const std::set<int64_t> around = {4999, 5000, 5001, 7500};
  for (uint64_t seed = 0; seed < 12; ++seed) {
    auto c = GenerateSynthetic(seed, sized);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    auto m = Parse(*c);
    ASSERT_NE(m, nullptr);
    const int64_t first = m->entry_computation()
                              ->parameter_instruction(0)
                              ->shape()
                              .element_count();
    bool near = false;
    for (int64_t n : around) near |= first <= n && first * 9 / 8 >= n;
    EXPECT_TRUE(near) << first;
    EXPECT_EQ(c->origin.Find("options")->Find("large_elements")->int64_value(),
              5000);
  }
  // Module attributes go into the large programs' header, and only theirs.
  sized.large_attributes = {{"trench_vmem_bytes", "65536"}};
  auto with = GenerateSynthetic(3, sized);
  ASSERT_TRUE(with.ok()) << with.status().ToString();
  EXPECT_EQ(with->hlo_text.substr(0, with->hlo_text.find('\n'))
                .find(", frontend_attributes={trench_vmem_bytes=\"65536\"}"),
            with->hlo_text.find(','))
      << with->hlo_text.substr(0, 120);
  ASSERT_NE(Parse(*with), nullptr);
  GeneratorOptions small = sized;
  small.large_probability = 0;
  auto without = GenerateSynthetic(3, small);
  ASSERT_TRUE(without.ok());
  EXPECT_EQ(without->hlo_text.find("frontend_attributes"), std::string::npos);
  sized.large_attributes = {{"trench_vmem_bytes", "1\"}"}};
  EXPECT_FALSE(GenerateSynthetic(1, sized).ok());
  sized.large_attributes.clear();
  sized.large_elements = GeneratorOptions::kMaxLargeElements + 1;
  EXPECT_FALSE(GenerateSynthetic(1, sized).ok());
  GeneratorOptions some;  // The default share.
  GeneratorOptions none;
  none.large_probability = 0;
  int large = 0;
  for (uint64_t seed = 0; seed < 600; ++seed) {
    auto a = GenerateSynthetic(seed, some);
    auto z = GenerateSynthetic(seed, none);
    ASSERT_TRUE(a.ok() && z.ok());
    if (a->origin.Find("large")) {
      ++large;
      continue;
    }
    EXPECT_EQ(a->hlo_text, z->hlo_text) << seed;
  }
  EXPECT_GT(large, 0);
  EXPECT_LT(large, 24);
}

// Multi-output fusion siblings: the root tuple holds, next to a reduce of
// (an elementwise op of) x, elementwise ops of x's dims and of the reduce
// result's dims.
TEST(GeneratorStressTest, ReducesComeWithSiblingOutputs) {
  GeneratorOptions o;
  o.sibling_probability = 1;
  o.focus = {"reduce"};
  o.instructions = 3;
  int input_like = 0, result_like = 0;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    auto c = GenerateSynthetic(seed, o);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    auto m = Parse(*c);
    ASSERT_NE(m, nullptr);
    const HloInstruction* root = m->entry_computation()->root_instruction();
    if (root->opcode() != HloOpcode::kTuple) continue;
    std::set<std::vector<int64_t>> in_dims, out_dims;
    ForEachInstruction(*m, [&](const HloInstruction& i) {
      if (i.opcode() == HloOpcode::kReduce && i.shape().IsArray()) {
        in_dims.insert(i.operand(0)->shape().dims());
        out_dims.insert(i.shape().dims());
      }
    });
    for (const HloInstruction* out : root->operands()) {
      if (!IsElementwise(out->opcode())) continue;
      input_like += in_dims.count(out->shape().dims()) > 0;
      result_like += out_dims.count(out->shape().dims()) > 0;
    }
  }
  EXPECT_GE(input_like, 5);
  EXPECT_GE(result_like, 5);
}

TEST(GeneratorStressTest, FlagsSetTheKnobs) {
  const char* argv[] = {"hlo-fuzz",        "--special-values", "0.5",
                        "--zero-dims=0.2", "--long-rows",      "1"};
  StatusOr<FuzzFlags> f = ParseFuzzFlags(6, const_cast<char**>(argv));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->campaign.generator.special_values, 0.5);
  EXPECT_EQ(f->campaign.generator.zero_dim_probability, 0.2);
  EXPECT_EQ(f->campaign.generator.long_row_probability, 1);
  const char* bad[] = {"hlo-fuzz", "--special-values=1.5"};
  EXPECT_FALSE(ParseFuzzFlags(2, const_cast<char**>(bad)).ok());
  // The knobs travel in the origin's options.
  GeneratorOptions o;
  o.special_values = 0.25;
  o.sibling_probability = 0.75;
  auto back = GeneratorOptions::FromJson(o.ToJson());
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->special_values, 0.25);
  EXPECT_EQ(back->sibling_probability, 0.75);
}

}  // namespace
}  // namespace trench::fuzz
