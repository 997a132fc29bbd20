// The pass interface and the context every pass runs in.
//
// A pass rewrites an HloModule in place and says whether it changed it. The
// PassContext carries the bisection hooks: a rewrite counter shared by all
// passes (--rewrite-limit=N, like LLVM's debug counters) with a log of every
// rewrite decision, and a free-form log for pass diagnostics.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_module.h"

namespace trench {

// One ShouldRewrite() call: which rewrite was asked for and whether it was
// allowed. `index` counts decisions from 0 in call order.
struct RewriteDecision {
  std::string pass;
  std::string site;
  std::string instruction;
  int64_t index = 0;
  bool allowed = false;
};

class PassContext {
 public:
  // rewrite_limit < 0 means unlimited.
  explicit PassContext(int64_t rewrite_limit = -1)
      : rewrite_limit_(rewrite_limit) {}

  // Every rewrite site of every pass calls this before changing anything and
  // rewrites only if it returns true. Returns false once `rewrite_limit`
  // rewrites have been allowed (all later calls too). Each call is recorded
  // in decisions(). `site` is a stable name of the rewrite rule
  // ("add-zero"), `instruction` the name of the instruction (or
  // computation) rewritten.
  bool ShouldRewrite(std::string_view pass, std::string_view site,
                     std::string_view instruction);

  int64_t rewrite_limit() const { return rewrite_limit_; }
  // Rewrites allowed so far.
  int64_t rewrites_allowed() const { return allowed_; }
  const std::vector<RewriteDecision>& decisions() const { return decisions_; }
  // The last allowed decision, or nullptr: with --rewrite-limit=N this is
  // the N-th rewrite, the one a bisector names.
  const RewriteDecision* LastAllowed() const;

  // Appends one line to the log (no trailing newline needed).
  void Log(std::string line) { log_.push_back(std::move(line)); }
  const std::vector<std::string>& log() const { return log_; }

 private:
  int64_t rewrite_limit_;
  int64_t allowed_ = 0;
  std::vector<RewriteDecision> decisions_;
  std::vector<std::string> log_;
};

class HloPass {
 public:
  virtual ~HloPass() = default;
  // Short and stable ("dce", "algsimp"): flags, dumps and bisection use it.
  virtual std::string_view name() const = 0;
  // Rewrites `module` in place. Returns true iff the module's printed text
  // changed (the pipeline checks this claim). On error the module may be
  // partly rewritten but stays well formed.
  // REQUIRES: module verifies; ctx is not null.
  virtual StatusOr<bool> Run(HloModule* module, PassContext* ctx) = 0;
};

}  // namespace trench
