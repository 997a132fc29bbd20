// Every reduction pass on SPMD cases (reduce_pass_common.cc's
// EditableCase keeps each device's inputs): candidates stay on the case's
// mesh with one input list per device, and the passes together shrink an
// SPMD program to the collective that matters.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "compiler/ir/hlo_computation.h"
#include "oracle/spmd.h"
#include "tests/triage/reduce/pass_test_util.h"
#include "triage/reduce/reduce_pass_internal.h"

namespace trench::hlo_reduce {
namespace {

constexpr char kCase[] = R"(HloModule spmd_big
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[4,6] parameter(0)
  b = f32[4,6] parameter(1)
  m = f32[4,6] multiply(a, b)
  n = f32[4,6] negate(m)
  e1 = f32[4,6] exponential(a)
  s = f32[4,6] add(n, e1)
  r = f32[4,6] all-reduce(s), replica_groups={}, to_apply=add
  t = f32[6,4] transpose(r), dimensions={1,0}
  c = f32[6,4] cosine(t)
  ROOT out = (f32[6,4], f32[4,6]) tuple(c, m)
}
)";

// The case on 4 replicas, each device with inputs of its own.
hlo_diff::Case SpmdCase() {
  return testing::SpmdCaseOf(kCase, DeviceMesh{4, 1}, 20);
}

Status RunsOnItsMesh(const hlo_diff::Case& c) {
  return testing::RunSpmd(c).status();
}

TEST(ReduceSpmdTest, EveryPassKeepsTheMeshAndEachDevicesInputs) {
  const hlo_diff::Case c = SpmdCase();
  std::set<std::string> applied;
  for (const auto& pass : AllReductionPasses()) {
    const int64_t n = pass->Count(c);
    for (int64_t i = 0; i < n; ++i) {
      auto out = pass->Apply(c, std::vector<int64_t>{i});
      // Candidates that do not verify are the engine's to drop (as for
      // single-device cases).
      if (!out.ok() || !ValidateCandidate(*out).ok()) continue;
      Status runs = RunsOnItsMesh(*out);
      EXPECT_TRUE(runs.ok())
          << pass->name() << " #" << i << ": " << runs.ToString() << "\n"
          << out->module_text;
      if (pass->name() != "shrink-mesh") {
        EXPECT_EQ(out->mesh.size(), 4) << pass->name() << " #" << i;
      }
      applied.insert(std::string(pass->name()));
    }
  }
  // The passes that edit the module apply to SPMD cases.
  for (const char* name :
       {"remove-instructions", "remove-outputs", "rewire-uses",
        "simplify-inputs", "shrink-shapes", "shrink-mesh"}) {
    EXPECT_TRUE(applied.count(name)) << name;
  }
}

// The verifier has no rule for all-gather (its group size may be the
// mesh's); a candidate whose all-gather changed a dimension it does not
// gather along (shrink-shapes shrank the operand) is no candidate.
TEST(ReduceSpmdTest, CollectivesMustKeepTheirShapes) {
  const hlo_diff::Case good = SpmdCase();
  ASSERT_TRUE(ValidateCandidate(good).ok());
  constexpr char kBad[] = R"(HloModule bad
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[4,6] parameter(0)
  ROOT g = f32[8,5] all-gather(a), replica_groups={}, dimensions={0}
}
)";
  hlo_diff::Case c;
  c.module_text = kBad;
  c.mesh = DeviceMesh{2, 1};
  for (int d = 0; d < 2; ++d)
    c.inputs.emplace_back(Shape(PrimitiveType::F32, {4, 6}));
  Status s = ValidateCandidate(c);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("all-gather of f32[4,6] cannot give f32[8,5]"),
            std::string::npos)
      << s.ToString();
}

// Replacing a subgraph by its value (as a parameter) gives each device its
// own value: every device computes what it did.
TEST(ReduceSpmdTest, ReplacedSubgraphsKeepEachDevicesValues) {
  const hlo_diff::Case c = SpmdCase();
  StatusOr<std::vector<Literal>> before = testing::RunSpmd(c);
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  auto pass = testing::PassNamed("replace-subgraphs");
  ASSERT_TRUE(pass);
  const int64_t n = pass->Count(c);
  int replaced = 0;
  for (int64_t i = 0; i < n; ++i) {
    auto out = pass->Apply(c, std::vector<int64_t>{i});
    if (!out.ok() || !ValidateCandidate(*out).ok()) continue;
    StatusOr<std::vector<Literal>> after = testing::RunSpmd(*out);
    ASSERT_TRUE(after.ok()) << after.status().ToString();
    ASSERT_EQ(after->size(), before->size());
    for (size_t d = 0; d < before->size(); ++d) {
      EXPECT_TRUE((*after)[d] == (*before)[d])
          << "opportunity " << i << ", device " << d << "\n"
          << out->module_text;
    }
    ++replaced;
  }
  EXPECT_GE(replaced, 6);
}

// The form of an unseeded finding (2026-12-06): values in another layout
// than their users', passed through a tuple all-to-all or a call, then
// bitcast.
constexpr char kLayoutCase[] = R"(HloModule spmd_layouts
callee {
  x = f16[3,5,2] parameter(0)
  ROOT y = f16[3,5,2]{0,2,1} copy(x)
}
ENTRY e {
  p = f16[3,5,2] parameter(0)
  c = f16[3,5,2]{0,2,1} copy(p)
  n = f16[3,5,2]{0,2,1} negate(c)
  a = (f16[3,5,2], f16[3,5,2]) all-to-all(c, n), replica_groups={{0,1}}
  g = f16[3,5,2] get-tuple-element(a), index=1
  b = f16[5,3,2] bitcast(g)
  k = f16[3,5,2] call(p), to_apply=callee
  m = f16[30] bitcast(k)
  ROOT t = (f16[5,3,2], f16[3,5,2]{0,2,1}, f16[30]) tuple(b, c, m)
}
)";

// A candidate is tested in memory and then saved as .npy files, which
// carry no layout: what the reducer tests must be what it writes. (The
// stand-in for an instruction once kept its value's layout, and a
// layout-sensitive op read the two differently.)
TEST(ReduceSpmdTest, EveryCandidateIsTheCaseItWrites) {
  const hlo_diff::Case c =
      testing::SpmdCaseOf(kLayoutCase, DeviceMesh{2, 2}, 31);
  const std::string dir =
      ::testing::TempDir() + "/reduce_spmd_written_" + std::to_string(getpid());
  int written = 0;
  for (const auto& pass : AllReductionPasses()) {
    const int64_t n = pass->Count(c);
    for (int64_t i = 0; i < n; ++i) {
      auto out = pass->Apply(c, std::vector<int64_t>{i});
      if (!out.ok() || !ValidateCandidate(*out).ok()) continue;
      std::filesystem::remove_all(dir);
      ASSERT_TRUE(hlo_diff::WriteCase(dir, *out).ok());
      StatusOr<hlo_diff::Case> back = hlo_diff::ReadCase(dir);
      ASSERT_TRUE(back.ok()) << back.status().ToString();
      ASSERT_EQ(back->inputs.size(), out->inputs.size());
      for (size_t k = 0; k < out->inputs.size(); ++k) {
        // Values and shapes, layouts included (Literal's == ignores them).
        EXPECT_TRUE(back->inputs[k] == out->inputs[k] &&
                    back->inputs[k].shape() == out->inputs[k].shape())
            << pass->name() << " #" << i << ", input " << k << ": "
            << out->inputs[k].shape().ToString() << " written as "
            << back->inputs[k].shape().ToString();
      }
      StatusOr<std::vector<Literal>> tested = testing::RunSpmd(*out);
      StatusOr<std::vector<Literal>> saved = testing::RunSpmd(*back);
      ASSERT_EQ(tested.ok(), saved.ok()) << pass->name() << " #" << i;
      if (tested.ok()) {
        ASSERT_EQ(tested->size(), saved->size());
        for (size_t d = 0; d < tested->size(); ++d) {
          EXPECT_TRUE((*tested)[d] == (*saved)[d])
              << pass->name() << " #" << i << ", device " << d << "\n"
              << out->module_text;
        }
      }
      ++written;
    }
  }
  std::filesystem::remove_all(dir);
  EXPECT_GE(written, 10);
}

// The same text and inputs on another mesh of as many devices is another
// case: the oracle's values (what stand-ins hold) are not taken from it.
TEST(ReduceSpmdTest, OracleValuesDependOnTheMesh) {
  const char* text =
      "HloModule m\nENTRY e {\n  p = u32[2] parameter(0)\n"
      "  r = u32[] replica-id()\n  b = u32[2] broadcast(r), dimensions={}\n"
      "  ROOT s = u32[2] add(p, b)\n}\n";
  const hlo_diff::Case replicas = testing::SpmdCaseOf(text, {2, 1}, 5);
  hlo_diff::Case partitions = replicas;
  partitions.mesh = DeviceMesh{1, 2};
  const auto a = OracleValues(replicas);
  const auto b = OracleValues(partitions);
  ASSERT_TRUE(a->count("r") && b->count("r"));
  // Device 1 is replica 1 on 2 x 1, replica 0 on 1 x 2.
  EXPECT_EQ(a->at("r").tuple_element(1).GetAsDouble(0), 1);
  EXPECT_EQ(b->at("r").tuple_element(1).GetAsDouble(0), 0);
}

TEST(ReduceSpmdTest, SimplifyInputsChangesOneDeviceAtATime) {
  const hlo_diff::Case c = SpmdCase();
  auto pass = testing::PassNamed("simplify-inputs");
  ASSERT_TRUE(pass);
  // Opportunity 0 zeroes device 0's `a`; device 1's stays.
  hlo_diff::Case out = testing::ApplyValid(*pass, c, {0});
  ASSERT_EQ(out.inputs.size(), 8u);  // a, b on each of 4 devices.
  EXPECT_FALSE(out.inputs[0] == c.inputs[0]);
  EXPECT_TRUE(out.inputs[1] == c.inputs[1]);
  for (size_t k = 2; k < 8; ++k) EXPECT_TRUE(out.inputs[k] == c.inputs[k]);
}

TEST(ReduceSpmdTest, ThePassesShrinkAnSpmdProgramToItsCollective) {
  const hlo_diff::Case c = SpmdCase();
  // "Interesting": still an SPMD program with an all-reduce that runs.
  auto interesting = [](const hlo_diff::Case& k) {
    return k.mesh.size() > 1 && testing::HasOpcode(k, "all-reduce") &&
           RunsOnItsMesh(k).ok();
  };
  const hlo_diff::Case out =
      testing::GreedyReduce(AllReductionPasses(), c, interesting);
  const CaseSize before = MeasureCase(c), after = MeasureCase(out);
  // The entry keeps a parameter and the all-reduce; `add` its 3.
  EXPECT_LE(after.instructions, 5) << out.module_text;
  EXPECT_LT(after.elements, before.elements);
  EXPECT_EQ(out.mesh.size(), 2);  // shrink-mesh: 4 -> 2 devices.
  EXPECT_TRUE(interesting(out));
}

}  // namespace
}  // namespace trench::hlo_reduce
