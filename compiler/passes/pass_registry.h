// The pass registry, generated from pass_registry.def: names, factories,
// descriptions, flag validation and the default pipeline.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/passes/pass.h"

namespace trench {

// kSimplify: member of the simplification fixpoint group; kOnce: runs once;
// kRequired: runs once and always (expanders of ops the code generator
// does not emit): it cannot be disabled, does not count toward
// --pass-limit and its rewrites do not count toward --rewrite-limit, as
// LLVM's required passes ignore -opt-bisect-limit. kCodegen: run by the
// code generator, not by the pipeline (CreateDefault skips it); its name is
// still valid in --disable-passes (buffer-assignment).
enum class PassStage { kSimplify, kOnce, kRequired, kCodegen };

struct PassInfo {
  std::string_view name;
  std::string_view description;
  // The files that implement the pass: space-separated globs relative to
  // the repository root (pass_registry.def).
  std::string_view sources;
  PassStage stage;
  std::unique_ptr<HloPass> (*create)();
};

// Every registered pass, in registry (default pipeline) order.
const std::vector<PassInfo>& RegisteredPasses();
// The pass named `name`, or nullptr.
const PassInfo* FindPass(std::string_view name);
// A new instance of the pass named `name`; NotFound (listing the known
// names) when there is none.
StatusOr<std::unique_ptr<HloPass>> CreatePass(std::string_view name);

// Parses a comma-separated list of pass names ("dce,cse"; empty items are
// ignored). Returns InvalidArgument naming the unknown pass and listing the
// known ones when a name is not registered.
StatusOr<std::vector<std::string>> ParsePassList(std::string_view list);

}  // namespace trench
