// The embedded compiler's description of itself, as the daemon reads it
// from a build: the built hloc's --capabilities (this build's). For the
// tests of whatever reads descriptions (the pipeline, the drafter).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "base/subprocess.h"
#include "triage/case/target_description.h"

namespace trench::hlo_diff::testing {

inline hlo_diff::TargetDescription EmbeddedTarget() {
  hlo_diff::ProcessSpec spec;
  spec.argv = {std::string(TRENCH_BINARY_DIR) + "/hloc", "--capabilities"};
  StatusOr<hlo_diff::ProcessResult> r = hlo_diff::RunProcess(spec);
  EXPECT_TRUE(r.ok() && r->exit_code == 0) << r.status().ToString();
  StatusOr<hlo_diff::TargetDescription> d =
      hlo_diff::ParseTargetDescriptionText(r.ok() ? r->out : "", "hloc");
  EXPECT_TRUE(d.ok() && d->described()) << d.status().ToString();
  return d.ok() ? *d : hlo_diff::TargetDescription();
}

}  // namespace trench::hlo_diff::testing
