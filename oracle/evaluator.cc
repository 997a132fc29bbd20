// The reference evaluator's core: walks each computation in post order,
// keeps one value per instruction, frees a value as soon as its last user
// has run, and dispatches each opcode to its kernel.
#include "oracle/evaluator.h"

#include <malloc.h>

#include <algorithm>
#include <exception>
#include <new>
#include <optional>
#include <thread>

#include "compiler/ir/collective_groups.h"
#include "oracle/elementwise.h"
#include "oracle/evaluator_internal.h"

namespace trench {
namespace oracle {
namespace {

std::string Name(const HloInstruction& instr) { return "%" + instr.name(); }

// Prefixes "%name: " unless the message already starts with it.
Status InContext(const Status& s, const HloInstruction& instr) {
  const std::string prefix = Name(instr) + ":";
  if (s.message().rfind(prefix, 0) == 0) return s;
  return s.WithContext(Name(instr));
}

Status Unsupported(const HloInstruction& instr) {
  return Unimplemented("unsupported op " +
                       std::string(OpcodeName(instr.opcode())) + " (" +
                       Name(instr) + ")");
}

}  // namespace

// One instruction's value: owned, or borrowed (parameters, constants).
struct Evaluator::Slot {
  std::optional<Literal> owned;  // Optional: no Literal built for borrowed.
  const Literal* value = nullptr;
  int remaining = 0;  // Live users not yet evaluated.
  bool is_owned() const { return owned && value == &*owned; }
};

Literal OperandValues::Take(int64_t k) {
  if (CanTake(k)) {
    Literal out = std::move(*movable_[k]);
    movable_[k] = nullptr;
    ptrs_[k] = nullptr;
    return out;
  }
  return *ptrs_[k];
}

bool OperandValues::CanTake(int64_t k) const {
  return movable_[k] != nullptr && unique_[k];
}

Literal* OperandValues::Donor(const Shape& shape) const {
  for (Literal* m : movable_) {
    if (m != nullptr && m->shape().Compatible(shape)) return m;
  }
  return nullptr;
}

Evaluator::Evaluator(const EvaluatorOptions& options, TapSet* taps,
                     DeviceCollectives* collectives)
    : options_(options), taps_(taps), collectives_(collectives) {
  threads_ = options.threads > 0
                 ? options.threads
                 : std::max(1u, std::thread::hardware_concurrency());
}

StatusOr<const Evaluator::Plan*> Evaluator::GetPlan(
    const HloComputation& computation) {
  auto it = plans_.find(&computation);
  if (it != plans_.end()) return it->second.get();
  if (computation.root_instruction() == nullptr) {
    return InvalidArgument("computation " + computation.name() +
                           " has no root");
  }
  auto plan = std::make_unique<Plan>();
  for (HloInstruction* i : computation.MakeInstructionPostOrder()) {
    plan->order.push_back(i);
  }
  const int n = plan->order.size();
  std::unordered_map<const HloInstruction*, int> index;
  for (int i = 0; i < n; ++i) index[plan->order[i]] = i;
  plan->operands.resize(n);
  for (int i = 0; i < n; ++i) {
    for (const HloInstruction* op : plan->order[i]->operands()) {
      auto found = index.find(op);
      if (found == index.end()) {
        return InvalidArgument("operand %" + op->name() + " of " +
                               Name(*plan->order[i]) +
                               " is not in computation " + computation.name());
      }
      plan->operands[i].push_back(found->second);
    }
  }
  plan->root = index.at(computation.root_instruction());
  // Live: the root, tapped instructions, and everything they read. Skipping
  // dead code keeps unsupported or expensive unused ops from failing a run.
  plan->live.assign(n, false);
  for (int i = 0; i < n; ++i) {
    plan->live[i] = i == plan->root ||
                    (taps_ && taps_->names.count(plan->order[i]->name()));
  }
  for (int i = n - 1; i >= 0; --i) {
    if (!plan->live[i]) continue;
    for (int j : plan->operands[i]) plan->live[j] = true;
  }
  plan->uses.assign(n, 0);
  plan->unique.resize(n);
  plan->distinct.resize(n);
  for (int i = 0; i < n; ++i) {
    const std::vector<int>& ops = plan->operands[i];
    for (int j : ops) {
      plan->unique[i].push_back(std::count(ops.begin(), ops.end(), j) == 1);
    }
    std::vector<int>& distinct = plan->distinct[i];
    distinct = ops;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()),
                   distinct.end());
    if (!plan->live[i]) continue;
    for (int j : distinct) ++plan->uses[j];
  }
  const Plan* raw = plan.get();
  plans_[&computation] = std::move(plan);
  return raw;
}

Status Evaluator::CheckArgs(const HloComputation& computation,
                            std::span<const Literal* const> args) const {
  if (static_cast<int64_t>(args.size()) != computation.num_parameters()) {
    return InvalidArgument("computation " + computation.name() + " takes " +
                           std::to_string(computation.num_parameters()) +
                           " parameter(s), got " + std::to_string(args.size()) +
                           " argument(s)");
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const HloInstruction* p = computation.parameter_instruction(i);
    if (p == nullptr) {
      return InvalidArgument("computation " + computation.name() +
                             " has no parameter " + std::to_string(i));
    }
    if (!args[i]->shape().Compatible(p->shape())) {
      return InvalidArgument("argument " + std::to_string(i) +
                             " of computation " + computation.name() +
                             " has shape " + args[i]->shape().ToString(false) +
                             ", parameter " + Name(*p) + " expects " +
                             p->shape().ToString(false));
    }
  }
  return Status::Ok();
}

void Evaluator::RecordTap(const HloInstruction& instr, const Literal& value) {
  if (taps_ != nullptr && taps_->names.count(instr.name())) {
    taps_->values[instr.name()] = value;
  }
}

StatusOr<Literal> Evaluator::Call(const HloComputation& computation,
                                  std::span<const Literal* const> args) {
  RETURN_IF_ERROR(CheckArgs(computation, args));
  ASSIGN_OR_RETURN(const Plan* plan, GetPlan(computation));
  const int n = plan->order.size();
  std::vector<Slot> slots(n);  // Never resized: values point into it.
  // Scratch for each instruction's operand lists, reused across them.
  std::vector<const Literal*> ptrs;
  std::vector<Literal*> movable;
  for (int i = 0; i < n; ++i) slots[i].remaining = plan->uses[i];
  for (int i = 0; i < n; ++i) {
    if (!plan->live[i]) continue;
    const HloInstruction& instr = *plan->order[i];
    Slot& slot = slots[i];
    if (instr.opcode() == HloOpcode::kParameter) {
      const int64_t number = instr.parameter_number();
      if (number < 0 || number >= static_cast<int64_t>(args.size())) {
        return InvalidArgument(Name(instr) + ": parameter number " +
                               std::to_string(number) + " out of range");
      }
      slot.value = args[number];
    } else if (instr.opcode() == HloOpcode::kConstant) {
      slot.value = &instr.literal();
    } else {
      const std::vector<int>& opnds = plan->operands[i];
      ptrs.clear();
      movable.clear();
      for (int j : opnds) {
        if (slots[j].value == nullptr) {
          return Internal(Name(instr) + ": operand value missing");
        }
        ptrs.push_back(slots[j].value);
        const bool dead_after =
            slots[j].is_owned() && slots[j].remaining == 1 && j != plan->root;
        movable.push_back(dead_after ? &*slots[j].owned : nullptr);
      }
      OperandValues ops(ptrs, movable, plan->unique[i]);
      StatusOr<Literal> result = EvalInstruction(instr, ops);
      if (!result.ok()) return InContext(result.status(), instr);
      slot.owned.emplace(std::move(result).value());
      slot.value = &*slot.owned;
      // Release operands whose last user this was.
      for (int j : plan->distinct[i]) {
        if (--slots[j].remaining == 0 && j != plan->root) {
          slots[j].owned.reset();
          slots[j].value = nullptr;
        }
      }
    }
    RecordTap(instr, *slot.value);
  }
  Slot& root = slots[plan->root];
  if (root.is_owned()) return std::move(*root.owned);
  return Literal(*root.value);
}

StatusOr<Literal> Evaluator::EvalInstruction(const HloInstruction& instr,
                                             OperandValues& ops) {
  const HloOpcode op = instr.opcode();
  switch (op) {
    case HloOpcode::kTuple:
    case HloOpcode::kGetTupleElement:
    case HloOpcode::kCopy:
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kAddDependency:
    case HloOpcode::kAfterAll:
      return EvalTupleOp(instr, ops);
    case HloOpcode::kCall:
    case HloOpcode::kFusion:
      return EvalCalled(instr, ops);
    case HloOpcode::kWhile:
      return EvalWhile(instr, ops);
    case HloOpcode::kConditional:
      return EvalConditional(instr, ops);
    case HloOpcode::kMap:
      return EvalMap(instr, ops);
    case HloOpcode::kIota:
      return EvalIota(instr);
    default:
      break;
  }
  if (IsDeviceOp(op)) {
    return collectives_ != nullptr
               ? collectives_->Evaluate(instr, ops.ptrs(), *this, threads_)
               : EvaluateCollectiveAlone(instr, ops.ptrs(), *this, threads_);
  }
  if (IsElementwise(op)) {
    return EvalElementwiseInto(instr, instr.shape(), ops.ptrs(),
                               ops.Donor(instr.shape()), threads_);
  }
  return EvalStructural(instr, ops);
}

StatusOr<Literal> Evaluator::EvalTupleOp(const HloInstruction& instr,
                                         OperandValues& ops) {
  const HloOpcode op = instr.opcode();
  if (op == HloOpcode::kAfterAll) return Literal(Shape::Token());
  if (op == HloOpcode::kTuple) {
    std::vector<Literal> elements;
    for (int64_t k = 0; k < ops.size(); ++k) elements.push_back(ops.Take(k));
    return Literal::Tuple(std::move(elements));
  }
  if (ops.size() < 1) {
    return InvalidArgument(std::string(OpcodeName(op)) + " needs an operand");
  }
  if (op == HloOpcode::kCopy && instr.shape().IsArray() &&
      ops[0].shape().IsArray()) {
    return EvalCopy(instr, ops);
  }
  if (op != HloOpcode::kGetTupleElement) {
    // copy (of tuples), opt-barrier, add-dependency: operand 0's value.
    return ops.Take(0);
  }
  const Literal& tuple = ops[0];
  const int64_t index = instr.tuple_index();
  if (!tuple.shape().IsTuple() || index < 0 ||
      index >= static_cast<int64_t>(tuple.tuple_elements().size())) {
    return InvalidArgument("get-tuple-element index " + std::to_string(index) +
                           " of " + tuple.shape().ToString(false));
  }
  // Move the element out of a dead tuple; otherwise copy just the element.
  if (!ops.CanTake(0)) return Literal(tuple.tuple_element(index));
  Literal whole = ops.Take(0);
  return std::move(whole.mutable_tuple_elements()[index]);
}

StatusOr<Literal> Evaluator::EvalCopy(const HloInstruction& instr,
                                      OperandValues& ops) {
  const Shape& shape = instr.shape();
  if (ops[0].shape().dims() != shape.dims()) {
    return InvalidArgument("copy of " + ops[0].shape().ToString(false) +
                           " cannot produce " + shape.ToString(false));
  }
  if (ops[0].element_type() != shape.element_type()) {
    // XLA's HloEvaluator::HandleCopy converts when the element types differ
    // (hlo_evaluator_test's CopyDifferentTypes).
    Literal out(shape);
    RETURN_IF_ERROR(ConvertOp(ops[0], &out, threads_));
    return out;
  }
  // Same values; the result carries the copy's layout (data order is
  // logical, so only the metadata changes).
  Literal out = ops.Take(0);
  out.set_layout(shape.layout());
  return out;
}

StatusOr<Literal> Evaluator::EvalCalled(const HloInstruction& instr,
                                        OperandValues& ops) {
  if (instr.called_computations().empty()) {
    return InvalidArgument(std::string(OpcodeName(instr.opcode())) +
                           " has no called computation");
  }
  // A fusion is evaluated as a call of its fused computation on the
  // operand values: the oracle ignores how it would be emitted.
  return Call(*instr.called_computations()[0], ops.ptrs());
}

StatusOr<Literal> Evaluator::EvalStructural(const HloInstruction& instr,
                                            OperandValues& ops) {
  const Operands v = ops.ptrs();
  switch (instr.opcode()) {
    case HloOpcode::kBroadcast:
      return EvalBroadcast(instr, v);
    case HloOpcode::kReshape:
      return EvalReshape(instr, v);
    case HloOpcode::kBitcast:
      return EvalBitcast(instr, v);
    case HloOpcode::kTranspose:
      return EvalTranspose(instr, v);
    case HloOpcode::kSlice:
      return EvalSlice(instr, v);
    case HloOpcode::kDynamicSlice:
      return EvalDynamicSlice(instr, v);
    case HloOpcode::kDynamicUpdateSlice:
      return EvalDynamicUpdateSlice(instr, v);
    case HloOpcode::kConcatenate:
      return EvalConcatenate(instr, v);
    case HloOpcode::kPad:
      return EvalPad(instr, v);
    case HloOpcode::kReverse:
      return EvalReverse(instr, v);
    case HloOpcode::kReduce:
      return EvalReduce(instr, v, *this);
    case HloOpcode::kReduceWindow:
      return EvalReduceWindow(instr, v, *this);
    case HloOpcode::kSelectAndScatter:
      return EvalSelectAndScatter(instr, v, *this);
    case HloOpcode::kDot:
      return EvalDot(instr, v, options_);
    case HloOpcode::kConvolution:
      return EvalConvolution(instr, v, options_);
    case HloOpcode::kGather:
      return EvalGather(instr, v);
    case HloOpcode::kScatter:
      return EvalScatter(instr, v, *this);
    case HloOpcode::kSort:
      return EvalSort(instr, v, *this);
    default:
      return Unsupported(instr);
  }
}

namespace {

// The evaluator allocates and frees one buffer per instruction. With
// glibc's defaults, buffers above the mmap threshold are mmap'ed and
// munmap'ed each time, so every reuse pays a page fault per 4 KiB (this
// halved the elementwise benchmark). Keep freed memory in the heap
// instead. Process-wide, set once; only affects where malloc gets memory.
void TuneAllocatorOnce() {
  static const bool tuned = [] {
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    return true;
  }();
  (void)tuned;
}

}  // namespace

StatusOr<Literal> GuardedCall(const HloComputation& computation,
                              std::span<const Literal* const> args,
                              const EvaluatorOptions& options, TapSet* taps,
                              DeviceCollectives* collectives) {
  TuneAllocatorOnce();
  // Exceptions stop here (the API reports errors as Status values): running
  // out of memory on a huge shape is an error of this input, not a crash.
  try {
    Evaluator evaluator(options, taps, collectives);
    return evaluator.Call(computation, args);
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("out of memory evaluating " + computation.name());
  } catch (const std::exception& e) {
    return Internal("evaluating " + computation.name() + ": " + e.what());
  }
}

}  // namespace oracle

namespace {

Status CheckEntry(const HloModule& module, std::span<const Literal> args) {
  const HloComputation* entry = module.entry_computation();
  if (entry == nullptr) {
    return InvalidArgument("module " + module.name() +
                           " has no entry computation");
  }
  if (static_cast<int64_t>(args.size()) != entry->num_parameters()) {
    return InvalidArgument("entry computation " + entry->name() + " takes " +
                           std::to_string(entry->num_parameters()) +
                           " parameter(s), got " + std::to_string(args.size()) +
                           " argument(s)");
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const HloInstruction* p = entry->parameter_instruction(i);
    if (p == nullptr) {
      return InvalidArgument("entry computation has no parameter " +
                             std::to_string(i));
    }
    if (!args[i].shape().Compatible(p->shape())) {
      return InvalidArgument("argument " + std::to_string(i) + " has shape " +
                             args[i].shape().ToString(false) +
                             " but entry "
                             "parameter %" +
                             p->name() + " expects " +
                             p->shape().ToString(false));
    }
  }
  return Status::Ok();
}

StatusOr<Literal> EvaluateEntry(const HloModule& module,
                                std::span<const Literal> args,
                                const EvaluatorOptions& options,
                                oracle::TapSet* taps) {
  return oracle::EvaluateEntryOn(module, args, options, taps, nullptr);
}

}  // namespace

namespace oracle {

StatusOr<Literal> EvaluateEntryOn(const HloModule& module,
                                  std::span<const Literal> args,
                                  const EvaluatorOptions& options, TapSet* taps,
                                  DeviceCollectives* collectives) {
  RETURN_IF_ERROR(CheckEntry(module, args));
  std::vector<const Literal*> ptrs;
  for (const Literal& a : args) ptrs.push_back(&a);
  return GuardedCall(*module.entry_computation(), ptrs, options, taps,
                     collectives);
}

}  // namespace oracle

StatusOr<Literal> Evaluate(const HloModule& module,
                           std::span<const Literal> args,
                           const EvaluatorOptions& options) {
  return EvaluateEntry(module, args, options, nullptr);
}

StatusOr<Literal> EvaluateComputation(const HloComputation& computation,
                                      std::span<const Literal* const> args,
                                      const EvaluatorOptions& options) {
  return oracle::GuardedCall(computation, args, options, nullptr);
}

StatusOr<TappedResult> EvaluateWithTaps(const HloModule& module,
                                        std::span<const Literal> args,
                                        std::span<const std::string> taps,
                                        const EvaluatorOptions& options) {
  oracle::TapSet set;
  for (const std::string& name : taps) {
    bool found = false;
    for (const HloComputation* c : module.computations()) {
      if (c->GetInstructionWithName(name) != nullptr) found = true;
    }
    if (!found) return NotFound("no instruction named %" + name + " to tap");
    set.names.insert(name);
  }
  ASSIGN_OR_RETURN(Literal result, EvaluateEntry(module, args, options, &set));
  TappedResult out{std::move(result), {}};
  for (const std::string& name : taps) {
    auto it = set.values.find(name);
    if (it != set.values.end()) out.taps.emplace_back(name, it->second);
  }
  return out;
}

}  // namespace trench
