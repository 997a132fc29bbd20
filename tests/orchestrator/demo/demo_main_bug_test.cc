// Which bug the demo's table judges (ChooseMainBug), and how it counts the
// others (ClassifyFiledBugs): the harness knows the played commit, the
// pipeline does not.
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

// The store's other bugs: copies of the played root cause, and the rest.
TEST(DemoFiledBugsTest, CopiesAreOfThePlayedRootCauseOthersAreListed) {
  Bug main = Make(2, BugState::kProposed, "played");
  main.signature = "sig:a";
  Bug history = Make(1, BugState::kFixed, "0436c0935958e0db");
  history.signature = "sig:b";
  Bug same_sig = Make(3, BugState::kMinimized);
  same_sig.signature = "sig:a";
  Bug same_culprit = Make(4, BugState::kDuplicate, "played");
  same_culprit.signature = "sig:c";
  Bug dup_of_copy = Make(5, BugState::kDuplicate);
  dup_of_copy.signature = "sig:d";
  dup_of_copy.duplicate_of = 6;  // A copy listed after it.
  Bug copy = Make(6, BugState::kLocalized, "played");
  copy.signature = "sig:e";
  Bug false_alarm = Make(7, BugState::kNotReproducible);
  false_alarm.signature = "sig:f";
  FiledBugs f = ClassifyFiledBugs(
      {history, main, same_sig, same_culprit, dup_of_copy, copy, false_alarm},
      main, "played");
  EXPECT_EQ(f.copies, 4);
  ASSERT_EQ(f.others.size(), 2u);
  EXPECT_EQ(f.others[0], "bug 1 (fixed, culprit 0436c0935958)");
  EXPECT_EQ(f.others[1], "bug 7 (not_reproducible)");
  EXPECT_EQ(ClassifyFiledBugs({main}, main, "played").copies, 0);
}

TEST(DemoFiledBugsTest, TheTableSaysCopiesAndOthers) {
  DemoResult r;
  r.zoo_bug = "06-x";
  r.bugs_filed = 2;
  r.copies = 0;
  r.other_bugs = {"bug 1 (fixed, culprit 0436c0935958)"};
  const std::string table = DemoTable({r});
  EXPECT_NE(table.find("| 2: the bug, 0 copies (0 marked duplicate), other: "
                       "bug 1 (fixed, culprit 0436c0935958) |"),
            std::string::npos)
      << table;
  EXPECT_EQ(r.ToJson()["other_bugs"].Dump(),
            "[\"bug 1 (fixed, culprit 0436c0935958)\"]");
}

}  // namespace
}  // namespace trench::orchestrator
