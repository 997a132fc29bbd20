// The trace corpus: cutting real dumps, provenance, mutations, and the
// quality of 100 samples from ../shared/traces on the oracle.
#include "triage/fuzz/trace_corpus.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>

#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/verifier.h"
#include "oracle/evaluator.h"
#include "tests/traces_dir.h"
#include "triage/fuzz/mutate.h"

namespace trench::fuzz {
namespace {

constexpr char kModule[] = R"(
HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}

ENTRY e {
  a = f32[512,256] parameter(0)
  b = f32[512,256] parameter(1)
  c = f32[512,256] custom-call(a), custom_call_target="foo"
  m = f32[512,256] multiply(c, b), metadata={op_name="jit(f)/mul" source_file="model.py" source_line=7}
  t = f32[512,256] tanh(m)
  k = f32[] constant(0)
  r = f32[512] reduce(t, k), dimensions={1}, to_apply=add
  ROOT g = pred[512] compare(r, r), direction=GE
}
)";

int64_t NonFinite(const Literal& l) {
  int64_t n = 0;
  if (l.shape().IsTuple()) {
    for (const Literal& e : l.tuple_elements()) n += NonFinite(e);
    return n;
  }
  if (!IsFloat(l.element_type())) return 0;
  for (int64_t i = 0; i < l.element_count(); ++i) {
    n += !std::isfinite(l.GetAsDouble(i));
  }
  return n;
}

TEST(TraceCorpusTest, CutsScalesAndKeepsProvenance) {
  TraceCorpusOptions o;
  o.max_elements = 4096;
  TraceCorpus corpus(o);
  ASSERT_TRUE(corpus.LoadText(kModule, "inline.hlo").ok());
  ASSERT_EQ(corpus.subgraphs().size(), 1u);
  const TraceSubgraph& sg = corpus.subgraphs()[0];
  EXPECT_GT(sg.scale, 1);
  // The custom-call became a parameter; the rest is kept.
  std::set<HloOpcode> ops;
  for (const HloInstruction* i :
       sg.module->entry_computation()->instructions()) {
    ops.insert(i->opcode());
    if (i->shape().IsArray()) {
      EXPECT_LE(i->shape().element_count(), 4096);
    }
  }
  EXPECT_FALSE(ops.count(HloOpcode::kCustomCall));
  EXPECT_TRUE(ops.count(HloOpcode::kMultiply) && ops.count(HloOpcode::kReduce));
  MutationOptions mo;
  mo.max_mutations = 0;
  auto c = corpus.Sample(1, mo);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->origin.Find("kind")->string_value(), "trace");
  EXPECT_EQ(c->origin.Find("file")->string_value(), "inline.hlo");
  EXPECT_EQ(c->origin.Find("scale")->int64_value(), sg.scale);
  const std::string meta = c->origin.Find("metadata")->Dump();
  EXPECT_NE(meta.find("jit(f)/mul"), std::string::npos) << meta;
  EXPECT_NE(meta.find("model.py"), std::string::npos) << meta;
  EXPECT_NE(c->hlo_text.find("jit(f)/mul"), std::string::npos);
}

TEST(TraceCorpusTest, MutationsKeepModulesValid) {
  for (uint64_t seed = 0; seed < 20; ++seed) {
    Rng rng(seed);
    auto m = ParseHloModule(kModule);
    ASSERT_TRUE(m.ok());
    std::unique_ptr<HloModule> mod = std::move(m).value();
    EXPECT_NE(SwapOp(*mod, rng, false), "");
    EXPECT_TRUE(VerifyModule(*mod).ok()) << VerifyModule(*mod).ToString();
    const std::string d = ChangeDtype(*mod, rng);
    EXPECT_EQ(d.rfind("dtype f32 -> ", 0), 0u) << d;
    EXPECT_TRUE(VerifyModule(*mod).ok()) << VerifyModule(*mod).ToString();
    EXPECT_NE(ChangeLayout(*mod, rng), "");
    EXPECT_NE(PerturbConstant(*mod, rng), "");
    EXPECT_TRUE(VerifyModule(*mod).ok());
    auto donor = ParseHloModule(kModule);
    ASSERT_TRUE(donor.ok());
    const int64_t params = mod->entry_computation()->num_parameters();
    EXPECT_NE(Splice(*mod, **donor, rng), "");
    EXPECT_TRUE(VerifyModule(*mod).ok()) << VerifyModule(*mod).ToString();
    // One parameter replaced by the donor's (three) parameters.
    EXPECT_EQ(mod->entry_computation()->num_parameters(), params - 1 + 2);
  }
}

// A tuple-shaped parameter (a cut-off call's result) takes one input per
// array leaf, the form cases take.
TEST(TraceCorpusTest, InputsAreArrayLeaves) {
  auto m = ParseHloModule(R"(
HloModule m
ENTRY e {
  p = (bf16[2,3], pred[2,3]) parameter(0)
  q = f32[4] parameter(1)
  ROOT g = bf16[2,3] get-tuple-element(p), index=0
}
)");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  const std::vector<Literal> in = TraceInputs(**m, 5);
  ASSERT_EQ(in.size(), 3u);
  EXPECT_EQ(in[0].shape().ToString(), "bf16[2,3]");
  EXPECT_EQ(in[1].shape().ToString(), "pred[2,3]");
  EXPECT_EQ(in[2].shape().ToString(), "f32[4]");
}

// Complex values have no order: swaps never make maximum or minimum of
// them, and compares of them stay (in)equalities.
TEST(TraceCorpusTest, SwapsKeepComplexOpsValid) {
  for (uint64_t seed = 0; seed < 40; ++seed) {
    auto m = ParseHloModule(R"(
HloModule m
ENTRY e {
  a = c64[4] parameter(0)
  b = c64[4] parameter(1)
  s = c64[4] add(a, b)
  ROOT c = pred[4] compare(s, b), direction=EQ
}
)");
    ASSERT_TRUE(m.ok());
    Rng rng(seed);
    SwapOp(**m, rng, false);
    for (const HloInstruction* i : (*m)->entry_computation()->instructions()) {
      EXPECT_NE(i->opcode(), HloOpcode::kMaximum) << seed;
      EXPECT_NE(i->opcode(), HloOpcode::kMinimum) << seed;
      if (i->opcode() == HloOpcode::kCompare) {
        const auto d = i->attrs().comparison_direction;
        EXPECT_TRUE(d == ComparisonDirection::kEq ||
                    d == ComparisonDirection::kNe)
            << seed;
      }
    }
  }
}

const TraceCorpus& Shared() {
  static TraceCorpus* corpus = [] {
    auto* c = new TraceCorpus();
    Status s = c->Load({std::string(TRENCH_TRACES_DIR)});
    EXPECT_TRUE(s.ok()) << s.ToString();
    return c;
  }();
  return *corpus;
}

// Suites reading all of shared/traces are named TracesTest (label "slow").
TEST(TracesTest, SamplesAreDeterministic) {
  const TraceCorpus& corpus = Shared();
  ASSERT_GT(corpus.subgraphs().size(), 0u);
  MutationOptions mo;
  for (uint64_t seed : {3ull, 77ull}) {
    auto a = corpus.Sample(seed, mo), b = corpus.Sample(seed, mo);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->hlo_text, b->hlo_text);
    EXPECT_EQ(a->origin.Dump(), b->origin.Dump());
    ASSERT_EQ(a->inputs.size(), b->inputs.size());
    for (size_t i = 0; i < a->inputs.size(); ++i) {
      EXPECT_TRUE(a->inputs[i] == b->inputs[i]);
    }
  }
}

TEST(TracesTest, HundredSamplesEvaluateOnTheOracle) {
  const TraceCorpus& corpus = Shared();
  const TraceLoadStats& st = corpus.stats();
  std::printf(
      "traces: %lld files, %lld modules (%lld unparsable), %lld "
      "subgraphs, %lld duplicates, %lld unscalable\n",
      (long long)st.files, (long long)st.modules, (long long)st.parse_failures,
      (long long)st.subgraphs, (long long)st.duplicates,
      (long long)st.unscalable);
  EXPECT_GE(st.files, 150);
  EXPECT_GE(st.subgraphs, 200);
  MutationOptions mo;
  int unsupported = 0, errors = 0, nonfinite = 0;
  std::set<std::string> files, kinds;
  std::map<std::string, int> messages;
  const int kSamples = 100;
  for (int seed = 0; seed < kSamples; ++seed) {
    auto c = corpus.Sample(seed, mo);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    files.insert(c->origin.Find("file")->string_value());
    for (const Json& m : c->origin.Find("mutations")->array()) {
      kinds.insert(m.string_value().substr(0, m.string_value().find(' ')));
    }
    auto m = ParseHloModule(c->hlo_text);
    ASSERT_TRUE(m.ok());
    EvaluatorOptions eo;
    eo.threads = 1;
    eo.max_while_iterations = 10000;
    auto r = Evaluate(**m, c->inputs, eo);
    if (!r.ok()) {
      (r.status().code() == StatusCode::kUnimplemented ? unsupported
                                                       : errors)++;
      messages[r.status().message().substr(0, 90)]++;
      continue;
    }
    if (NonFinite(*r) > 0) {
      ++nonfinite;
      std::printf("  non-finite: %s\n",
                  c->origin.Dump().substr(0, 400).c_str());
    }
  }
  for (const auto& [e, n] : messages) std::printf("  %3d x %s\n", n, e.c_str());
  std::printf(
      "traces: %d samples from %zu files, unsupported %d, errors %d, "
      "non-finite outputs %d\n",
      kSamples, files.size(), unsupported, errors, nonfinite);
  EXPECT_LE(unsupported, kSamples * 3 / 100);
  EXPECT_EQ(errors, 0);
  EXPECT_GE(files.size(), 30u);
  for (const char* k : {"swap", "dtype", "layout", "constant", "splice"}) {
    EXPECT_TRUE(kinds.count(k)) << "no " << k << " mutation in 100 samples";
  }
}

}  // namespace
}  // namespace trench::fuzz
