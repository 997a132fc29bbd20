// The verdict status registry (verdict_status.def): every status
// round-trips through its name, unknown names are refused clearly, and the
// classes are the ones the tree used to spell out by hand.
#include "triage/case/verdict_status.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace trench::hlo_diff {
namespace {

// The classifications as the tree wrote them before the registry (kept
// here verbatim as the reference).
bool OldIsFailure(const std::string& s) {  // triage_report, campaign, ...
  return s == "mismatch" || s == "nan_mismatch" || s == "compile_crash" ||
         s == "run_crash" || s == "timeout" || s == "memory_error";
}
bool OldCommitBisectFailure(const std::string& s) {  // A negative list.
  return !s.empty() && s != "pass" && s != "invalid_input" &&
         s != "oracle_unsupported" && s != "target_unsupported";
}
bool OldUnjudgeable(const std::string& s) {  // agents' reproducer.
  return s == "invalid_input" || s == "oracle_unsupported" ||
         s == "target_unsupported";
}
bool OldValue(const std::string& s) {  // localize, interestingness.
  return s == "mismatch" || s == "nan_mismatch";
}
bool OldCrash(const std::string& s) {
  return s == "compile_crash" || s == "run_crash" || s == "timeout" ||
         s == "memory_error";
}
int OldExitCode(const std::string& s) {  // hlo-diff.
  if (s == "pass") return 0;
  if (s == "invalid_input") return 1;
  if (s == "mismatch" || s == "nan_mismatch") return 10;
  if (OldCrash(s)) return 11;
  if (s == "oracle_unsupported" || s == "target_unsupported") return 12;
  return 2;
}

TEST(VerdictStatusTest, EveryStatusRoundTripsThroughItsName) {
  std::set<std::string> names;
  for (VerdictStatus s : AllVerdictStatuses()) {
    const std::string name = VerdictStatusName(s);
    EXPECT_TRUE(names.insert(name).second) << "duplicate " << name;
    StatusOr<VerdictStatus> back = ParseVerdictStatus(name);
    ASSERT_TRUE(back.ok()) << name;
    EXPECT_EQ(*back, s) << name;
  }
  // DESIGN.md's list plus target_unsupported.
  EXPECT_EQ(names,
            (std::set<std::string>{"pass", "mismatch", "nan_mismatch",
                                   "compile_crash", "run_crash", "timeout",
                                   "memory_error", "oracle_unsupported",
                                   "target_unsupported", "invalid_input"}));
}

TEST(VerdictStatusTest, UnknownNamesAreRefusedWithTheKnownOnes) {
  for (const char* bad : {"", "Pass", "crash", "harness_error"}) {
    StatusOr<VerdictStatus> s = ParseVerdictStatus(bad);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(s.status().message().find("unknown verdict status '" +
                                        std::string(bad) + "'"),
              std::string::npos)
        << s.status().message();
    EXPECT_NE(s.status().message().find("nan_mismatch"), std::string::npos);
    EXPECT_FALSE(IsFailureStatus(bad));
    EXPECT_FALSE(IsValueFailureStatus(bad));
    EXPECT_FALSE(IsCrashStatus(bad));
    EXPECT_FALSE(IsUnjudgeableStatus(bad));
  }
}

TEST(VerdictStatusTest, ClassesMatchTheOldHandWrittenChecks) {
  for (VerdictStatus s : AllVerdictStatuses()) {
    const std::string n = VerdictStatusName(s);
    EXPECT_EQ(IsFailure(s), OldIsFailure(n)) << n;
    EXPECT_EQ(IsFailure(s), OldCommitBisectFailure(n)) << n;
    EXPECT_EQ(IsFailureStatus(n), OldIsFailure(n)) << n;
    EXPECT_EQ(IsValueFailure(s), OldValue(n)) << n;
    EXPECT_EQ(IsValueFailureStatus(n), OldValue(n)) << n;
    EXPECT_EQ(IsCrash(s), OldCrash(n)) << n;
    EXPECT_EQ(IsCrashStatus(n), OldCrash(n)) << n;
    EXPECT_EQ(!IsJudgeable(s), OldUnjudgeable(n)) << n;
    EXPECT_EQ(IsUnjudgeableStatus(n), OldUnjudgeable(n)) << n;
    EXPECT_EQ(HloDiffExitCode(s), OldExitCode(n)) << n;
    // A failure is judgeable; pass is judgeable and no failure.
    if (IsFailure(s)) {
      EXPECT_TRUE(IsJudgeable(s)) << n;
    }
  }
  EXPECT_TRUE(IsJudgeable(VerdictStatus::kPass));
  EXPECT_FALSE(IsFailure(VerdictStatus::kPass));
}

}  // namespace
}  // namespace trench::hlo_diff
