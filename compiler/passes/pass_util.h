// Helpers shared by the passes: fresh names, side-effect predicates and
// instruction replacement.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_module.h"

namespace trench {

// Hands out instruction names that are unique in a module.
//
// Every pass makes one, so it must cost little on a module of 30,000
// instructions: it keeps the 64-bit hashes of the taken names in one
// open-addressing table, not a copy of every name. Two names with equal
// hashes make the second look taken, so a collision can only skip a free
// name, never hand out a taken one.
class NameUniquer {
 public:
  // Records every instruction name of `module` as taken.
  explicit NameUniquer(const HloModule& module);
  // Returns `base`, or `base.N` for the smallest N >= 1 not yet taken, and
  // marks it taken.
  std::string Get(const std::string& base);

 private:
  // Marks `name` taken; false when it (or a name of equal hash) was.
  bool Take(std::string_view name);
  void Grow();

  std::vector<uint64_t> slots_;  // 0: empty. A power of two long.
  size_t used_ = 0;
  std::unordered_map<std::string, int64_t> next_;  // Per base: last suffix.
};

// True for ops with effects beyond their result (I/O, collectives, rng,
// custom calls) or that call a computation containing one. Such
// instructions are never removed, merged or folded.
bool HasSideEffect(const HloInstruction& instr);

// True when a value of shape `from` may stand in for one of shape `to`:
// equal shapes, or arrays with equal type, dims and dynamic flags whose
// effective layouts (minor_to_major(), defaulted) agree.
bool CanReplaceShape(const Shape& from, const Shape& to);

// Makes every user of `old_instr` (and its computation's root, if it is
// the root) use `new_instr`, then removes `old_instr` if it is now dead
// and has no side effect. REQUIRES: same computation, new != old,
// CanReplaceShape(new->shape(), old->shape()).
Status ReplaceInstruction(HloInstruction* old_instr, HloInstruction* new_instr);

// Adds a new instruction `opcode(operands)` of `shape` to `comp`, named by
// `names` from `base`. Returns it (owned by comp).
HloInstruction* AddNew(HloComputation* comp, NameUniquer* names,
                       HloOpcode opcode, Shape shape,
                       std::vector<HloInstruction*> operands,
                       const std::string& base);

// Sets `instr`'s shape; for a constant, its literal's layout follows (the
// text format ties them). REQUIRES: shape compatible with the current one.
void SetShapeAndLiteralLayout(HloInstruction* instr, Shape shape);

// `shape` without its layout (recursively), for intermediate values whose
// layout is left to layout assignment.
Shape WithoutLayout(Shape shape);

}  // namespace trench
