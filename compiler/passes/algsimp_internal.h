// Internal to the algebraic simplifier: the environment rules run in and
// helpers shared by the rule files.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/pass_util.h"

namespace trench::algsimp {

struct Env {
  PassContext* ctx;
  NameUniquer* names;
  // Asks the rewrite counter about rewriting `instr` at `site`.
  bool Should(std::string_view site, const HloInstruction* instr) {
    return ctx->ShouldRewrite("algsimp", site, instr->name());
  }
};

// A rule looks at one instruction and rewrites it (or its operand edges) at
// most once. Returns true when it changed the module; `instr` may then have
// been removed, so callers must not touch it again.
StatusOr<bool> SimplifyArithmetic(HloInstruction* instr, Env* env);
StatusOr<bool> SimplifyShape(HloInstruction* instr, Env* env);
StatusOr<bool> SimplifyReduceOrDot(HloInstruction* instr, Env* env);

// True when `instr` is a constant, or a broadcast of one, whose every
// element has the bits of `value` converted to instr's element type
// (so -0.0 and 0.0 differ). Real types only; false otherwise.
bool IsUniform(const HloInstruction* instr, double value);
// The value of a pred constant (or broadcast of one) whose elements are all
// equal; nullopt otherwise.
std::optional<bool> UniformPred(const HloInstruction* instr);

// True when `repl` may replace `old` (CanReplaceShape).
bool CanReplace(const HloInstruction* old, const HloInstruction* repl);
// Replaces `old` by `repl` (see ReplaceInstruction). REQUIRES: CanReplace.
Status ReplaceWith(HloInstruction* old, HloInstruction* repl);
// Removes `instr` when nothing uses it and DCE could remove it.
Status RemoveIfDead(HloInstruction* instr);

// A shape of `type` and `dims` with the default layout if `like` has a
// layout, and none otherwise (new intermediate values follow the module's
// convention).
Shape ShapeLike(PrimitiveType type, std::vector<int64_t> dims,
                const Shape& like);
// Adds a scalar constant of `type` holding `value` (pred: value != 0).
HloInstruction* AddScalarConstant(HloComputation* comp, Env* env,
                                  PrimitiveType type, double value,
                                  const Shape& like);
// Adds broadcast(scalar) to `shape` (dimensions={}), or returns `scalar`
// when `shape` is rank 0.
HloInstruction* AddBroadcastScalar(HloComputation* comp, Env* env,
                                   HloInstruction* scalar, const Shape& shape,
                                   const std::string& base);

}  // namespace trench::algsimp
