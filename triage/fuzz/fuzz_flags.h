// Command line of hlo-fuzz:
//
//   hlo-fuzz [--budget 60s] [--jobs N] [--corpus DIR|FILE ...]
//            [--focus ops:a,b | passes:p,q | a,b] [--out DIR] [--seed N]
//            [--max-programs N] [--linger T] [--instructions N] [--dtypes
//            f32,bf16,...]
//            [--trace-share F] [--special-values F] [--zero-dims F]
//            [--long-rows F] [--generator-options FILE.json]
//            [--target serve|hlo-run|hloc-tpusim] [--hlo-run P] [--hloc P]
//            [--tpusim P] [--timeout S] [--target-flag F ...]
//            [--progress|--no-progress] [--fail-on-finding]
//            [--keep-unsupported] [--no-localize]
//
// Budgets take a unit: 90, 90s, 5m, 1h. The target binaries default to
// hlo-run / hloc / tpusim next to the hlo-fuzz binary.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "triage/fuzz/campaign.h"

namespace trench::fuzz {

struct FuzzFlags {
  bool help = false;
  CampaignOptions campaign;
  // -1: progress on a terminal only; 0 off; 1 on.
  int progress = -1;
  bool fail_on_finding = false;
};

// The --help text.
const char* FuzzUsage();

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

// Parses argv[1..argc-1]; `self` is argv[0], used to find the target
// binaries next to hlo-fuzz. Flags take their value as `--f v` or `--f=v`.
StatusOr<FuzzFlags> ParseFuzzFlags(int argc, char** argv);

}  // namespace trench::fuzz
