// SPMD programs of the synthetic generator (GeneratorOptions::spmd_share,
// generator_collectives.cc): valid on every device of their mesh, run by
// the SPMD oracle, and covering the collectives, group modes and forms.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "compiler/ir/collective_groups.h"
#include "compiler/ir/hlo_computation.h"
#include "oracle/spmd.h"
#include "triage/case/case_bundle.h"
#include "triage/fuzz/collective_scale.h"
#include "triage/fuzz/fuzz_flags.h"
#include "triage/fuzz/generator.h"

namespace trench::fuzz {
namespace {

// The per-device argument lists of a generated SPMD program.
std::vector<std::vector<Literal>> DeviceArgs(const GeneratedCase& g,
                                             const HloModule& m) {
  const size_t devices = static_cast<size_t>(g.mesh.size());
  std::vector<std::vector<Literal>> lists(devices);
  const size_t per = g.inputs.size() / devices;
  for (size_t k = 0; k < g.inputs.size(); ++k) {
    lists[k / per].push_back(Literal(g.inputs[k]));
  }
  auto c = hlo_diff::MakeSpmdCase(g.hlo_text, g.mesh, std::move(lists));
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  if (!c.ok()) return {};
  auto args = hlo_diff::DeviceArguments(m, *c);
  EXPECT_TRUE(args.ok()) << args.status().ToString();
  return args.ok() ? *std::move(args) : std::vector<std::vector<Literal>>{};
}

TEST(GeneratorCollectivesTest, SpmdProgramsRunOnEveryDevice) {
  GeneratorOptions o;
  o.spmd_share = 1;
  o.instructions = 12;
  o.max_elements = 1024;
  std::map<std::string, int> ops;
  std::set<std::string> meshes;
  int iota = 0, list = 0, global = 0, channel = 0, no_channel = 0, split = 0,
      tuple = 0, uneven = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    auto g = GenerateSynthetic(seed, o);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    ASSERT_GT(g->mesh.size(), 1) << seed;
    meshes.insert(std::to_string(g->mesh.replicas) + "x" +
                  std::to_string(g->mesh.partitions));
    auto m = ParseGenerated(g->hlo_text, "test", seed);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    ASSERT_TRUE(CheckCollectives(**m, g->mesh).ok());
    int collectives = 0;
    for (const HloInstruction* i : (*m)->entry_computation()->instructions()) {
      if (!IsDeviceOp(i->opcode())) continue;
      ++ops[std::string(OpcodeName(i->opcode()))];
      collectives += IsCollective(i->opcode());
      const HloAttributes& a = i->attrs();
      if (const std::string* v = a.FindRaw("replica_groups")) {
        (v->find("<=") != std::string::npos ? iota : list) += 1;
      }
      global += a.FindRaw("use_global_device_ids") != nullptr;
      (a.FindRaw("channel_id") ? channel : no_channel) += 1;
      if (i->opcode() == HloOpcode::kAllToAll) {
        (a.dimensions.empty() ? tuple : split) += 1;
      }
      if (i->opcode() == HloOpcode::kAllReduce) {
        auto groups = DeviceGroups(*i, g->mesh);
        ASSERT_TRUE(groups.ok()) << groups.status().ToString();
        for (const auto& group : *groups) {
          if (group.size() != groups->front().size()) {
            ++uneven;
            break;
          }
        }
      }
    }
    EXPECT_GE(collectives, 1) << g->hlo_text;
    SpmdOptions so;
    so.mesh = g->mesh;
    so.evaluator.threads = 1;
    auto out = EvaluateSpmd(**m, DeviceArgs(*g, **m), so);
    ASSERT_TRUE(out.ok()) << "seed " << seed << ": " << out.status().ToString()
                          << "\n"
                          << g->hlo_text;
    EXPECT_EQ(static_cast<int64_t>(out->size()), g->mesh.size());
  }
  for (HloOpcode op : SpmdOps()) {
    EXPECT_GT(ops[std::string(OpcodeName(op))], 0) << OpcodeName(op);
  }
  EXPECT_EQ(meshes.size(), 4u);
  EXPECT_GT(iota, 0);
  EXPECT_GT(list, 0);
  EXPECT_GT(global, 0);
  EXPECT_GT(channel, 0);
  EXPECT_GT(no_channel, 0);
  EXPECT_GT(split, 0);
  EXPECT_GT(tuple, 0);
  EXPECT_GT(uneven, 0);  // An all-reduce's groups of different sizes.
}

TEST(GeneratorCollectivesTest, DevicesGetInputsOfTheirOwn) {
  GeneratorOptions o;
  o.spmd_share = 1;
  auto g = GenerateSynthetic(7, o);
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  const size_t per = g->inputs.size() / g->mesh.size();
  ASSERT_GT(per, 0u);
  EXPECT_EQ(g->origin["mesh"]["partitions"].GetInt64().value(),
            g->mesh.partitions);
  bool differ = false;
  for (size_t k = 0; k < per; ++k) {
    const auto a = g->inputs[k].bytes(), b = g->inputs[per + k].bytes();
    differ |= !std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  EXPECT_TRUE(differ);
}

// Programs that are not drawn SPMD are the programs of a generator without
// SPMD programs, seed by seed.
TEST(GeneratorCollectivesTest, OtherProgramsStayAsTheyWere) {
  GeneratorOptions plain, some;
  some.spmd_share = 0.5;
  int spmd = 0, same = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    auto a = GenerateSynthetic(seed, plain);
    auto b = GenerateSynthetic(seed, some);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->mesh.size(), 1);
    if (b->mesh.size() > 1) {
      ++spmd;
      continue;
    }
    ++same;
    EXPECT_EQ(a->hlo_text, b->hlo_text) << seed;
  }
  EXPECT_GT(spmd, 5);
  EXPECT_GT(same, 5);
}

TEST(GeneratorCollectivesTest, FocusOnCollectivesMakesSpmdPrograms) {
  GeneratorOptions o;
  o.focus = {"all-gather", "reduce-scatter"};
  for (uint64_t seed = 0; seed < 10; ++seed) {
    auto g = GenerateSynthetic(seed, o);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    EXPECT_GT(g->mesh.size(), 1);
    EXPECT_TRUE(g->hlo_text.find("all-gather(") != std::string::npos ||
                g->hlo_text.find("reduce-scatter(") != std::string::npos)
        << g->hlo_text;
  }
}

// A focus on any one device op (as the daemon aims a campaign at a commit
// that changed its emitter) gives SPMD programs that hold it.
TEST(GeneratorCollectivesTest, FocusOnEachDeviceOpAlone) {
  for (HloOpcode op : SpmdOps()) {
    GeneratorOptions o;
    o.focus = {std::string(OpcodeName(op))};
    o.instructions = 8;
    o.max_elements = 1024;
    for (uint64_t seed = 0; seed < 5; ++seed) {
      auto g = GenerateSynthetic(seed, o);
      ASSERT_TRUE(g.ok()) << OpcodeName(op) << ": " << g.status().ToString();
      EXPECT_GT(g->mesh.size(), 1) << OpcodeName(op);
      EXPECT_NE(g->hlo_text.find(std::string(OpcodeName(op)) + "("),
                std::string::npos)
          << g->hlo_text;
    }
  }
}

TEST(GeneratorCollectivesTest, CollectivesAreNoSingleDeviceOps) {
  for (HloOpcode op : SpmdOps()) {
    EXPECT_FALSE(OracleEvaluates(op)) << OpcodeName(op);
    EXPECT_EQ(OpGroup(op), "collective");
  }
  for (HloOpcode op : SyntheticOps()) EXPECT_FALSE(IsDeviceOp(op));
}

// Small programs under --focus passes:all-reduce-combiner.
GeneratorOptions CombinerFocus() {
  GeneratorOptions o;
  StatusOr<std::vector<std::string>> focus =
      ParseFocus("passes:all-reduce-combiner");
  EXPECT_TRUE(focus.ok()) << focus.status().ToString();
  if (focus.ok()) o.focus = *focus;
  o.instructions = 12;
  o.max_elements = 1024;
  return o;
}

// --focus passes:all-reduce-combiner: every program is an SPMD program
// and most hold several all-reduces for the combiner to merge.
TEST(GeneratorCollectivesTest, TheCombinersFocusDrawsSeveralAllReduces) {
  GeneratorOptions o = CombinerFocus();
  int several = 0;
  constexpr int kPrograms = 30;
  for (uint64_t seed = 0; seed < kPrograms; ++seed) {
    auto g = GenerateSynthetic(seed, o);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    ASSERT_GT(g->mesh.size(), 1) << seed;
    auto m = ParseGenerated(g->hlo_text, "test", seed);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    int all_reduces = 0;
    for (const HloInstruction* i : (*m)->entry_computation()->instructions()) {
      all_reduces += i->opcode() == HloOpcode::kAllReduce;
    }
    several += all_reduces >= 2;
  }
  EXPECT_GE(several, kPrograms / 2);
}

// `b` reads `a`'s result, directly or through other instructions.
bool DependsOn(const HloInstruction* b, const HloInstruction* a) {
  std::vector<const HloInstruction*> stack = {b};
  std::set<const HloInstruction*> seen;
  while (!stack.empty()) {
    const HloInstruction* i = stack.back();
    stack.pop_back();
    for (const HloInstruction* o : i->operands()) {
      if (o == a) return true;
      if (seen.insert(o).second) stack.push_back(o);
    }
  }
  return false;
}

// Near-copies of all-reduces under the combiner's focus: independent pairs
// with the same element type, reduction and group mode whose groups are
// the same (the combiner may merge them), and pairs whose groups split the
// ids another way into as many groups of the same size (it must keep
// them apart: zoo bug 24's shape).
TEST(GeneratorCollectivesTest, AllReducesComeWithNearCopies) {
  GeneratorOptions o = CombinerFocus();
  struct Key {
    const HloInstruction* instr;
    std::string reduction, channel, global;
    std::vector<std::vector<int64_t>> partition;
  };
  int same = 0, regrouped = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    auto g = GenerateSynthetic(seed, o);
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    auto m = ParseGenerated(g->hlo_text, "test", seed);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    std::vector<Key> keys;
    for (const HloInstruction* i : (*m)->entry_computation()->instructions()) {
      if (i->opcode() != HloOpcode::kAllReduce) continue;
      const HloAttributes& a = i->attrs();
      const std::string* text = a.FindRaw("replica_groups");
      ASSERT_NE(text, nullptr);
      auto groups = ParseReplicaGroups(*text);
      ASSERT_TRUE(groups.ok()) << groups.status().ToString();
      for (auto& group : *groups) std::sort(group.begin(), group.end());
      std::sort(groups->begin(), groups->end());
      const std::string* global = a.FindRaw("use_global_device_ids");
      keys.push_back({i,
                      i->to_apply()->name() + std::string(PrimitiveTypeName(
                                                  i->shape().element_type())),
                      a.FindRaw("channel_id") ? "channel" : "",
                      global ? *global : "", *groups});
    }
    bool has_same = false, has_regrouped = false;
    for (size_t x = 0; x < keys.size(); ++x) {
      for (size_t y = x + 1; y < keys.size(); ++y) {
        const Key &a = keys[x], &b = keys[y];
        if (a.reduction != b.reduction || a.channel != b.channel ||
            a.global != b.global || a.partition.empty() ||
            b.partition.empty() || DependsOn(a.instr, b.instr) ||
            DependsOn(b.instr, a.instr)) {
          continue;
        }
        if (a.partition == b.partition) {
          has_same = true;
        } else if (a.partition.size() == b.partition.size() &&
                   a.partition[0].size() == b.partition[0].size()) {
          has_regrouped = true;
        }
      }
    }
    same += has_same;
    regrouped += has_regrouped;
  }
  EXPECT_GE(same, 40);
  EXPECT_GE(regrouped, 6);
}

}  // namespace
}  // namespace trench::fuzz
