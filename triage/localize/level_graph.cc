// The graph level (localize.h): one --taps=all run, every input entry
// instruction checked against the oracle under the numerics contract.
#include <cctype>
#include <filesystem>

#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/opcode.h"
#include "triage/localize/callee_probe.h"
#include "triage/localize/localize.h"

namespace trench::hlo_bisect {
namespace {

namespace fs = std::filesystem;

// Whether `i`'s value is a tuple that only its get-tuple-elements show:
// what a call site or a control-flow site returns, or a get-tuple-element
// of one (not a tuple instruction, whose members are tapped themselves,
// nor a parameter).
bool ProducesUntappedTuple(const HloInstruction& i) {
  if (!i.shape().IsTuple()) return false;
  switch (i.opcode()) {
    case HloOpcode::kConditional:
    case HloOpcode::kCall:
    case HloOpcode::kWhile:
      return true;
    case HloOpcode::kGetTupleElement:
      return ProducesUntappedTuple(*i.operand(0));
    default:
      return IsCalleeCallSite(i.opcode());
  }
}

LevelResult Stop(LevelResult r, const std::string& result,
                 const std::string& summary) {
  r.result = result;
  r.summary = summary;
  return r;
}

// The chip of a slice's run crash or memory error (the report's "chip"),
// or -1.
int64_t CrashingChip(const hlo_diff::Verdict& verdict) {
  const Json* report = verdict.target ? &verdict.target->report : nullptr;
  for (const Json* r :
       {report,
        report && report->is_object() ? report->Find("run") : nullptr}) {
    if (r == nullptr || !r->is_object()) continue;
    const Json* chip = r->Find("chip");
    const Json* chips = r->Find("chips");
    if (chip && chip->is_integer() && chips && chips->is_integer() &&
        chips->int64_value() > 1) {
      return chip->int64_value();
    }
  }
  return -1;
}

// The kernel a run crash or memory error happened in, from the verdict's
// target report ("" if none is named).
std::string CrashingKernel(const hlo_diff::Verdict& verdict) {
  const Json* report = verdict.target ? &verdict.target->report : nullptr;
  if (report == nullptr || !report->is_object()) return "";
  for (const Json* r : {report, report->Find("run")}) {
    if (r == nullptr || !r->is_object()) continue;
    if (const Json* errs = r->Find("memory_errors");
        errs && errs->is_array() && errs->size() > 0) {
      const Json* k = errs->array()[0].Find("kernel");
      if (k && k->is_string()) return k->string_value();
    }
    const Json* k = r->Find("kernel");
    if (k && k->is_string() && !k->string_value().empty()) {
      return k->string_value();
    }
  }
  return "";
}

// compile.cc's kernel names: "k<index>_<name with [^A-Za-z0-9_] -> '_'>".
std::string KernelSuffix(const std::string& name) {
  std::string s;
  for (char ch : name) {
    s += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '_') ? ch : '_';
  }
  return s;
}

LevelResult CrashGraph(LevelResult r, const hlo_diff::Case& c,
                       const Probe& full, Prober& prober, Findings* findings,
                       GraphState* state) {
  const std::string kernel = CrashingKernel(full.verdict);
  const size_t us = kernel.find('_');
  if (kernel.empty() || kernel[0] != 'k' || us == std::string::npos) {
    return Stop(std::move(r), "not_applicable",
                "the case fails with " + full.status +
                    " and the report names no kernel");
  }
  r.evidence["method"] =
      "the crashing kernel (simulator report) mapped to the optimized "
      "module of one dumped run";
  r.evidence["kernel"] = kernel;
  const int64_t chip = CrashingChip(full.verdict);
  if (chip >= 0) r.evidence["device"] = chip;
  ++r.runs;
  StatusOr<Probe> dumped = prober.Run(c.options, true);
  if (!dumped.ok()) {
    return Stop(std::move(r), "error", dumped.status().message());
  }
  StatusOr<std::string> text =
      ReadTextFile((fs::path(dumped->dump_dir) / "optimized.hlo").string());
  if (!text.ok()) return Stop(std::move(r), "error", text.status().message());
  auto opt = hlo_diff::ParseCaseModule(*text, "optimized.hlo");
  if (!opt.ok()) return Stop(std::move(r), "error", opt.status().message());
  state->optimized = std::move(opt).value();
  state->crash = true;
  const std::string want = kernel.substr(us + 1);
  for (const HloInstruction* i :
       state->optimized->entry_computation()->MakeInstructionPostOrder()) {
    if (KernelSuffix(i->name()) != want) continue;
    findings->instruction = i->name();
    findings->opcode = std::string(OpcodeName(i->opcode()));
    findings->dtype =
        i->shape().IsArray()
            ? std::string(PrimitiveTypeName(i->shape().element_type()))
            : "";
    r.evidence["instruction"] = i->name();
    r.evidence["opcode"] = findings->opcode;
    if (chip >= 0) findings->device = chip;
    r.result = "found";
    r.summary = "the crash happens in kernel " + kernel +
                (chip >= 0 ? " on device " + std::to_string(chip) : "") +
                ", which computes %" + i->name() + " (" + findings->opcode +
                ") of the optimized module";
    return r;
  }
  return Stop(std::move(r), "none",
              "kernel " + kernel +
                  " matches no instruction of the optimized "
                  "module");
}

}  // namespace

LevelResult LocalizeGraph(const hlo_diff::Case& c, const HloModule& module,
                          const Probe& full, Prober& prober,
                          const NumericsOptions& numerics, Findings* findings,
                          GraphState* state) {
  LevelResult r;
  r.level = "graph";
  Json& ev = r.evidence;
  ev["method"] =
      "one --taps=all run; each input entry instruction (post order) "
      "against the oracle under the numerics contract";
  if (full.status == "run_crash" || full.status == "memory_error") {
    return CrashGraph(std::move(r), c, full, prober, findings, state);
  }
  if (!hlo_diff::IsValueFailureStatus(full.status)) {
    return Stop(std::move(r), "not_applicable",
                "the case fails with " + full.status +
                    ": there are no values to compare");
  }
  const HloComputation* entry = module.entry_computation();
  std::vector<std::string> names;
  auto all = AllValuesModule(module, entry->name(), &names);
  if (!all.ok()) return Stop(std::move(r), "error", all.status().message());
  // One result per device (one for a single-device case).
  StatusOr<std::vector<BoundedResult>> bounds =
      EvaluateCaseWithBounds(c, **all, numerics);
  if (!bounds.ok()) {
    return Stop(std::move(r), "error", "oracle: " + bounds.status().message());
  }
  const bool spmd = c.mesh.size() > 1;
  const int64_t devices = static_cast<int64_t>(bounds->size());
  if (spmd) {
    ev["method"] =
        "one --taps=all run on the slice; each input entry instruction "
        "(post order) on every device against the SPMD oracle under the "
        "numerics contract";
    ev["devices"] = devices;
  }
  r.linear_runs = static_cast<int64_t>(names.size());
  // The values the levels below read: the culprit device's (set again
  // once it is known), device 0's until then.
  auto keep_values = [&](int64_t d) {
    state->device = spmd ? d : -1;
    for (size_t i = 0; i < names.size(); ++i) {
      state->values[names[i]] = (*bounds)[d].outputs[i].nominal;
    }
  };
  keep_values(0);

  hlo_diff::CaseOptions o = c.options;
  o.taps = "all";
  ++r.runs;
  StatusOr<Probe> tapped = prober.Run(o, true);
  if (!tapped.ok()) {
    return Stop(std::move(r), "error", tapped.status().message());
  }
  state->tapped = *tapped;
  ev["tapped_run_status"] = tapped->status;
  if (!tapped->dump_dir.empty()) {
    StatusOr<std::string> text =
        ReadTextFile((fs::path(tapped->dump_dir) / "optimized.hlo").string());
    if (text.ok()) {
      auto opt = hlo_diff::ParseCaseModule(*text, "optimized.hlo");
      if (opt.ok()) state->optimized = std::move(opt).value();
    }
  }

  std::map<std::string, std::string> seen;  // name -> agrees|unavailable
  int64_t checked = 0, unavailable = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    const HloInstruction* instr = entry->GetInstructionWithName(names[i]);
    // Every device's tap of this instruction; the first that diverges
    // decides, and the others that diverge are listed.
    int64_t first_bad = -1, tapped_devices = 0;
    ValueCheck v;
    Json bad_devices = Json::MakeArray();
    for (int64_t d = 0; d < devices; ++d) {
      StatusOr<Literal> tap = ReadTap(
          *tapped, names[i], instr->shape().element_type(), spmd ? d : -1);
      if (!tap.ok()) continue;
      ++tapped_devices;
      ValueCheck dv = CheckValue(*tap, (*bounds)[d].outputs[i]);
      if (dv.ok) continue;
      bad_devices.push_back(d);
      if (first_bad < 0) {
        first_bad = d;
        v = std::move(dv);
      }
    }
    if (tapped_devices == 0) {
      ++unavailable;
      seen[names[i]] = "unavailable";
      continue;
    }
    ++checked;
    if (first_bad < 0) {
      seen[names[i]] = "agrees";
      continue;
    }
    keep_values(first_bad);
    // A tuple has no tap: a get-tuple-element of the tuple a call site or
    // a control-flow site makes (through nested get-tuple-elements) shows
    // that site's value.
    const HloInstruction* named = instr;
    while (named->opcode() == HloOpcode::kGetTupleElement &&
           ProducesUntappedTuple(*named->operand(0))) {
      named = named->operand(0);
    }
    findings->instruction = named->name();
    findings->opcode = std::string(OpcodeName(named->opcode()));
    findings->dtype =
        std::string(PrimitiveTypeName(instr->shape().element_type()));
    Json ops = Json::MakeArray();
    for (const HloInstruction* op : named->operands()) {
      Json x = Json::MakeObject();
      x["name"] = op->name();
      x["opcode"] = std::string(OpcodeName(op->opcode()));
      auto it = seen.find(op->name());
      x["value"] = op->opcode() == HloOpcode::kParameter ? "input"
                   : it != seen.end()                    ? it->second
                                                         : "not compared";
      ops.push_back(std::move(x));
    }
    Json culprit = Json::MakeObject();
    culprit["name"] = named->name();
    culprit["opcode"] = findings->opcode;
    culprit["shape"] = named->shape().ToString(false);
    if (named != instr) culprit["via"] = names[i];
    culprit["position"] = static_cast<int64_t>(i);
    culprit["check"] = v.ToJson();
    culprit["operands"] = std::move(ops);
    std::string on_device;
    if (spmd) {
      findings->device = first_bad;
      culprit["device"] = first_bad;
      on_device = " on device " + std::to_string(first_bad) + " (" +
                  std::to_string(bad_devices.size()) + " of " +
                  std::to_string(devices) + " devices diverge)";
      culprit["diverging_devices"] = std::move(bad_devices);
    }
    ev["instruction"] = std::move(culprit);
    ev["checked"] = checked;
    ev["unavailable"] = unavailable;
    r.result = "found";
    r.summary = "first diverging instruction: %" + named->name() + " (" +
                findings->opcode + ", " + named->shape().ToString(false) +
                (named != instr ? ", seen through %" + names[i] : "") + ")" +
                on_device + ": max error " + Json(v.max_abs_error).Dump() +
                ", allowed " + Json(v.max_allowed).Dump() + ", " +
                std::to_string(v.mismatches) + "/" +
                std::to_string(v.elements) + " elements off";
    return r;
  }
  ev["checked"] = checked;
  ev["unavailable"] = unavailable;
  return Stop(std::move(r), "none",
              "no tapped instruction diverges (" + std::to_string(checked) +
                  " checked, " + std::to_string(unavailable) +
                  " removed by the passes); tapped run: " + tapped->status);
}

}  // namespace trench::hlo_bisect
