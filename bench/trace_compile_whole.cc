// bench_trace_compile --whole-model [--repeats N]: see
// trace_compile_whole.h, and for comparison the same trace for one device,
// cut at every collective. Each trace is cut once; the compile of all its
// cuts is timed N times (default 3) and the median is printed, with the
// instructions the cuts hold, how many cuts are SPMD programs, their
// meshes and the collectives compiled. The cuts' shapes are scaled to at
// most 2^16 elements per array (traces_compile_util.h kMaxElements), as
// the trace corpus does; shapes in the traces are production size.
#include "bench/trace_compile_whole.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "compiler/codegen/compile.h"
#include "compiler/ir/collective_groups.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_text_file.h"
#include "tests/compiler/codegen/traces_compile_util.h"
#include "triage/fuzz/collective_scale.h"
#include "triage/fuzz/subgraph.h"

namespace trench::bench {
namespace {

constexpr int64_t kWholeModelInstructions = 1000;
constexpr int64_t kMaxDevices = 4;

struct WholeModel {
  std::string trace;
  int64_t instructions = 0;  // Of the trace (every computation).
  int64_t covered = 0;       // Held by cuts that compile.
  int64_t cuts = 0, spmd_cuts = 0, failed = 0, collectives = 0;
  std::set<std::string> meshes;
  std::vector<double> seconds;  // One per repeat: every cut compiled.
  std::string first_error;
};

// The cut predicate: what the code generator compiles alone, and (with
// `collectives`) the ops that need a mesh (the cut scales their mesh and
// CheckCollectives judges them).
bool Compilable(const HloInstruction& i, bool collectives) {
  if (IsDeviceOp(i.opcode())) return collectives;
  return traces::CodegenCanRun(i);
}

int64_t Collectives(const HloModule& m) {
  int64_t n = 0;
  for (const HloComputation* c : m.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      n += IsCollective(i->opcode());
    }
  }
  return n;
}

void CompileTrace(const HloModule& m, bool collectives, int repeats,
                  WholeModel& w) {
  SubgraphOptions o;
  o.max_instructions = 0;
  o.max_elements = traces::kMaxElements;
  o.max_devices = kMaxDevices;
  auto cut = CutSubgraphs(
      m, [&](const HloInstruction& i) { return Compilable(i, collectives); },
      o);
  if (!cut.ok()) {
    w.first_error = "cut: " + cut.status().message();
    return;
  }
  w.instructions = cut->instructions;
  std::vector<const Subgraph*> cuts;
  for (const Subgraph& sg : cut->subgraphs) {
    if (!sg.verified.ok()) continue;
    if (sg.mesh.size() > 1 &&
        !fuzz::CheckCollectives(*sg.module, sg.mesh).ok()) {
      continue;
    }
    cuts.push_back(&sg);
  }
  for (int r = 0; r < repeats; ++r) {
    const auto t = std::chrono::steady_clock::now();
    int64_t covered = 0, spmd = 0, collectives = 0, failed = 0;
    for (const Subgraph* sg : cuts) {
      codegen::CompileOptions co;
      co.mesh = sg->mesh;
      auto compiled = codegen::Compile(*sg->module, co);
      if (!compiled.ok()) {
        ++failed;
        if (w.first_error.empty()) w.first_error = compiled.status().message();
        continue;
      }
      covered += static_cast<int64_t>(sg->instructions.size());
      if (sg->mesh.size() > 1) {
        ++spmd;
        collectives += Collectives(*sg->module);
        w.meshes.insert(std::to_string(sg->mesh.replicas) + "x" +
                        std::to_string(sg->mesh.partitions));
      }
    }
    w.seconds.push_back(traces::SecondsSince(t));
    w.covered = covered;
    w.cuts = static_cast<int64_t>(cuts.size()) - failed;
    w.spmd_cuts = spmd;
    w.collectives = collectives;
    w.failed = failed;
  }
}

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int RunWholeModelCompile(int repeats) {
  std::printf(
      "| trace | cut | instructions | compiled | cuts | SPMD cuts | "
      "collectives | meshes | compile s (median of %d) | ms/1k | failed "
      "|\n| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: "
      "| ---: |\n",
      repeats);
  int rows = 0;
  for (const auto& path : traces::TraceFiles()) {
    const std::string text = traces::ReadFile(path);
    for (const HloTextPiece& piece : SplitHloTextFile(text)) {
      auto m = ParseHloModule(piece.text, piece.first_line);
      if (!m.ok()) continue;
      int64_t size = 0;
      for (const HloComputation* c : (*m)->computations()) {
        size += static_cast<int64_t>(c->instructions().size());
      }
      if (size < kWholeModelInstructions || Collectives(**m) == 0) continue;
      // The mesh of at most 4 devices, then for comparison one device
      // with the trace cut at every collective.
      for (bool collectives : {true, false}) {
        WholeModel w;
        w.trace = std::filesystem::relative(path, traces::TracesDir()).string();
        CompileTrace(**m, collectives, repeats, w);
        std::string meshes;
        for (const std::string& s : w.meshes) {
          meshes += (meshes.empty() ? "" : ", ") + s;
        }
        const double s = Median(w.seconds);
        std::printf(
            "| `%s` | %s | %lld | %lld | %lld | %lld | %lld | %s | %.2f | "
            "%.1f | %lld |\n",
            w.trace.c_str(),
            collectives ? "4 devices" : "1 device, cut at collectives",
            (long long)w.instructions, (long long)w.covered, (long long)w.cuts,
            (long long)w.spmd_cuts, (long long)w.collectives, meshes.c_str(), s,
            w.covered ? 1000.0 * 1000.0 * s / w.covered : 0.0,
            (long long)w.failed);
        if (!w.first_error.empty()) {
          std::printf("  (first error: %s)\n", w.first_error.c_str());
        }
        std::fflush(stdout);
      }
      ++rows;
    }
  }
  return rows > 0 ? 0 : 1;
}

}  // namespace trench::bench
