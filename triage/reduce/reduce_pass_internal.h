// Shared machinery of the HLO reduction passes (reduce_pass_*.cc): opening a
// case for editing, adding and removing entry parameters with their input
// arrays, cleaning up what an edit made dead, the oracle's values of entry
// instructions, literal helpers, and the pass classes' factories.
//
// Every pass works the same way (OpportunityListPass): Count and Apply both
// parse the case's module and enumerate its opportunities in the same
// deterministic order (computations in module order, instructions in post
// order), so the numbers agree. Apply edits the parsed module
// (EditableCase) and FinishCase prints it back with the matching inputs.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "base/status.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/ir/literal.h"
#include "triage/case/case_bundle.h"
#include "triage/reduce/reduction_pass.h"

namespace trench::hlo_reduce {

// A case opened for editing.
struct EditableCase {
  std::unique_ptr<HloModule> module;
  // The array leaves of entry parameter i's input, by parameter number.
  // An SPMD case (devices > 1) holds every device's: device d's leaves of
  // parameter i are param_inputs[i][d * L, (d + 1) * L), L =
  // param_inputs[i].size() / devices.
  std::vector<std::vector<Literal>> param_inputs;
  // The devices of the case's mesh (1: a single-device case).
  int64_t devices = 1;
  // Every instruction name of the module (new names are made unique).
  std::unordered_set<std::string> names;
  // What was already dead when opened (instructions that are neither the
  // root nor used, entry parameters without users, computations that
  // neither the entry nor any computation calls, and through them what
  // they call), by name: FinishCase removes only what an
  // edit made dead, so that no candidate is forced to lose them.
  std::unordered_set<std::string> dead_instructions;
  std::unordered_set<std::string> dead_computations;
  // The entry's signature when opened (FinishCase drops header attributes
  // that describe it when it changed).
  std::vector<Shape> entry_param_shapes;
  Shape entry_root_shape;
};

// Parses and verifies c.module_text and splits c.inputs by parameter (an
// SPMD case's per device, as EditableCase says). Errors: the parser's or
// verifier's, InvalidArgument for inputs that do not match.
StatusOr<EditableCase> OpenCase(const hlo_diff::Case& c);

// A name not used in the module, from `base` (recorded in e.names).
std::string FreshName(EditableCase& e, const std::string& base);

// Appends an entry parameter of `shape` whose input is `leaves` (the array
// leaves of shape, in order; in an SPMD case either every device's, device
// after device, or one device's, which every device then gets). Returns
// it.
HloInstruction* AddEntryParameter(EditableCase& e, const Shape& shape,
                                  const std::string& base_name,
                                  std::vector<Literal> leaves);

// Removes everything the edits made dead (see EditableCase), and `also`
// (instructions to remove outright: their uses must have been rewired),
// renumbers the entry parameters densely (dropping the inputs of removed
// ones), drops the entry_computation_layout / input_output_alias /
// buffer_donor header attributes when the entry's signature changed, and
// prints the result as a case with c's options, origin and extra keys
// (signature and verdict are reset: they belong to the old case).
StatusOr<hlo_diff::Case> FinishCase(
    EditableCase& e, const hlo_diff::Case& c,
    const std::vector<HloInstruction*>& also = {});

// Zero-filled array leaves of `shape` (token leaves take none).
std::vector<Literal> ZeroLeaves(const Shape& shape);

// The oracle's value of every entry instruction of c's module (by name)
// whose value has at most kMaxTapElements elements, evaluated on c.inputs.
// For an SPMD case (the SPMD oracle on its mesh) each value is a tuple of
// the devices' values, in device order, so that LiteralLeaves gives every
// device's leaves as AddEntryParameter takes them. Empty when the module
// is larger than kMaxOracleElements (sum over the instructions, times the
// devices), uses a token or the oracle fails. Cached per case (text, mesh
// and inputs), thread-safe.
inline constexpr int64_t kMaxOracleElements = int64_t{1} << 22;
inline constexpr int64_t kMaxTapElements = int64_t{1} << 20;
using ValueMap = std::unordered_map<std::string, Literal>;
std::shared_ptr<const ValueMap> OracleValues(const hlo_diff::Case& c);

// The value a constant standing for an instruction may hold: `value`
// itself (one device), or the devices' common value of an SPMD case's
// per-device tuple (OracleValues); nullptr when the devices differ.
const Literal* ConstantValue(const Literal& value, int64_t devices);

// The leaves of `value` (tuple or array) as separate array literals.
std::vector<Literal> LiteralLeaves(const Literal& value);

// The leading corner of `lit` with dims `dims` (each <= lit's).
Literal SliceLeadingCorner(const Literal& lit,
                           const std::vector<int64_t>& dims);

// True when every element's bytes of the array literal are zero.
bool IsAllZero(const Literal& lit);

// A literal of the array `shape` whose every element is `v` (complex:
// real part v).
Literal SplatLiteral(const Shape& shape, double v);

// simplify-constants' well-founded order on array constants: 0 all zeros
// (bytes), 1 all ones (pred: true), 2 another splat, 3 not a splat. Every
// simplify-constants opportunity strictly lowers it.
int ConstantRank(const Literal& lit);

// Validates that `chosen` is ascending, unique and < count.
Status CheckChosen(std::span<const int64_t> chosen, int64_t count);

// Inlines the computation `callee` at `site`, with `args` standing for its
// parameters: clones callee's instructions into site's computation and
// returns the clone of its root. Called computations are shared.
HloInstruction* InlineComputation(EditableCase& e, HloInstruction* site,
                                  const HloComputation& callee,
                                  const std::vector<HloInstruction*>& args);

// shrink-shapes' propagation (reduce_pass_shrink_propagate.cc): the
// instructions of `changed` (with their shapes before) have new shapes;
// their users in `comp` (and the computations those call) follow by shape
// inference, fixing up attributes where the op allows. Best effort: what
// cannot follow keeps its declared shape (the module then fails to verify).
void PropagateShapes(EditableCase& e, HloComputation& comp,
                     std::unordered_map<const HloInstruction*, Shape> changed);

// The frame every pass shares (with its name and description): its
// opportunities are a list of `Opportunity` values enumerated from the
// opened case, Count is the list's size, and Apply opens the case,
// enumerates the list again (the same order, so the numbers agree), checks
// `chosen` (CheckChosen) and hands the chosen entries, in enumeration
// order, to ApplyChosen.
template <typename Opportunity>
class OpportunityListPass : public ReductionPass {
 public:
  // `name` and `description`: string literals (ReductionPass's name() and
  // description()).
  OpportunityListPass(std::string_view name, std::string_view description)
      : name_(name), description_(description) {}

  std::string_view name() const final { return name_; }
  std::string_view description() const final { return description_; }

  int64_t Count(const hlo_diff::Case& c) const final {
    StatusOr<EditableCase> e = OpenCase(c);
    return e.ok() ? static_cast<int64_t>(Opportunities(c, *e).size()) : 0;
  }

  StatusOr<hlo_diff::Case> Apply(const hlo_diff::Case& c,
                                 std::span<const int64_t> chosen) const final {
    ASSIGN_OR_RETURN(EditableCase e, OpenCase(c));
    std::vector<Opportunity> ops = Opportunities(c, e);
    RETURN_IF_ERROR(CheckChosen(chosen, static_cast<int64_t>(ops.size())));
    std::vector<Opportunity> picked;
    picked.reserve(chosen.size());
    for (int64_t k : chosen) picked.push_back(std::move(ops[k]));
    return ApplyChosen(c, e, picked);
  }

 protected:
  // The opportunities of `c`, opened as `e`, in a deterministic order.
  virtual std::vector<Opportunity> Opportunities(
      const hlo_diff::Case& c, const EditableCase& e) const = 0;
  // `c` with `chosen` (a subset of Opportunities(c, e), in its order)
  // applied to `e`, printed back (FinishCase). Errors: FailedPrecondition
  // when this combination cannot be applied.
  virtual StatusOr<hlo_diff::Case> ApplyChosen(
      const hlo_diff::Case& c, EditableCase& e,
      const std::vector<Opportunity>& chosen) const = 0;

 private:
  std::string_view name_, description_;
};

// The pass objects (one file each).
std::unique_ptr<ReductionPass> MakeRemoveOutputsPass();
std::unique_ptr<ReductionPass> MakeRemoveInstructionsPass();
std::unique_ptr<ReductionPass> MakeReplaceSubgraphsPass();
std::unique_ptr<ReductionPass> MakeRewireUsesPass();
std::unique_ptr<ReductionPass> MakeInlineCallsPass();
std::unique_ptr<ReductionPass> MakeUnfusePass();
std::unique_ptr<ReductionPass> MakeSortOperandsPass();
std::unique_ptr<ReductionPass> MakeShrinkMeshPass();
std::unique_ptr<ReductionPass> MakeShrinkShapesPass();
std::unique_ptr<ReductionPass> MakeSimplifyConstantsPass();
std::unique_ptr<ReductionPass> MakeSimplifyInputsPass();
std::unique_ptr<ReductionPass> MakeDropAttributesPass();
std::unique_ptr<ReductionPass> MakeRenamePass();
std::unique_ptr<ReductionPass> MakeShortTextPass();

}  // namespace trench::hlo_reduce
