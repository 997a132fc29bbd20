#include "compiler/passes/pass_registry.h"

#include "compiler/passes/algsimp.h"
#include "compiler/passes/all_reduce_combiner.h"
#include "compiler/passes/buffer_assignment.h"
#include "compiler/passes/constant_folding.h"
#include "compiler/passes/convolution_expander.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/dce.h"
#include "compiler/passes/dot_decomposer.h"
#include "compiler/passes/fusion.h"
#include "compiler/passes/layout_assignment.h"

namespace trench {

const std::vector<PassInfo>& RegisteredPasses() {
  static const std::vector<PassInfo>* passes = new std::vector<PassInfo>{
#define X(cls, name, stage, sources, desc) \
  {name, desc, sources, PassStage::stage,  \
   []() -> std::unique_ptr<HloPass> { return std::make_unique<cls>(); }},
#include "compiler/passes/pass_registry.def"
#undef X
  };
  return *passes;
}

const PassInfo* FindPass(std::string_view name) {
  for (const PassInfo& p : RegisteredPasses()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

namespace {

std::string KnownNames() {
  std::string out;
  for (const PassInfo& p : RegisteredPasses()) {
    if (!out.empty()) out += ", ";
    out += p.name;
  }
  return out;
}

}  // namespace

StatusOr<std::unique_ptr<HloPass>> CreatePass(std::string_view name) {
  const PassInfo* info = FindPass(name);
  if (info == nullptr) {
    return NotFound("unknown pass '" + std::string(name) +
                    "' (known passes: " + KnownNames() + ")");
  }
  return info->create();
}

StatusOr<std::vector<std::string>> ParsePassList(std::string_view list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find(',', start);
    if (end == std::string_view::npos) end = list.size();
    std::string_view item = list.substr(start, end - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) {
      if (FindPass(item) == nullptr) {
        return InvalidArgument("unknown pass '" + std::string(item) +
                               "' (known passes: " + KnownNames() + ")");
      }
      out.emplace_back(item);
    }
    start = end + 1;
  }
  return out;
}

}  // namespace trench
