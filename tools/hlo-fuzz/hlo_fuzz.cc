#include "tools/hlo-fuzz/hlo_fuzz.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <optional>

#include "triage/fuzz/fuzz_flags.h"

namespace trench {
namespace {

std::atomic<bool> g_cancel{false};

extern "C" void OnSignal(int) { g_cancel = true; }

}  // namespace

int RunHloFuzz(int argc, char** argv, std::ostream& out, std::ostream& err) {
  fuzz::FuzzFlags f = fuzz::DefaultFuzzFlags(
      argc > 0 ? std::filesystem::path(argv[0]).parent_path().string() : "");
  FlagParser p("hlo-fuzz", fuzz::kFuzzSynopsis);
  fuzz::RegisterFuzzFlags(&p, &f);
  p.set_description(fuzz::kFuzzDescription);
  p.set_epilog(
      "exit: 0 done, 2 usage, 3 campaign error, 10 findings (with\n"
      "--fail-on-finding)");
  if (std::optional<int> exit = p.ParseOrExit(argc, argv, out, err)) {
    return *exit;
  }
  std::string note;
  if (Status s = fuzz::PrepareReach(&f, &note); !s.ok()) {
    err << "hlo-fuzz: " << s.ToString() << "\n";
    return 2;
  }
  if (!note.empty()) err << "hlo-fuzz: " << note << "\n";
  const bool progress = f.progress == 1 || (f.progress == -1 && isatty(2));
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
  f.campaign.cancel = &g_cancel;
  StatusOr<fuzz::CampaignSummary> summary =
      fuzz::RunCampaign(f.campaign, report);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGTERM, &old_term, nullptr);
  if (progress) err << "\n";
  if (!summary.ok()) {
    err << "hlo-fuzz: " << summary.status().ToString() << "\n";
    return 3;
  }
  out << summary->ToJson().DumpPretty() << "\n";
  return f.fail_on_finding && !summary->findings.empty() ? 10 : 0;
}

}  // namespace trench
