// The command-line flags that choose and bound a target, shared by the
// trench-side tools that run one (hlo-diff, hlo-bisect, hlo-reduce, and
// `trench triage`), registered on their FlagParser (base/flags.h):
//
//   --bin-dir D        the binaries hloc, tpusim, hlo-run in D (default: the
//                      directory of the running executable)
//   --hloc P --tpusim P   the two-step pipeline with these binaries
//   --hlo-run P        this hlo-run binary
//   --target serve|hlo-run|hloc-tpusim, or the switch --serve
//   --timeout S        seconds per case (> 0)
//
// The mode: --target (or --serve) when given; else the two-step pipeline
// when --hloc or --tpusim is given; else the tool's default, except that
// --hlo-run P turns the default two-step pipeline into one hlo-run process
// per case.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/flags.h"
#include "base/status.h"
#include "triage/case/target_runner.h"

namespace trench::hlo_diff {

// `value` of flag --`name` as seconds > 0. InvalidArgument("--timeout
// expects seconds > 0, got 'x'") otherwise.
StatusOr<double> ParseSeconds(std::string_view name, const std::string& value);
// A FlagParser setter storing ParseSeconds(name, value) into *out.
FlagParser::Setter SecondsFlag(std::string name, double* out);

// The directory of the running executable ("." if unknown).
std::string ExecutableDir();

struct TargetFlags {
  std::string bin_dir, hloc, tpusim, hlo_run;
  std::optional<TargetMode> mode;
  double timeout = 60;

  // Declares the flags above on `p` (under "target flags"), storing into
  // *this. REQUIRES: *this outlives p->Parse.
  void Register(FlagParser* p);
  // The flags given, as arguments for another tool ("--name=value").
  std::vector<std::string> ToArgs(const FlagParser& p) const;
  // Stores a valued target flag (`name` without dashes) and returns true;
  // false for other names. InvalidArgument for a bad value.
  StatusOr<bool> Apply(std::string_view name, const std::string& value);
  // Takes the switch --serve; false for other arguments.
  bool ApplySwitch(std::string_view arg);
  // InvalidArgument when --hlo-run is combined with --hloc/--tpusim.
  Status Check() const;
  // The spec described in the file comment.
  TargetSpec Spec(TargetMode default_mode) const;
};

}  // namespace trench::hlo_diff
