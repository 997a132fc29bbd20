// Pieces of hloc shared with hlo-run: module loading, the compile flags,
// the --capabilities document and --dump-dir artifacts.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/flags.h"
#include "base/json.h"
#include "base/status.h"
#include "compiler/codegen/compile.h"
#include "compiler/ir/hlo_module.h"
#include "tpu/executable.h"

namespace trench::hloc {

inline constexpr char kVersion[] = "hloc 0.1 (tpux 1)";

// Exit codes shared by the target tools.
inline constexpr int kExitOk = 0;
inline constexpr int kExitBadInput = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitCompileError = 3;
inline constexpr int kExitRunCrash = 4;
inline constexpr int kExitMemoryError = 5;
inline constexpr int kExitTimeout = 6;

// Compile flags as given on the command line.
struct CompileFlags {
  codegen::CompileOptions options;
  std::string dump_dir;  // Empty: no dump.
};

// Reads the whole file. IoError naming the path on failure.
StatusOr<std::string> ReadFile(const std::string& path);
// Parses and verifies HLO text; `origin` prefixes messages (a path or
// "<request>"). InvalidArgument on parse or verifier errors.
StatusOr<std::unique_ptr<HloModule>> LoadModuleText(std::string_view text,
                                                    const std::string& origin);

// "RxP" as a mesh (--mesh). InvalidArgument unless R, P > 0 and R * P is
// at most tpu::kMaxSliceChips.
StatusOr<DeviceMesh> ParseMesh(const std::string& value);

// If `name` is a compile flag (disable-passes, pass-limit, rewrite-limit,
// taps, mesh, dump-dir; without the leading "--"), stores `value` into *flags
// and returns true; false for other names. InvalidArgument for bad values.
StatusOr<bool> ApplyCompileFlag(const std::string& name,
                                const std::string& value, CompileFlags* flags);

// Declares the compile flags on `p` (under "compile flags"), each stored
// through ApplyCompileFlag into *flags. REQUIRES: *flags outlives
// p->Parse.
void RegisterCompileFlags(FlagParser* p, CompileFlags* flags);

// {"tool": "hloc", "version", "ops": [...], "dtypes": [...],
//  "flags": [...], "tpux_version", "exit_codes": {...},
//  "passes": [{"name", "description", "required", "sources": [glob...]}],
//  "emitters": [{"name", "ops": [...], "sources": [glob...]}], ...}.
// "passes", "emitters" and "ops" with their "sources" are the target's
// description of itself (README "The target contract"): the files of each
// pass and emitter, as globs relative to the repository root, from the
// "sources" columns of pass_registry.def and emitters.def. "coverage" is
// the coverage build flavour (CoverageFlavour()). "slice": {"chips",
// "topology", "mesh_flag", "collectives": [...]} is the machine programs
// run on (a slice of up to 8 chips; --mesh RxP compiles for R*P of them)
// and the collectives, partition-id and replica-id among "ops".
Json Capabilities();
// {"kind", "cmake_flags": [...] (how to build the flavour), "instrumented":
// whether this binary is that flavour, "points", "pcs_command": [...],
// "serve_answer_key": "coverage"} (compiler/driver/coverage.h).
Json CoverageFlavour();

// Crash diagnostics: when the environment variable TRENCH_PASS_TRACE names
// a file, CompileWithFlags appends one line "enter <pass> <execution>" to it
// (a single unbuffered write) right before every pass execution and "enter
// codegen 0" before the back end, then "exit compile" when Compile returned
// successfully, so that after a crash the file's last line
// names the pass that was running (hlo-diff's crash signature reads it).
inline constexpr char kPassTraceEnv[] = "TRENCH_PASS_TRACE";
// Opens the trace file named by TRENCH_PASS_TRACE (once per process) and
// installs the pipeline hook. No-op when unset or unopenable.
void InstallPassTraceFromEnv();

// Compiles `module` with codegen::Compile under `flags`. With a dump
// directory D it also writes D/passes/NN.<pass>.hlo (the pipeline's dumps)
// and the artifacts of DumpArtifacts.
StatusOr<codegen::Compilation> CompileWithFlags(const HloModule& module,
                                                const CompileFlags& flags);

// The compile report: {"status": "ok", "passes": [{"pass", "execution",
// "skipped", "required", "changed", "rewrites", "seconds"}...],
// "pass_executions", "rewrites_allowed", "rewrite_decisions",
// "last_rewrite": {"pass", "site", "instruction", "index"} | null,
// "buffer_assignment", "kernels", "buffers", "hbm_bytes",
// "taps_unavailable": [...]}.
Json CompileReport(const codegen::Compilation& c);
// {"status": "compile_error", "message": m}.
Json CompileErrorReport(const std::string& message);

// Writes into `dir` (created): module.hlo (the input as printed),
// optimized.hlo, prog.tpux, kernels/<name>.s per kernel, rewrites.log (one
// line per rewrite decision: index, allowed, pass, site, instruction),
// compile.json (CompileReport) and options.json. IoError on failure.
Status DumpArtifacts(const std::string& dir, const HloModule& module,
                     const codegen::Compilation& c,
                     const codegen::CompileOptions& options);

}  // namespace trench::hloc
