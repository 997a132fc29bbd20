// Compile(): the pass pipeline in front of the code generator, and the
// bisection hooks it honours (--pass-limit, --disable-passes,
// --rewrite-limit, taps across optimization).
#include <algorithm>
#include <filesystem>
#include <string>

#include "compiler/ir/hlo_equal.h"
#include "compiler/ir/hlo_printer.h"
#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

// algsimp has work (x*1, x+0), cse has work (two equal exponentials) and
// dce removes what they leave behind.
constexpr char kModule[] = R"(
HloModule pipeline
ENTRY e {
  a = f32[7,130] parameter(0)
  one = f32[] constant(1)
  ones = f32[7,130] broadcast(one), dimensions={}
  zero = f32[] constant(0)
  zeros = f32[7,130] broadcast(zero), dimensions={}
  m = f32[7,130] multiply(a, ones)
  s = f32[7,130] add(m, zeros)
  e1 = f32[7,130] exponential(s)
  e2 = f32[7,130] exponential(s)
  ROOT r = f32[7,130] subtract(e1, e2)
}
)";

// Runs the compiled executable on the seed's inputs and compares the
// result with the oracle's value of the ORIGINAL module.
void ExpectRunsLikeOracle(const HloModule& original, const tpu::Executable& exe,
                          uint64_t seed) {
  std::vector<Literal> args =
      RandomArguments(*original.entry_computation(), seed);
  auto expected = Evaluate(original, args);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  tpu::RunResult r = testing::Run(exe, args);
  ASSERT_EQ(r.report.status, tpu::RunStatus::kOk) << r.report.message;
  ASSERT_EQ(r.outputs.size(), 1u);
  ComparisonResult c =
      CompareLiterals(testing::ToLiteral(r.outputs[0]), *expected);
  EXPECT_TRUE(c.ok()) << c.ToText();
}

int64_t Executions(const Compilation& c) {
  int64_t n = 0;
  for (const PassRunStats& st : c.passes) {
    n += !st.skipped && !st.required;
  }
  return n;
}

TEST(CompilePipelineTest, DefaultPipelineOptimizesAndStaysCorrect) {
  auto m = testing::Parse(kModule);
  ASSERT_NE(m, nullptr);
  auto c = Compile(*m, CompileOptions());
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(ModulesEqual(*m, *c->optimized));
  EXPECT_LT(c->optimized->entry_computation()->instruction_count(),
            m->entry_computation()->instruction_count());
  EXPECT_GT(c->pass_executions, 0);
  EXPECT_GT(c->rewrites_allowed, 0);
  ExpectRunsLikeOracle(*m, c->executable, 1);
}

TEST(CompilePipelineTest, PassLimitZeroCompilesTheUnoptimizedProgram) {
  auto m = testing::Parse(kModule);
  ASSERT_NE(m, nullptr);
  CompileOptions o;
  o.pass_limit = 0;
  auto c = Compile(*m, o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_TRUE(ModulesEqual(*m, *c->optimized)) << PrintHloModule(*c->optimized);
  EXPECT_EQ(c->pass_executions, 0);
  EXPECT_EQ(Executions(*c), 0);
  EXPECT_FALSE(c->buffer_assignment);
  // The same executable as the back end alone builds from the input.
  CompileOptions raw;
  raw.buffer_assignment = false;
  auto direct = CompileModule(*m, raw);
  ASSERT_TRUE(direct.ok()) << direct.status().ToString();
  EXPECT_EQ(tpu::WriteExecutable(c->executable), tpu::WriteExecutable(*direct));
  ExpectRunsLikeOracle(*m, c->executable, 2);
}

TEST(CompilePipelineTest, PassLimitRunsExactlyThatManyExecutions) {
  auto m = testing::Parse(kModule);
  ASSERT_NE(m, nullptr);
  auto full = Compile(*m, CompileOptions());
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  for (int64_t n = 1; n <= full->pass_executions; ++n) {
    CompileOptions o;
    o.pass_limit = n;
    auto c = Compile(*m, o);
    ASSERT_TRUE(c.ok()) << n << ": " << c.status().ToString();
    EXPECT_EQ(c->pass_executions, n);
    EXPECT_EQ(Executions(*c), n);
    ExpectRunsLikeOracle(*m, c->executable, 3);
  }
}

TEST(CompilePipelineTest, DisabledPassesDoNotRun) {
  auto m = testing::Parse(kModule);
  ASSERT_NE(m, nullptr);
  CompileOptions o;
  o.disabled_passes = {"algsimp", "cse"};
  auto c = Compile(*m, o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  for (const PassRunStats& st : c->passes) {
    if (st.pass == "algsimp" || st.pass == "cse") {
      EXPECT_TRUE(st.skipped) << st.pass;
    }
  }
  // Both exponentials survive without cse; the multiply without algsimp
  // (in the entry or inside a fusion).
  auto present = [&](const std::string& name) {
    for (const HloComputation* comp : c->optimized->computations()) {
      if (comp->GetInstructionWithName(name) != nullptr) return true;
    }
    return false;
  };
  EXPECT_TRUE(present("e2"));
  EXPECT_TRUE(present("m"));
  ExpectRunsLikeOracle(*m, c->executable, 4);
  o.disabled_passes = {"no-such-pass"};
  auto bad = Compile(*m, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("no-such-pass"), std::string::npos);
}

TEST(CompilePipelineTest, RewriteLimitAllowsExactlyNRewritesAndNamesTheLast) {
  auto m = testing::Parse(kModule);
  ASSERT_NE(m, nullptr);
  auto full = Compile(*m, CompileOptions());
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  const int64_t total = full->rewrites_allowed;
  ASSERT_GE(total, 3);
  CompileOptions zero;
  zero.rewrite_limit = 0;
  auto none = Compile(*m, zero);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->rewrites_allowed, 0);
  EXPECT_TRUE(ModulesEqual(*m, *none->optimized))
      << PrintHloModule(*none->optimized);
  for (int64_t n = 1; n <= total; ++n) {
    CompileOptions o;
    o.rewrite_limit = n;
    auto c = Compile(*m, o);
    ASSERT_TRUE(c.ok()) << n << ": " << c.status().ToString();
    EXPECT_EQ(c->rewrites_allowed, n);
    // The n-th allowed decision of the limited run is the n-th allowed
    // decision of the full run: the counter names one rewrite.
    std::vector<const RewriteDecision*> limited, unlimited;
    for (const RewriteDecision& d : c->decisions) {
      if (d.allowed) limited.push_back(&d);
    }
    for (const RewriteDecision& d : full->decisions) {
      if (d.allowed) unlimited.push_back(&d);
    }
    ASSERT_EQ(limited.size(), static_cast<size_t>(n));
    EXPECT_EQ(limited.back()->pass, unlimited[n - 1]->pass);
    EXPECT_EQ(limited.back()->site, unlimited[n - 1]->site);
    EXPECT_EQ(limited.back()->instruction, unlimited[n - 1]->instruction);
    ExpectRunsLikeOracle(*m, c->executable, 5);
  }
}

TEST(CompilePipelineTest, TapsOfRemovedInstructionsAreReportedNotFatal) {
  auto m = testing::Parse(kModule);
  ASSERT_NE(m, nullptr);
  CompileOptions o;
  o.taps = {"e1", "e2", "r"};
  auto c = Compile(*m, o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  // cse keeps one of the two exponentials.
  EXPECT_EQ(c->taps_unavailable.size(), 1u);
  o.taps = {"missing"};
  auto bad = Compile(*m, o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kNotFound);
  // With the pipeline off every tap is available and equals the oracle.
  o.taps = {"e1", "e2", "m", "s"};
  o.pass_limit = 0;
  auto raw = Compile(*m, o);
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  EXPECT_TRUE(raw->taps_unavailable.empty());
  std::vector<Literal> args = RandomArguments(*m->entry_computation(), 6);
  auto expected = EvaluateWithTaps(*m, args, o.taps);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  tpu::RunResult r = testing::Run(raw->executable, args);
  ASSERT_EQ(r.report.status, tpu::RunStatus::kOk) << r.report.message;
  ASSERT_EQ(r.taps.size(), o.taps.size());
  for (size_t i = 0; i < r.taps.size(); ++i) {
    const Literal* want = nullptr;
    for (const auto& [name, lit] : expected->taps) {
      if (name == r.taps[i].label) want = &lit;
    }
    ASSERT_NE(want, nullptr) << r.taps[i].label;
    ComparisonResult cmp = CompareLiterals(testing::ToLiteral(r.taps[i]), *want,
                                           testing::F32Ulps(4));
    EXPECT_TRUE(cmp.ok()) << r.taps[i].label << ": " << cmp.ToText();
  }
}

TEST(CompilePipelineTest, PassDumpsFollowTheExecutions) {
  auto m = testing::Parse(kModule);
  ASSERT_NE(m, nullptr);
  const std::string dir =
      ::testing::TempDir() + "/compile_pipeline_dumps_" +
      std::to_string(::testing::UnitTest::GetInstance()->random_seed());
  CompileOptions o;
  o.pass_dump_dir = dir;
  o.pass_limit = 2;
  auto c = Compile(*m, o);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    if (f.find(".required.") == std::string::npos) files.push_back(f);
  }
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 3u);
  EXPECT_EQ(files[0], "00.input.hlo");
  EXPECT_EQ(files[1].substr(0, 3), "01.");
  EXPECT_EQ(files[2].substr(0, 3), "02.");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trench::codegen
