// HloComputation: a named graph of instructions with one root, owned by an
// HloModule. Instructions are kept in insertion order; the text printer and
// evaluators use a post order from the root (plus unreachable ones).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_instruction.h"

namespace trench {

class HloModule;

class HloComputation {
 public:
  explicit HloComputation(std::string name) : name_(std::move(name)) {}
  HloComputation(const HloComputation&) = delete;
  HloComputation& operator=(const HloComputation&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  HloModule* parent() const { return parent_; }
  void set_parent(HloModule* m) { parent_ = m; }

  // Takes ownership; returns the added instruction. Parameters are also
  // recorded by their parameter_number.
  HloInstruction* AddInstruction(std::unique_ptr<HloInstruction> instr);
  // Removes an instruction with no users that is not the root; its operand
  // edges are dropped. Returns an error otherwise.
  Status RemoveInstruction(HloInstruction* instr);
  // Removes all of `dead` at once, in O(instructions + |dead|) (one
  // RemoveInstruction costs O(instructions)): each must be in this
  // computation, listed once, not the root, and used only by instructions
  // in `dead`. Returns an error (and removes nothing) otherwise.
  Status RemoveInstructions(const std::vector<HloInstruction*>& dead);
  // Removes instructions not reachable from the root (parameters stay).
  // Returns how many were removed.
  int64_t RemoveDeadInstructions();

  HloInstruction* root_instruction() const { return root_; }
  void set_root_instruction(HloInstruction* r) { root_ = r; }

  // Parameters by number; entries may be null while parsing.
  const std::vector<HloInstruction*>& parameters() const { return params_; }
  int64_t num_parameters() const { return params_.size(); }
  HloInstruction* parameter_instruction(int64_t i) const { return params_[i]; }

  // All instructions in insertion order.
  std::vector<HloInstruction*> instructions() const;
  int64_t instruction_count() const { return live_; }
  // Operands before users; instructions unreachable from the root come
  // too (in insertion order relative to each other). Control predecessors
  // are ordered before their successors.
  std::vector<HloInstruction*> MakeInstructionPostOrder() const;
  // An instruction on a cycle of operand and control edges (the first one
  // the walk of MakeInstructionPostOrder reaches while it is still being
  // visited), or nullptr when there is none.
  const HloInstruction* FindCycle() const;
  // The instruction named `name`, or nullptr.
  HloInstruction* GetInstructionWithName(const std::string& name) const;

  // For fused computations: the fusion instruction that calls it (or null).
  HloInstruction* fusion_instruction() const { return fusion_instr_; }
  void set_fusion_instruction(HloInstruction* f) { fusion_instr_ = f; }

 private:
  std::string name_;
  HloModule* parent_ = nullptr;
  // Insertion order; a removed instruction leaves a null hole until more
  // than half are holes (Compact), so removal costs O(1) amortized. Each
  // instruction records its slot (index_in_parent_): graph walks find an
  // operand's mark without a hash table, which at tens of thousands of
  // instructions no longer fits in cache.
  std::vector<std::unique_ptr<HloInstruction>> instrs_;
  int64_t live_ = 0;  // Non-null entries of instrs_.
  // True when `instr` is in this computation; then
  // instrs_[instr->index_in_parent_] holds it.
  bool Contains(const HloInstruction* instr) const;
  // Depth first over operands, then control predecessors, from every
  // instruction in insertion order; edges leaving the computation are
  // skipped. Appends the post order to *order unless it is null. An edge
  // back to an instruction still being visited is skipped too, or, when
  // stop_at_cycle, ends the walk and its target is returned.
  const HloInstruction* DepthFirst(std::vector<HloInstruction*>* order,
                                   bool stop_at_cycle) const;
  void Compact();
  std::vector<HloInstruction*> params_;
  HloInstruction* root_ = nullptr;
  HloInstruction* fusion_instr_ = nullptr;
};

}  // namespace trench
