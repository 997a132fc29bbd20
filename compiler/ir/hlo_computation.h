// HloComputation: a named graph of instructions with one root, owned by an
// HloModule. Instructions are kept in insertion order; the text printer and
// evaluators use a post order from the root (plus unreachable ones).
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
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
  int64_t instruction_count() const { return index_.size(); }
  // Operands before users; instructions unreachable from the root come
  // too (in insertion order relative to each other). Control predecessors
  // are ordered before their successors.
  std::vector<HloInstruction*> MakeInstructionPostOrder() const;
  // The instruction named `name`, or nullptr.
  HloInstruction* GetInstructionWithName(const std::string& name) const;

  // For fused computations: the fusion instruction that calls it (or null).
  HloInstruction* fusion_instruction() const { return fusion_instr_; }
  void set_fusion_instruction(HloInstruction* f) { fusion_instr_ = f; }

 private:
  std::string name_;
  HloModule* parent_ = nullptr;
  // Insertion order; a removed instruction leaves a null hole until more
  // than half are holes (Compact), so removal costs O(1) amortized.
  std::vector<std::unique_ptr<HloInstruction>> instrs_;
  std::unordered_map<const HloInstruction*, size_t> index_;  // Into instrs_.
  void Compact();
  std::vector<HloInstruction*> params_;
  HloInstruction* root_ = nullptr;
  HloInstruction* fusion_instr_ = nullptr;
};

}  // namespace trench
