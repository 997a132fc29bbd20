// Compile(): the pass pipeline, then the back end (compile.h).
#include <algorithm>
#include <set>

#include "compiler/codegen/compile.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/opcode.h"

namespace trench::codegen {
namespace {

constexpr char kBufferAssignment[] = "buffer-assignment";

std::set<std::string> TappableNames(const HloModule& module) {
  std::set<std::string> names;
  for (const HloInstruction* i : TappableInstructions(module)) {
    names.insert(i->name());
  }
  return names;
}

}  // namespace

StatusOr<Compilation> Compile(const HloModule& module,
                              const CompileOptions& options) {
  if (module.entry_computation() == nullptr) {
    return InvalidArgument("hloc: module has no entry");
  }
  CompileOptions backend = options;
  if (!options.taps_all && !options.taps.empty()) {
    const std::set<std::string> before = TappableNames(module);
    for (const std::string& name : options.taps) {
      if (!before.count(name)) {
        return NotFound("hloc: --taps: no instruction named '" + name +
                        "' in the entry computation or a fused computation");
      }
    }
  }
  PipelineOptions po;
  // buffer-assignment is a registered pass too: the pipeline accepts its
  // name, and the back end below reads the same list.
  po.disabled_passes = options.disabled_passes;
  po.pass_limit = options.pass_limit.value_or(-1);
  po.rewrite_limit = options.rewrite_limit.value_or(-1);
  po.dump_dir = options.pass_dump_dir;
  std::unique_ptr<PassPipeline> pipeline =
      PassPipeline::CreateDefault(std::move(po));
  PassContext ctx = pipeline->MakeContext();
  Compilation out;
  out.optimized = module.Clone();
  StatusOr<bool> ran = pipeline->Run(out.optimized.get(), &ctx);
  out.passes = pipeline->stats();
  out.pass_executions = pipeline->executions();
  if (!ran.ok()) return ran.status();
  const auto& disabled = options.disabled_passes;
  out.buffer_assignment =
      std::find(disabled.begin(), disabled.end(), kBufferAssignment) ==
          disabled.end() &&
      (!options.pass_limit || out.pass_executions < *options.pass_limit);
  backend.buffer_assignment = out.buffer_assignment;
  backend.context = &ctx;
  if (!options.taps_all && !options.taps.empty()) {
    const std::set<std::string> after = TappableNames(*out.optimized);
    backend.taps.clear();
    for (const std::string& name : options.taps) {
      (after.count(name) ? backend.taps : out.taps_unavailable).push_back(name);
    }
  }
  NotifyPassEnter("codegen", 0);  // Crash diagnostics (pipeline.h).
  // Every requested tap may be gone; then there is nothing to tap.
  StatusOr<tpu::Executable> exe = CompileModule(*out.optimized, backend);
  out.decisions = ctx.decisions();
  out.rewrites_allowed = ctx.rewrites_allowed();
  out.log = ctx.log();
  if (!exe.ok()) return exe.status();
  out.executable = std::move(exe).value();
  return out;
}

}  // namespace trench::codegen
