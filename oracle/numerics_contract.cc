// The numerics contract's walker: evaluates each computation in post order
// with the oracle's kernels and propagates (value, bound) pairs; control
// flow (while, conditional, call, fusion, map) and the public entry point.
#include "oracle/numerics_contract.h"

#include <cmath>
#include <cstring>
#include <exception>
#include <new>
#include <thread>
#include <unordered_map>

#include "oracle/elementwise.h"
#include "oracle/numerics_internal.h"
#include "oracle/spmd.h"

namespace trench {
namespace oracle::numerics {
namespace {

std::string Name(const HloInstruction& instr) { return "%" + instr.name(); }

Status InContext(const Status& s, const HloInstruction& instr) {
  const std::string prefix = Name(instr) + ":";
  if (s.message().rfind(prefix, 0) == 0) return s;
  return s.WithContext(Name(instr));
}

// The scalar value of a pred/integer selector literal.
StatusOr<int64_t> ScalarSelector(const Literal& v, const std::string& what) {
  if (!v.shape().IsArray() || v.shape().rank() != 0 ||
      !(v.element_type() == PrimitiveType::PRED ||
        IsInteger(v.element_type()))) {
    return InvalidArgument(what + " must be a pred or integer scalar, got " +
                           v.shape().ToString(false));
  }
  return v.GetAsInt64(0);
}

}  // namespace

BoundsEvaluator::BoundsEvaluator(const NumericsOptions& options,
                                 BoundedCollectives* collectives)
    : options_(options),
      threads_(options.evaluator.threads > 0
                   ? options.evaluator.threads
                   : std::max(1u, std::thread::hardware_concurrency())),
      plain_(options.evaluator, nullptr),
      collectives_(collectives) {}

const HloInstruction& BoundsEvaluator::ReduceOverDevices(
    const HloInstruction& instr, int64_t k, const Shape& shape) {
  auto& slot = device_reduces_[{&instr, k}];
  if (!slot) {
    slot = HloInstruction::Create(HloOpcode::kReduce, shape, {},
                                  instr.name() + ".over_devices");
    slot->mutable_attrs().dimensions = {0};
    slot->mutable_attrs().has_dimensions = true;
    slot->AddCalledComputation(instr.to_apply());
  }
  return *slot;
}

const HloComputation& BoundsEvaluator::F64Reducer(HloOpcode op) {
  auto it = reducers_.find(op);
  if (it != reducers_.end()) return *it->second;
  auto comp = std::make_unique<HloComputation>(std::string("numerics_f64_") +
                                               std::string(OpcodeName(op)));
  const Shape scalar(PrimitiveType::F64, {});
  HloInstruction* p0 =
      comp->AddInstruction(HloInstruction::CreateParameter(0, scalar, "p0"));
  HloInstruction* p1 =
      comp->AddInstruction(HloInstruction::CreateParameter(1, scalar, "p1"));
  if (op == HloOpcode::kParameter) {
    comp->set_root_instruction(p1);
  } else {
    comp->set_root_instruction(comp->AddInstruction(
        HloInstruction::Create(op, scalar, {p0, p1}, "r")));
  }
  const HloComputation& raw = *comp;
  reducers_[op] = std::move(comp);
  return raw;
}

const HloInstruction& BoundsEvaluator::F64Clone(const HloInstruction& instr,
                                                HloOpcode reducer) {
  auto key = std::make_pair(&instr, reducer);
  auto it = clones_.find(key);
  if (it != clones_.end()) return *it->second;
  std::unique_ptr<HloInstruction> clone = instr.CloneWithOperands({}, "");
  clone->set_shape(F64Shape(instr.shape()));
  if (reducer != HloOpcode::kAfterAll &&
      !clone->called_computations().empty()) {
    clone->set_called_computation(
        0, const_cast<HloComputation*>(&F64Reducer(reducer)));
  }
  const HloInstruction& raw = *clone;
  clones_[key] = std::move(clone);
  return raw;
}

StatusOr<Literal> BoundsEvaluator::Elementwise(const HloInstruction& instr,
                                               const Shape& out_shape,
                                               Operands ops) {
  return EvalElementwiseInto(instr, out_shape, ops, nullptr, threads_);
}

StatusOr<Bounded> BoundsEvaluator::Run(const HloComputation& computation,
                                       BoundedOps args) {
  if (static_cast<int64_t>(args.size()) != computation.num_parameters()) {
    return InvalidArgument("computation " + computation.name() + " takes " +
                           std::to_string(computation.num_parameters()) +
                           " parameter(s), got " + std::to_string(args.size()) +
                           " argument(s)");
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const HloInstruction* p = computation.parameter_instruction(i);
    if (p == nullptr || !args[i]->v.shape().Compatible(p->shape())) {
      return InvalidArgument(
          "argument " + std::to_string(i) + " of computation " +
          computation.name() + " has shape " +
          args[i]->v.shape().ToString(false) + ", parameter expects " +
          (p ? p->shape().ToString(false) : std::string("nothing")));
    }
  }
  if (computation.root_instruction() == nullptr) {
    return InvalidArgument("computation " + computation.name() +
                           " has no root");
  }
  const std::vector<HloInstruction*> order =
      computation.MakeInstructionPostOrder();
  // Live: the root and what it reads (dead code is skipped like the oracle).
  std::unordered_map<const HloInstruction*, int> index;
  for (size_t i = 0; i < order.size(); ++i) index[order[i]] = i;
  std::vector<char> live(order.size(), 0);
  std::vector<int> remaining(order.size(), 0);
  live[index.at(computation.root_instruction())] = 1;
  for (int i = static_cast<int>(order.size()) - 1; i >= 0; --i) {
    if (!live[i]) continue;
    for (const HloInstruction* op : order[i]->operands()) {
      auto f = index.find(op);
      if (f == index.end()) {
        return InvalidArgument("operand %" + op->name() + " of " +
                               Name(*order[i]) + " is not in computation " +
                               computation.name());
      }
      live[f->second] = 1;
      ++remaining[f->second];
    }
  }
  std::vector<std::unique_ptr<Bounded>> slots(order.size());
  std::vector<const Bounded*> ptrs(order.size(), nullptr);
  std::vector<const Bounded*> ops;
  const int root = index.at(computation.root_instruction());
  for (size_t i = 0; i < order.size(); ++i) {
    if (!live[i]) continue;
    const HloInstruction& instr = *order[i];
    if (instr.opcode() == HloOpcode::kParameter) {
      const int64_t n = instr.parameter_number();
      if (n < 0 || n >= static_cast<int64_t>(args.size())) {
        return InvalidArgument(Name(instr) + ": parameter number out of range");
      }
      ptrs[i] = args[n];
      continue;
    }
    if (instr.opcode() == HloOpcode::kConstant) {
      slots[i] = std::make_unique<Bounded>(
          Bounded{instr.literal(), FilledBound(instr.literal().shape(), 0)});
      ptrs[i] = slots[i].get();
      continue;
    }
    ops.clear();
    for (const HloInstruction* op : instr.operands()) {
      ops.push_back(ptrs[index.at(op)]);
    }
    StatusOr<Bounded> r = EvalInstruction(instr, ops);
    if (!r.ok()) return InContext(r.status(), instr);
    slots[i] = std::make_unique<Bounded>(std::move(r).value());
    ptrs[i] = slots[i].get();
    for (const HloInstruction* op : instr.operands()) {
      const int j = index.at(op);
      if (--remaining[j] == 0 && j != root) slots[j].reset();
    }
  }
  if (slots[root]) return std::move(*slots[root]);
  return Bounded{ptrs[root]->v, ptrs[root]->e};
}

StatusOr<Bounded> BoundsEvaluator::EvalInstruction(const HloInstruction& instr,
                                                   BoundedOps ops) {
  const HloOpcode op = instr.opcode();
  std::vector<const Literal*> values;
  for (const Bounded* b : ops) values.push_back(&b->v);
  switch (op) {
    case HloOpcode::kTuple: {
      std::vector<Literal> v, e;
      for (const Bounded* b : ops) {
        v.push_back(b->v);
        e.push_back(b->e);
      }
      return Bounded{Literal::Tuple(std::move(v)),
                     Literal::Tuple(std::move(e))};
    }
    case HloOpcode::kGetTupleElement: {
      const int64_t k = instr.tuple_index();
      if (ops.size() != 1 || !ops[0]->v.shape().IsTuple() || k < 0 ||
          k >= static_cast<int64_t>(ops[0]->v.tuple_elements().size())) {
        return InvalidArgument("get-tuple-element index " + std::to_string(k) +
                               " out of range");
      }
      return Bounded{ops[0]->v.tuple_element(k), ops[0]->e.tuple_element(k)};
    }
    case HloOpcode::kOptimizationBarrier:
    case HloOpcode::kAddDependency:
      if (ops.empty()) return InvalidArgument("needs an operand");
      return Bounded{ops[0]->v, ops[0]->e};
    case HloOpcode::kAfterAll:
      return Bounded{Literal(Shape::Token()), Literal(Shape::Token())};
    case HloOpcode::kCall:
    case HloOpcode::kFusion:
      if (instr.called_computations().empty()) {
        return InvalidArgument("no called computation");
      }
      return Run(*instr.called_computations()[0], ops);
    case HloOpcode::kWhile:
      return EvalWhile(instr, ops);
    case HloOpcode::kConditional:
      return EvalConditional(instr, ops);
    case HloOpcode::kMap:
      return EvalMap(instr, ops);
    case HloOpcode::kIota: {
      ASSIGN_OR_RETURN(Literal v, EvalIota(instr));
      Literal e = FilledBound(v.shape(), 0);
      return Bounded{std::move(v), std::move(e)};
    }
    default:
      break;
  }
  if (IsDeviceOp(op)) {
    if (collectives_ == nullptr) {
      if (!alone_) alone_ = MakeBoundedDevice(0, DeviceMesh{}, nullptr);
      return alone_->Evaluate(*this, instr, ops);
    }
    return collectives_->Evaluate(*this, instr, ops);
  }
  const bool copy_array = op == HloOpcode::kCopy && instr.shape().IsArray();
  if (op == HloOpcode::kCopy && !copy_array) {
    if (ops.empty()) return InvalidArgument("copy needs an operand");
    return Bounded{ops[0]->v, ops[0]->e};
  }
  if (IsElementwise(op) && !copy_array) {
    ASSIGN_OR_RETURN(Literal v, Elementwise(instr, instr.shape(), values));
    ASSIGN_OR_RETURN(Literal e, ElementwiseBound(*this, instr, ops, v));
    RETURN_IF_ERROR(ZeroSignElementwise(*this, instr, ops, v, e));
    return Bounded{std::move(v), std::move(e)};
  }
  // Structural ops: the nominal value from the oracle's kernel.
  StatusOr<Literal> v = [&]() -> StatusOr<Literal> {
    switch (op) {
      case HloOpcode::kCopy:
        if (ops.size() != 1 || !ops[0]->v.shape().IsArray() ||
            ops[0]->v.shape().dims() != instr.shape().dims()) {
          return InvalidArgument("copy shape mismatch");
        }
        if (ops[0]->v.element_type() != instr.shape().element_type()) {
          return Elementwise(instr, instr.shape(), values);
        } else {
          Literal out = ops[0]->v;
          out.set_layout(instr.shape().layout());
          return out;
        }
      case HloOpcode::kBroadcast:
        return EvalBroadcast(instr, values);
      case HloOpcode::kReshape:
        return EvalReshape(instr, values);
      case HloOpcode::kBitcast:
        return EvalBitcast(instr, values);
      case HloOpcode::kTranspose:
        return EvalTranspose(instr, values);
      case HloOpcode::kSlice:
        return EvalSlice(instr, values);
      case HloOpcode::kDynamicSlice:
        return EvalDynamicSlice(instr, values);
      case HloOpcode::kDynamicUpdateSlice:
        return EvalDynamicUpdateSlice(instr, values);
      case HloOpcode::kConcatenate:
        return EvalConcatenate(instr, values);
      case HloOpcode::kPad:
        return EvalPad(instr, values);
      case HloOpcode::kReverse:
        return EvalReverse(instr, values);
      case HloOpcode::kReduce:
        return EvalReduce(instr, values, *this);
      case HloOpcode::kReduceWindow:
        return EvalReduceWindow(instr, values, *this);
      case HloOpcode::kSelectAndScatter:
        return EvalSelectAndScatter(instr, values, *this);
      case HloOpcode::kDot:
        return EvalDot(instr, values, options_.evaluator);
      case HloOpcode::kConvolution:
        return EvalConvolution(instr, values, options_.evaluator);
      case HloOpcode::kGather:
        return EvalGather(instr, values);
      case HloOpcode::kScatter:
        return EvalScatter(instr, values, *this);
      case HloOpcode::kSort:
        return EvalSort(instr, values, *this);
      default:
        return Unimplemented("unsupported op " + std::string(OpcodeName(op)) +
                             " (" + Name(instr) + ")");
    }
  }();
  if (!v.ok()) return v.status();
  Literal value = std::move(v).value();
  StatusOr<Literal> e = [&]() -> StatusOr<Literal> {
    switch (op) {
      case HloOpcode::kReduce:
      case HloOpcode::kReduceWindow:
      case HloOpcode::kSelectAndScatter:
        return ReduceBound(*this, instr, ops, value);
      case HloOpcode::kSort:
        return SortBound(*this, instr, ops, value);
      case HloOpcode::kDot:
      case HloOpcode::kConvolution:
        return ContractionBound(*this, instr, ops, value);
      default:
        return MovementBound(*this, instr, ops, value);
    }
  }();
  if (!e.ok()) return e.status();
  return Bounded{std::move(value), std::move(e).value()};
}

StatusOr<Bounded> BoundsEvaluator::EvalWhile(const HloInstruction& instr,
                                             BoundedOps ops) {
  if (ops.size() != 1 || instr.called_computations().size() != 2) {
    return InvalidArgument("while needs one operand, a condition and a body");
  }
  const HloComputation& cond = *instr.while_condition();
  const HloComputation& body = *instr.while_body();
  Bounded state{ops[0]->v, ops[0]->e};
  bool undetermined = false;
  for (int64_t iterations = 0;; ++iterations) {
    const Bounded* arg = &state;
    ASSIGN_OR_RETURN(Bounded keep_going, Run(cond, {&arg, 1}));
    if (keep_going.v.element_type() != PrimitiveType::PRED) {
      return InvalidArgument("while condition " + cond.name() +
                             " must return pred, got " +
                             keep_going.v.shape().ToString(false));
    }
    ASSIGN_OR_RETURN(int64_t go,
                     ScalarSelector(keep_going.v, "while condition"));
    if (!undetermined && !AllZero(keep_going.e)) {
      undetermined = true;
      Note("while condition undetermined");
    }
    if (!go) break;
    if (iterations >= options_.evaluator.max_while_iterations) {
      return ResourceExhausted(
          "while loop did not finish within max_while_iterations=" +
          std::to_string(options_.evaluator.max_while_iterations) +
          " iterations");
    }
    ASSIGN_OR_RETURN(state, Run(body, {&arg, 1}));
  }
  if (undetermined) MakeUndetermined(state.e);
  return state;
}

StatusOr<Bounded> BoundsEvaluator::EvalConditional(const HloInstruction& instr,
                                                   BoundedOps ops) {
  const auto& branches = instr.called_computations();
  const int64_t n = branches.size();
  if (n == 0 || static_cast<int64_t>(ops.size()) != n + 1) {
    return InvalidArgument("conditional with " + std::to_string(n) +
                           " branches needs " + std::to_string(n + 1) +
                           " operands, got " + std::to_string(ops.size()));
  }
  ASSIGN_OR_RETURN(int64_t selector,
                   ScalarSelector(ops[0]->v, "conditional selector"));
  int64_t branch;
  if (ops[0]->v.element_type() == PrimitiveType::PRED) {
    if (n != 2) {
      return InvalidArgument("conditional on a pred needs 2 branches");
    }
    branch = selector ? 0 : 1;
  } else {
    branch = (selector < 0 || selector >= n) ? n - 1 : selector;
  }
  const Bounded* arg = ops[branch + 1];
  ASSIGN_OR_RETURN(Bounded out, Run(*branches[branch], {&arg, 1}));
  if (!AllZero(ops[0]->e)) {
    Note("conditional selector undetermined");
    MakeUndetermined(out.e);
  }
  return out;
}

StatusOr<Bounded> BoundsEvaluator::EvalMap(const HloInstruction& instr,
                                           BoundedOps ops) {
  if (instr.called_computations().empty() || !instr.shape().IsArray()) {
    return InvalidArgument("map needs to_apply and an array result");
  }
  const HloComputation& fn = *instr.to_apply();
  if (fn.num_parameters() != static_cast<int64_t>(ops.size())) {
    return InvalidArgument("map arity mismatch");
  }
  for (const Bounded* b : ops) {
    if (!b->v.shape().IsArray() ||
        b->v.shape().dims() != instr.shape().dims()) {
      return InvalidArgument("map operand shape mismatch");
    }
  }
  // One walk per element on rank-0 values.
  std::vector<Bounded> scalars;
  for (const Bounded* b : ops) {
    scalars.push_back({Literal(Shape(b->v.element_type(), {})),
                       Literal(Shape(PrimitiveType::F64, {}))});
  }
  std::vector<const Bounded*> args;
  for (const Bounded& s : scalars) args.push_back(&s);
  Bounded out{Literal(instr.shape()), FilledBound(instr.shape(), 0)};
  const int64_t w = ByteWidth(instr.shape().element_type());
  for (int64_t i = 0; i < out.v.element_count(); ++i) {
    for (size_t k = 0; k < ops.size(); ++k) {
      const int64_t wk = ByteWidth(ops[k]->v.element_type());
      std::memcpy(scalars[k].v.mutable_bytes().data(),
                  ops[k]->v.bytes().data() + i * wk, wk);
      scalars[k].e.mutable_data<double>()[0] = ops[k]->e.data<double>()[i];
    }
    ASSIGN_OR_RETURN(Bounded r, Run(fn, args));
    if (!r.v.shape().IsArray() || r.v.element_count() != 1 ||
        r.v.element_type() != instr.shape().element_type()) {
      return InvalidArgument("map computation returned " +
                             r.v.shape().ToString(false));
    }
    std::memcpy(out.v.mutable_bytes().data() + i * w, r.v.bytes().data(), w);
    out.e.mutable_data<double>()[i] = r.e.data<double>()[0];
  }
  return out;
}

}  // namespace oracle::numerics

namespace {

using oracle::numerics::Bounded;

// Final scaling: safety factor, plus the smallest normal of the type.
void Finish(const NumericsOptions& options, const Literal& v, Literal& e) {
  const PrimitiveType t = v.element_type();
  const double floor = oracle::numerics::MinNormal(t);
  auto d = e.mutable_data<double>();
  const bool is_float = IsFloat(t) || IsComplex(t);
  for (size_t i = 0; i < d.size(); ++i) {
    double& x = d[i];
    if (std::isinf(x)) continue;
    // A non-finite nominal value is fixed (or undetermined): no floor.
    if (is_float && !std::isfinite(v.GetAsDouble(i))) continue;
    if (is_float) {
      x = x * options.safety_factor + floor;
    } else {
      x = x > 0 ? oracle::numerics::kInf : 0;
    }
  }
}

void CollectLeaves(const NumericsOptions& options, const Literal& v,
                   const Literal& e, std::vector<BoundedOutput>& out) {
  if (v.shape().IsTuple()) {
    for (size_t i = 0; i < v.tuple_elements().size(); ++i) {
      CollectLeaves(options, v.tuple_element(i), e.tuple_element(i), out);
    }
    return;
  }
  BoundedOutput o{v, e, 0};
  if (v.shape().IsArray()) {
    Finish(options, v, o.allowed);
    for (double x : o.allowed.data<double>()) o.undetermined += std::isinf(x);
  }
  out.push_back(std::move(o));
}

}  // namespace

namespace {

// EvaluateWithBounds on one device whose collectives go to `collectives`
// (null: alone).
StatusOr<BoundedResult> BoundedOnDevice(
    const HloModule& module, std::span<const Literal> args,
    const NumericsOptions& options,
    oracle::numerics::BoundedCollectives* collectives) {
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
  try {
    std::vector<Bounded> bounded;
    bounded.reserve(args.size());
    for (const Literal& a : args) {
      bounded.push_back({a, oracle::numerics::FilledBound(a.shape(), 0)});
    }
    std::vector<const Bounded*> ptrs;
    for (const Bounded& b : bounded) ptrs.push_back(&b);
    oracle::numerics::BoundsEvaluator ev(options, collectives);
    ASSIGN_OR_RETURN(Bounded root, ev.Run(*entry, ptrs));
    BoundedResult result;
    CollectLeaves(options, root.v, root.e, result.outputs);
    result.nominal = std::move(root.v);
    result.undetermined_reasons = std::move(ev.reasons());
    return result;
  } catch (const std::bad_alloc&) {
    return ResourceExhausted("out of memory evaluating bounds of " +
                             module.name());
  } catch (const std::exception& e) {
    return Internal("evaluating bounds of " + module.name() + ": " + e.what());
  }
}

}  // namespace

StatusOr<BoundedResult> EvaluateWithBounds(const HloModule& module,
                                           std::span<const Literal> args,
                                           const NumericsOptions& options) {
  return BoundedOnDevice(module, args, options, nullptr);
}

StatusOr<std::vector<BoundedResult>> EvaluateSpmdWithBounds(
    const HloModule& module, std::span<const std::vector<Literal>> args,
    const DeviceMesh& mesh, const NumericsOptions& options) {
  RETURN_IF_ERROR(CheckMeshArguments(mesh, args.size()));
  const int64_t n = mesh.size();
  NumericsOptions per_device = options;
  per_device.evaluator.threads = ThreadsPerDevice(options.evaluator, n);
  std::vector<BoundedResult> out(n);
  RETURN_IF_ERROR(oracle::RunDevices(
      n, [&](int64_t d, oracle::Rendezvous& rendezvous) -> Status {
        std::unique_ptr<oracle::numerics::BoundedCollectives> device =
            oracle::numerics::MakeBoundedDevice(d, mesh, &rendezvous);
        ASSIGN_OR_RETURN(
            out[d], BoundedOnDevice(module, args[d], per_device, device.get()));
        return Status::Ok();
      }));
  return out;
}

}  // namespace trench
