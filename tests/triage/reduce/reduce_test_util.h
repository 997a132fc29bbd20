// Helpers for hlo-reduce's tests (interestingness, reducer, cli): a small
// case with a multiply, and a fake "bug" without patching the compiler: a
// one-shot hlo-run wrapper that crashes in "algsimp" on every module with a
// multiply (unless algsimp is disabled) and otherwise runs the real hlo-run.
#pragma once

#include <string>

#include "tests/triage/case/hlo_diff_test_util.h"
#include "triage/case/case_bundle.h"

namespace trench::hlo_reduce::testing {

using hlo_diff::testing::BinaryDir;
using hlo_diff::testing::F32;
using hlo_diff::testing::TempDir;
using hlo_diff::testing::WriteScript;
using hlo_diff::testing::WriteText;

// Nine instructions; the multiply is in the middle of a chain.
inline constexpr char kChainModule[] = R"(HloModule chain

ENTRY main {
  p0 = f32[4,8] parameter(0)
  p1 = f32[4,8] parameter(1)
  a = f32[4,8] add(p0, p1)
  m = f32[4,8] multiply(a, p1)
  e = f32[4,8] exponential(m)
  s = f32[4,8] subtract(e, p0)
  n = f32[4,8] negate(s)
  ROOT t = (f32[4,8], f32[4,8]) tuple(n, a)
}
)";

inline hlo_diff::Case ChainCase(const char* module = kChainModule) {
  std::vector<float> v0, v1;
  for (int i = 0; i < 32; ++i) {
    v0.push_back(0.25f * (i % 7) - 0.5f);
    v1.push_back(0.125f * (i % 5));
  }
  StatusOr<hlo_diff::Case> c =
      hlo_diff::MakeCase(module, {F32({4, 8}, v0), F32({4, 8}, v1)});
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : hlo_diff::Case();
}

// The fake buggy target (one-shot hlo-run contract): DIR/fake-hlo-run.
inline std::string WriteFakeCrashTarget(const std::string& dir) {
  return WriteScript(dir + "/fake-hlo-run",
                     "case \" $* \" in *--disable-passes=*algsimp*) exec '" +
                         BinaryDir() +
                         "/hlo-run' \"$@\";; esac\n"
                         "if grep -q ' multiply(' \"$1\"; then\n"
                         "  echo 'enter algsimp 1' >> \"$TRENCH_PASS_TRACE\"\n"
                         "  echo 'INTERNAL: algsimp broke multiply.3' >&2\n"
                         "  kill -SEGV $$\n"
                         "fi\n"
                         "exec '" +
                         BinaryDir() + "/hlo-run' \"$@\"\n");
}

inline hlo_diff::TargetSpec FakeCrashSpec(const std::string& dir) {
  hlo_diff::TargetSpec s = hlo_diff::TargetSpec::FromBinaryDir(
      BinaryDir(), hlo_diff::TargetMode::kHloRun);
  s.hlo_run = WriteFakeCrashTarget(dir);
  s.timeout_seconds = 60;
  return s;
}

}  // namespace trench::hlo_reduce::testing
