// `trench fuzz`: a one-shot differential fuzzing campaign with no daemon
// (tools/hlo-fuzz: the same flags as hlo-fuzz, plus --json). Prints a
// readable summary (or the campaign's summary JSON with --json) and where
// the findings' cases are, for `trench triage` or `trench report`.
#include <signal.h>

#include <atomic>
#include <iomanip>
#include <sstream>

#include "orchestrator/cli/cli.h"
#include "orchestrator/cli/progress.h"
#include "triage/case/target_flags.h"
#include "triage/fuzz/fuzz_flags.h"

namespace trench::cli {
namespace {

std::atomic<bool> g_cancel{false};

extern "C" void OnFuzzSignal(int) { g_cancel = true; }

// SIGINT/SIGTERM end the campaign early (it then prints its summary); the
// previous handlers come back when the guard goes.
class CancelOnSignal {
 public:
  CancelOnSignal() {
    g_cancel = false;
    struct sigaction sa {};
    sa.sa_handler = OnFuzzSignal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~CancelOnSignal() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

std::string SummaryText(const fuzz::CampaignSummary& s,
                        const std::string& out_dir) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(1);
  o << "fuzzed " << s.programs << " programs (" << s.synthetic << " synthetic, "
    << s.traces << " from traces) in " << s.seconds << " s";
  if (s.seconds > 0) o << " (" << s.programs / s.seconds << "/s)";
  o << "\n";
  if (!s.statuses.empty()) {
    o << "verdicts:";
    for (const auto& [status, n] : s.statuses) o << " " << status << " " << n;
    o << "\n";
  }
  if (s.generator_errors > 0) {
    o << "generator errors: " << s.generator_errors
      << " (first: " << s.first_generator_error << ")\n";
  }
  if (!s.reach.is_null()) {
    const Json* a = s.reach.Find("reached");
    const Json* b = s.reach.Find("lines");
    const Json* none = s.reach.Find("no_code");
    o << "changed-line reach: " << (a ? a->Dump() : "?") << "/"
      << (b ? b->Dump() : "?") << " executable changed lines ("
      << (none ? none->Dump() : "?") << " changed lines hold no code)\n";
  }
  o << s.findings.size() << " finding" << (s.findings.size() == 1 ? "" : "s")
    << (s.cancelled ? " (cancelled)" : "") << "\n";
  for (const fuzz::Finding& f : s.findings) {
    o << "  " << f.sig << "  " << f.status << "  x" << f.count << "  "
      << f.signature.Dump()
      << "\n    case: " << (f.case_dir.empty() ? "(not written)" : f.case_dir)
      << "\n";
  }
  o << "summary: " << out_dir << "/summary.json\n";
  if (!s.findings.empty()) {
    o << "next: trench triage CASE_DIR (one-shot), or trench report --hlo "
         "CASE_DIR/module.hlo (to the daemon)\n";
  }
  return o.str();
}

}  // namespace

int CmdFuzz(const Context& ctx) {
  // The target binaries default to those next to `trench`.
  fuzz::FuzzFlags f = fuzz::DefaultFuzzFlags(hlo_diff::ExecutableDir());
  bool json = false;
  FlagParser p = CommandParser("fuzz");
  fuzz::RegisterFuzzFlags(&p, &f);
  p.Bool("json", &json, "print the summary JSON instead of the text");
  p.set_epilog(
      "exit: 0 done, 1 campaign error or (--fail-on-finding) "
      "findings, 2 usage");
  if (std::optional<int> exit = ParseArgs(ctx, p)) return *exit;
  std::string note;
  if (Status s = fuzz::PrepareReach(&f, &note); !s.ok()) {
    return Fail(ctx, "fuzz: " + s.message());
  }
  if (!note.empty()) *ctx.err << "fuzz: " << note << "\n";
  // --progress / --no-progress override the terminal test.
  Progress progress(
      ctx.err, f.progress == 1 || (f.progress == -1 && ctx.err_is_terminal));
  fuzz::ProgressFn report;
  if (progress.enabled()) {
    report = [&progress](const fuzz::CampaignSummary& s) {
      progress.Update("fuzz: " + fuzz::ProgressLine(s));
    };
  }
  StatusOr<fuzz::CampaignSummary> summary = [&] {
    CancelOnSignal guard;
    f.campaign.cancel = &g_cancel;
    return fuzz::RunCampaign(f.campaign, report);
  }();
  progress.Finish();
  if (!summary.ok()) return Fail(ctx, "fuzz: " + summary.status().message());
  if (json) {
    *ctx.out << summary->ToJson().DumpPretty() << "\n";
  } else {
    *ctx.out << SummaryText(*summary, f.campaign.out_dir);
  }
  return f.fail_on_finding && !summary->findings.empty() ? kExitFailure
                                                         : kExitOk;
}

}  // namespace trench::cli
