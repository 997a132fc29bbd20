// HloModule: a set of computations with one entry, plus module-level
// attributes from the "HloModule name, k=v, ..." header line.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_computation.h"

namespace trench {

class HloModule {
 public:
  explicit HloModule(std::string name) : name_(std::move(name)) {}
  HloModule(const HloModule&) = delete;
  HloModule& operator=(const HloModule&) = delete;

  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }

  // Takes ownership; names must be unique in the module (not checked here:
  // the verifier checks). Computations keep their insertion order, which is
  // the order they are printed in (callees are added before callers).
  HloComputation* AddComputation(std::unique_ptr<HloComputation> c);
  // REQUIRES: c is in this module and nothing calls it.
  void RemoveComputation(HloComputation* c);
  HloComputation* entry_computation() const { return entry_; }
  void set_entry_computation(HloComputation* c) { entry_ = c; }

  std::vector<HloComputation*> computations() const;
  int64_t computation_count() const { return comps_.size(); }
  HloComputation* GetComputationWithName(const std::string& name) const;
  // Callees before callers, entry last; unreachable computations are left
  // out.
  std::vector<HloComputation*> MakeComputationPostOrder() const;

  // Header attributes other than the name, verbatim and in order:
  // entry_computation_layout, input_output_alias, is_scheduled, ...
  const std::vector<std::pair<std::string, std::string>>& header_attrs() const {
    return header_attrs_;
  }
  std::vector<std::pair<std::string, std::string>>& mutable_header_attrs() {
    return header_attrs_;
  }

  // Returns a fresh id for a new instruction.
  int64_t NextUniqueId() { return next_id_++; }

  // A deep copy: computations, instructions (with their source locations),
  // attributes and header.
  std::unique_ptr<HloModule> Clone() const;

  // Total instruction count over all computations.
  int64_t instruction_count() const;

 private:
  std::string name_;
  std::vector<std::unique_ptr<HloComputation>> comps_;
  HloComputation* entry_ = nullptr;
  std::vector<std::pair<std::string, std::string>> header_attrs_;
  int64_t next_id_ = 0;
};

}  // namespace trench
