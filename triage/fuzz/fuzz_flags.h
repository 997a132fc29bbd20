// The campaign's command-line flags, shared by hlo-fuzz and `trench fuzz`
// and declared on the one parser (base/flags.h):
//
//   [--budget 60s] [--jobs N] [--corpus DIR|FILE ...]
//   [--focus ops:a,b | passes:p,q | a,b] [--out DIR] [--seed N]
//   [--max-programs N] [--linger T] [--instructions N] [--dtypes f32,bf16,...]
//   [--trace-share F] [--special-values F] [--zero-dims F] [--long-rows F]
//   [--spmd F] [--trace-collectives]
//   [--generator-options FILE.json]
//   [--target serve|hlo-run|hloc-tpusim] [--hlo-run P] [--hloc P]
//   [--tpusim P] [--timeout S] [--target-flag F ...]
//   [--progress|--no-progress] [--fail-on-finding]
//   [--keep-unsupported] [--no-localize]
//   [--changed-lines DIFF] [--reach-stop N] [--steer-share F]
//
// Budgets take a unit: 90, 90s, 5m, 1h. The target binaries default to
// hlo-run / hloc / tpusim next to the hlo-fuzz binary.
#pragma once

#include <string>
#include <vector>

#include "base/flags.h"
#include "base/status.h"
#include "triage/fuzz/campaign.h"

namespace trench::fuzz {

struct FuzzFlags {
  bool help = false;  // Set by ParseFuzzFlags only.
  CampaignOptions campaign;
  // -1: progress on a terminal only; 0 off; 1 on.
  int progress = -1;
  bool fail_on_finding = false;
  // --changed-lines: a unified diff (the commit's) whose added lines the
  // campaign measures its reach on (PrepareReach).
  std::string changed_lines;
  // --spmd was given (PrepareSpmd then keeps its share).
  bool spmd_set = false;
};

// The share of SPMD programs when the target runs collectives and --spmd
// was not given.
inline constexpr double kDefaultSpmdShare = 0.25;

// hlo-fuzz's usage line. With no argument a campaign does not start: a
// run with every default needs one flag (e.g. --budget 60s).
inline constexpr char kFuzzSynopsis[] =
    "[--budget T] [--jobs N] [--corpus DIR|FILE ...] [--focus SPEC] "
    "[--out DIR] [--seed N] [flags]   (at least one flag)";

// What a campaign does, for --help.
inline constexpr char kFuzzDescription[] =
    "Runs a differential fuzzing campaign: synthetic programs and\n"
    "programs cut from the corpus' HLO traces go through the target and\n"
    "the oracle; each distinct finding (by signature) is written as a\n"
    "case to DIR/<sig>/, and DIR/summary.json sums up the campaign.\n"
    "Ctrl-C (SIGINT) or SIGTERM ends the campaign early; running\n"
    "programs finish and the summary is still written.";

// Defaults, with the target binaries in `binary_dir`.
FuzzFlags DefaultFuzzFlags(const std::string& binary_dir);

// Declares the campaign, generator and target flags on `p`, storing into
// *f. REQUIRES: *f outlives p->Parse.
void RegisterFuzzFlags(FlagParser* p, FuzzFlags* f);

// With --changed-lines: reads the diff and maps its added lines onto the
// target's coverage build (line_reach.h LineCoverageMap::OfBinary on the
// hlo-run binary), setting f->campaign.changed_lines. A target that is not
// a coverage build, or no coverage tooling, is not an error: *note says
// why there is no reach and the campaign runs as before. Errors:
// IoError/InvalidArgument for an unreadable or malformed diff, and
// InvalidArgument for a coverage campaign not in serve mode.
Status PrepareReach(FuzzFlags* f, std::string* note);

// Asks the target what it runs (`hloc --capabilities`, the hloc of
// f->campaign.target, read by hlo_diff::ParseTargetDescriptionText): when
// its "slice" lists collectives on at least 4 chips, a share of the
// synthetic programs are SPMD (--spmd, else kDefaultSpmdShare) and trace
// cuts keep collectives (CampaignOptions::trace_collectives); *note says
// so. No hloc binary, a failing one, or no "slice" leaves the flags as they
// are (a note for the failure). Errors: InvalidArgument for a malformed
// description.
Status PrepareSpmd(FuzzFlags* f, std::string* note);

// Parses a duration: "90", "90s", "1.5m", "2h". InvalidArgument otherwise.
StatusOr<double> ParseDuration(const std::string& text);

// The ops a --focus value selects, as GeneratorOptions::focus entries:
// "ops:a,b" or "a,b" names opcodes or op groups (generator.h's OpGroup);
// "passes:p,q" maps each pass of the target to the op groups its rewrites
// look at (FocusGroupsForPass). InvalidArgument for unknown names.
StatusOr<std::vector<std::string>> ParseFocus(const std::string& spec);

// The op groups and opcodes a pass works on, for --focus passes:...; empty
// for an unknown pass.
std::vector<std::string> FocusGroupsForPass(const std::string& pass);

// Parses argv[1..argc-1] with RegisterFuzzFlags on DefaultFuzzFlags(the
// directory of argv[0]). InvalidArgument naming the flag on errors, and for
// an empty command line.
StatusOr<FuzzFlags> ParseFuzzFlags(int argc, char** argv);

}  // namespace trench::fuzz
