// HloInstruction: one node of an HLO computation.
//
// An instruction is owned by its HloComputation. Operands and users are
// non-owning pointers kept consistent by the mutators here: every operand
// edge has a matching user entry. Called computations (to_apply=, calls=,
// condition=/body=, branches, select=/scatter=) are owned by the module.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_attributes.h"
#include "compiler/ir/literal.h"
#include "compiler/ir/opcode.h"
#include "compiler/ir/shape.h"

namespace trench {

class HloComputation;

// Where an instruction was written in HLO text: the 1-based line and column
// of its name (of its shape for an unnamed operand instruction), in the
// numbering of the file the text came from. {0, 0} for an instruction built
// in memory (by a pass, a generator or a test).
struct SourceLocation {
  int32_t line = 0;
  int32_t column = 0;
  bool known() const { return line > 0; }
  // "LINE:COL". REQUIRES: known().
  std::string ToString() const;
  bool operator==(const SourceLocation&) const = default;
};

class HloInstruction {
 public:
  HloInstruction(HloOpcode opcode, Shape shape, std::string name);
  HloInstruction(const HloInstruction&) = delete;
  HloInstruction& operator=(const HloInstruction&) = delete;

  // Convenience factories. Operand edges are wired at once (AddOperand).
  static std::unique_ptr<HloInstruction> CreateParameter(int64_t number,
                                                         Shape shape,
                                                         std::string name);
  static std::unique_ptr<HloInstruction> CreateConstant(Literal literal,
                                                        std::string name);
  // Any op: operands wired, attributes default.
  static std::unique_ptr<HloInstruction> Create(
      HloOpcode opcode, Shape shape, std::vector<HloInstruction*> operands,
      std::string name);

  HloOpcode opcode() const { return opcode_; }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  const Shape& shape() const { return shape_; }
  Shape* mutable_shape() { return &shape_; }
  void set_shape(Shape s) { shape_ = std::move(s); }

  // A module-unique id, assigned when added to a computation (-1 before).
  int64_t unique_id() const { return unique_id_; }
  void set_unique_id(int64_t id) { unique_id_ = id; }
  HloComputation* parent() const { return parent_; }
  void set_parent(HloComputation* c) { parent_ = c; }

  // Operands.
  int64_t operand_count() const { return operands_.size(); }
  HloInstruction* operand(int64_t i) const { return operands_[i]; }
  const std::vector<HloInstruction*>& operands() const { return operands_; }
  // Appends an operand and records this instruction as its user.
  void AddOperand(HloInstruction* operand);
  // Replaces operand i (user lists updated). REQUIRES: i < operand_count().
  void ReplaceOperandWith(int64_t i, HloInstruction* new_operand);
  // Removes all operands (user lists updated).
  void DetachOperands();

  // Users, each listed once, in the order they were added.
  const std::vector<HloInstruction*>& users() const { return users_; }
  int64_t user_count() const { return users_.size(); }
  // Makes every user of this instruction (and the parent's root, if this
  // is it) use `other` instead. REQUIRES: other != this; shapes compatible
  // (not checked here; the verifier checks).
  void ReplaceAllUsesWith(HloInstruction* other);

  // Control predecessors (control-predecessors={...}), and the
  // instructions that have this one among theirs (kept in step).
  const std::vector<HloInstruction*>& control_predecessors() const {
    return control_predecessors_;
  }
  const std::vector<HloInstruction*>& control_successors() const {
    return control_successors_;
  }
  void AddControlPredecessor(HloInstruction* p);
  void RemoveControlPredecessor(HloInstruction* p);
  // Drops this instruction's control predecessors.
  void DropControlEdges();

  // Called computations; their roles follow from the opcode:
  // reduce/map/sort/scatter/reduce-window/all-reduce: {to_apply};
  // fusion/call: {calls}; while: {condition, body};
  // conditional: branches (PRED form: {true, false});
  // select-and-scatter: {select, scatter}.
  const std::vector<HloComputation*>& called_computations() const {
    return called_;
  }
  void AddCalledComputation(HloComputation* c) { called_.push_back(c); }
  void set_called_computation(int64_t i, HloComputation* c) { called_[i] = c; }
  void ClearCalledComputations() { called_.clear(); }
  // REQUIRES: the opcode has that role.
  HloComputation* to_apply() const { return called_.at(0); }
  HloComputation* fused_computation() const { return called_.at(0); }
  HloComputation* while_condition() const { return called_.at(0); }
  HloComputation* while_body() const { return called_.at(1); }

  // constant: the value. REQUIRES: opcode() == kConstant.
  const Literal& literal() const { return *literal_; }
  // False for a constant built without a value (a malformed instruction).
  bool has_literal() const { return literal_ != nullptr; }
  void set_literal(Literal l);

  // The attributes live out of line and only once set (most instructions
  // have none): a whole-module walk then touches about a third of the
  // memory per instruction. attrs() of an instruction without any is a
  // shared default-constructed one; mutable_attrs() makes its own.
  const HloAttributes& attrs() const {
    return attrs_ ? *attrs_ : DefaultAttributes();
  }
  HloAttributes& mutable_attrs() {
    if (!attrs_) attrs_ = std::make_unique<HloAttributes>();
    return *attrs_;
  }
  int64_t parameter_number() const { return attrs().parameter_number; }
  int64_t tuple_index() const { return attrs().tuple_index; }
  const std::vector<int64_t>& dimensions() const { return attrs().dimensions; }

  // A copy with the given operands, not yet in any computation; called
  // computations are shared (not cloned). Name gets `suffix` appended.
  std::unique_ptr<HloInstruction> CloneWithOperands(
      std::vector<HloInstruction*> operands, const std::string& suffix) const;

  // Structural equality of this node alone: opcode, shape (with layout),
  // attributes, literal; operands compared by the given predicate.
  bool IdenticalIgnoringOperands(const HloInstruction& o) const;

  // Where the parser read this instruction; unknown ({0, 0}) otherwise.
  // Not copied by CloneWithOperands (a clone is a new instruction); kept
  // by HloModule::Clone. Ignored by equality.
  const SourceLocation& source_location() const { return location_; }
  void set_source_location(SourceLocation l) { location_ = l; }

  // Short form for messages: "%name = f32[2]{0} add(...)".
  std::string ShortString() const;

 private:
  friend class HloComputation;  // Keeps index_in_parent_.
  void RemoveUser(HloInstruction* user);
  void AddUser(HloInstruction* user);

  HloOpcode opcode_;
  Shape shape_;
  std::string name_;
  int64_t unique_id_ = -1;
  SourceLocation location_;
  HloComputation* parent_ = nullptr;
  // This instruction's slot in its parent's instruction list, kept by
  // HloComputation (next to parent_: graph walks read both per edge).
  size_t index_in_parent_ = 0;
  std::vector<HloInstruction*> operands_;
  std::vector<HloInstruction*> users_;
  std::vector<HloInstruction*> control_predecessors_;
  std::vector<HloInstruction*> control_successors_;
  std::vector<HloComputation*> called_;
  std::unique_ptr<Literal> literal_;
  std::unique_ptr<HloAttributes> attrs_;  // Null: none set.
  static const HloAttributes& DefaultAttributes();
};

}  // namespace trench
