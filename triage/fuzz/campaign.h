// A differential fuzzing campaign: generate programs (synthetic and cut from
// production traces), run each through the target and the oracle (the
// verdict of triage/case/verdict.h), deduplicate failures by signature
// and keep one case per distinct finding.
//
// Jobs: `jobs` worker threads, each owning one target runner (by default a
// persistent `hlo-run --serve` worker) and its work directory. Program i
// of the campaign is fully determined by (seed, i): its source (synthetic
// or trace, alternating by trace_share through a hash of i) and the seed
// handed to the generator, so any finding can be regenerated from its
// origin in case.json.
//
// Findings are verdicts of the classes mismatch, nan_mismatch,
// compile_crash, run_crash, timeout and memory_error, deduplicated by their
// refined signature (CampaignOptions::localize). The first case of each
// signature is written to <out>/<sig>/ (a case bundle whose case.json
// carries the verdict and the signature, plus localization.json, the
// localization report); later ones only count. With
// keep_unsupported, refusals are kept the same way under
// <out>/unsupported/<sig>/ (not counted as findings). Verdicts
// invalid_input from generated programs are generator errors and counted
// apart. <out>/summary.json holds CampaignSummary::ToJson() plus
// "running": true while the campaign runs (rewritten every 5 s) and false
// at the end.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "triage/case/target_runner.h"
#include "triage/fuzz/generator.h"
#include "triage/fuzz/line_reach.h"
#include "triage/fuzz/trace_corpus.h"

namespace trench::fuzz {

struct CampaignOptions {
  double budget_seconds = 60;
  int jobs = 1;
  uint64_t seed = 1;
  // Stop after this many programs (0: only the budget stops the campaign).
  int64_t max_programs = 0;
  // This campaign is shard shard_index of shard_count: it runs programs
  // shard_index, shard_index + shard_count, ... of the seed's campaign
  // (max_programs counts the whole campaign's), so that the shards of one
  // seed together run the programs of one unsharded campaign.
  int64_t shard_index = 0;
  int64_t shard_count = 1;
  // >= 0: stop this many seconds after the first finding (the budget still
  // applies); < 0: run the whole budget.
  double linger_seconds = -1;
  std::string out_dir = "findings";
  // Trace files or directories; empty: synthetic programs only.
  std::vector<std::string> corpus;
  // Share of programs cut from the corpus (when it is not empty).
  double trace_share = 0.5;
  // Cuts keep collectives, partition-id and replica-id: SPMD programs on
  // the trace's mesh scaled down (TraceCorpusOptions::collectives).
  bool trace_collectives = false;
  GeneratorOptions generator;
  MutationOptions mutation;
  hlo_diff::TargetSpec target;
  // Deduplicate findings by the refined signature (status, pass, rewrite
  // site, opcode, dtype) of hlo-bisect's localization
  // (triage/localize/localize.h) instead of the coarse verdict signature:
  // the first case of every new coarse signature is localized (a few
  // target runs), and coarse signatures that localize alike become one
  // finding. A finding whose localization fails keeps its coarse signature.
  bool localize = true;
  // Also keep one case per distinct reason the target or the oracle
  // refused a program (statuses target_unsupported / oracle_unsupported,
  // signature {status, normalized message}); they are not findings.
  bool keep_unsupported = false;
  // Changed-line reach (line_reach.h). With a map (built from a coverage
  // build of the target, which must run in kServe mode to say what each
  // program hit), every program's coverage is attributed to the changed
  // lines, the summary says the reach, and a share `steer_share` of the
  // programs are mutants of seeds that reached the lines
  // (reach_steering.h) once there are seeds. Null: no reach (a target
  // without the coverage flavour is fuzzed as before).
  std::shared_ptr<const LineCoverageMap> changed_lines;
  double steer_share = 0.5;
  // > 0 (with changed_lines): the campaign ends early once every changed
  // line was reached by this many programs and there is no finding; seeds
  // are also kept for lines reached by fewer programs.
  int64_t reach_stop_programs = 0;
  // Polled a few times a second; when it becomes true the campaign takes no
  // new program, lets the running ones finish and returns normally (e.g.
  // set from a SIGINT handler). May be null.
  const std::atomic<bool>* cancel = nullptr;
};

// A program that timed out runs once more with this many times the
// target's limit; only a second timeout is a finding.
inline constexpr double kTimeoutRetryFactor = 3;
// A program whose target run was starved of CPU (base/subprocess.h's
// kMaxTimeoutStretch) runs again up to this many times.
inline constexpr int kStarvedRetries = 3;

struct Finding {
  std::string sig;  // The signature's hash, also the case's directory name.
  Json signature;
  std::string status;
  int64_t count = 0;
  int64_t first_program = 0;  // Campaign program number.
  double first_seconds = 0;   // Since the campaign started.
  Json origin;                // Of the first case.
  std::string case_dir;       // "" when it could not be written.
  // The coarse signatures (their "sig") merged into this finding.
  std::vector<std::string> coarse_sigs;
};

struct CampaignSummary {
  int64_t programs = 0;
  int64_t synthetic = 0, traces = 0;
  int64_t corpus_subgraphs = 0;  // Runnable subgraphs the corpus offers.
  int64_t generator_errors = 0;  // Generation failed or invalid_input.
  std::string first_generator_error;
  std::map<std::string, int64_t> statuses;  // Verdict status -> count.
  // Why programs were not compared: verdict status ("target_unsupported",
  // "oracle_unsupported") -> normalized message -> count.
  std::map<std::string, std::map<std::string, int64_t>> unsupported;
  std::vector<Finding> findings;  // In order of discovery.
  std::vector<Finding> refusals;  // With keep_unsupported: one per reason.
  double seconds = 0;
  // Summed over jobs: time spent generating, in the oracle and in the
  // target (compile + run + process I/O).
  double generate_seconds = 0, oracle_seconds = 0, target_seconds = 0;
  int worker_restarts = 0;
  // Timeouts are run once more with kTimeoutRetryFactor times the limit
  // (a loaded machine is not a hung compiler): how many were, and how
  // many of those finished then (their second verdict counts instead).
  // A timeout once the campaign is ending is not re-run and is no finding
  // (unconfirmed).
  int64_t timeouts_retried = 0, timeouts_finished_on_retry = 0;
  int64_t timeouts_unconfirmed = 0;
  // Target runs starved of CPU (no verdict) and run again.
  int64_t starved_retries = 0;
  bool cancelled = false;  // Stopped through CampaignOptions::cancel.
  // With CampaignOptions::changed_lines: LineReach::ToJson() plus
  // "steering" (ReachSteering::ToJson()), "mutants" (programs that were
  // seed mutants) and "ended_early" (reach_stop_programs met); else null.
  Json reach;

  int64_t findings_total() const;  // Sum of the findings' counts.
  Json ToJson() const;
};

// Progress callback, called about twice a second from the calling thread
// with the summary so far.
using ProgressFn = std::function<void(const CampaignSummary&)>;

// Runs the campaign. Errors: InvalidArgument for unusable options (jobs <
// 1, negative budget, an empty corpus directory), IoError when the output
// directory cannot be written, and the corpus loader's errors. Failures of
// single programs are statistics, never errors.
StatusOr<CampaignSummary> RunCampaign(const CampaignOptions& options,
                                      const ProgressFn& progress = nullptr);

// One line for a terminal: "12.0s  345 programs  28.7/s  2 findings
// [reach 3/4 lines] (pass 300, mismatch 3, ...)".
std::string ProgressLine(const CampaignSummary& s);

}  // namespace trench::fuzz
