// fuzz-libs: trench_ir
// Reads arbitrary text as a replica_groups and a source_target_pairs
// attribute (compiler/ir/collective_groups.h). Groups that parse hold
// non-negative ids; an iota form's groups are equal in size and hold each
// id of the reshape exactly once.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string_view>

#include "compiler/ir/collective_groups.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto groups = trench::ParseReplicaGroups(text);
  if (groups.ok()) {
    std::set<int64_t> ids;
    size_t count = 0;
    for (const auto& g : *groups) {
      for (int64_t id : g) {
        if (id < 0) std::abort();
        ids.insert(id);
        ++count;
      }
      const bool iota = text.find("<=") != std::string_view::npos;
      if (iota && g.size() != groups->front().size()) std::abort();
    }
    if (text.find("<=") != std::string_view::npos &&
        (ids.size() != count ||
         (count > 0 && *ids.rbegin() != static_cast<int64_t>(count) - 1))) {
      std::abort();
    }
  }
  auto pairs = trench::ParseSourceTargetPairs(text);
  if (pairs.ok()) {
    for (const auto& [s, t] : *pairs) {
      if (s < 0 || t < 0) std::abort();
    }
  }
  return 0;
}
