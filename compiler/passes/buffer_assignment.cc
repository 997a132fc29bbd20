#include "compiler/passes/buffer_assignment.h"

#include <algorithm>
#include <set>
#include <unordered_set>
#include <utility>

#include "compiler/ir/hlo_module.h"
#include "compiler/ir/opcode.h"

namespace trench {
namespace {

std::vector<Shape> LeafShapes(const Shape& shape) {
  std::vector<Shape> out;
  ForEachLeafShape(shape, [&](const Shape& s) { out.push_back(s); });
  return out;
}

// The byte size of an array leaf; 0 for tokens and unbounded shapes.
int64_t LeafBytes(const Shape& s) { return s.IsArray() ? s.byte_size() : 0; }

bool Defines(HloOpcode op) {
  return op != HloOpcode::kTuple && op != HloOpcode::kGetTupleElement &&
         op != HloOpcode::kAddDependency &&
         op != HloOpcode::kOptimizationBarrier;
}

class Assigner {
 public:
  Assigner(const HloComputation& entry,
           const std::vector<HloInstruction*>& order,
           const BufferAssignmentOptions& options)
      : entry_(entry), order_(order), options_(options) {}

  StatusOr<BufferAssignment> Run(
      const std::vector<const HloInstruction*>& live_out) {
    RETURN_IF_ERROR(CheckSchedule());
    a_.end = static_cast<int64_t>(order_.size());
    DefineValues();
    ComputeLiveness(live_out);
    Allocate();
    return std::move(a_);
  }

 private:
  Status CheckSchedule() {
    std::unordered_map<const HloInstruction*, int64_t> pos;
    for (size_t p = 0; p < order_.size(); ++p) {
      const HloInstruction* instr = order_[p];
      if (instr == nullptr || instr->parent() != &entry_ ||
          !pos.emplace(instr, p).second) {
        return InvalidArgument(
            "buffer-assignment: the schedule has a foreign, null or repeated "
            "instruction");
      }
      for (const HloInstruction* op : instr->operands()) {
        if (!pos.count(op)) {
          return InvalidArgument("buffer-assignment: " + instr->name() +
                                 " is scheduled before its operand " +
                                 op->name());
        }
      }
    }
    if (static_cast<int64_t>(order_.size()) != entry_.instruction_count()) {
      return InvalidArgument(
          "buffer-assignment: the schedule misses instructions of " +
          entry_.name());
    }
    return Status::Ok();
  }

  int AddValue(const HloInstruction* instr, int64_t leaf, const Shape& s,
               ValueKind kind, int64_t def) {
    LogicalValue v;
    v.instr = instr;
    v.leaf = leaf;
    v.shape = s;
    v.bytes = LeafBytes(s);
    v.kind = kind;
    v.def = def;
    v.last_use = def;
    a_.values.push_back(std::move(v));
    return static_cast<int>(a_.values.size()) - 1;
  }

  void DefineValues() {
    // Inputs in flattened parameter order.
    int64_t input = 0;
    for (int64_t p = 0; p < entry_.num_parameters(); ++p) {
      const HloInstruction* param = entry_.parameter_instruction(p);
      std::vector<int>& ls = a_.leaves[param];
      int64_t k = 0;
      for (const Shape& s : LeafShapes(param->shape())) {
        int id = AddValue(param, k++, s, ValueKind::kInput, -1);
        a_.values[id].input_index = input++;
        ls.push_back(id);
      }
    }
    for (size_t p = 0; p < order_.size(); ++p) {
      const HloInstruction* instr = order_[p];
      const HloOpcode op = instr->opcode();
      if (op == HloOpcode::kParameter) continue;
      std::vector<int>& ls = a_.leaves[instr];
      if (op == HloOpcode::kTuple) {
        for (const HloInstruction* o : instr->operands()) {
          const std::vector<int>& ol = a_.leaves.at(o);
          ls.insert(ls.end(), ol.begin(), ol.end());
        }
        continue;
      }
      if (op == HloOpcode::kAddDependency ||
          op == HloOpcode::kOptimizationBarrier) {
        ls = a_.leaves.at(instr->operand(0));
        continue;
      }
      if (op == HloOpcode::kGetTupleElement) {
        const HloInstruction* o = instr->operand(0);
        const std::vector<int>& ol = a_.leaves.at(o);
        int64_t skip = 0;
        for (int64_t i = 0; i < instr->tuple_index(); ++i) {
          skip += LeafCount(o->shape().tuple_shape(i));
        }
        const int64_t n = LeafCount(instr->shape());
        ls.assign(ol.begin() + skip, ol.begin() + skip + n);
        continue;
      }
      const ValueKind kind =
          op == HloOpcode::kConstant ? ValueKind::kConstant : ValueKind::kTemp;
      int64_t k = 0;
      for (const Shape& s : LeafShapes(instr->shape())) {
        ls.push_back(AddValue(instr, k++, s, kind, static_cast<int64_t>(p)));
      }
    }
  }

  void ComputeLiveness(const std::vector<const HloInstruction*>& live_out) {
    for (size_t p = 0; p < order_.size(); ++p) {
      for (const HloInstruction* o : order_[p]->operands()) {
        for (int v : a_.leaves.at(o)) {
          a_.values[v].last_use =
              std::max(a_.values[v].last_use, static_cast<int64_t>(p));
        }
      }
    }
    auto keep = [&](const HloInstruction* instr) {
      auto it = a_.leaves.find(instr);
      if (it == a_.leaves.end()) return;
      for (int v : it->second) a_.values[v].last_use = a_.end;
    };
    if (entry_.root_instruction() != nullptr) keep(entry_.root_instruction());
    for (const HloInstruction* t : live_out) {
      if (t != nullptr && t->parent() == &entry_) keep(t);
    }
  }

  int NewBuffer(int value) {
    AssignedBuffer b;
    b.kind = a_.values[value].kind;
    b.bytes = a_.values[value].bytes;
    a_.buffers.push_back(std::move(b));
    return static_cast<int>(a_.buffers.size()) - 1;
  }

  void Place(int value, int buffer) {
    a_.values[value].buffer = buffer;
    a_.buffers[buffer].values.push_back(value);
    occupant_[buffer] = value;
  }

  bool Ask(std::string_view site, const std::string& name) {
    return options_.ctx == nullptr ||
           options_.ctx->ShouldRewrite(kBufferAssignmentPass, site, name);
  }

  // Whether an operand of `instr` other than `i` has leaf value `id`.
  bool SharedWithOtherOperand(const HloInstruction* instr, int64_t i, int id) {
    for (int64_t j = 0; j < instr->operand_count(); ++j) {
      if (j == i) continue;
      const std::vector<int>& l = a_.leaves.at(instr->operand(j));
      if (std::find(l.begin(), l.end(), id) != l.end()) return true;
    }
    return false;
  }

  // The buffer `instr` (single leaf `value`) may write in place, or -1.
  // Non-elementwise ops never share the buffer with another operand.
  int InPlaceCandidate(const HloInstruction* instr, int value, int64_t p) {
    const LogicalValue& v = a_.values[value];
    if (v.bytes == 0 || LeafCount(instr->shape()) != 1) return -1;
    for (int64_t i = 0; i < instr->operand_count(); ++i) {
      const HloInstruction* o = instr->operand(i);
      const std::vector<int>& ol = a_.leaves.at(o);
      if (ol.size() != 1) continue;
      const LogicalValue& u = a_.values[ol[0]];
      if (u.kind != ValueKind::kTemp || u.last_use != p || u.bytes != v.bytes ||
          !u.shape.Compatible(v.shape) || occupant_[u.buffer] != ol[0]) {
        continue;
      }
      if (!IsElementwise(instr->opcode()) &&
          SharedWithOtherOperand(instr, i, ol[0])) {
        continue;
      }
      const bool allowed = options_.may_write_over
                               ? options_.may_write_over(*instr, i)
                               : DefaultMayWriteOverOperand(*instr, i);
      if (allowed) return u.buffer;
    }
    return -1;
  }

  void Allocate() {
    // Inputs and constants: one buffer each, never shared.
    for (size_t id = 0; id < a_.values.size(); ++id) {
      if (a_.values[id].kind != ValueKind::kTemp) {
        occupant_.push_back(-1);
        Place(static_cast<int>(id), NewBuffer(static_cast<int>(id)));
      }
    }
    std::vector<std::vector<int>> dying(order_.size() + 1);
    for (size_t id = 0; id < a_.values.size(); ++id) {
      const LogicalValue& v = a_.values[id];
      if (v.kind == ValueKind::kTemp) {
        dying[v.last_use].push_back(static_cast<int>(id));
      }
    }
    std::set<std::pair<int64_t, int>> free;  // (bytes, buffer)
    BufferAssignmentStats& st = a_.stats;
    for (size_t p = 0; p < order_.size(); ++p) {
      const HloInstruction* instr = order_[p];
      if (Defines(instr->opcode()) &&
          instr->opcode() != HloOpcode::kParameter &&
          instr->opcode() != HloOpcode::kConstant) {
        const std::vector<int>& ls = a_.leaves.at(instr);
        for (size_t k = 0; k < ls.size(); ++k) {
          const int id = ls[k];
          const LogicalValue& v = a_.values[id];
          const std::string name = ls.size() > 1
                                       ? instr->name() + "#" + std::to_string(k)
                                       : instr->name();
          ++st.temp_values;
          st.bytes_unshared += v.bytes;
          int buffer = -1;
          if (options_.enabled) {
            int b = InPlaceCandidate(instr, id, static_cast<int64_t>(p));
            if (b >= 0 && Ask("in-place", name)) {
              buffer = b;
              ++st.in_place;
            }
          }
          if (buffer < 0 && options_.enabled && v.bytes > 0) {
            auto it = free.lower_bound({v.bytes, -1});
            if (it != free.end() && Ask("reuse", name)) {
              buffer = it->second;
              free.erase(it);
              ++st.reused;
            }
          }
          if (buffer < 0) {
            occupant_.push_back(-1);
            buffer = NewBuffer(id);
            ++st.temp_buffers;
            st.bytes_allocated += a_.buffers[buffer].bytes;
          }
          Place(id, buffer);
        }
      }
      for (int id : dying[p]) {
        const int b = a_.values[id].buffer;
        if (occupant_[b] == id && a_.values[id].bytes > 0) {
          occupant_[b] = -1;
          free.insert({a_.buffers[b].bytes, b});
        }
      }
    }
  }

  const HloComputation& entry_;
  const std::vector<HloInstruction*>& order_;
  const BufferAssignmentOptions& options_;
  std::vector<int> occupant_;  // Per buffer: the value in it now, or -1.
  BufferAssignment a_;
};

}  // namespace

bool DefaultMayWriteOverOperand(const HloInstruction& instr,
                                int64_t operand_index) {
  if (operand_index < 0 || operand_index >= instr.operand_count()) {
    return false;
  }
  const HloInstruction* o = instr.operand(operand_index);
  if (!instr.shape().IsArray() || !o->shape().IsArray() ||
      !o->shape().Compatible(instr.shape())) {
    return false;
  }
  if (instr.opcode() == HloOpcode::kDynamicUpdateSlice) {
    if (operand_index != 0) return false;
    // No other operand may be the same value (the emitter reads the update
    // and indices after it starts writing operand 0's buffer).
    for (int64_t i = 1; i < instr.operand_count(); ++i) {
      if (instr.operand(i) == o) return false;
    }
    return true;
  }
  return IsElementwise(instr.opcode());
}

std::string BufferAssignmentStats::ToString() const {
  return std::to_string(temp_values) + " temp values in " +
         std::to_string(temp_buffers) + " buffers (" + std::to_string(reused) +
         " reused, " + std::to_string(in_place) + " in place), " +
         std::to_string(bytes_saved()) + " of " +
         std::to_string(bytes_unshared) + " bytes saved";
}

StatusOr<BufferAssignment> AssignBuffers(
    const HloComputation& entry, const std::vector<HloInstruction*>& order,
    const std::vector<const HloInstruction*>& live_out,
    const BufferAssignmentOptions& options) {
  return Assigner(entry, order, options).Run(live_out);
}

StatusOr<bool> BufferAssignmentPass::Run(HloModule* module, PassContext* ctx) {
  const HloComputation* entry = module->entry_computation();
  if (entry == nullptr) return false;
  BufferAssignmentOptions options;
  options.ctx = ctx;
  ASSIGN_OR_RETURN(
      BufferAssignment a,
      AssignBuffers(*entry, entry->MakeInstructionPostOrder(), {}, options));
  ctx->Log(std::string(kBufferAssignmentPass) + ": " + a.stats.ToString());
  return false;
}

}  // namespace trench
