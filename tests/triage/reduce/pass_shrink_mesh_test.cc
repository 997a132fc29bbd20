// shrink-mesh (reduce_pass_shrink_mesh.cc): an SPMD case on fewer devices,
// its groups, pairs and per-device inputs rewritten, kept only while the
// interestingness test holds.
#include <gtest/gtest.h>

#include "compiler/ir/collective_groups.h"
#include "compiler/ir/hlo_computation.h"
#include "oracle/spmd.h"
#include "tests/triage/reduce/pass_test_util.h"
#include "triage/fuzz/generator.h"

namespace trench::hlo_reduce {
namespace {

// An SPMD case of `text` on `mesh`, device d's inputs RandomArguments(10 +
// d).
hlo_diff::Case SpmdCase(const std::string& text, const DeviceMesh& mesh) {
  return testing::SpmdCaseOf(text, mesh, 10);
}

using testing::RunSpmd;

const HloInstruction* Named(const HloModule& m, const std::string& name) {
  return m.entry_computation()->GetInstructionWithName(name);
}

constexpr char kCase[] = R"(HloModule spmd
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[4,6] parameter(0)
  r = f32[4,6] all-reduce(a), replica_groups={{0,1}}, to_apply=add
  f = f32[4,6] all-reduce(r), channel_id=1, replica_groups=[2,2]<=[2,2]T(1,0), use_global_device_ids=true, to_apply=add
  ROOT p = f32[4,6] collective-permute(f), channel_id=2, source_target_pairs={{0,1},{1,0}}
}
)";

TEST(PassShrinkMeshTest, HalvesPartitionsKeepingGroupsPairsAndInputs) {
  const hlo_diff::Case c = SpmdCase(kCase, {2, 2});
  auto pass = testing::PassNamed("shrink-mesh");
  ASSERT_TRUE(pass);
  ASSERT_EQ(pass->Count(c), 2);
  // Opportunity 1: partitions 2 -> 1; devices 0 and 2 (replicas 0, 1) stay.
  hlo_diff::Case out = testing::ApplyValid(*pass, c, {1});
  EXPECT_EQ(out.mesh.replicas, 2);
  EXPECT_EQ(out.mesh.partitions, 1);
  ASSERT_EQ(out.inputs.size(), 2u);
  EXPECT_TRUE(std::ranges::equal(out.inputs[0].bytes(), c.inputs[0].bytes()));
  EXPECT_TRUE(std::ranges::equal(out.inputs[1].bytes(), c.inputs[2].bytes()));
  auto m = ParseHloModule(out.module_text);
  ASSERT_TRUE(m.ok());
  // {0,2},{1,3} (global ids on 2x2) keep 0 and 2 -> new ids 0 and 1, in
  // one group: [1,2]<=[2].
  EXPECT_EQ(*Named(**m, "f")->attrs().FindRaw("replica_groups"), "[1,2]<=[2]");
  EXPECT_EQ(*Named(**m, "r")->attrs().FindRaw("replica_groups"), "{{0,1}}");
  // Partition 1 is gone: both pairs named it.
  EXPECT_EQ(*Named(**m, "p")->attrs().FindRaw("source_target_pairs"), "{}");
  EXPECT_TRUE(RunSpmd(out).ok());
  // Both at once: 1 x 1 is refused (the module has collectives).
  auto both = pass->Apply(c, std::vector<int64_t>{0, 1});
  ASSERT_FALSE(both.ok());
  EXPECT_EQ(both.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(pass->Count(testing::CaseOf("HloModule x\nENTRY e {\n  ROOT a = "
                                        "f32[2] parameter(0)\n}\n")),
            0);
  EXPECT_FALSE(pass->Apply(c, std::vector<int64_t>{5}).ok());
}

TEST(PassShrinkMeshTest, CandidatesTheOracleRefusesCostNoTest) {
  // An all-gather over four partitions: on two its result would be half
  // as wide, so that candidate is refused.
  const hlo_diff::Case c = SpmdCase(R"(HloModule g
ENTRY e {
  a = f32[3] parameter(0)
  ROOT g = f32[12] all-gather(a), channel_id=1, replica_groups=[1,4]<=[4], use_global_device_ids=true, dimensions={0}
}
)",
                                    {1, 4});
  ASSERT_TRUE(RunSpmd(c).ok());
  auto pass = testing::PassNamed("shrink-mesh");
  auto out = pass->Apply(c, std::vector<int64_t>{0});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(out.status().message().find("oracle"), std::string::npos);
}

// The reducer keeps a smaller mesh only while the test holds: here the
// "bug" needs an all-reduce of two replicas, so partitions go and
// replicas stay.
TEST(PassShrinkMeshTest, ReducerKeepsOnlyInterestingMeshes) {
  const hlo_diff::Case c = SpmdCase(kCase, {2, 2});
  std::vector<std::unique_ptr<ReductionPass>> passes;
  passes.push_back(testing::PassNamed("shrink-mesh"));
  int64_t tests = 0;
  auto interesting = [](const hlo_diff::Case& k) {
    auto m = ParseHloModule(k.module_text);
    if (!m.ok() || !RunSpmd(k).ok()) return false;
    auto groups = DeviceGroups(*Named(**m, "r"), k.mesh);
    return groups.ok() && (*groups)[0].size() == 2;
  };
  ASSERT_TRUE(interesting(c));
  const hlo_diff::Case out =
      testing::GreedyReduce(passes, c, interesting, &tests);
  EXPECT_EQ(out.mesh.replicas, 2);
  EXPECT_EQ(out.mesh.partitions, 1);
  EXPECT_GE(tests, 2);  // The replica halving was tried and refused.
  EXPECT_LT(MeasureCase(out).elements, MeasureCase(c).elements);
}

// Real SPMD cases (the generator's): every opportunity gives a valid case
// the oracle runs or a FailedPrecondition, with the kept devices' inputs;
// without a constraint the mesh shrinks, and the pass never cycles.
TEST(PassShrinkMeshTest, GeneratedSpmdCases) {
  fuzz::GeneratorOptions o;
  o.spmd_share = 1;
  o.instructions = 10;
  o.max_elements = 512;
  auto pass = testing::PassNamed("shrink-mesh");
  int shrunk = 0;
  for (uint64_t seed = 0; seed < 16; ++seed) {
    auto g = fuzz::GenerateSynthetic(seed, o);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    const size_t per = g->inputs.size() / g->mesh.size();
    std::vector<std::vector<Literal>> lists(g->mesh.size());
    for (size_t k = 0; k < g->inputs.size(); ++k) {
      lists[k / per].push_back(g->inputs[k]);
    }
    auto c = hlo_diff::MakeSpmdCase(g->hlo_text, g->mesh, std::move(lists));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    const int64_t n = pass->Count(*c);
    EXPECT_GE(n, 1);
    for (int64_t k = 0; k < n; ++k) {
      auto out = pass->Apply(*c, std::vector<int64_t>{k});
      if (!out.ok()) {
        EXPECT_EQ(out.status().code(), StatusCode::kFailedPrecondition)
            << out.status().ToString();
        continue;
      }
      EXPECT_TRUE(ValidateCandidate(*out).ok());
      EXPECT_LT(out->mesh.size(), c->mesh.size());
      EXPECT_TRUE(RunSpmd(*out).ok()) << out->module_text;
      EXPECT_TRUE(
          std::ranges::equal(out->inputs[0].bytes(), c->inputs[0].bytes()));
    }
    std::vector<std::unique_ptr<ReductionPass>> passes;
    passes.push_back(testing::PassNamed("shrink-mesh"));
    const hlo_diff::Case r = testing::GreedyReduce(
        passes, *c, [](const hlo_diff::Case&) { return true; });
    shrunk += r.mesh.size() < c->mesh.size();
    testing::ExpectAcyclic(*pass, *c, 16);
  }
  EXPECT_GT(shrunk, 3);
}

}  // namespace
}  // namespace trench::hlo_reduce
