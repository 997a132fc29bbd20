#include "tools/hlo-fuzz/hlo_fuzz.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>

#include "triage/fuzz/fuzz_flags.h"

namespace trench {
namespace {

std::atomic<bool> g_cancel{false};

extern "C" void OnSignal(int) { g_cancel = true; }

}  // namespace

int RunHloFuzz(int argc, char** argv, std::ostream& out, std::ostream& err) {
  StatusOr<fuzz::FuzzFlags> flags = fuzz::ParseFuzzFlags(argc, argv);
  if (!flags.ok()) {
    err << "hlo-fuzz: " << flags.status().message() << "\n"
        << "run hlo-fuzz --help for usage\n";
    return 2;
  }
  if (flags->help) {
    out << fuzz::FuzzUsage();
    return 0;
  }
  const bool progress =
      flags->progress == 1 || (flags->progress == -1 && isatty(2));
  fuzz::ProgressFn report;
  if (progress) {
    report = [&err](const fuzz::CampaignSummary& s) {
      err << "\r" << fuzz::ProgressLine(s) << "\x1b[K" << std::flush;
    };
  }
  // SIGINT/SIGTERM end the campaign early, with its summary.
  g_cancel = false;
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  sigemptyset(&sa.sa_mask);
  struct sigaction old_int {
  }, old_term{};
  sigaction(SIGINT, &sa, &old_int);
  sigaction(SIGTERM, &sa, &old_term);
  flags->campaign.cancel = &g_cancel;
  StatusOr<fuzz::CampaignSummary> summary =
      fuzz::RunCampaign(flags->campaign, report);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (progress) err << "\n";
  if (!summary.ok()) {
    err << "hlo-fuzz: " << summary.status().ToString() << "\n";
    return 3;
  }
  out << summary->ToJson().DumpPretty() << "\n";
  return flags->fail_on_finding && !summary->findings.empty() ? 10 : 0;
}

}  // namespace trench
