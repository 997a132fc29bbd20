#include "tools/hlo-fuzz/hlo_fuzz.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <optional>

#include "triage/fuzz/features.h"
#include "triage/fuzz/fuzz_flags.h"

namespace trench {
namespace {

std::atomic<bool> g_cancel{false};

extern "C" void OnSignal(int) { g_cancel = true; }

// --feature-histogram N: the features of N generated programs.
int RunFeatureHistogram(const fuzz::FuzzFlags& f, int64_t n, bool json,
                        std::ostream& out, std::ostream& err) {
  const fuzz::CampaignOptions& c = f.campaign;
  fuzz::TraceCorpus corpus;
  if (!c.corpus.empty()) {
    if (Status s = corpus.Load(c.corpus); !s.ok()) {
      err << "hlo-fuzz: " << s.ToString() << "\n";
      return 3;
    }
  }
  const fuzz::FeatureRun run = fuzz::MeasureFeatures(
      c.seed, n, c.generator, c.corpus.empty() ? nullptr : &corpus,
      c.trace_share, c.mutation);
  if (json) {
    out << run.ToJson().DumpPretty() << "\n";
  } else {
    out << "## synthetic programs\n\n" << run.synthetic.Markdown();
    if (run.trace.programs() > 0) {
      out << "\n## trace samples\n\n" << run.trace.Markdown();
    }
    out << "\ngeneration errors: " << run.errors << "\n";
  }
  if (run.errors > 0) err << "hlo-fuzz: " << run.first_error << "\n";
  return run.errors > 0 ? 3 : 0;
}

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
  int64_t histogram = 0;
  bool histogram_json = false;
  p.Group("feature histogram (no campaign)");
  p.Number("feature-histogram", "N", &histogram,
           "generate N programs (seed S + i, the generator flags,\n"
           "--corpus/--trace-share for trace samples), print how many\n"
           "have each edge feature (interesting values, edge operands,\n"
           "boundary extents) and exit; no target runs");
  p.Bool("feature-json", &histogram_json,
         "with --feature-histogram: JSON instead of Markdown");
  if (std::optional<int> exit = p.ParseOrExit(argc, argv, out, err)) {
    return *exit;
  }
  if (histogram > 0)
    return RunFeatureHistogram(f, histogram, histogram_json, out, err);
  std::string note;
  if (Status s = fuzz::PrepareReach(&f, &note); !s.ok()) {
    err << "hlo-fuzz: " << s.ToString() << "\n";
    return 2;
  }
  if (!note.empty()) err << "hlo-fuzz: " << note << "\n";
  if (Status s = fuzz::PrepareSpmd(&f, &note); !s.ok()) {
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
