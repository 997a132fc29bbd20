// The pass pipeline: runs passes in order under the bisection controls and
// checks every pass's claims.
//
// Controls (the hloc flags):
//   --disable-passes=a,b  skip passes by name (validated against the
//                         registry);
//   --pass-limit=N        only the first N pass executions run; repeated
//                         runs of a pass in a fixpoint group count each
//                         time; disabled passes are not executions;
//   --rewrite-limit=N     lets only the first N rewrites happen, counted
//                         across all passes (PassContext::ShouldRewrite);
//   --dump-dir=D          writes D/00.input.hlo and, after each executed
//                         pass, D/NN.<pass>.hlo (NN = execution number,
//                         two digits at least; a required pass writes
//                         D/NN.required.<pass>.hlo, NN = executions so far).
// Checks after every pass execution: the module's fingerprint (a hash of
// its text, HloModuleFingerprint) is taken before and after, and a pass whose
// "changed" answer disagrees with the hashes fails the pipeline with
// Internal("pass 'x' ..."); a pass that changed the module is followed by
// VerifyModule, whose failure is reported as Internal naming the pass.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/pass.h"

namespace trench {

struct PipelineOptions {
  std::vector<std::string> disabled_passes;
  int64_t pass_limit = -1;     // < 0: unlimited.
  int64_t rewrite_limit = -1;  // < 0: unlimited. Used by MakeContext().
  std::string dump_dir;        // Empty: no dumps.
  VerifyOptions verify_options;
};

// Parses one command-line argument of the forms above into *options.
// Returns true when `arg` is one of them, false when it is some other
// argument; InvalidArgument for a malformed value or an unknown pass name.
StatusOr<bool> ParsePipelineFlag(std::string_view arg,
                                 PipelineOptions* options);

// What happened to one pass execution (or skipped pass).
struct PassRunStats {
  std::string pass;
  int64_t execution = 0;  // 1-based execution number; 0 when skipped.
  bool skipped = false;   // Disabled or beyond --pass-limit.
  bool required = false;  // A required pass (not an execution).
  bool changed = false;
  double seconds = 0;
  int64_t rewrites = 0;  // Rewrites allowed during this execution.
};

class PassPipeline {
 public:
  explicit PassPipeline(PipelineOptions options = {})
      : options_(std::move(options)) {}

  // Appends a pass that runs once. A `required` pass always runs: it
  // cannot be disabled (Run fails with InvalidArgument if it is), is not a
  // --pass-limit execution, and runs under its own unlimited PassContext so
  // its rewrites are not --rewrite-limit decisions.
  void AddPass(std::unique_ptr<HloPass> pass, bool required = false);
  // Appends a group that repeats until no pass in it changes the module or
  // `max_iterations` rounds ran (logged when the cap is hit).
  // REQUIRES: max_iterations >= 1.
  void AddFixpointGroup(std::vector<std::unique_ptr<HloPass>> passes,
                        int max_iterations);

  // The registry's default pipeline: passes in registry order, consecutive
  // kSimplify passes forming one fixpoint group (cap kSimplifyIterations).
  static constexpr int kSimplifyIterations = 8;
  static std::unique_ptr<PassPipeline> CreateDefault(PipelineOptions options);

  // A fresh context honoring options().rewrite_limit.
  PassContext MakeContext() const {
    return PassContext(options_.rewrite_limit);
  }

  // Runs the pipeline. Returns whether any pass changed the module.
  // Errors: InvalidArgument if the input module does not verify or an
  // option names an unknown pass; Internal naming the pass on a wrong
  // "changed" report or a module that fails verification after it; the
  // pass's own error (with the pass name as context); IoError for dumps.
  // REQUIRES: module and ctx not null.
  StatusOr<bool> Run(HloModule* module, PassContext* ctx);

  const std::vector<PassRunStats>& stats() const { return stats_; }
  int64_t executions() const { return executions_; }
  const PipelineOptions& options() const { return options_; }

 private:
  struct Group {
    std::vector<std::unique_ptr<HloPass>> passes;
    int max_iterations = 1;
    bool required = false;
  };
  // Runs or skips one pass; sets *changed.
  Status RunOne(HloPass* pass, bool required, HloModule* module,
                PassContext* ctx, bool* changed);
  Status Dump(const HloModule& module, const std::string& file) const;

  PipelineOptions options_;
  std::vector<Group> groups_;
  std::vector<PassRunStats> stats_;
  int64_t executions_ = 0;
  // The module's fingerprint after the last pass of this Run (nothing
  // else touches it between passes): the next pass's "before".
  std::optional<uint64_t> fingerprint_;
};

// Crash diagnostics (hloc's TRENCH_PASS_TRACE): a process-wide function
// called right before every pass execution, required passes included, with
// the pass name and its execution number (PassRunStats::execution), and by
// the code generator before the back end ("codegen", 0). nullptr (the
// default): nothing is called. Set it before compiling, not concurrently.
using PassEnterHook = void (*)(std::string_view pass, int64_t execution);
void SetPassEnterHook(PassEnterHook hook);
// Calls the hook, if one is set.
void NotifyPassEnter(std::string_view pass, int64_t execution);

}  // namespace trench
