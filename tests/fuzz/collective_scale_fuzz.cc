// fuzz-libs: trench_fuzz
// Reads arbitrary text as an iota replica_groups value to scale onto 1..8
// ids, and as an HLO module whose collectives are checked against a mesh
// and scaled to a smaller one (triage/fuzz/collective_scale.h). A scaled
// iota form parses and has exactly `space` ids; scaling never crashes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "compiler/ir/collective_groups.h"
#include "compiler/ir/hlo_parser.h"
#include "triage/fuzz/collective_scale.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  for (int64_t space = 1; space <= 8; space *= 2) {
    auto scaled = trench::fuzz::ScaleIotaGroups(text, space);
    if (!scaled.ok()) continue;
    auto groups = trench::ParseReplicaGroups(*scaled);
    if (!groups.ok()) std::abort();
    int64_t ids = 0;
    for (const auto& g : *groups) ids += static_cast<int64_t>(g.size());
    if (ids != space) std::abort();
  }
  auto module = trench::ParseHloModule(text);
  if (!module.ok()) return 0;
  const trench::DeviceMesh trace = trench::fuzz::TraceMesh(**module);
  (void)trench::fuzz::CheckCollectives(**module, trace);
  std::vector<trench::fuzz::SizeRatio> ratios;
  (void)trench::fuzz::ScaleCollectiveGroups(
      module->get(), trench::fuzz::ScaledMesh(trace, 4), &ratios);
  return 0;
}
