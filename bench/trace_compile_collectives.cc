// bench_trace_compile --collectives: trace coverage with collectives in.
// For every trace of TracesDir() holding a collective, the instructions
// the corpus' cuts cover (triage/fuzz/trace_corpus.h defaults: oracle
// ops, at most 64 instructions and 2^14 elements per array) before and
// after keeping collectives, partition-id and replica-id (cuts with them
// become SPMD programs on the trace's mesh scaled to at most 4 devices,
// subgraph.h SubgraphOptions::max_devices). "covered" counts the original
// instructions of the cuts that scale and verify (and, with collectives,
// fit their scaled mesh: CheckCollectives); no target runs.
#include "bench/trace_compile_collectives.h"

#include <cstdio>
#include <map>
#include <set>

#include "compiler/ir/collective_groups.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_text_file.h"
#include "tests/compiler/codegen/traces_compile_util.h"
#include "triage/fuzz/collective_scale.h"
#include "triage/fuzz/generator.h"
#include "triage/fuzz/subgraph.h"

namespace trench::bench {
namespace {

struct Coverage {
  int64_t instructions = 0, covered = 0, subgraphs = 0, spmd = 0;
  std::set<std::string> meshes;
};

bool Supported(const HloInstruction& i, bool collectives) {
  if (i.opcode() == HloOpcode::kParameter) return false;
  if (collectives && IsDeviceOp(i.opcode())) return true;
  return fuzz::OracleEvaluates(i.opcode()) && !i.shape().IsToken();
}

void AddCut(const HloModule& m, bool collectives, Coverage& c) {
  SubgraphOptions o;
  o.max_instructions = 64;
  o.max_elements = 1 << 14;
  auto cut = CutSubgraphs(
      m, [&](const HloInstruction& i) { return Supported(i, collectives); }, o);
  if (!cut.ok()) return;
  c.instructions += cut->instructions;
  for (const Subgraph& sg : cut->subgraphs) {
    if (!sg.verified.ok()) continue;
    if (sg.mesh.size() > 1) {
      if (!fuzz::CheckCollectives(*sg.module, sg.mesh).ok()) continue;
      ++c.spmd;
      c.meshes.insert(std::to_string(sg.mesh.replicas) + "x" +
                      std::to_string(sg.mesh.partitions));
    }
    ++c.subgraphs;
    c.covered += static_cast<int64_t>(sg.instructions.size());
  }
}

double Percent(int64_t a, int64_t b) { return b ? 100.0 * a / b : 0.0; }

}  // namespace

int RunCollectiveCoverage() {
  std::printf(
      "| trace | instructions | collectives | covered before | %% | covered "
      "after | %% | cuts before | cuts after | SPMD cuts | scaled meshes "
      "|\n| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
      "---: | --- |\n");
  Coverage all_before, all_after;
  int64_t all_collectives = 0;
  for (const auto& path : traces::TraceFiles()) {
    const std::string text = traces::ReadFile(path);
    Coverage before, after;
    int64_t collectives = 0;
    for (const HloTextPiece& piece : SplitHloTextFile(text)) {
      auto m = ParseHloModule(piece.text, piece.first_line);
      if (!m.ok()) continue;
      for (const HloComputation* c : (*m)->computations()) {
        for (const HloInstruction* i : c->instructions()) {
          collectives += IsCollective(i->opcode());
        }
      }
      if (collectives == 0) continue;
      AddCut(**m, false, before);
      AddCut(**m, true, after);
    }
    if (collectives == 0) continue;
    std::string meshes;
    for (const std::string& s : after.meshes) {
      meshes += (meshes.empty() ? "" : ", ") + s;
    }
    std::printf(
        "| `%s` | %lld | %lld | %lld | %.1f%% | %lld | %.1f%% | %lld | %lld "
        "| %lld | %s |\n",
        std::filesystem::relative(path, traces::TracesDir()).string().c_str(),
        (long long)after.instructions, (long long)collectives,
        (long long)before.covered, Percent(before.covered, before.instructions),
        (long long)after.covered, Percent(after.covered, after.instructions),
        (long long)before.subgraphs, (long long)after.subgraphs,
        (long long)after.spmd, meshes.c_str());
    std::fflush(stdout);
    all_collectives += collectives;
    for (auto [to, from] :
         {std::pair{&all_before, &before}, std::pair{&all_after, &after}}) {
      to->instructions += from->instructions;
      to->covered += from->covered;
      to->subgraphs += from->subgraphs;
      to->spmd += from->spmd;
    }
  }
  std::printf(
      "| **total** | %lld | %lld | %lld | %.1f%% | %lld | %.1f%% | %lld | "
      "%lld | %lld | |\n",
      (long long)all_after.instructions, (long long)all_collectives,
      (long long)all_before.covered,
      Percent(all_before.covered, all_before.instructions),
      (long long)all_after.covered,
      Percent(all_after.covered, all_after.instructions),
      (long long)all_before.subgraphs, (long long)all_after.subgraphs,
      (long long)all_after.spmd);
  return 0;
}

}  // namespace trench::bench
