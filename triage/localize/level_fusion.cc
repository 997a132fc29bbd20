// The fusion level (localize.h): inside the fused kernel holding the graph
// level's culprit, the first member whose tapped value diverges from the
// oracle's evaluation of the fused computation on the kernel's own inputs.
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/opcode.h"
#include "triage/localize/localize.h"

namespace trench::hlo_bisect {
namespace {

// The entry fusion of `m` that is named `name` or holds a member named so.
const HloInstruction* FusionHolding(const HloModule& m,
                                    const std::string& name) {
  for (const HloInstruction* i : m.entry_computation()->instructions()) {
    if (i->opcode() != HloOpcode::kFusion) continue;
    if (i->name() == name ||
        i->fused_computation()->GetInstructionWithName(name) != nullptr) {
      return i;
    }
  }
  return nullptr;
}

}  // namespace

LevelResult LocalizeFusion(const hlo_diff::Case& c, const GraphState& state,
                           const NumericsOptions& numerics,
                           Findings* findings) {
  LevelResult r;
  r.level = "fusion";
  Json& ev = r.evidence;
  ev["method"] =
      "the fused computation evaluated by the oracle on the kernel's tapped "
      "operands; members (post order) against their taps";
  auto stop = [&](const std::string& result, const std::string& summary) {
    r.result = result;
    r.summary = summary;
    return r;
  };
  if (state.optimized == nullptr) {
    return stop("error", "the tapped run left no optimized module");
  }
  const HloInstruction* fusion =
      FusionHolding(*state.optimized, findings->instruction);
  if (fusion == nullptr) {
    return stop("not_applicable", "%" + findings->instruction +
                                      " is not fused in the optimized module");
  }
  const HloComputation* comp = fusion->fused_computation();
  findings->fusion = fusion->name();
  ev["fusion"] = fusion->name();
  ev["fused_computation"] = comp->name();
  if (state.crash) {
    // Taps cannot look inside a kernel that crashes: name its hero.
    const HloInstruction* hero = comp->root_instruction();
    for (HloOpcode op : {HloOpcode::kDot, HloOpcode::kReduce}) {
      for (const HloInstruction* m : comp->instructions()) {
        if (m->opcode() == op) hero = m;
      }
    }
    findings->fused_instruction = hero->name();
    findings->fused_opcode = std::string(OpcodeName(hero->opcode()));
    if (hero->shape().IsArray()) {
      findings->dtype =
          std::string(PrimitiveTypeName(hero->shape().element_type()));
    }
    ev["method"] =
        "the crashing fused kernel's hero (reduce, else dot, else "
        "root): taps cannot look inside a kernel that crashes";
    ev["hero"] = hero->name();
    return stop("found", "the crashing kernel %" + fusion->name() +
                             " is built around %" + hero->name() + " (" +
                             findings->fused_opcode + ")");
  }
  // The kernel's inputs: its operands' tapped values (else the oracle's).
  std::vector<Literal> args;
  Json sources = Json::MakeArray();
  for (const HloInstruction* op : fusion->operands()) {
    const PrimitiveType t = op->shape().element_type();
    StatusOr<Literal> v = ReadTap(state.tapped, op->name(), t, state.device);
    std::string source = "tap";
    if (!v.ok()) {
      auto it = state.values.find(op->name());
      if (it == state.values.end()) {
        return stop("error", "no value for fusion operand %" + op->name());
      }
      v = it->second;
      source = "oracle";
    }
    Json s = Json::MakeObject();
    s["operand"] = op->name();
    s["source"] = source;
    sources.push_back(std::move(s));
    args.push_back(std::move(v).value());
  }
  ev["operands"] = std::move(sources);
  std::vector<std::string> names;
  auto all = AllValuesModule(*state.optimized, comp->name(), &names);
  if (!all.ok()) return stop("error", all.status().message());
  StatusOr<BoundedResult> bounds = EvaluateWithBounds(**all, args, numerics);
  if (!bounds.ok()) {
    return stop("error", "oracle: " + bounds.status().message());
  }
  r.linear_runs = static_cast<int64_t>(names.size());
  int64_t checked = 0, unavailable = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    const HloInstruction* m = comp->GetInstructionWithName(names[i]);
    StatusOr<Literal> tap = ReadTap(state.tapped, names[i],
                                    m->shape().element_type(), state.device);
    if (!tap.ok()) {
      ++unavailable;
      continue;
    }
    ++checked;
    ValueCheck v = CheckValue(*tap, bounds->outputs[i]);
    if (v.ok) continue;
    findings->fused_instruction = names[i];
    findings->fused_opcode = std::string(OpcodeName(m->opcode()));
    findings->dtype = std::string(PrimitiveTypeName(m->shape().element_type()));
    Json culprit = Json::MakeObject();
    culprit["name"] = names[i];
    culprit["opcode"] = findings->fused_opcode;
    culprit["shape"] = m->shape().ToString(false);
    culprit["check"] = v.ToJson();
    Json ops = Json::MakeArray();
    for (const HloInstruction* op : m->operands()) ops.push_back(op->name());
    culprit["operands"] = std::move(ops);
    ev["member"] = std::move(culprit);
    ev["checked"] = checked;
    ev["unavailable"] = unavailable;
    r.result = "found";
    r.summary = "inside %" + fusion->name() + ": first diverging member %" +
                names[i] + " (" + findings->fused_opcode + "): max error " +
                Json(v.max_abs_error).Dump() + ", allowed " +
                Json(v.max_allowed).Dump();
    return r;
  }
  ev["checked"] = checked;
  ev["unavailable"] = unavailable;
  return stop("none", "no member of %" + fusion->name() +
                          " diverges on the kernel's own inputs (" +
                          std::to_string(checked) + " checked)");
}

}  // namespace trench::hlo_bisect
