// Interestingness tests for hlo-reduce: is a candidate case still "the
// bug" the reduction started from?
//
// SameBugTest (the default) runs the candidate through hlo-diff's verdict
// (oracle + target, verdict.h) and compares it with the reference case's
// fingerprint:
//   - the verdict status is equal (a failure of verdict_status.def:
//     mismatch, nan_mismatch, compile_crash, run_crash, timeout,
//     memory_error; a reference of any other status is refused: there is
//     no bug to keep);
//   - mismatch classes: the dtype of the first bad output is equal;
//   - crash classes: the stage and the normalized message are equal, and
//     for compile_crash also the pass that was running.
// The coarse signature's "ops" (opcodes near the bad output) is NOT
// compared: removing or replacing instructions near the output changes it
// by design, so requiring it would reject nearly every useful step and
// stall the reduction; the culprit check below pins the bug down instead.
// When a culprit pass P is known (--culprit-pass P, or the "pass" of a
// refined signature in case.json, recognized by its "site" key, as
// hlo-bisect writes it) every candidate that matches also gets one extra
// target run:
//   - P != "codegen": the failure must disappear with --disable-passes=P
//     (the verdict must not match the fingerprint). A pass the target
//     refuses to disable (a required pass: the run comes back as
//     invalid_input on the reference case) cannot be checked this way and
//     --pass-limit does not reach it either (required passes do not count
//     toward it), so the check is skipped and culprit_note() says so;
//   - P == "codegen": the failure must remain with --pass-limit=0 (every
//     optional pass skipped). When the reference case itself passes at
//     --pass-limit=0, a pass exposes the back-end bug (hlo-bisect's
//     "trigger") and the check is skipped (culprit_note() says so).
// Otherwise the reference case itself must pass the culprit check (else
// Create fails: the culprit is wrong).
//
// ExternalCommandTest (--test CMD), as C-Reduce and llvm-reduce do: the
// candidate is written as a case directory (or just its module.hlo with
// `module_path`), and `sh -c 'CMD PATH'` runs with a timeout; exit status 0
// means interesting, anything else (including the timeout) not.
//
// Flaky cases: every test runs RunOnce up to `repeats` times and answers
// interesting iff at least ceil(min_rate * repeats) runs reproduce
// (ddmin::RepeatTest). MeasureRate gives the reproduction rate of a case.
//
// Every test keeps separate work files per worker (one TargetRunner per
// worker for SameBugTest), so calls with distinct worker indices < jobs may
// run concurrently.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "triage/case/case_bundle.h"
#include "triage/case/target_runner.h"
#include "triage/case/verdict.h"

namespace trench::hlo_reduce {

class Interestingness {
 public:
  virtual ~Interestingness() = default;
  // One run of the test on `c`. Errors: the harness's own only (a target
  // program that cannot be executed, an unwritable work directory).
  virtual StatusOr<bool> RunOnce(const hlo_diff::Case& c, int worker) = 0;
  // What the test is, for the summary.
  virtual Json Describe() const = 0;

  // RunOnce with the repeat policy (see the header comment).
  StatusOr<bool> IsInteresting(const hlo_diff::Case& c, int worker);
  // REQUIRES: repeats >= 1, 0 < min_rate <= 1 (else InvalidArgument).
  Status SetRepeats(int repeats, double min_rate);
  int repeats() const { return repeats_; }
  double min_rate() const { return min_rate_; }
  // Runs RunOnce `repeats()` times and returns the fraction reproducing.
  StatusOr<double> MeasureRate(const hlo_diff::Case& c, int worker);

  // RunOnce calls so far (all workers).
  int64_t runs() const { return runs_.load(); }

 protected:
  std::atomic<int64_t> runs_{0};

 private:
  int repeats_ = 1;
  double min_rate_ = 1.0;
};

// What of a verdict signature must stay equal (see the header comment).
struct Fingerprint {
  std::string status;
  Json dtype;                        // Mismatch classes.
  std::string stage, message, pass;  // Crash classes (pass: compile_crash).

  // From a verdict's (coarse) signature.
  static Fingerprint FromSignature(const hlo_diff::Signature& signature);
  bool Matches(const Fingerprint& other) const;
  Json ToJson() const;
};

struct SameBugOptions {
  hlo_diff::TargetSpec target;
  int jobs = 1;
  std::string work_dir;      // Created; per worker W/w<i>/.
  std::string culprit_pass;  // "" when unknown.
};

class SameBugTest : public Interestingness {
 public:
  // Runs `reference` once to take its fingerprint (and its culprit check).
  // Errors: FailedPrecondition when the reference does not fail with a bug
  // status ("the case does not fail: verdict pass") or fails the culprit
  // check; InvalidArgument for jobs < 1; harness errors.
  static StatusOr<std::unique_ptr<SameBugTest>> Create(
      const hlo_diff::Case& reference, SameBugOptions options);
  ~SameBugTest() override;

  StatusOr<bool> RunOnce(const hlo_diff::Case& c, int worker) override;
  Json Describe() const override;

  const Fingerprint& reference() const { return reference_; }
  const hlo_diff::Verdict& reference_verdict() const {
    return reference_verdict_;
  }
  // "checked", "none" or "skipped: <why>".
  const std::string& culprit_note() const { return culprit_note_; }

 private:
  explicit SameBugTest(SameBugOptions options);
  // The verdict's fingerprint for `c` run on worker `w` in `sub`.
  StatusOr<Fingerprint> Run(const hlo_diff::Case& c, int w,
                            const std::string& sub,
                            hlo_diff::Verdict* verdict = nullptr);
  // Whether the culprit check holds for `c` (true when not checked).
  StatusOr<bool> CulpritHolds(const hlo_diff::Case& c, int w);

  SameBugOptions options_;
  std::vector<std::unique_ptr<hlo_diff::TargetRunner>> runners_;
  Fingerprint reference_;
  hlo_diff::Verdict reference_verdict_;
  bool check_culprit_ = false;
  std::string culprit_note_ = "none";
};

struct ExternalCommandOptions {
  std::string command;       // Shell command; the path is appended quoted.
  bool module_path = false;  // Pass DIR/module.hlo instead of DIR.
  double timeout_seconds = 60;
  std::string work_dir;  // Created; per worker W/w<i>/case.
  int jobs = 1;
};

class ExternalCommandTest : public Interestingness {
 public:
  // InvalidArgument for an empty command or jobs < 1; IoError when the work
  // directory cannot be created.
  static StatusOr<std::unique_ptr<ExternalCommandTest>> Create(
      ExternalCommandOptions options);

  StatusOr<bool> RunOnce(const hlo_diff::Case& c, int worker) override;
  Json Describe() const override;

 private:
  explicit ExternalCommandTest(ExternalCommandOptions o)
      : options_(std::move(o)) {}
  ExternalCommandOptions options_;
};

// `s` quoted for sh (single quotes).
std::string ShellQuoteArg(const std::string& s);

// The culprit pass a case.json signature names, when it is a refined
// signature (has "site"); "" otherwise.
std::string CulpritFromSignature(const Json& signature);

}  // namespace trench::hlo_reduce
