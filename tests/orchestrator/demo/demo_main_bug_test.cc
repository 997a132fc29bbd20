// Which bug the demo's table judges (ChooseMainBug): the harness knows the
// played commit, the pipeline does not.
#include <gtest/gtest.h>

#include "orchestrator/demo/demo.h"

namespace trench::orchestrator {
namespace {

Bug Make(int64_t id, BugState state, const std::string& culprit = "") {
  Bug b;
  b.id = id;
  b.state = state;
  if (!culprit.empty()) b.culprit_commit = culprit;
  return b;
}

int64_t Chosen(const std::vector<Bug>& bugs) {
  std::optional<Bug> b = ChooseMainBug(bugs, "played");
  return b ? b->id : 0;
}

TEST(DemoMainBugTest, AClosedFalseAlarmGivesWayToAnOpenBug) {
  // Bug 1, a load timeout, did not reproduce; bug 2 is being worked on.
  EXPECT_EQ(Chosen({Make(1, BugState::kNotReproducible),
                    Make(2, BugState::kReproduced)}),
            2);
  // Alone, the closed one is still the result to show.
  EXPECT_EQ(Chosen({Make(1, BugState::kNotReproducible)}), 1);
  EXPECT_EQ(Chosen({}), 0);
}

TEST(DemoMainBugTest, TheBugOfThePlayedCommitWinsOverOthers) {
  // A bug of the replayed history's own (another culprit) got further.
  EXPECT_EQ(Chosen({Make(1, BugState::kProposed, "older"),
                    Make(2, BugState::kLocalized, "played")}),
            2);
  // Before any culprit is known, the most advanced open bug.
  EXPECT_EQ(
      Chosen({Make(1, BugState::kMinimized), Make(2, BugState::kLocalized)}),
      2);
  // Fixed after naming the played commit still beats an open other.
  EXPECT_EQ(Chosen({Make(1, BugState::kFixed, "played"),
                    Make(2, BugState::kPatchDrafted, "older")}),
            1);
}

TEST(DemoMainBugTest, DuplicatesAreNeverChosen) {
  EXPECT_EQ(Chosen({Make(1, BugState::kDuplicate, "played"),
                    Make(2, BugState::kNew)}),
            2);
  EXPECT_EQ(Chosen({Make(1, BugState::kDuplicate)}), 0);
}

}  // namespace
}  // namespace trench::orchestrator
