// The branch level (localize.h): inside the computation a diverging
// control-flow site (conditional, call, while) runs, the first instruction
// whose value diverges, from the computation run alone as the entry of a
// case of its own on the values the oracle says it receives, localized by
// the graph level (and, below it, the callee and branch levels again). In
// an SPMD case a computation that exchanges data with the other devices
// (collectives, device ids) runs alone on the whole mesh, an SPMD case of
// its own with every device's values, as long as the devices run the same
// computation.
#include <algorithm>
#include <vector>

#include "compiler/ir/collective_groups.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/hlo_printer.h"
#include "compiler/ir/opcode.h"
#include "oracle/evaluator.h"
#include "oracle/spmd.h"
#include "triage/localize/callee_probe.h"
#include "triage/localize/localize.h"

namespace trench::hlo_bisect {
namespace {

// Nested control flow is followed this deep (a branch of a loop body of a
// call ...); each step costs one target run per probed computation.
constexpr int kMaxDepth = 3;
// A while loop's body is probed on the states of its first iterations.
constexpr int64_t kMaxIterations = 8;

// A prober for a case made here: Run(options) runs `c` with those options
// through the parent's RunCase.
class CaseProber : public Prober {
 public:
  CaseProber(Prober& parent, hlo_diff::Case c)
      : parent_(parent), case_(std::move(c)) {}
  StatusOr<Probe> Run(const hlo_diff::CaseOptions& options,
                      bool dump) override {
    hlo_diff::Case c = case_;
    c.options = options;
    return parent_.RunCase(c, dump);
  }
  StatusOr<Probe> RunCase(const hlo_diff::Case& c, bool dump) override {
    return parent_.RunCase(c, dump);
  }

 private:
  Prober& parent_;
  hlo_diff::Case case_;
};

// Whether `comp` or a computation it calls (at any depth) runs an op
// that needs the other devices (collectives, partition-id, replica-id).
bool RunsDeviceOps(const HloComputation& comp) {
  for (const HloInstruction* i : comp.instructions()) {
    if (IsDeviceOp(i->opcode())) return true;
    for (const HloComputation* callee : i->called_computations()) {
      if (RunsDeviceOps(*callee)) return true;
    }
  }
  return false;
}

// A copy of `module` whose entry returns the operands of `site` (an entry
// instruction) as a tuple.
std::unique_ptr<HloModule> OperandsModule(const HloModule& module,
                                          const HloInstruction& site) {
  std::unique_ptr<HloModule> m = module.Clone();
  HloComputation* entry = m->entry_computation();
  const HloInstruction* s = entry->GetInstructionWithName(site.name());
  std::vector<HloInstruction*> ops;
  std::vector<Shape> shapes;
  for (const HloInstruction* o : s->operands()) {
    ops.push_back(const_cast<HloInstruction*>(o));
    shapes.push_back(o->shape());
  }
  entry->set_root_instruction(entry->AddInstruction(HloInstruction::Create(
      HloOpcode::kTuple, Shape::Tuple(shapes), ops, "__hlo_bisect_operands")));
  return m;
}

// The values of `site`'s operands (entry of `module`) on the case's inputs,
// from the oracle.
StatusOr<std::vector<Literal>> OperandValues(const hlo_diff::Case& c,
                                             const HloModule& module,
                                             const HloInstruction& site,
                                             const EvaluatorOptions& eo) {
  std::unique_ptr<HloModule> m = OperandsModule(module, site);
  ASSIGN_OR_RETURN(
      Literal v, Evaluate(*m, hlo_diff::ParameterArguments(*m, c.inputs), eo));
  return v.tuple_elements();
}

// A module whose entry is `module`'s computation `name` (what it calls
// kept, everything else dropped), printed, for a case of its own.
StatusOr<std::string> ComputationAsModule(const HloModule& module,
                                          const std::string& name) {
  std::unique_ptr<HloModule> m = module.Clone();
  HloComputation* comp = m->GetComputationWithName(name);
  if (comp == nullptr) return NotFound("no computation named '" + name + "'");
  m->set_entry_computation(comp);
  // What the new entry does not reach goes; only other unreachable
  // computations call it, and they go too.
  const std::vector<HloComputation*> keep = m->MakeComputationPostOrder();
  for (HloComputation* c : m->computations()) {
    if (std::find(keep.begin(), keep.end(), c) == keep.end()) {
      m->RemoveComputation(c);
    }
  }
  // The old entry's layout and aliasing do not describe this one.
  auto& attrs = m->mutable_header_attrs();
  std::erase_if(attrs, [](const auto& a) {
    return a.first == "entry_computation_layout" ||
           a.first == "input_output_alias" || a.first == "buffer_donor";
  });
  return PrintHloModule(*m);
}

// One computation to run alone, with its arguments: `args` on one device,
// or, for a computation that exchanges data with the other devices,
// `device_args` (device d's arguments), run as an SPMD case on the mesh.
struct BranchProbe {
  const HloComputation* computation;
  std::vector<Literal> args;
  std::string why;  // "branch 2 of 3 (index -1)", "iteration 3", ...
  std::vector<std::vector<Literal>> device_args;
};

// The computations `site` runs on the case's values, in the order the
// oracle runs them: a conditional's taken branch, a call's callee, a while
// body's first iterations.
StatusOr<std::vector<BranchProbe>> Probes(const HloInstruction& site,
                                          std::vector<Literal> operands,
                                          const EvaluatorOptions& eo) {
  std::vector<BranchProbe> out;
  switch (site.opcode()) {
    case HloOpcode::kConditional: {
      const int64_t n = static_cast<int64_t>(site.called_computations().size());
      if (n == 0 || static_cast<int64_t>(operands.size()) != n + 1) {
        return InvalidArgument("conditional %" + site.name() + " has " +
                               std::to_string(n) + " branches and " +
                               std::to_string(operands.size()) + " operands");
      }
      const Literal& which = operands[0];
      int64_t b;
      std::string why;
      if (which.element_type() == PrimitiveType::PRED) {
        b = which.GetAsInt64(0) != 0 ? 0 : 1;
        why = std::string(b == 0 ? "true" : "false") + " branch";
      } else {
        const int64_t index = which.GetAsInt64(0);
        // operation_semantics.md: an index outside [0, N) runs branch N-1.
        b = index < 0 || index >= n ? n - 1 : index;
        why = "branch " + std::to_string(b) + " of " + std::to_string(n) +
              " (index " + std::to_string(index) + ")";
      }
      std::vector<Literal> args;
      args.push_back(operands[b + 1]);
      out.push_back({site.called_computations()[b], std::move(args), why, {}});
      break;
    }
    case HloOpcode::kCall:
      if (site.called_computations().empty()) {
        return InvalidArgument("call %" + site.name() + " calls nothing");
      }
      out.push_back({site.to_apply(), std::move(operands), "the callee", {}});
      break;
    case HloOpcode::kWhile: {
      if (operands.size() != 1 || site.called_computations().size() != 2) {
        return InvalidArgument("while %" + site.name() +
                               " needs one operand, a condition and a body");
      }
      Literal state = operands[0];
      for (int64_t t = 0; t < kMaxIterations; ++t) {
        const Literal* a[] = {&state};
        ASSIGN_OR_RETURN(Literal go,
                         EvaluateComputation(*site.while_condition(), a, eo));
        if (go.GetAsInt64(0) == 0) break;
        std::vector<Literal> args;
        args.push_back(state);
        out.push_back({site.while_body(),
                       std::move(args),
                       "body, iteration " + std::to_string(t),
                       {}});
        ASSIGN_OR_RETURN(state, EvaluateComputation(*site.while_body(), a, eo));
      }
      break;
    }
    default:
      break;
  }
  return out;
}

// The values of `site`'s operands on every device (by device), from the
// SPMD oracle: the entry with the operands as its root, run on the mesh.
StatusOr<std::vector<std::vector<Literal>>> SpmdOperandValues(
    const hlo_diff::Case& c, const HloModule& module,
    const HloInstruction& site, const EvaluatorOptions& eo) {
  std::unique_ptr<HloModule> m = OperandsModule(module, site);
  ASSIGN_OR_RETURN(std::vector<std::vector<Literal>> args,
                   hlo_diff::DeviceArguments(*m, c));
  SpmdOptions so;
  so.mesh = c.mesh;
  so.evaluator = eo;
  ASSIGN_OR_RETURN(std::vector<Literal> roots, EvaluateSpmd(*m, args, so));
  std::vector<std::vector<Literal>> out;
  for (Literal& r : roots) out.push_back(r.tuple_elements());
  return out;
}

// `comp` of `module` run as the entry of its own module on every device:
// each device's result, from the SPMD oracle.
StatusOr<std::vector<Literal>> EvaluateOnMesh(
    const HloModule& module, const HloComputation& comp,
    const std::vector<std::vector<Literal>>& args, const DeviceMesh& mesh,
    const EvaluatorOptions& eo) {
  ASSIGN_OR_RETURN(std::string text, ComputationAsModule(module, comp.name()));
  ASSIGN_OR_RETURN(std::unique_ptr<HloModule> m,
                   hlo_diff::ParseCaseModule(text, comp.name() + ".hlo"));
  SpmdOptions so;
  so.mesh = mesh;
  so.evaluator = eo;
  return EvaluateSpmd(*m, args, so);
}

// Probes as above for a site whose computations exchange data with the
// other devices: every device must run the same computation (the same
// branch; a loop's iterations while every device goes on), and each probe
// carries every device's arguments. FailedPrecondition when the devices
// part ways (different branches), naming them.
StatusOr<std::vector<BranchProbe>> SpmdProbes(
    const HloModule& module, const HloInstruction& site,
    std::vector<std::vector<Literal>> operands, const DeviceMesh& mesh,
    const EvaluatorOptions& eo) {
  const size_t devices = operands.size();
  std::vector<BranchProbe> out;
  switch (site.opcode()) {
    case HloOpcode::kConditional: {
      std::vector<std::vector<BranchProbe>> each;
      for (std::vector<Literal>& ops : operands) {
        ASSIGN_OR_RETURN(std::vector<BranchProbe> p,
                         Probes(site, std::move(ops), eo));
        if (p.size() != 1) return Internal("a conditional runs one branch");
        if (!each.empty() && p[0].computation != each[0][0].computation) {
          return FailedPrecondition(
              "device 0 runs " + each[0][0].computation->name() +
              " and device " + std::to_string(each.size()) + " runs " +
              p[0].computation->name() + ": the devices part ways");
        }
        each.push_back(std::move(p));
      }
      BranchProbe bp{each[0][0].computation, {}, each[0][0].why, {}};
      for (auto& p : each) bp.device_args.push_back(std::move(p[0].args));
      out.push_back(std::move(bp));
      break;
    }
    case HloOpcode::kCall:
      if (site.called_computations().empty()) {
        return InvalidArgument("call %" + site.name() + " calls nothing");
      }
      out.push_back({site.to_apply(), {}, "the callee", std::move(operands)});
      break;
    case HloOpcode::kWhile: {
      std::vector<std::vector<Literal>> states;
      for (std::vector<Literal>& ops : operands) {
        if (ops.size() != 1 || site.called_computations().size() != 2) {
          return InvalidArgument("while %" + site.name() +
                                 " needs one operand, a condition and a body");
        }
        states.push_back({std::move(ops[0])});
      }
      for (int64_t t = 0; t < kMaxIterations; ++t) {
        ASSIGN_OR_RETURN(
            std::vector<Literal> go,
            EvaluateOnMesh(module, *site.while_condition(), states, mesh, eo));
        size_t going = 0;
        for (const Literal& g : go) going += g.GetAsInt64(0) != 0;
        if (going < devices) break;  // Some device is done: stop here.
        out.push_back({site.while_body(),
                       {},
                       "body, iteration " + std::to_string(t),
                       states});
        ASSIGN_OR_RETURN(
            std::vector<Literal> next,
            EvaluateOnMesh(module, *site.while_body(), states, mesh, eo));
        for (size_t d = 0; d < devices; ++d) states[d] = {std::move(next[d])};
      }
      break;
    }
    default:
      break;
  }
  for (BranchProbe& bp : out) {
    bp.why += " on all " + std::to_string(devices) + " devices";
  }
  return out;
}

LevelResult BranchAt(const hlo_diff::Case& c, const HloModule& module,
                     const GraphState& state, Prober& prober,
                     const NumericsOptions& numerics, Findings* findings,
                     int depth);

// Localizes inside one probe's computation: its own baseline run, then the
// graph level on it and, below, the callee or branch level. Sets
// `inner` to what was found inside.
LevelResult ProbeComputation(const hlo_diff::Case& c, const HloModule& module,
                             const BranchProbe& bp, Prober& prober,
                             const NumericsOptions& numerics, Findings* inner,
                             Json* tried, int depth) {
  LevelResult r;
  Json t = Json::MakeObject();
  t["computation"] = bp.computation->name();
  t["run"] = bp.why;
  auto done = [&](const std::string& result, const std::string& summary) {
    r.result = result;
    r.summary = summary;
    tried->push_back(std::move(t));
    return r;
  };
  StatusOr<std::string> text =
      ComputationAsModule(module, bp.computation->name());
  if (!text.ok()) return done("error", text.status().message());
  hlo_diff::Case sub;
  sub.module_text = std::move(text).value();
  sub.options = c.options;
  if (bp.device_args.empty()) {
    sub.inputs = hlo_diff::ArgumentLeaves(bp.args);
  } else {
    // Device-major, as an SPMD case keeps them.
    sub.mesh = c.mesh;
    for (const std::vector<Literal>& a : bp.device_args) {
      for (Literal& leaf : hlo_diff::ArgumentLeaves(a)) {
        sub.inputs.push_back(std::move(leaf));
      }
    }
  }
  StatusOr<std::unique_ptr<HloModule>> parsed =
      hlo_diff::ParseCaseModule(sub.module_text, "branch.hlo");
  if (!parsed.ok()) return done("error", parsed.status().message());
  CaseProber sub_prober(prober, sub);
  ++r.runs;
  StatusOr<Probe> full = sub_prober.Run(sub.options, false);
  if (!full.ok()) return done("error", full.status().message());
  t["status"] = full->status;
  if (full->status == "pass") {
    return done("none", bp.computation->name() + " computes right alone");
  }
  if (!hlo_diff::IsFailureStatus(full->status)) {
    return done("not_judged", bp.computation->name() +
                                  " cannot be judged alone: " + full->status);
  }
  GraphState sub_state;
  LevelResult g = LocalizeGraph(sub, **parsed, *full, sub_prober, numerics,
                                inner, &sub_state);
  r.runs += g.runs;
  t["graph"] = g.summary;
  if (g.result != "found") return done(g.result, g.summary);
  LevelResult below;
  const HloInstruction* site =
      (*parsed)->entry_computation()->GetInstructionWithName(
          inner->instruction);
  if (site != nullptr && IsCalleeCallSite(site->opcode())) {
    below =
        LocalizeCallee(sub, **parsed, sub_state, sub_prober, numerics, inner);
  } else {
    below = BranchAt(sub, **parsed, sub_state, sub_prober, numerics, inner,
                     depth + 1);
  }
  r.runs += below.runs;
  if (below.result != "not_applicable") t["inside"] = below.summary;
  if (inner->called_instruction.empty()) {
    inner->called_computation = bp.computation->name();
    inner->called_instruction = inner->instruction;
    inner->called_opcode = inner->opcode;
  }
  return done("found", g.summary);
}

LevelResult BranchAt(const hlo_diff::Case& c, const HloModule& module,
                     const GraphState& state, Prober& prober,
                     const NumericsOptions& numerics, Findings* findings,
                     int depth) {
  LevelResult r;
  r.level = "branch";
  Json& ev = r.evidence;
  ev["method"] =
      "each computation the site runs on the case's values (a "
      "conditional's taken branch, a call's callee, a while body's first " +
      std::to_string(kMaxIterations) +
      " iterations) run alone as a case of its own on the values the "
      "oracle gives it, and localized there by the graph level";
  auto stop = [&](const std::string& result, const std::string& summary) {
    r.result = result;
    r.summary = summary;
    return r;
  };
  const HloInstruction* site =
      module.entry_computation()->GetInstructionWithName(findings->instruction);
  if (state.crash || site == nullptr ||
      (site->opcode() != HloOpcode::kConditional &&
       site->opcode() != HloOpcode::kCall &&
       site->opcode() != HloOpcode::kWhile)) {
    return stop("not_applicable", "%" + findings->instruction +
                                      " runs no computation on whole values");
  }
  if (depth > kMaxDepth) {
    return stop("not_applicable", "nested deeper than " +
                                      std::to_string(kMaxDepth) +
                                      " control-flow sites");
  }
  Json call = Json::MakeObject();
  call["name"] = site->name();
  call["opcode"] = std::string(OpcodeName(site->opcode()));
  ev["site"] = std::move(call);
  // An SPMD case: the computations run alone on the graph level's device
  // when they need no other device, else on the whole mesh, every device
  // on its own values.
  const bool spmd = c.mesh.size() > 1;
  bool on_mesh = false;
  if (spmd) {
    for (const HloComputation* comp : site->called_computations()) {
      on_mesh |= RunsDeviceOps(*comp);
    }
    ev["device"] = state.device;
    ev["on_mesh"] = on_mesh;
  }
  StatusOr<std::vector<BranchProbe>> probes = std::vector<BranchProbe>();
  if (on_mesh) {
    StatusOr<std::vector<std::vector<Literal>>> operands =
        SpmdOperandValues(c, module, *site, numerics.evaluator);
    if (!operands.ok()) {
      return stop("error", "oracle: " + operands.status().message());
    }
    probes = SpmdProbes(module, *site, std::move(operands).value(), c.mesh,
                        numerics.evaluator);
    if (!probes.ok() &&
        probes.status().code() == StatusCode::kFailedPrecondition) {
      return stop("not_applicable", "%" + site->name() + ": " +
                                        probes.status().message() +
                                        ", so no one computation runs alone "
                                        "on the mesh");
    }
  } else {
    StatusOr<std::vector<Literal>> operands =
        spmd ? SiteOperandValues(c, module, *site, state)
             : OperandValues(c, module, *site, numerics.evaluator);
    if (!operands.ok()) {
      return stop("error", "oracle: " + operands.status().message());
    }
    probes = Probes(*site, std::move(operands).value(), numerics.evaluator);
  }
  if (!probes.ok())
    return stop("error", "oracle: " + probes.status().message());
  Json tried = Json::MakeArray();
  bool all_right = true;
  for (const BranchProbe& bp : *probes) {
    Findings inner;
    LevelResult p = ProbeComputation(c, module, bp, prober, numerics, &inner,
                                     &tried, depth);
    r.runs += p.runs;
    ++r.linear_runs;
    if (p.result == "error") {
      ev["computations"] = std::move(tried);
      return stop("error", p.summary);
    }
    if (p.result != "found") {
      all_right &= p.result == "none";
      continue;
    }
    findings->called_computation = inner.called_computation;
    findings->called_instruction = inner.called_instruction;
    findings->called_opcode = inner.called_opcode;
    if (!inner.dtype.empty()) findings->dtype = inner.dtype;
    ev["computation"] = inner.called_computation;
    Json op = Json::MakeObject();
    op["name"] = inner.called_instruction;
    op["opcode"] = inner.called_opcode;
    op["run"] = bp.why;
    ev["op"] = std::move(op);
    ev["computations"] = std::move(tried);
    return stop("found", "inside %" + inner.called_computation + " (run by %" +
                             site->name() + ", " +
                             std::string(OpcodeName(site->opcode())) + ", " +
                             bp.why + "): first diverging op %" +
                             inner.called_instruction + " (" +
                             inner.called_opcode + ")");
  }
  ev["computations"] = std::move(tried);
  if (probes->empty() || !all_right) {
    return stop("none", "no computation %" + site->name() +
                            " runs fails alone where it could be judged");
  }
  return stop("none",
              "each computation %" + site->name() +
                  " runs computes right alone on the values it should "
                  "get: the fault is in how %" +
                  site->name() +
                  " runs them (which branch, how many iterations, which "
                  "values go in and out)");
}

}  // namespace

LevelResult LocalizeBranch(const hlo_diff::Case& c, const HloModule& module,
                           const GraphState& state, Prober& prober,
                           const NumericsOptions& numerics,
                           Findings* findings) {
  return BranchAt(c, module, state, prober, numerics, findings, 1);
}

}  // namespace trench::hlo_bisect
