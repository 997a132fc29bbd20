// The callee level (localize.h): inside the computation a diverging call
// site (sort comparator, reduce body, scatter combiner, map, ...) runs,
// the first op whose value diverges, from one target run per called
// computation of the outlined computation (callee_probe.h) with --taps=all.
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/hlo_printer.h"
#include "compiler/ir/opcode.h"
#include "triage/localize/callee_probe.h"
#include "triage/localize/localize.h"

namespace trench::hlo_bisect {
namespace {

// The arguments of sample `t`, by parameter name (for the evidence).
Json SampleArguments(const CalleeProbe& p, const HloComputation& comp,
                     int64_t t) {
  Json args = Json::MakeObject();
  for (int64_t k = 0; k < comp.num_parameters(); ++k) {
    args[comp.parameter_instruction(k)->name()] = p.args[k].GetAsDouble(t);
  }
  return args;
}

struct InnerCheck {
  bool found = false;
  Json op;  // The culprit's evidence.
  int64_t checked = 0, unavailable = 0;
};

// The first member of `p` (post order) whose tap violates its bound.
StatusOr<InnerCheck> FirstDivergingOp(const CalleeProbe& p,
                                      const HloComputation& comp,
                                      const Probe& run,
                                      const NumericsOptions& numerics) {
  ASSIGN_OR_RETURN(BoundedResult bounds,
                   EvaluateWithBounds(*p.module, p.args, numerics));
  InnerCheck v;
  for (size_t i = 0; i < p.names.size(); ++i) {
    const HloInstruction* inner = comp.GetInstructionWithName(p.names[i]);
    StatusOr<Literal> tap =
        ReadTap(run, p.names[i], inner->shape().element_type());
    if (!tap.ok()) {
      ++v.unavailable;
      continue;
    }
    ++v.checked;
    ValueCheck check = CheckValue(*tap, bounds.outputs[i]);
    if (check.ok) continue;
    v.found = true;
    v.op = Json::MakeObject();
    v.op["name"] = p.names[i];
    v.op["opcode"] = std::string(OpcodeName(inner->opcode()));
    v.op["shape"] = inner->shape().ToString(false);
    Json ops = Json::MakeArray();
    for (const HloInstruction* o : inner->operands()) ops.push_back(o->name());
    v.op["operands"] = std::move(ops);
    if (const Json* fm = check.first_mismatch.is_object()
                             ? check.first_mismatch.Find("index")
                             : nullptr;
        fm && fm->is_array() && fm->size() == 1) {
      v.op["arguments"] =
          SampleArguments(p, comp, fm->array()[0].int64_value());
    }
    v.op["check"] = check.ToJson();
    return v;
  }
  return v;
}

}  // namespace

LevelResult LocalizeCallee(const hlo_diff::Case& c, const HloModule& module,
                           const GraphState& state, Prober& prober,
                           const NumericsOptions& numerics,
                           Findings* findings) {
  LevelResult r;
  r.level = "callee";
  Json& ev = r.evidence;
  ev["method"] =
      "the called computation applied lane-wise to the scalar arguments "
      "its call site sees, one --taps=all run per computation; its ops "
      "(post order) against the oracle under the numerics contract";
  auto stop = [&](const std::string& result, const std::string& summary) {
    r.result = result;
    r.summary = summary;
    return r;
  };
  const HloInstruction* site =
      module.entry_computation()->GetInstructionWithName(findings->instruction);
  if (state.crash || site == nullptr || !IsCalleeCallSite(site->opcode())) {
    return stop("not_applicable",
                "%" + findings->instruction +
                    " runs no called computation on element values");
  }
  Json call = Json::MakeObject();
  call["name"] = site->name();
  call["opcode"] = std::string(OpcodeName(site->opcode()));
  ev["call_site"] = std::move(call);
  StatusOr<std::vector<Literal>> values =
      SiteOperandValues(c, module, *site, state);
  if (!values.ok()) return stop("error", values.status().message());
  const std::vector<Literal> operands = std::move(values).value();
  Json tried = Json::MakeArray();
  for (size_t k = 0; k < site->called_computations().size(); ++k) {
    const HloComputation& comp = *site->called_computations()[k];
    Json t = Json::MakeObject();
    t["computation"] = comp.name();
    StatusOr<CalleeProbe> probe =
        MakeCalleeProbe(*site, static_cast<int64_t>(k), operands);
    if (!probe.ok()) {
      t["skipped"] = probe.status().message();
      tried.push_back(std::move(t));
      continue;
    }
    t["rule"] = probe->rule;
    t["samples"] = probe->samples;
    r.linear_runs += static_cast<int64_t>(probe->names.size());
    hlo_diff::Case pc;
    pc.module_text = PrintHloModule(*probe->module);
    pc.inputs = probe->args;
    pc.options = c.options;
    pc.options.taps = "all";
    ++r.runs;
    StatusOr<Probe> run = prober.RunCase(pc, false);
    if (!run.ok()) return stop("error", run.status().message());
    t["probe_status"] = run->status;
    if (!hlo_diff::IsValueFailureStatus(run->status)) {
      tried.push_back(std::move(t));
      continue;
    }
    StatusOr<InnerCheck> v = FirstDivergingOp(*probe, comp, *run, numerics);
    if (!v.ok()) return stop("error", "oracle: " + v.status().message());
    t["checked"] = v->checked;
    t["unavailable"] = v->unavailable;
    tried.push_back(std::move(t));
    if (!v->found) continue;
    const HloInstruction* inner =
        comp.GetInstructionWithName(v->op["name"].string_value());
    findings->called_computation = comp.name();
    findings->called_instruction = inner->name();
    findings->called_opcode = std::string(OpcodeName(inner->opcode()));
    findings->dtype =
        std::string(PrimitiveTypeName(inner->shape().element_type()));
    ev["computation"] = comp.name();
    ev["op"] = v->op;
    ev["computations"] = std::move(tried);
    Json check = v->op["check"];
    return stop("found",
                "inside %" + comp.name() + " (called by %" + site->name() +
                    ", " + std::string(OpcodeName(site->opcode())) +
                    "): first diverging op %" + inner->name() + " (" +
                    findings->called_opcode +
                    "): " + std::to_string(check["mismatches"].int64_value()) +
                    "/" + std::to_string(check["elements"].int64_value()) +
                    " samples off");
  }
  ev["computations"] = std::move(tried);
  return stop("none", "no op of the computations %" + site->name() +
                          " calls diverges when run lane-wise on the "
                          "values it sees: the fault is in how %" +
                          site->name() + " runs them");
}

}  // namespace trench::hlo_bisect
