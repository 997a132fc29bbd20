// hlo-bisect's hierarchical localization (DESIGN.md "Data flowing through",
// point 5): from a failing case to the pass execution, the single rewrite
// decision, the first diverging instruction and the first diverging op
// inside its fused kernel, each step costing few target runs.
//
// Levels (each a function below; Localize runs the selected ones in order):
//   pass     binary search on --pass-limit over [0, E + 1] (E = the full
//            run's pass_executions; limit E + 1 is the unlimited compile:
//            compile.h turns buffer reuse off while the limit is used up
//            by the pipeline's executions) for the smallest limit at which
//            the case fails as the full run does. 0: the back end
//            ("codegen"); E + 1: "buffer-assignment"; n: the pass of
//            execution n. For value failures one more (dumped) run at
//            limit n decides between the pass and the back end: the
//            module the target compiled there is evaluated by the oracle;
//            if the target's outputs are within that module's own
//            contract, the back end did its job and the pass changed the
//            result (the pass is named); if not, the back end miscompiled
//            the pass's output ("codegen", the pass recorded as trigger).
//            Crashes are named by the pass execution that introduces
//            them; a compile crash inside a pass by the pass trace (no
//            search).
//   rewrite  binary search on --rewrite-limit over [0, R] (R = the full
//            run's rewrites_allowed; unknown after a compile crash: found
//            by doubling) for the smallest limit n that fails; its compile
//            report's last_rewrite is the decision (after a compile crash:
//            the first denied decision of a dumped run at n - 1, from its
//            rewrites.log). Limit 0 failing: no decision involved (null).
//   graph    one run with --taps=all (and a dump of the optimized module);
//            every instruction of the input module's entry is evaluated by
//            the oracle under the numerics contract, and the first one in
//            post order whose tapped value violates its bound is named
//            (instructions the passes removed have no tap). An SPMD case
//            (a mesh of several devices) is tapped on every device and
//            evaluated by the SPMD oracle: the first instruction that
//            diverges on any device is named with the first device it
//            diverges on (and every device it diverges on); the levels
//            below look at that device's values. Run crashes
//            and memory errors have no values: the instruction whose
//            kernel crashed (the simulator's report names the kernel) is
//            named instead, from one dumped run.
//   fusion   when that instruction is, or is inside, a fusion of the
//            optimized module: the fused computation is evaluated by the
//            oracle on the target's own (tapped) operand values, and the
//            first member in post order whose tapped value violates its
//            bound is named. No extra target run. For a crashing fused
//            kernel, whose inside taps cannot show, the kernel's hero is
//            named (its reduce, else its dot, else its root).
//   callee   when the graph level's instruction is a call site that runs a
//            computation on element values (sort comparator; reduce,
//            reduce-window, scatter, all-reduce, select-and-scatter
//            bodies; map): each called computation is outlined into an
//            entry applying it lane-wise to S scalar argument tuples drawn
//            from the call site's operand values (callee_probe.h), run
//            once with --taps=all, and the first op inside (post order)
//            whose tapped value violates its bound is named, with its
//            computation and the call site. A probe that does not fail
//            says the ops are right on their own: the call site's
//            emitter runs them wrong (result "none"). The graph level
//            steps back from a get-tuple-element of a call site's tuple
//            to the call site, whose tuple has no tap of its own.
//   branch   when the graph level's instruction is a control-flow site
//            (conditional, call, while; the graph level steps back to it
//            from a get-tuple-element of its tuple too): each computation
//            it runs on the case's values (a conditional's taken branch
//            by XLA's rule, a call's callee, a while body on the states of
//            its first 8 iterations), with the arguments the oracle says
//            it gets, becomes the entry of a case of its own. A case that
//            fails is localized there by the graph level (and below it
//            the callee level, or this level again, 3 deep at most), and
//            the op inside is named with its computation. When every
//            computation is right alone the site runs them wrong (which
//            branch, how many iterations): result "none", the site stays
//            named. One target run per computation, plus the inner
//            levels' runs.
//
// "Fails as the full run does": mismatch and nan_mismatch are one class;
// crashes (compile_crash, run_crash, timeout, memory_error) must repeat the
// full run's status and stage.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/ir/literal.h"
#include "oracle/numerics_contract.h"
#include "triage/case/case_bundle.h"
#include "triage/case/target_runner.h"
#include "triage/case/verdict.h"

namespace trench::hlo_bisect {

// One target run as the levels see it.
struct Probe {
  std::string status;         // The verdict status ("mismatch", "pass", ...).
  std::string stage;          // The target's stage ("compile"/"run"/"").
  std::string last_pass;      // Last pass entered ("" none).
  hlo_diff::Verdict verdict;  // The whole verdict (default in tests).
  Json compile;               // hloc's compile report, or null.
  std::string out_dir;        // Outputs and taps/ ("" when none).
  std::string dump_dir;       // The --dump-dir of a dumped run ("" none).
  Json taps = Json::MakeArray();  // [{"label", "file", ...}] from the report.
  // An SPMD case's run: device d's taps (out_dir/<d>/report.json's), by
  // device; empty for a single device.
  std::vector<Json> device_taps;
};

// Runs the case under given compile options. Abstract so that tests can
// script a target.
class Prober {
 public:
  virtual ~Prober() = default;
  // Runs the case with `options` (its compile flags); with `dump` the
  // target also writes its --dump-dir artifacts (Probe::dump_dir). Errors
  // are the harness's own (see hlo_diff::ComputeVerdict).
  virtual StatusOr<Probe> Run(const hlo_diff::CaseOptions& options,
                              bool dump) = 0;
  // Runs another case (a probe module the levels made) on the same target,
  // likewise. The default: Unimplemented (a prober bound to one case).
  virtual StatusOr<Probe> RunCase(const hlo_diff::Case& c, bool dump);
};

// The real target: hlo_diff::ComputeVerdict with a TargetRunner, each run in
// a fresh directory <work_root>/run-<k>. Dumped runs use a one-shot runner
// (hlo-run, or hloc + tpusim) with --dump-dir=<run>/dump, since a serve
// worker takes its flags once.
class TargetProber : public Prober {
 public:
  // `module` is c.module_text parsed (shared: it is read, never changed).
  TargetProber(hlo_diff::Case c, std::shared_ptr<const HloModule> module,
               hlo_diff::TargetSpec spec, std::string work_root);
  // Parses c's module itself (a module that does not parse gives
  // invalid_input probes).
  TargetProber(hlo_diff::Case c, hlo_diff::TargetSpec spec,
               std::string work_root);
  StatusOr<Probe> Run(const hlo_diff::CaseOptions& options, bool dump) override;
  StatusOr<Probe> RunCase(const hlo_diff::Case& c, bool dump) override;

 private:
  // Runs `c` (module parsed: `module`, or null to parse it) in a fresh
  // run directory.
  StatusOr<Probe> RunIn(const hlo_diff::Case& c, const HloModule* module,
                        bool dump);

  hlo_diff::Case case_;
  std::shared_ptr<const HloModule> module_;  // Null: does not parse.
  hlo_diff::TargetSpec spec_;
  std::string work_root_;
  hlo_diff::TargetRunner runner_;
  int64_t next_ = 0;
};

// Binary search for the smallest n in [lo, hi] with fails(n), given that
// fails(hi) holds (it is not evaluated) and fails is monotone. Evaluates
// fails(lo) first. Returns hi when nothing below fails; errors of `fails`
// are passed on. REQUIRES: lo <= hi.
StatusOr<int64_t> FirstFailing(
    int64_t lo, int64_t hi,
    const std::function<StatusOr<bool>(int64_t)>& fails);

// Whether `p` fails as `full` does (see the file comment; the classes are
// verdict_status.def's).
bool SameFailure(const Probe& full, const Probe& p);

// One level's outcome.
struct LevelResult {
  std::string level;    // "pass", "rewrite", "graph", "fusion", "callee",
                        // "branch".
  std::string result;   // "found", "none" (searched, nothing to name),
                        // "not_applicable", "error".
  std::string summary;  // One readable line.
  Json evidence = Json::MakeObject();
  int64_t runs = 0;         // Target runs this level used.
  int64_t linear_runs = 0;  // Runs a linear scan of the same space needs.
};

// What the levels found, for the later levels and the refined signature.
struct Findings {
  std::string pass;     // Culprit: a pass name, "codegen", "buffer-assignment".
  std::string trigger;  // A pass that exposes a back-end bug.
  int64_t pass_execution = -1;  // -1: none / unknown.
  Json rewrite;                 // {"pass","site","instruction","index"}|null.
  std::string instruction;      // Graph level's culprit (input module).
  std::string opcode, dtype;    // Graph level's culprit.
  std::string fusion;           // Fusion instruction (optimized module).
  std::string fused_instruction, fused_opcode;  // Fusion level's culprit.
  std::string rewrite_opcode;  // Opcode of the rewritten input instruction.
  // Callee or branch level's culprit: an op inside a computation the
  // graph level's call site runs (input module).
  std::string called_computation, called_instruction, called_opcode;
  // An SPMD case: the first device on which the graph level's instruction
  // diverges (-1: a single-device case, or not known).
  int64_t device = -1;
};

struct LocalizeOptions {
  bool pass = true, rewrite = true, graph = true, fusion = true;
  bool callee = true, branch = true;
  // Evaluator options for the oracle (the numerics contract's).
  NumericsOptions numerics;
};

// Parses "pass,rewrite,graph,fusion,callee,branch" (any subset, any order) into
// *options. InvalidArgument naming an unknown level.
Status ParseLevels(const std::string& list, LocalizeOptions* options);

struct Localization {
  Probe full;  // The baseline run (case options, no limits, no taps).
  std::vector<LevelResult> levels;
  Findings findings;
  int64_t runs = 0;         // Every target run, the baseline included.
  int64_t linear_runs = 0;  // Baseline + the levels' linear scans.
};

// Runs the baseline and the selected levels on `c` (its options minus
// pass/rewrite limits and taps), whose module text parses to `module`,
// through `prober`. Errors: FailedPrecondition when the baseline does not
// fail (status "pass", or a status that shows no bug: invalid_input,
// oracle_unsupported, target_unsupported); the prober's errors. A level
// that cannot proceed records result "error" or "not_applicable" and the
// next levels still run where they can.
// REQUIRES: `module` is ParseCaseModule(c.module_text).
StatusOr<Localization> Localize(const hlo_diff::Case& c,
                                const HloModule& module, Prober& prober,
                                const LocalizeOptions& options = {});
// The same for a case whose module is not parsed yet; also an error when
// it does not parse.
StatusOr<Localization> Localize(const hlo_diff::Case& c, Prober& prober,
                                const LocalizeOptions& options = {});

// hlo-bisect's localization of `c` (module as above) on the target `spec`:
// a TargetProber with its runs under `work_dir` (kept), or under a
// temporary directory removed afterwards when `work_dir` is empty. Errors
// as Localize, and IoError when no temporary directory can be made.
StatusOr<Localization> LocalizeOnTarget(const hlo_diff::Case& c,
                                        std::shared_ptr<const HloModule> module,
                                        const hlo_diff::TargetSpec& spec,
                                        const std::string& work_dir = "",
                                        const LocalizeOptions& options = {});

// ---- The levels (called by Localize, in this order). Each counts its own
// runs in LevelResult::runs and fills `findings`. `module` is the case's
// module (as for Localize).
LevelResult LocalizePass(const hlo_diff::Case& c, const HloModule& module,
                         const Probe& full, Prober& prober,
                         const NumericsOptions& numerics, Findings* findings);
LevelResult LocalizeRewrite(const hlo_diff::Case& c, const HloModule& module,
                            const Probe& full, Prober& prober,
                            Findings* findings);
// The graph level also returns its tapped probe and the optimized module
// for the fusion level.
struct GraphState {
  Probe tapped;                          // The --taps=all run.
  std::unique_ptr<HloModule> optimized;  // Its optimized module, or null.
  // The oracle's values of the input entry's instructions, by name.
  std::map<std::string, Literal> values;
  // A run crash: the graph level named the crashing kernel's instruction
  // (of the optimized module) instead of a diverging value.
  bool crash = false;
  // An SPMD case: the device whose values `values` holds and whose taps
  // the levels below read (Findings::device); -1 for a single device.
  int64_t device = -1;
};
LevelResult LocalizeGraph(const hlo_diff::Case& c, const HloModule& module,
                          const Probe& full, Prober& prober,
                          const NumericsOptions& numerics, Findings* findings,
                          GraphState* state);
LevelResult LocalizeFusion(const hlo_diff::Case& c, const GraphState& state,
                           const NumericsOptions& numerics, Findings* findings);
// Uses prober.RunCase; the graph level's findings->instruction is the call
// site.
LevelResult LocalizeCallee(const hlo_diff::Case& c, const HloModule& module,
                           const GraphState& state, Prober& prober,
                           const NumericsOptions& numerics, Findings* findings);
// Uses prober.RunCase; the graph level's findings->instruction is the
// control-flow site.
LevelResult LocalizeBranch(const hlo_diff::Case& c, const HloModule& module,
                           const GraphState& state, Prober& prober,
                           const NumericsOptions& numerics, Findings* findings);

// ---- Helpers shared by the levels.

// A copy of `comp`'s module whose entry is `comp` (which must belong to
// `module`) with the root replaced by a tuple of every array-shaped
// instruction but parameters (post order); `names` receives their names in
// tuple order. The result is evaluated, never compiled.
StatusOr<std::unique_ptr<HloModule>> AllValuesModule(
    const HloModule& module, const std::string& computation,
    std::vector<std::string>* names);

// Reads the tap labelled `label` of `probe` (its report's taps list; with
// device >= 0, that device's), with bf16 bits turned back into bf16 when
// `type` is BF16. NotFound when the probe has no such tap.
StatusOr<Literal> ReadTap(const Probe& probe, const std::string& label,
                          PrimitiveType type, int64_t device = -1);

// Where a probe's outputs of `device` are: out_dir for a single device
// (device < 0), out_dir/<device> for an SPMD case.
std::string DeviceOutDir(const Probe& probe, int64_t device);

// The oracle's values of `module` with their bounds on the case's inputs:
// one result per device of c.mesh (one for a single-device case; the SPMD
// oracle for a mesh). Errors: the inputs do not fit `module`, or the
// oracle's.
StatusOr<std::vector<BoundedResult>> EvaluateCaseWithBounds(
    const hlo_diff::Case& c, const HloModule& module,
    const NumericsOptions& numerics);

// The entry arguments of device `device` (< 0: the only one) of the case,
// for `module`. Errors: the inputs do not fit `module`.
StatusOr<std::vector<Literal>> DeviceParameterArguments(const hlo_diff::Case& c,
                                                        const HloModule& module,
                                                        int64_t device);

// The values of the operands of `site` (an entry instruction of `module`)
// on the graph level's device (state.device): the case's arguments for
// parameters, else the graph level's oracle values. NotFound naming the
// operand and the site when one has no value.
StatusOr<std::vector<Literal>> SiteOperandValues(const hlo_diff::Case& c,
                                                 const HloModule& module,
                                                 const HloInstruction& site,
                                                 const GraphState& state);

// The whole file at `path`; IoError naming it when it cannot be read.
StatusOr<std::string> ReadTextFile(const std::string& path);

// One instruction's comparison under the numerics contract.
struct ValueCheck {
  bool ok = true;
  double max_abs_error = 0, max_allowed = 0;
  int64_t mismatches = 0, elements = 0;
  Json first_mismatch;  // {"index", "expected", "actual", "allowed"} | null.
  std::string shape_error;
  Json ToJson() const;
};
ValueCheck CheckValue(const Literal& actual, const BoundedOutput& expected);

}  // namespace trench::hlo_bisect
