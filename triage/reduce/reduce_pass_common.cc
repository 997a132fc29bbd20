// Shared machinery of the reduction passes (reduce_pass_internal.h).
#include <algorithm>
#include <cstring>
#include <functional>
#include <mutex>

#include "compiler/ir/hlo_printer.h"
#include "oracle/evaluator.h"
#include "oracle/spmd.h"
#include "triage/case/values_module.h"
#include "triage/reduce/reduce_pass_internal.h"

namespace trench::hlo_reduce {
namespace {

// Instructions of `comp` that the root (or control edges of live ones)
// reaches.
std::unordered_set<const HloInstruction*> LiveInstructions(
    const HloComputation& comp) {
  std::unordered_set<const HloInstruction*> live;
  std::vector<const HloInstruction*> stack;
  if (comp.root_instruction() != nullptr)
    stack.push_back(comp.root_instruction());
  while (!stack.empty()) {
    const HloInstruction* i = stack.back();
    stack.pop_back();
    if (!live.insert(i).second) continue;
    for (const HloInstruction* op : i->operands()) stack.push_back(op);
    for (const HloInstruction* p : i->control_predecessors())
      stack.push_back(p);
  }
  return live;
}

// Computations reachable from `roots` through called computations.
std::unordered_set<const HloComputation*> Reachable(
    std::vector<const HloComputation*> stack) {
  std::unordered_set<const HloComputation*> seen;
  while (!stack.empty()) {
    const HloComputation* c = stack.back();
    stack.pop_back();
    if (c == nullptr || !seen.insert(c).second) continue;
    for (const HloInstruction* i : c->instructions()) {
      for (const HloComputation* callee : i->called_computations()) {
        stack.push_back(callee);
      }
    }
  }
  return seen;
}

bool IsDeadCandidate(const HloInstruction& i, bool entry,
                     const std::unordered_set<const HloInstruction*>& live) {
  if (live.count(&i)) return false;
  return i.opcode() != HloOpcode::kParameter || entry;
}

std::vector<Shape> ParamShapes(const HloComputation& entry) {
  std::vector<Shape> shapes;
  for (const HloInstruction* p : entry.parameters()) {
    if (p != nullptr) shapes.push_back(p->shape());
  }
  return shapes;
}

}  // namespace

StatusOr<EditableCase> OpenCase(const hlo_diff::Case& c) {
  EditableCase e;
  ASSIGN_OR_RETURN(e.module, hlo_diff::ParseCaseModule(c.module_text, "case"));
  e.devices = std::max<int64_t>(1, c.mesh.size());
  if (e.devices > 1) {
    RETURN_IF_ERROR(hlo_diff::DeviceArguments(*e.module, c).status());
  } else {
    RETURN_IF_ERROR(hlo_diff::CheckInputs(*e.module, c.inputs));
  }
  const HloComputation* entry = e.module->entry_computation();
  e.param_inputs.resize(entry->num_parameters());
  // c.inputs is device-major: each device's leaves, parameter by
  // parameter.
  size_t next = 0;
  for (int64_t d = 0; d < e.devices; ++d) {
    for (const HloInstruction* p : entry->parameters()) {
      std::vector<Literal>& leaves = e.param_inputs[p->parameter_number()];
      ForEachLeafShape(p->shape(), [&](const Shape& s) {
        if (s.IsArray()) leaves.push_back(c.inputs[next++]);
      });
    }
  }
  for (const HloComputation* comp : e.module->computations()) {
    const auto live = LiveInstructions(*comp);
    for (const HloInstruction* i : comp->instructions()) {
      e.names.insert(i->name());
      if (IsDeadCandidate(*i, comp == entry, live)) {
        e.dead_instructions.insert(i->name());
      }
    }
  }
  // Dead computations: the roots of what the entry does not reach (what
  // they call is kept through them).
  const auto reachable = Reachable({entry});
  std::unordered_set<const HloComputation*> called;
  for (const HloComputation* comp : e.module->computations()) {
    for (const HloInstruction* i : comp->instructions()) {
      for (const HloComputation* c : i->called_computations()) {
        if (c != comp) called.insert(c);
      }
    }
  }
  for (const HloComputation* comp : e.module->computations()) {
    if (!reachable.count(comp) && !called.count(comp)) {
      e.dead_computations.insert(comp->name());
    }
  }
  e.entry_param_shapes = ParamShapes(*entry);
  e.entry_root_shape = entry->root_instruction()->shape();
  return e;
}

std::string FreshName(EditableCase& e, const std::string& base) {
  std::string name = base;
  for (int k = 1; e.names.count(name); ++k) {
    name = base + "." + std::to_string(k);
  }
  e.names.insert(name);
  return name;
}

HloInstruction* AddEntryParameter(EditableCase& e, const Shape& shape,
                                  const std::string& base_name,
                                  std::vector<Literal> leaves) {
  HloComputation* entry = e.module->entry_computation();
  const int64_t n = entry->num_parameters();
  HloInstruction* p = entry->AddInstruction(
      HloInstruction::CreateParameter(n, shape, FreshName(e, base_name)));
  if (static_cast<int64_t>(e.param_inputs.size()) <= n) {
    e.param_inputs.resize(n + 1);
  }
  size_t per_device = 0;
  ForEachLeafShape(shape, [&](const Shape& s) { per_device += s.IsArray(); });
  if (e.devices > 1 && leaves.size() == per_device) {
    // One device's leaves: every device gets them.
    std::vector<Literal> all;
    for (int64_t d = 0; d < e.devices; ++d) {
      for (const Literal& l : leaves) all.push_back(l);
    }
    leaves = std::move(all);
  }
  e.param_inputs[n] = std::move(leaves);
  return p;
}

StatusOr<hlo_diff::Case> FinishCase(EditableCase& e, const hlo_diff::Case& c,
                                    const std::vector<HloInstruction*>& also) {
  HloModule& m = *e.module;
  HloComputation* entry = m.entry_computation();
  const std::unordered_set<const HloInstruction*> forced(also.begin(),
                                                         also.end());
  // Instructions: the dead ones not kept, minus those a kept instruction
  // still uses (to a fixpoint).
  for (HloComputation* comp : m.computations()) {
    const auto live = LiveInstructions(*comp);
    std::unordered_set<HloInstruction*> gone;
    for (HloInstruction* i : comp->instructions()) {
      // Forced ones go even when only control edges kept them live.
      if (forced.count(i) || (IsDeadCandidate(*i, comp == entry, live) &&
                              !e.dead_instructions.count(i->name()))) {
        gone.insert(i);
      }
    }
    for (bool changed = true; changed;) {
      changed = false;
      for (auto it = gone.begin(); it != gone.end();) {
        const auto& users = (*it)->users();
        if (std::any_of(users.begin(), users.end(),
                        [&](HloInstruction* u) { return !gone.count(u); })) {
          it = gone.erase(it);
          changed = true;
        } else {
          ++it;
        }
      }
    }
    if (gone.empty()) continue;
    std::vector<HloInstruction*> dead;
    for (HloInstruction* i : comp->instructions()) {
      if (gone.count(i)) dead.push_back(i);
    }
    RETURN_IF_ERROR(comp->RemoveInstructions(dead));
  }
  // Entry parameters: dense numbers, inputs follow.
  std::vector<std::vector<Literal>> inputs;
  std::vector<Shape> leaf_shapes;  // One device's, in flattened order.
  int64_t number = 0;
  for (int64_t i = 0; i < entry->num_parameters(); ++i) {
    HloInstruction* p = entry->parameter_instruction(i);
    if (p == nullptr) continue;
    p->mutable_attrs().parameter_number = number++;
    inputs.push_back(std::move(e.param_inputs[i]));
    ForEachLeafShape(p->shape(), [&](const Shape& s) {
      if (s.IsArray()) leaf_shapes.push_back(s);
    });
  }
  e.param_inputs = std::move(inputs);
  // Computations: reachable from the entry or from a kept dead one.
  std::vector<const HloComputation*> roots{entry};
  for (const HloComputation* comp : m.computations()) {
    if (e.dead_computations.count(comp->name())) roots.push_back(comp);
  }
  const auto reachable = Reachable(roots);
  for (HloComputation* comp : m.computations()) {
    if (!reachable.count(comp)) m.RemoveComputation(comp);
  }
  // Header attributes describing a changed entry signature (layouts
  // aside: those attributes may well say more than the shapes).
  const std::vector<Shape> now = ParamShapes(*entry);
  bool same = now.size() == e.entry_param_shapes.size() &&
              entry->root_instruction()->shape().Compatible(e.entry_root_shape);
  for (size_t i = 0; same && i < now.size(); ++i) {
    same = now[i].Compatible(e.entry_param_shapes[i]);
  }
  if (!same) {
    auto& h = m.mutable_header_attrs();
    h.erase(std::remove_if(h.begin(), h.end(),
                           [](const auto& kv) {
                             return kv.first == "entry_computation_layout" ||
                                    kv.first == "input_output_alias" ||
                                    kv.first == "buffer_donor";
                           }),
            h.end());
  }
  hlo_diff::Case out;
  out.module_text = PrintHloModule(m);
  out.mesh = c.mesh;
  // Device-major: device d's leaves of every parameter, in order. Each
  // input takes its parameter leaf's layout, as ReadCase gives a saved
  // case's .npy files: a stand-in's value keeps no layout of the
  // instruction it came from, so the case tested is the case written.
  for (int64_t d = 0; d < e.devices; ++d) {
    size_t leaf = 0;  // Device d's leaf number, across its parameters.
    for (auto& leaves : e.param_inputs) {
      const size_t per = leaves.size() / static_cast<size_t>(e.devices);
      for (size_t k = d * per; k < (d + 1) * per; ++k, ++leaf) {
        out.inputs.push_back(std::move(leaves[k]));
        if (leaf < leaf_shapes.size()) {
          out.inputs.back().set_layout(leaf_shapes[leaf].layout());
        }
      }
    }
  }
  out.options = c.options;
  out.origin = c.origin;
  out.signature = c.signature;
  out.extra = c.extra;
  return out;
}

std::vector<Literal> ZeroLeaves(const Shape& shape) {
  std::vector<Literal> out;
  ForEachLeafShape(shape, [&](const Shape& s) {
    if (s.IsArray()) out.emplace_back(s);
  });
  return out;
}

const Literal* ConstantValue(const Literal& value, int64_t devices) {
  if (devices <= 1) return &value;
  const std::vector<Literal>& per_device = value.tuple_elements();
  if (per_device.empty()) return nullptr;
  for (const Literal& l : per_device) {
    if (!(l == per_device.front())) return nullptr;
  }
  return &per_device.front();
}

std::vector<Literal> LiteralLeaves(const Literal& value) {
  std::vector<Literal> out;
  for (const Literal* l : value.Leaves()) {
    if (l->shape().IsArray()) out.push_back(*l);
  }
  return out;
}

namespace {

struct CacheEntry {
  std::string text;
  DeviceMesh mesh;
  std::vector<Literal> inputs;
  std::shared_ptr<const ValueMap> values;
};

// Rebuilds parameter p's value from its leaves (nullopt with a token).
int64_t LeafElements(const Shape& shape) {
  int64_t n = 0;
  ForEachLeafShape(shape, [&](const Shape& s) {
    if (s.IsArray()) n += s.element_count();
  });
  return n;
}

// An SPMD case's values: its entry's root becomes a tuple of the tapped
// instructions, run by the SPMD oracle; each value a tuple by device.
std::shared_ptr<const ValueMap> SpmdOracleValues(
    const hlo_diff::Case& c, const EditableCase& e,
    const std::vector<std::string>& taps, const EvaluatorOptions& options) {
  auto empty = std::make_shared<const ValueMap>();
  StatusOr<std::unique_ptr<HloModule>> m =
      hlo_diff::ValuesModule(*e.module, e.module->entry_computation()->name(),
                             taps, "__hlo_reduce_values");
  if (!m.ok()) return empty;
  StatusOr<std::vector<std::vector<Literal>>> args =
      hlo_diff::DeviceArguments(**m, c);
  if (!args.ok()) return empty;
  SpmdOptions so;
  so.mesh = c.mesh;
  so.evaluator = options;
  StatusOr<std::vector<Literal>> r = EvaluateSpmd(**m, *args, so);
  if (!r.ok()) return empty;
  auto values = std::make_shared<ValueMap>();
  for (size_t k = 0; k < taps.size(); ++k) {
    std::vector<Literal> per_device;
    for (const Literal& device : *r) {
      per_device.push_back(device.tuple_elements()[k]);
    }
    (*values)[taps[k]] = Literal::Tuple(std::move(per_device));
  }
  return values;
}

std::shared_ptr<const ValueMap> ComputeOracleValues(const hlo_diff::Case& c) {
  auto empty = std::make_shared<const ValueMap>();
  StatusOr<EditableCase> e = OpenCase(c);
  if (!e.ok()) return empty;
  const HloComputation* entry = e->module->entry_computation();
  int64_t total = 0;
  bool token = false;
  std::vector<std::string> taps;
  for (const HloComputation* comp : e->module->computations()) {
    for (const HloInstruction* i : comp->instructions()) {
      total += LeafElements(i->shape());
      ForEachLeafShape(i->shape(),
                       [&](const Shape& s) { token = token || s.IsToken(); });
      if (comp == entry && LeafElements(i->shape()) <= kMaxTapElements) {
        taps.push_back(i->name());
      }
    }
  }
  if (token || total * e->devices > kMaxOracleElements) return empty;
  EvaluatorOptions options;
  options.threads = 1;
  options.max_while_iterations = 100'000;
  if (e->devices > 1) return SpmdOracleValues(c, *e, taps, options);
  const std::vector<Literal> args =
      hlo_diff::ParameterArguments(*e->module, c.inputs);
  StatusOr<TappedResult> r = EvaluateWithTaps(*e->module, args, taps, options);
  if (!r.ok()) return empty;
  auto values = std::make_shared<ValueMap>();
  for (auto& [name, value] : r->taps) (*values)[name] = std::move(value);
  return values;
}

}  // namespace

std::shared_ptr<const ValueMap> OracleValues(const hlo_diff::Case& c) {
  static std::mutex mu;
  static std::vector<CacheEntry> cache;  // Most recent last.
  constexpr size_t kCacheSize = 4;
  {
    std::lock_guard<std::mutex> lock(mu);
    for (const CacheEntry& entry : cache) {
      if (entry.text == c.module_text && entry.mesh == c.mesh &&
          entry.inputs == c.inputs) {
        return entry.values;
      }
    }
  }
  std::shared_ptr<const ValueMap> values = ComputeOracleValues(c);
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= kCacheSize) cache.erase(cache.begin());
  cache.push_back({c.module_text, c.mesh, c.inputs, values});
  return values;
}

Literal SliceLeadingCorner(const Literal& lit,
                           const std::vector<int64_t>& dims) {
  Shape shape(lit.shape().element_type(), dims);
  if (lit.shape().has_layout()) shape.set_layout(*lit.shape().layout());
  Literal out(shape);
  const int64_t n = out.element_count();
  const int64_t rank = shape.rank();
  if (n == 0) return out;
  if (rank == 0) {
    std::memcpy(out.mutable_bytes().data(), lit.bytes().data(),
                out.bytes().size());
    return out;
  }
  const int64_t width = ByteWidth(shape.element_type());
  const std::vector<int64_t>& from = lit.shape().dims();
  const int64_t row = dims[rank - 1] * width;
  std::vector<int64_t> index(rank, 0);
  for (int64_t done = 0; done < n; done += dims[rank - 1]) {
    int64_t src = 0, dst = 0;
    for (int64_t i = 0; i < rank; ++i) {
      src = src * from[i] + index[i];
      dst = dst * dims[i] + index[i];
    }
    std::memcpy(out.mutable_bytes().data() + dst * width,
                lit.bytes().data() + src * width, row);
    for (int64_t i = rank - 2; i >= 0; --i) {
      if (++index[i] < dims[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

bool IsAllZero(const Literal& lit) {
  const auto b = lit.bytes();
  return std::all_of(b.begin(), b.end(), [](uint8_t x) { return x == 0; });
}

Literal SplatLiteral(const Shape& shape, double v) {
  Literal out(shape);
  for (int64_t i = 0; i < out.element_count(); ++i) out.SetFromDouble(i, v);
  return out;
}

Status CheckChosen(std::span<const int64_t> chosen, int64_t count) {
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (chosen[i] < 0 || chosen[i] >= count ||
        (i > 0 && chosen[i] <= chosen[i - 1])) {
      return InvalidArgument(
          "chosen opportunities must be ascending, unique and below " +
          std::to_string(count));
    }
  }
  return Status();
}

namespace {

std::string FreshComputationName(const HloModule& m, const std::string& base) {
  std::string name = base;
  for (int k = 1; m.GetComputationWithName(name) != nullptr; ++k) {
    name = base + "." + std::to_string(k);
  }
  return name;
}

// A copy of fused computation `c` (fresh names) for a cloned fusion.
HloComputation* CloneFusedComputation(EditableCase& e,
                                      const HloComputation& c) {
  auto nc = std::make_unique<HloComputation>(
      FreshComputationName(*e.module, c.name()));
  std::unordered_map<const HloInstruction*, HloInstruction*> map;
  for (HloInstruction* i : c.MakeInstructionPostOrder()) {
    std::vector<HloInstruction*> ops;
    for (HloInstruction* op : i->operands()) ops.push_back(map.at(op));
    auto clone = i->CloneWithOperands(std::move(ops), "");
    clone->set_name(FreshName(e, i->name()));
    for (size_t k = 0; k < clone->called_computations().size(); ++k) {
      const HloComputation* callee = clone->called_computations()[k];
      if (clone->opcode() == HloOpcode::kFusion && callee != nullptr) {
        clone->set_called_computation(k, CloneFusedComputation(e, *callee));
      }
    }
    HloInstruction* added = nc->AddInstruction(std::move(clone));
    if (added->opcode() == HloOpcode::kFusion &&
        !added->called_computations().empty()) {
      added->fused_computation()->set_fusion_instruction(added);
    }
    map[i] = added;
  }
  nc->set_root_instruction(map.at(c.root_instruction()));
  return e.module->AddComputation(std::move(nc));
}

}  // namespace

HloInstruction* InlineComputation(EditableCase& e, HloInstruction* site,
                                  const HloComputation& callee,
                                  const std::vector<HloInstruction*>& args) {
  HloComputation* comp = site->parent();
  std::unordered_map<const HloInstruction*, HloInstruction*> map;
  for (HloInstruction* i : callee.MakeInstructionPostOrder()) {
    if (i->opcode() == HloOpcode::kParameter) {
      map[i] = args.at(i->parameter_number());
      continue;
    }
    std::vector<HloInstruction*> ops;
    for (HloInstruction* op : i->operands()) ops.push_back(map.at(op));
    auto clone = i->CloneWithOperands(std::move(ops), "");
    clone->set_name(FreshName(e, i->name()));
    for (size_t k = 0; k < clone->called_computations().size(); ++k) {
      const HloComputation* called = clone->called_computations()[k];
      if (clone->opcode() == HloOpcode::kFusion && called != nullptr) {
        clone->set_called_computation(k, CloneFusedComputation(e, *called));
      }
    }
    HloInstruction* added = comp->AddInstruction(std::move(clone));
    if (added->opcode() == HloOpcode::kFusion &&
        !added->called_computations().empty()) {
      added->fused_computation()->set_fusion_instruction(added);
    }
    map[i] = added;
  }
  return map.at(callee.root_instruction());
}

}  // namespace trench::hlo_reduce
