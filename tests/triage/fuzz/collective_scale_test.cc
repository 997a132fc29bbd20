// Mesh scaling of SPMD traces (triage/fuzz/collective_scale.h) and the
// trace cutter keeping collectives (subgraph.h, trace_corpus.h), on inline
// HLO and on the shared production traces.
#include "triage/fuzz/collective_scale.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer.h"
#include "compiler/ir/hlo_text_file.h"
#include "compiler/ir/verifier.h"
#include "oracle/spmd.h"
#include "triage/case/case_bundle.h"
#include "triage/fuzz/subgraph.h"
#include "triage/fuzz/trace_corpus.h"

namespace trench::fuzz {
namespace {

std::unique_ptr<HloModule> Parse(const std::string& text) {
  auto m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? std::move(m).value() : nullptr;
}

TEST(CollectiveScaleTest, IotaGroupsKeepTheirStructure) {
  EXPECT_EQ(ScaleIotaGroups("[2,64]<=[128]", 4).value(), "[2,2]<=[4]");
  EXPECT_EQ(ScaleIotaGroups("[64,2]<=[2,64]T(1,0)", 4).value(),
            "[2,2]<=[2,2]T(1,0)");
  EXPECT_EQ(ScaleIotaGroups("[1,128]<=[128]", 4).value(), "[1,4]<=[4]");
  EXPECT_EQ(ScaleIotaGroups("[8,16]<=[16,8]T(1,0)", 8).value(),
            "[2,4]<=[4,2]T(1,0)");
  EXPECT_EQ(ScaleIotaGroups("[2,2]<=[4]", 4).value(), "[2,2]<=[4]");
  // The scaled groups are those of the same reshape and transpose.
  auto big = ParseReplicaGroups("[64,2]<=[2,64]T(1,0)").value();
  auto small = ParseReplicaGroups("[2,2]<=[2,2]T(1,0)").value();
  EXPECT_EQ(big[0], (std::vector<int64_t>{0, 64}));
  EXPECT_EQ(small[0], (std::vector<int64_t>{0, 2}));
  EXPECT_FALSE(ScaleIotaGroups("{{0,1}}", 2).ok());
  EXPECT_EQ(ScaleIotaGroups("[3,3]<=[9]", 4).value(), "[2,2]<=[4]");
  EXPECT_FALSE(ScaleIotaGroups("[1,3]<=[3]", 4).ok());
  EXPECT_FALSE(ScaleIotaGroups("[2,2]<=[4", 4).ok());
}

constexpr char kSpmd[] = R"(HloModule spmd, num_partitions=8
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[16,4] parameter(0)
  r = f32[16,4] all-reduce(a), channel_id=1, replica_groups={{0,2,4,6},{1,3,5,7}}, use_global_device_ids=true, to_apply=add
  g = f32[16,32] all-gather(r), channel_id=2, replica_groups=[1,8]<=[8], dimensions={1}, use_global_device_ids=true
  p = f32[16,32] collective-permute(g), channel_id=3, source_target_pairs={{0,1},{1,2},{2,3},{3,4},{4,5},{5,6},{6,7},{7,0}}
  ROOT t = f32[2,32] reduce-scatter(p), channel_id=4, replica_groups=[1,8]<=[8], dimensions={0}, use_global_device_ids=true, to_apply=add
}
)";

TEST(CollectiveScaleTest, ListsPairsAndShapesFollowTheMesh) {
  auto m = Parse(kSpmd);
  ASSERT_TRUE(m);
  const DeviceMesh trace = TraceMesh(*m);
  EXPECT_EQ(trace.replicas, 1);
  EXPECT_EQ(trace.partitions, 8);
  ASSERT_TRUE(CheckCollectives(*m, trace).ok());
  const DeviceMesh mesh = ScaledMesh(trace, 4);
  EXPECT_EQ(mesh.partitions, 4);
  std::vector<SizeRatio> ratios;
  Status scaled_groups = ScaleCollectiveGroups(m.get(), mesh, &ratios);
  ASSERT_TRUE(scaled_groups.ok()) << scaled_groups.ToString();
  const HloComputation& e = *m->entry_computation();
  EXPECT_EQ(*e.GetInstructionWithName("r")->attrs().FindRaw("replica_groups"),
            "{{0,2},{1,3}}");
  EXPECT_EQ(*e.GetInstructionWithName("g")->attrs().FindRaw("replica_groups"),
            "[1,4]<=[4]");
  EXPECT_EQ(
      *e.GetInstructionWithName("p")->attrs().FindRaw("source_target_pairs"),
      "{{0,1},{1,2},{2,3},{3,0}}");
  // all-gather 4 -> 32 over 8 devices, reduce-scatter 16 -> 2: each now
  // over 4 devices, so their large sizes must shrink twice as much.
  ASSERT_EQ(ratios.size(), 2u);
  EXPECT_EQ(ratios[0].small, 4);
  EXPECT_EQ(ratios[0].large, 32);
  EXPECT_EQ(ratios[0].ratio, 2);
  EXPECT_FALSE(CheckCollectives(*m, mesh).ok());  // Shapes still 8-wide.
  ScaleConstraints c;
  c.ratios = ratios;
  c.check = [mesh](const HloModule& s) { return CheckCollectives(s, mesh); };
  auto scaled = ScaleShapes(*m, 1 << 14, c);
  ASSERT_TRUE(scaled.ok()) << scaled.status().ToString();
  EXPECT_TRUE(CheckCollectives(*scaled->module, mesh).ok());
  EXPECT_TRUE(VerifyModule(*scaled->module).ok());
}

TEST(CollectiveScaleTest, MalformedCollectivesAreErrors) {
  auto m = Parse(R"(HloModule bad
ENTRY e {
  a = f32[4] parameter(0)
  ROOT g = f32[12] all-gather(a), replica_groups={{0,1}}, dimensions={0}
}
)");
  ASSERT_TRUE(m);
  Status s = CheckCollectives(*m, DeviceMesh{2, 1});
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("%g"), std::string::npos) << s.ToString();
  EXPECT_FALSE(CheckCollectives(*m, DeviceMesh{4, 1}).ok());  // Id 2, 3.
  std::vector<SizeRatio> ratios;
  EXPECT_FALSE(ScaleCollectiveGroups(m.get(), DeviceMesh{2, 1}, &ratios).ok());
  auto odd = Parse(R"(HloModule odd
ENTRY e {
  a = f32[4] parameter(0)
  ROOT g = f32[4] all-to-all(a), replica_groups={{0,1,2}}, dimensions={0}
}
)");
  ASSERT_TRUE(odd);
  EXPECT_FALSE(CheckCollectives(*odd, DeviceMesh{3, 1}).ok());
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The shared traces with collectives.
std::vector<std::string> CollectiveTraces() {
  std::vector<std::string> out;
  const std::string root = std::string(TRENCH_SHARED_DIR) + "/traces";
  std::error_code ec;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(root, ec)) {
    if (!e.is_regular_file() || e.path().extension() != ".hlo") continue;
    const std::string text = ReadFile(e.path().string());
    if (text.find("all-reduce(") != std::string::npos ||
        text.find("all-gather(") != std::string::npos) {
      out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool KeepsCollectives(const HloInstruction& i) {
  if (i.opcode() == HloOpcode::kParameter) return false;
  if (IsDeviceOp(i.opcode())) return true;
  return OracleEvaluates(i.opcode()) && !i.shape().IsToken();
}

// Every cut of the real traces that keeps collectives parses back from its
// text, verifies, fits its scaled mesh and runs in the SPMD oracle there.
TEST(CollectiveTracesTest, CutsWithCollectivesRunOnTheirScaledMesh) {
  const std::vector<std::string> traces = CollectiveTraces();
  ASSERT_GE(traces.size(), 2u);
  int64_t with_collectives = 0, gathers = 0;
  for (const std::string& path : traces) {
    for (const HloTextPiece& piece : SplitHloTextFile(ReadFile(path))) {
      auto m = ParseHloModule(piece.text, piece.first_line);
      if (!m.ok()) continue;
      SubgraphOptions o;
      o.max_instructions = 64;
      o.max_elements = 1 << 14;
      auto cut = CutSubgraphs(**m, KeepsCollectives, o);
      ASSERT_TRUE(cut.ok()) << cut.status().ToString();
      for (const Subgraph& sg : cut->subgraphs) {
        bool device_ops = false;
        for (const HloComputation* c : sg.module->computations()) {
          for (const HloInstruction* i : c->instructions()) {
            device_ops |= IsDeviceOp(i->opcode());
            gathers += i->opcode() == HloOpcode::kAllGather;
          }
        }
        if (!device_ops) continue;
        ++with_collectives;
        ASSERT_GT(sg.mesh.size(), 1) << path;
        ASSERT_LE(sg.mesh.size(), 4) << path;
        const std::string text = PrintHloModule(*sg.module);
        auto back = ParseHloModule(text);
        ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << text;
        ASSERT_TRUE(VerifyModule(**back).ok()) << text;
        ASSERT_TRUE(CheckCollectives(**back, sg.mesh).ok())
            << CheckCollectives(**back, sg.mesh).ToString() << "\n"
            << text;
        std::vector<std::vector<Literal>> args;
        for (int64_t d = 0; d < sg.mesh.size(); ++d) {
          args.push_back(hlo_diff::ParameterArguments(
              **back, TraceInputs(**back, DeviceSeed(1, d))));
        }
        SpmdOptions so;
        so.mesh = sg.mesh;
        so.evaluator.threads = 1;
        auto out = EvaluateSpmd(**back, args, so);
        ASSERT_TRUE(out.ok()) << path << ": " << out.status().ToString() << "\n"
                              << text;
      }
    }
  }
  EXPECT_GT(with_collectives, 20);
  EXPECT_GT(gathers, 0);
}

// The corpus keeps collectives on request and samples SPMD programs with
// inputs for every device.
TEST(CollectiveTracesTest, CorpusSamplesSpmdPrograms) {
  TraceCorpusOptions o;
  o.collectives = true;
  TraceCorpus corpus(o);
  ASSERT_TRUE(corpus.Load(CollectiveTraces()).ok());
  TraceCorpus plain;
  ASSERT_TRUE(plain.Load(CollectiveTraces()).ok());
  int64_t spmd = 0;
  for (const TraceSubgraph& t : corpus.subgraphs()) spmd += t.mesh.size() > 1;
  for (const TraceSubgraph& t : plain.subgraphs()) EXPECT_EQ(t.mesh.size(), 1);
  EXPECT_GT(spmd, 0);
  int sampled = 0;
  for (uint64_t seed = 0; seed < 200 && sampled < 5; ++seed) {
    auto g = corpus.Sample(seed, MutationOptions{});
    ASSERT_TRUE(g.ok()) << g.status().ToString();
    if (g->mesh.size() <= 1) continue;
    ++sampled;
    auto m = ParseHloModule(g->hlo_text);
    ASSERT_TRUE(m.ok());
    EXPECT_TRUE(CheckCollectives(**m, g->mesh).ok()) << g->hlo_text;
    const size_t leaves = hlo_diff::InputLeafShapes(**m).size();
    EXPECT_EQ(g->inputs.size(), leaves * g->mesh.size());
    EXPECT_TRUE(g->origin.Find("mesh") != nullptr);
  }
  EXPECT_GT(sampled, 0);
}

}  // namespace
}  // namespace trench::fuzz
