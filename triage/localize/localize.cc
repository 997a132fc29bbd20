#include "triage/localize/localize.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/npy.h"
#include "compiler/ir/opcode.h"
#include "oracle/comparator.h"
#include "oracle/spmd.h"
#include "triage/case/values_module.h"
#include "triage/case/verdict.h"

namespace trench::hlo_bisect {
namespace {

namespace fs = std::filesystem;

std::string StringAt(const Json* j, std::string_view key) {
  if (j == nullptr || !j->is_object()) return "";
  const Json* v = j->Find(key);
  return v && v->is_string() ? v->string_value() : "";
}

// The taps list of a report file ([] when it cannot be read: a run that
// wrote no outputs has no taps to read either).
Json TapsOfReport(const fs::path& report) {
  StatusOr<std::string> text = ReadTextFile(report.string());
  if (!text.ok()) return Json::MakeArray();
  StatusOr<Json> j = ParseJson(*text);
  if (!j.ok() || !j->is_object()) return Json::MakeArray();
  const Json* taps = j->Find("taps");
  return taps && taps->is_array() ? *taps : Json::MakeArray();
}

}  // namespace

TargetProber::TargetProber(hlo_diff::Case c,
                           std::shared_ptr<const HloModule> module,
                           hlo_diff::TargetSpec spec, std::string work_root)
    : case_(std::move(c)),
      module_(std::move(module)),
      spec_(spec),
      work_root_(std::move(work_root)),
      runner_(std::move(spec)) {}

TargetProber::TargetProber(hlo_diff::Case c, hlo_diff::TargetSpec spec,
                           std::string work_root)
    : TargetProber(std::move(c), nullptr, std::move(spec),
                   std::move(work_root)) {
  auto m = hlo_diff::ParseCaseModule(case_.module_text, "module.hlo");
  if (m.ok()) module_ = std::move(m).value();
}

StatusOr<Probe> Prober::RunCase(const hlo_diff::Case&, bool) {
  return Unimplemented("this prober runs its own case only");
}

StatusOr<Probe> TargetProber::Run(const hlo_diff::CaseOptions& options,
                                  bool dump) {
  hlo_diff::Case c = case_;
  c.options = options;
  if (module_ == nullptr) return RunIn(c, nullptr, dump);
  return RunIn(c, module_.get(), dump);
}

StatusOr<Probe> TargetProber::RunCase(const hlo_diff::Case& c, bool dump) {
  return RunIn(c, nullptr, dump);
}

StatusOr<Probe> TargetProber::RunIn(const hlo_diff::Case& c,
                                    const HloModule* module, bool dump) {
  const std::string dir =
      (fs::path(work_root_) / ("run-" + std::to_string(next_++))).string();
  std::optional<hlo_diff::TargetRunner> one_shot;
  hlo_diff::TargetRunner* runner = &runner_;
  Probe p;
  if (dump) {
    hlo_diff::TargetSpec s = spec_;
    if (s.mode == hlo_diff::TargetMode::kServe) {
      s.mode = hlo_diff::TargetMode::kHloRun;
    }
    p.dump_dir = (fs::path(dir) / "dump").string();
    s.extra_compile_flags.push_back("--dump-dir=" + p.dump_dir);
    one_shot.emplace(std::move(s));
    runner = &*one_shot;
  }
  ASSIGN_OR_RETURN(hlo_diff::Verdict v,
                   module ? hlo_diff::ComputeVerdict(c, *module, *runner, dir)
                          : hlo_diff::ComputeVerdict(c, *runner, dir));
  p.status = v.status_name();
  p.stage = v.stage();
  p.last_pass = v.last_pass();
  if (const Json* report = v.target ? &v.target->report : nullptr;
      report && report->is_object()) {
    if (const Json* comp = report->Find("compile")) p.compile = *comp;
    const Json* taps = report->Find("taps");
    if (taps == nullptr) {
      if (const Json* run = report->Find("run"); run && run->is_object()) {
        taps = run->Find("taps");
      }
    }
    if (taps && taps->is_array()) p.taps = *taps;
  }
  p.out_dir = (fs::path(dir) / "out").string();
  // A slice writes each device's outputs and taps under out/<d>/.
  if (c.mesh.size() > 1 && !c.options.taps.empty()) {
    for (int64_t d = 0; d < c.mesh.size(); ++d) {
      p.device_taps.push_back(
          TapsOfReport(fs::path(DeviceOutDir(p, d)) / "report.json"));
    }
  }
  p.verdict = std::move(v);
  return p;
}

StatusOr<int64_t> FirstFailing(
    int64_t lo, int64_t hi,
    const std::function<StatusOr<bool>(int64_t)>& fails) {
  if (lo >= hi) return hi;
  ASSIGN_OR_RETURN(bool at_lo, fails(lo));
  if (at_lo) return lo;
  // Invariant: fails(lo) is false, fails(hi) is true.
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    ASSIGN_OR_RETURN(bool f, fails(mid));
    (f ? hi : lo) = mid;
  }
  return hi;
}

bool SameFailure(const Probe& full, const Probe& p) {
  if (hlo_diff::IsValueFailureStatus(full.status)) {
    return hlo_diff::IsValueFailureStatus(p.status);
  }
  return hlo_diff::IsCrashStatus(full.status) && p.status == full.status &&
         p.stage == full.stage;
}

Status ParseLevels(const std::string& list, LocalizeOptions* options) {
  options->pass = options->rewrite = options->graph = options->fusion = false;
  options->callee = options->branch = false;
  std::stringstream s(list);
  std::string level;
  bool any = false;
  while (std::getline(s, level, ',')) {
    if (level == "pass") {
      options->pass = true;
    } else if (level == "rewrite") {
      options->rewrite = true;
    } else if (level == "graph") {
      options->graph = true;
    } else if (level == "fusion") {
      options->fusion = true;
    } else if (level == "callee") {
      options->callee = true;
    } else if (level == "branch") {
      options->branch = true;
    } else {
      return InvalidArgument("--levels: unknown level '" + level +
                             "' (pass, rewrite, graph, fusion, callee, "
                             "branch)");
    }
    any = true;
  }
  if (!any) return InvalidArgument("--levels: no level given");
  return Status::Ok();
}

StatusOr<Localization> Localize(const hlo_diff::Case& c, Prober& prober,
                                const LocalizeOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<HloModule> module,
                   hlo_diff::ParseCaseModule(c.module_text, "module.hlo"));
  return Localize(c, *module, prober, options);
}

StatusOr<Localization> LocalizeOnTarget(const hlo_diff::Case& c,
                                        std::shared_ptr<const HloModule> module,
                                        const hlo_diff::TargetSpec& spec,
                                        const std::string& work_dir,
                                        const LocalizeOptions& options) {
  std::string work = work_dir;
  if (work.empty()) {
    char tmpl[] = "/tmp/hlo-bisect.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      return IoError("cannot create a work directory");
    }
    work = tmpl;
  }
  const HloModule& m = *module;
  StatusOr<Localization> l = [&] {
    TargetProber prober(c, std::move(module), spec, work);
    return Localize(c, m, prober, options);
  }();
  if (work_dir.empty()) {
    std::error_code ec;
    fs::remove_all(work, ec);
  }
  return l;
}

StatusOr<Localization> Localize(const hlo_diff::Case& c,
                                const HloModule& module, Prober& prober,
                                const LocalizeOptions& options) {
  hlo_diff::Case base = c;
  base.options.pass_limit.reset();
  base.options.rewrite_limit.reset();
  base.options.taps.clear();
  Localization out;
  ASSIGN_OR_RETURN(out.full, prober.Run(base.options, false));
  out.runs = out.linear_runs = 1;
  if (!hlo_diff::IsFailureStatus(out.full.status)) {
    return FailedPrecondition("the case does not fail (status '" +
                              out.full.status + "'): nothing to localize");
  }
  auto add = [&](LevelResult r) {
    out.runs += r.runs;
    out.linear_runs += r.linear_runs;
    out.levels.push_back(std::move(r));
  };
  Findings& f = out.findings;
  if (options.pass) {
    add(LocalizePass(base, module, out.full, prober, options.numerics, &f));
  }
  if (options.rewrite) {
    add(LocalizeRewrite(base, module, out.full, prober, &f));
  }
  if (options.graph || options.fusion || options.callee || options.branch) {
    GraphState state;
    LevelResult g = LocalizeGraph(base, module, out.full, prober,
                                  options.numerics, &f, &state);
    const bool graph_ok = g.result == "found";
    if (options.graph) {
      add(std::move(g));
    } else {
      out.runs += g.runs;  // The fusion level needs the tapped run.
    }
    // The levels below look inside the graph level's instruction.
    auto without_graph = [](const char* level) {
      LevelResult r;
      r.level = level;
      r.result = "not_applicable";
      r.summary = "no diverging instruction from the graph level";
      return r;
    };
    if (options.fusion) {
      add(graph_ok ? LocalizeFusion(base, state, options.numerics, &f)
                   : without_graph("fusion"));
    }
    if (options.callee) {
      add(graph_ok ? LocalizeCallee(base, module, state, prober,
                                    options.numerics, &f)
                   : without_graph("callee"));
    }
    if (options.branch) {
      add(graph_ok ? LocalizeBranch(base, module, state, prober,
                                    options.numerics, &f)
                   : without_graph("branch"));
    }
  }
  return out;
}

StatusOr<std::unique_ptr<HloModule>> AllValuesModule(
    const HloModule& module, const std::string& computation,
    std::vector<std::string>* names) {
  const HloComputation* comp = module.GetComputationWithName(computation);
  if (comp == nullptr) {
    return NotFound("no computation named '" + computation + "'");
  }
  for (const HloInstruction* i : comp->MakeInstructionPostOrder()) {
    if (i->opcode() == HloOpcode::kParameter || !i->shape().IsArray() ||
        i->shape().element_type() == PrimitiveType::TOKEN) {
      continue;
    }
    names->push_back(i->name());
  }
  return hlo_diff::ValuesModule(module, computation, *names,
                                "__hlo_bisect_values");
}

StatusOr<Literal> ReadTap(const Probe& probe, const std::string& label,
                          PrimitiveType type, int64_t device) {
  const Json* taps = &probe.taps;
  if (device >= 0) {
    if (device >= static_cast<int64_t>(probe.device_taps.size())) {
      return NotFound("no taps of device " + std::to_string(device));
    }
    taps = &probe.device_taps[device];
  }
  for (const Json& t : taps->array()) {
    if (StringAt(&t, "label") != label) continue;
    const std::string file = StringAt(&t, "file");
    // The report's own file names are relative and plain ("taps/x.npy").
    if (file.empty() || file.find("..") != std::string::npos ||
        file[0] == '/') {
      break;
    }
    return ReadNpyFile((fs::path(DeviceOutDir(probe, device)) / file).string(),
                       type);
  }
  return NotFound("no tap labelled '" + label + "'" +
                  (device >= 0 ? " on device " + std::to_string(device) : ""));
}

StatusOr<std::vector<Literal>> SiteOperandValues(const hlo_diff::Case& c,
                                                 const HloModule& module,
                                                 const HloInstruction& site,
                                                 const GraphState& state) {
  std::vector<Literal> params;
  std::vector<Literal> out;
  for (const HloInstruction* o : site.operands()) {
    if (o->opcode() == HloOpcode::kParameter) {
      if (params.empty()) {
        ASSIGN_OR_RETURN(params,
                         DeviceParameterArguments(c, module, state.device));
      }
      out.push_back(params.at(o->parameter_number()));
      continue;
    }
    auto it = state.values.find(o->name());
    if (it == state.values.end()) {
      return NotFound("no value for operand %" + o->name() + " of %" +
                      site.name());
    }
    out.push_back(it->second);
  }
  return out;
}

std::string DeviceOutDir(const Probe& probe, int64_t device) {
  if (device < 0) return probe.out_dir;
  return (fs::path(probe.out_dir) / std::to_string(device)).string();
}

StatusOr<std::vector<BoundedResult>> EvaluateCaseWithBounds(
    const hlo_diff::Case& c, const HloModule& module,
    const NumericsOptions& numerics) {
  if (c.mesh.size() <= 1) {
    RETURN_IF_ERROR(hlo_diff::CheckInputs(module, c.inputs));
    ASSIGN_OR_RETURN(
        BoundedResult b,
        EvaluateWithBounds(
            module, hlo_diff::ParameterArguments(module, c.inputs), numerics));
    std::vector<BoundedResult> out;
    out.push_back(std::move(b));
    return out;
  }
  ASSIGN_OR_RETURN(std::vector<std::vector<Literal>> args,
                   hlo_diff::DeviceArguments(module, c));
  return EvaluateSpmdWithBounds(module, args, c.mesh, numerics);
}

StatusOr<std::vector<Literal>> DeviceParameterArguments(const hlo_diff::Case& c,
                                                        const HloModule& module,
                                                        int64_t device) {
  if (c.mesh.size() <= 1) {
    RETURN_IF_ERROR(hlo_diff::CheckInputs(module, c.inputs));
    return hlo_diff::ParameterArguments(module, c.inputs);
  }
  if (device < 0 || device >= c.mesh.size()) {
    return InvalidArgument("device " + std::to_string(device) +
                           " is not on the case's mesh");
  }
  ASSIGN_OR_RETURN(std::vector<std::vector<Literal>> args,
                   hlo_diff::DeviceArguments(module, c));
  return std::move(args[device]);
}

StatusOr<std::string> ReadTextFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return IoError(path + ": cannot read");
  std::ostringstream s;
  s << f.rdbuf();
  if (f.bad()) return IoError(path + ": read failed");
  return s.str();
}

Json ValueCheck::ToJson() const {
  Json j = Json::MakeObject();
  j["ok"] = ok;
  j["elements"] = elements;
  j["mismatches"] = mismatches;
  j["max_abs_error"] = max_abs_error;
  j["max_allowed"] = max_allowed;
  j["first_mismatch"] = first_mismatch;
  if (!shape_error.empty()) j["shape_error"] = shape_error;
  return j;
}

ValueCheck CheckValue(const Literal& actual, const BoundedOutput& expected) {
  BoundedResult br;
  br.nominal = expected.nominal;
  br.outputs.push_back(expected);
  ComparisonResult cmp = CompareWithBounds(actual, br);
  ValueCheck v;
  if (cmp.outputs.empty()) {
    v.ok = false;
    v.shape_error =
        cmp.structure_error.empty() ? "not compared" : cmp.structure_error;
    return v;
  }
  const OutputComparison& o = cmp.outputs[0];
  v.ok = o.ok();
  v.shape_error = o.shape_error;
  v.elements = o.element_count;
  v.mismatches = o.mismatch_count + o.nonfinite_mismatch_count;
  v.max_abs_error = o.max_abs_error;
  v.max_allowed = o.max_allowed;
  const std::optional<ElementMismatch>& m =
      o.first_mismatch ? o.first_mismatch : o.first_nonfinite_mismatch;
  if (m) {
    Json fm = Json::MakeObject();
    Json index = Json::MakeArray();
    for (int64_t d : m->index) index.push_back(d);
    fm["index"] = std::move(index);
    fm["expected"] = m->expected;
    fm["actual"] = m->actual;
    fm["abs_error"] = m->abs_error;
    fm["allowed"] = m->allowed ? Json(*m->allowed) : Json();
    v.first_mismatch = std::move(fm);
  }
  return v;
}

}  // namespace trench::hlo_bisect
