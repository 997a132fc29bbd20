// Runs a target compiler through its command-line contract (DESIGN.md
// "Data flowing through", point 3), so any compiler that speaks it can be
// tested:
//
//   kHlocTpusim: `hloc compile module.hlo -o W/prog.tpux [flags]`, then
//                `tpusim run W/prog.tpux --inputs W/inputs --outputs W/out`;
//   kHloRun:     `hlo-run module.hlo --input F.npy ... --output-dir W/out
//                [flags]` (one process per case);
//   kServe:      one persistent `hlo-run --serve` worker fed JSON-lines
//                requests (tools/hlo-run/hlo_run.h); a worker that dies or
//                times out is killed with its process group and restarted
//                for the next case. A coverage build's answers also say
//                which coverage points the case hit (coverage_hits).
//
// Every process runs with TRENCH_PASS_TRACE=W/pass_trace.txt, so after a
// crash the last "enter <pass> <n>" line names the pass that was running
// (compiler/driver/target_driver.h); "exit compile" marks a finished compile.
//
// Status classes, from exit codes (compiler/driver/target_driver.h: 0 ok, 1 bad
// input, 2 usage, 3 compile error, 4 run crash, 5 memory error, 6 timeout)
// and signals:
//   ok;
//   compile_error  exit 3 with a clean refusal (UNIMPLEMENTED "cannot
//                  compile", RESOURCE_EXHAUSTED, NOT_FOUND, INVALID_ARGUMENT);
//   compile_crash  the compile step died of a signal, or exit 3 with any
//                  other error (INTERNAL: a pass broke an invariant), or an
//                  undocumented exit code;
//   run_crash      tpusim exit 4 (trap), or the run step died of a signal or
//                  exited with an undocumented code;
//   memory_error   exit 5;
//   timeout        our wall-clock limit, or exit 6 (the simulator's step
//                  limit);
//   bad_input      exit 1 or 2 (the target rejected the module, inputs or
//                  flags).
// In serve mode a dead worker is a crash of the step the pass trace shows.
// A crash's message is the crash site its stderr shows (crash_site.h: the
// failing check and the top backtrace frames), else stderr's last line.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/ir/literal.h"
#include "triage/case/case_bundle.h"
#include "triage/case/target_description.h"
#include "triage/case/target_result.h"

namespace trench::hlo_diff {

enum class TargetMode { kHlocTpusim, kHloRun, kServe };

struct TargetSpec {
  TargetMode mode = TargetMode::kHlocTpusim;
  std::string hloc, tpusim, hlo_run;             // Paths of the binaries.
  double timeout_seconds = 60;                   // Per case (compile + run).
  std::vector<std::string> extra_compile_flags;  // Appended to hloc/hlo-run.
  size_t capture_bytes = 64 << 10;               // Per stream.

  // The binaries in `dir` (a build directory: DIR/hloc, DIR/tpusim,
  // DIR/hlo-run) in the given mode.
  static TargetSpec FromBinaryDir(const std::string& dir, TargetMode mode);
};

// "RxP".
std::string MeshText(const DeviceMesh& mesh);

// Classifies an exit-3 compile error message (see the header comment).
bool IsCleanCompileRefusal(const std::string& message);

class TargetRunner {
 public:
  explicit TargetRunner(TargetSpec spec);
  ~TargetRunner();

  // Runs case `c` under c.options. `work_dir` (created; previous files of
  // a run there are replaced) receives module.hlo, inputs/<i>.npy, the
  // program, out/ (outputs, report.json) and pass_trace.txt. Outputs are
  // read as out/<i>.npy for every array leaf of the module's root (a <u2
  // file for a bf16 leaf is bf16 bits); a missing or unreadable one ends
  // the list and is described in output_error. An SPMD case (c.mesh of
  // several devices) runs on a slice: inputs/<d>/<i>.npy, the target's
  // --mesh RxP flag (tpusim --chips N, hlo-run --input-dir, the serve
  // request's "mesh" and "input_dir"), outputs out/<d>/<i>.npy read
  // device-major into TargetResult::outputs. Target failures are
  // results; errors are ours only (IoError for the work directory,
  // Internal when a process cannot be started). A module that does not
  // parse still goes to the target; no outputs are read then.
  StatusOr<TargetResult> Run(const Case& c, const std::string& work_dir);
  // The same with the case's module already parsed (its root shape says
  // which outputs to read). REQUIRES: `module` is c.module_text parsed.
  StatusOr<TargetResult> Run(const Case& c, const HloModule& module,
                             const std::string& work_dir);

  const TargetSpec& spec() const { return spec_; }
  // Changes apply from the next Run (a running worker keeps its flags).
  TargetSpec& mutable_spec() { return spec_; }

  // The slice the target describes (`hloc --capabilities` "slice", asked
  // once): one chip and no collectives when hloc is not given, fails or
  // does not say.
  const TargetDescription::Slice& TargetSlice();
  // Worker restarts so far (serve mode).
  int restarts() const { return restarts_; }

 private:
  StatusOr<TargetResult> RunWithRoot(const Case& c, const Shape& root,
                                     const std::string& work_dir);
  StatusOr<TargetResult> RunTwoStep(const Case& c, const std::string& work);
  StatusOr<TargetResult> RunOneShot(const Case& c, const std::string& work);
  StatusOr<TargetResult> RunServe(const Case& c, const std::string& work);

  TargetSpec spec_;
  struct Worker;
  std::unique_ptr<Worker> worker_;
  int restarts_ = 0;
  std::optional<TargetDescription::Slice> slice_;
  int requests_ = 0;
};

}  // namespace trench::hlo_diff
