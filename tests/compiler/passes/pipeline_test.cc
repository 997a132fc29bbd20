#include "compiler/passes/pipeline.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/passes/dce.h"
#include "compiler/passes/pass_registry.h"
#include "tests/compiler/passes/pass_test_util.h"

namespace trench {
namespace {

using testing::Parse;
using testing::Root;

constexpr char kModule[] = R"(
HloModule m
ENTRY e {
  p = s32[4] parameter(0)
  z = s32[4] constant({0, 0, 0, 0})
  a = s32[4] add(p, z)
  b = s32[4] add(p, z)
  c = s32[] constant(2)
  d = s32[] multiply(c, c)
  bd = s32[4] broadcast(d), dimensions={}
  dead = s32[4] negate(p)
  ROOT r = s32[4] multiply(a, bd)
})";

// A pass that changes the module but can be told to lie about it.
class RenamePass : public HloPass {
 public:
  RenamePass(bool change, bool report) : change_(change), report_(report) {}
  std::string_view name() const override { return "rename"; }
  StatusOr<bool> Run(HloModule* module, PassContext* ctx) override {
    if (change_) Root(*module)->set_name(Root(*module)->name() + "_x");
    return report_;
  }

 private:
  bool change_, report_;
};

// A pass that breaks the module (wrong shape on the root).
class BreakPass : public HloPass {
 public:
  std::string_view name() const override { return "break"; }
  StatusOr<bool> Run(HloModule* module, PassContext* ctx) override {
    Root(*module)->set_shape(Shape(PrimitiveType::F32, {7}));
    return true;
  }
};

TEST(PassContextTest, CountsAndLogsDecisions) {
  PassContext ctx(2);
  EXPECT_TRUE(ctx.ShouldRewrite("a", "s1", "i1"));
  EXPECT_TRUE(ctx.ShouldRewrite("b", "s2", "i2"));
  EXPECT_FALSE(ctx.ShouldRewrite("a", "s1", "i3"));
  EXPECT_FALSE(ctx.ShouldRewrite("a", "s1", "i4"));
  ASSERT_EQ(ctx.decisions().size(), 4u);
  EXPECT_EQ(ctx.decisions()[1].pass, "b");
  EXPECT_EQ(ctx.decisions()[1].site, "s2");
  EXPECT_EQ(ctx.decisions()[1].instruction, "i2");
  EXPECT_EQ(ctx.decisions()[3].index, 3);
  EXPECT_EQ(ctx.LastAllowed()->instruction, "i2");
  PassContext unlimited;
  for (int i = 0; i < 100; ++i)
    EXPECT_TRUE(unlimited.ShouldRewrite("a", "s", "i"));
}

TEST(PassRegistryTest, ListsPassesAndValidatesNames) {
  EXPECT_NE(FindPass("dce"), nullptr);
  EXPECT_NE(FindPass("algsimp"), nullptr);
  EXPECT_NE(FindPass("cse"), nullptr);
  EXPECT_NE(FindPass("constant-folding"), nullptr);
  for (const PassInfo& info : RegisteredPasses()) {
    EXPECT_EQ(info.create()->name(), info.name);
    EXPECT_FALSE(info.description.empty());
  }
  auto ok = ParsePassList("dce, cse,,algsimp");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, (std::vector<std::string>{"dce", "cse", "algsimp"}));
  auto bad = ParsePassList("dce,bogus");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("'bogus'"), std::string::npos);
  EXPECT_NE(bad.status().message().find("algsimp"), std::string::npos);
  EXPECT_FALSE(CreatePass("nope").ok());
}

TEST(PipelineFlagsTest, ParsesFlags) {
  PipelineOptions o;
  EXPECT_TRUE(*ParsePipelineFlag("--disable-passes=dce,cse", &o));
  EXPECT_TRUE(*ParsePipelineFlag("--pass-limit=3", &o));
  EXPECT_TRUE(*ParsePipelineFlag("--rewrite-limit=0", &o));
  EXPECT_TRUE(*ParsePipelineFlag("--dump-dir=/tmp/x", &o));
  EXPECT_FALSE(*ParsePipelineFlag("--other=1", &o));
  EXPECT_EQ(o.disabled_passes, (std::vector<std::string>{"dce", "cse"}));
  EXPECT_EQ(o.pass_limit, 3);
  EXPECT_EQ(o.rewrite_limit, 0);
  EXPECT_EQ(o.dump_dir, "/tmp/x");
  EXPECT_FALSE(ParsePipelineFlag("--pass-limit=x", &o).ok());
  EXPECT_FALSE(ParsePipelineFlag("--pass-limit=-1", &o).ok());
  EXPECT_FALSE(ParsePipelineFlag("--disable-passes=dce,nope", &o).ok());
}

TEST(PipelineTest, DefaultPipelineSimplifiesAndRecordsStats) {
  auto m = Parse(kModule);
  auto before = m->Clone();
  auto pipeline = PassPipeline::CreateDefault({});
  PassContext ctx = pipeline->MakeContext();
  auto r = pipeline->Run(m.get(), &ctx);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_TRUE(*r);
  // multiply(p, broadcast(4)) is all that is left besides constants.
  EXPECT_EQ(Root(*m)->opcode(), HloOpcode::kMultiply);
  EXPECT_EQ(Root(*m)->operand(0)->name(), "p");
  EXPECT_EQ(m->entry_computation()->instruction_count(), 3)
      << PrintHloModule(*m);
  testing::ExpectEquivalent(*before, *m);
  // Two rounds at least: the second one finds nothing and ends the group.
  // (Required passes run first and are no executions.)
  std::vector<PassRunStats> stats;
  for (const PassRunStats& st : pipeline->stats()) {
    if (!st.required) stats.push_back(st);
  }
  ASSERT_GE(stats.size(), 8u);
  EXPECT_EQ(stats[0].pass, "algsimp");
  EXPECT_EQ(stats[0].execution, 1);
  EXPECT_TRUE(stats[0].changed);
  EXPECT_GT(stats[0].rewrites, 0);
  // The group's last round, dot-decomposer and all-reduce-combiner (no
  // all-reduce here) changed nothing; layout assignment changed the
  // module, fusion (a lone multiply) did not.
  size_t layout = 0;
  while (layout < stats.size() && stats[layout].pass != "layout-assignment") {
    ++layout;
  }
  ASSERT_LT(layout, stats.size());
  ASSERT_GE(layout, 6u);
  EXPECT_EQ(stats[layout - 1].pass, "all-reduce-combiner");
  for (size_t i = layout - 6; i < layout; ++i) {
    EXPECT_FALSE(stats[i].changed) << stats[i].pass;
  }
  EXPECT_TRUE(stats[layout].changed);
  EXPECT_EQ(stats.back().pass, "fusion");
  EXPECT_TRUE(Root(*m)->shape().has_layout());
  EXPECT_EQ(pipeline->executions(), static_cast<int64_t>(stats.size()));
}

TEST(PipelineTest, PassLimitCountsExecutionsAcrossFixpointRounds) {
  for (int64_t limit : {0, 1, 2, 3, 4, 5, 6}) {
    auto m = Parse(kModule);
    PipelineOptions o;
    o.pass_limit = limit;
    auto pipeline = PassPipeline::CreateDefault(o);
    PassContext ctx = pipeline->MakeContext();
    auto r = pipeline->Run(m.get(), &ctx);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_LE(pipeline->executions(), limit);
    int64_t ran = 0;
    for (const PassRunStats& s : pipeline->stats()) {
      ran += !s.skipped && !s.required;
    }
    EXPECT_EQ(ran, pipeline->executions());
    if (limit == 0) {
      EXPECT_FALSE(*r);
    }
  }
  // With limit 5 the fifth execution is the second round's algsimp.
  auto m = Parse(kModule);
  PipelineOptions o;
  o.pass_limit = 5;
  auto pipeline = PassPipeline::CreateDefault(o);
  PassContext ctx = pipeline->MakeContext();
  ASSERT_TRUE(pipeline->Run(m.get(), &ctx).ok());
  ASSERT_EQ(pipeline->executions(), 5);
  std::vector<PassRunStats> optional;
  for (const PassRunStats& st : pipeline->stats()) {
    if (!st.required) optional.push_back(st);
  }
  EXPECT_EQ(optional[4].pass, "algsimp");
  EXPECT_EQ(optional[4].execution, 5);
}

TEST(PipelineTest, RequiredPassesAlwaysRunAndCannotBeDisabled) {
  std::vector<std::string> required;
  for (const PassInfo& info : RegisteredPasses()) {
    if (info.stage == PassStage::kRequired) required.emplace_back(info.name);
  }
  ASSERT_FALSE(required.empty());
  auto m = Parse(kModule);
  PipelineOptions o;
  o.pass_limit = 0;
  o.rewrite_limit = 0;
  auto pipeline = PassPipeline::CreateDefault(o);
  PassContext ctx = pipeline->MakeContext();
  ASSERT_TRUE(pipeline->Run(m.get(), &ctx).ok());
  EXPECT_EQ(pipeline->executions(), 0);
  std::vector<std::string> ran;
  for (const PassRunStats& st : pipeline->stats()) {
    if (!st.skipped) ran.push_back(st.pass);
    EXPECT_EQ(st.required, !st.skipped) << st.pass;
  }
  EXPECT_EQ(ran, required);
  PipelineOptions d;
  d.disabled_passes = {required[0]};
  auto p2 = PassPipeline::CreateDefault(d);
  PassContext ctx2 = p2->MakeContext();
  auto r = p2->Run(m.get(), &ctx2);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("required"), std::string::npos);
}

TEST(PipelineTest, DisabledPassesAreSkipped) {
  auto m = Parse(kModule);
  PipelineOptions o;
  for (const PassInfo& info : RegisteredPasses()) {
    if (info.name != "dce" && info.stage != PassStage::kRequired) {
      o.disabled_passes.emplace_back(info.name);
    }
  }
  auto pipeline = PassPipeline::CreateDefault(o);
  PassContext ctx = pipeline->MakeContext();
  auto r = pipeline->Run(m.get(), &ctx);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(*r);  // dce removed `dead`.
  EXPECT_EQ(testing::Find(*m, "dead"), nullptr);
  EXPECT_NE(testing::Find(*m, "a"), nullptr);  // algsimp disabled.
  for (const PassRunStats& s : pipeline->stats()) {
    EXPECT_EQ(s.skipped, s.pass != "dce" && !s.required) << s.pass;
  }
}

TEST(PipelineTest, UnknownDisabledPassIsAnError) {
  auto m = Parse(kModule);
  PipelineOptions o;
  o.disabled_passes = {"bogus"};
  auto pipeline = PassPipeline::CreateDefault(o);
  PassContext ctx = pipeline->MakeContext();
  auto r = pipeline->Run(m.get(), &ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("bogus"), std::string::npos);
}

TEST(PipelineTest, RewriteLimitIsSharedAcrossPasses) {
  for (int64_t limit : {0, 1, 2, 3}) {
    auto m = Parse(kModule);
    PipelineOptions o;
    o.rewrite_limit = limit;
    auto pipeline = PassPipeline::CreateDefault(o);
    PassContext ctx = pipeline->MakeContext();
    auto r = pipeline->Run(m.get(), &ctx);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(ctx.rewrites_allowed(), limit);
    EXPECT_EQ(*r, limit > 0);
    int64_t total = 0;
    for (const PassRunStats& s : pipeline->stats()) total += s.rewrites;
    EXPECT_EQ(total, limit);
  }
}

TEST(PipelineTest, WrongChangedReportFailsLoudly) {
  for (bool change : {true, false}) {
    auto m = Parse(kModule);
    PassPipeline pipeline;
    pipeline.AddPass(std::make_unique<RenamePass>(change, !change));
    PassContext ctx;
    auto r = pipeline.Run(m.get(), &ctx);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInternal);
    EXPECT_NE(r.status().message().find("pass 'rename'"), std::string::npos)
        << r.status().message();
  }
  auto m = Parse(kModule);
  PassPipeline honest;
  honest.AddPass(std::make_unique<RenamePass>(true, true));
  PassContext ctx;
  EXPECT_TRUE(honest.Run(m.get(), &ctx).ok());
}

TEST(PipelineTest, VerifierFailureNamesThePass) {
  auto m = Parse(kModule);
  PassPipeline pipeline;
  pipeline.AddPass(std::make_unique<DeadCodeElimination>());
  pipeline.AddPass(std::make_unique<BreakPass>());
  PassContext ctx;
  auto r = pipeline.Run(m.get(), &ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  EXPECT_NE(r.status().message().find("after pass 'break'"), std::string::npos)
      << r.status().message();
}

TEST(PipelineTest, FixpointCapIsLogged) {
  auto m = Parse(kModule);
  PassPipeline pipeline;
  std::vector<std::unique_ptr<HloPass>> group;
  group.push_back(std::make_unique<RenamePass>(true, true));
  pipeline.AddFixpointGroup(std::move(group), 3);
  PassContext ctx;
  ASSERT_TRUE(pipeline.Run(m.get(), &ctx).ok());
  EXPECT_EQ(pipeline.executions(), 3);
  ASSERT_EQ(ctx.log().size(), 1u);
  EXPECT_NE(ctx.log()[0].find("cap of 3"), std::string::npos);
}

TEST(PipelineTest, DumpsEachPass) {
  const std::string dir = ::testing::TempDir() + "/trench_pipeline_dump_" +
                          std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  auto m = Parse(kModule);
  PipelineOptions o;
  o.dump_dir = dir;
  o.pass_limit = 4;
  auto pipeline = PassPipeline::CreateDefault(o);
  PassContext ctx = pipeline->MakeContext();
  ASSERT_TRUE(pipeline->Run(m.get(), &ctx).ok());
  for (const char* f :
       {"00.input.hlo", "01.algsimp.hlo", "02.constant-folding.hlo",
        "03.cse.hlo", "04.dce.hlo"}) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + f)) << f;
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/05.algsimp.hlo"));
  std::ifstream in(dir + "/04.dce.hlo");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), PrintHloModule(*m));
  std::filesystem::remove_all(dir);
}

TEST(PipelineTest, RejectsInputThatDoesNotVerify) {
  auto m = Parse(kModule);
  Root(*m)->set_shape(Shape(PrimitiveType::F32, {9}));
  PassPipeline pipeline;
  pipeline.AddPass(std::make_unique<DeadCodeElimination>());
  PassContext ctx;
  auto r = pipeline.Run(m.get(), &ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace trench
