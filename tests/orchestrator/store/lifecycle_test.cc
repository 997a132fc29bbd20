#include "orchestrator/store/lifecycle.h"

#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "tests/orchestrator/store/store_test_util.h"

namespace trench::orchestrator {
namespace {

using ::trench::orchestrator::testing::StoreTest;

TEST(LifecycleRegistryTest, NamesRoundTripAndAreUnique) {
  std::set<std::string_view> names;
  for (BugState s : AllBugStates()) {
    auto parsed = ParseBugState(BugStateName(s));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, s);
    EXPECT_TRUE(names.insert(BugStateName(s)).second) << BugStateName(s);
    EXPECT_FALSE(BugStateDescription(s).empty());
  }
  EXPECT_EQ(names.size(), 16u);
  auto bad = ParseBugState("zombie");
  EXPECT_EQ(bad.status().message(),
            "unknown bug state 'zombie' (valid: new, reproduced, "
            "not_reproducible, flaky, minimized, localized, culprit_found, "
            "patch_drafted, patch_verified, proposed, approved, rejected, "
            "fixed, closed, duplicate, invalid)");
}

TEST(LifecycleRegistryTest, DesignMainLineIsLegal) {
  const BugState line[] = {BugState::kNew,           BugState::kReproduced,
                           BugState::kMinimized,     BugState::kLocalized,
                           BugState::kCulpritFound,  BugState::kPatchDrafted,
                           BugState::kPatchVerified, BugState::kProposed,
                           BugState::kApproved,      BugState::kFixed,
                           BugState::kClosed};
  for (size_t i = 0; i + 1 < std::size(line); ++i) {
    EXPECT_TRUE(IsLegalTransition(line[i], line[i + 1]))
        << BugStateName(line[i]) << " -> " << BugStateName(line[i + 1]);
  }
  EXPECT_TRUE(IsLegalTransition(BugState::kNew, BugState::kFlaky));
  EXPECT_TRUE(IsLegalTransition(BugState::kNew, BugState::kNotReproducible));
  EXPECT_TRUE(IsLegalTransition(BugState::kFlaky, BugState::kMinimized));
  EXPECT_TRUE(IsLegalTransition(BugState::kProposed, BugState::kRejected));
}

TEST(LifecycleRegistryTest, IllegalMovesNameBothStates) {
  EXPECT_FALSE(IsLegalTransition(BugState::kNew, BugState::kFixed));
  EXPECT_FALSE(IsLegalTransition(BugState::kMinimized, BugState::kNew));
  Status s = CheckTransition(BugState::kClosed, BugState::kFixed);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "illegal bug transition closed -> fixed (from closed: new)");
  s = CheckTransition(BugState::kNew, BugState::kLocalized);
  EXPECT_NE(s.message().find("new -> localized"), std::string::npos);
  EXPECT_NE(s.message().find("reproduced, not_reproducible, flaky"),
            std::string::npos)
      << s.message();
}

TEST(LifecycleRegistryTest, EveryStateIsReachableAndNoneIsFinal) {
  std::set<BugState> reached = {BugState::kNew};
  std::vector<BugState> work = {BugState::kNew};
  while (!work.empty()) {
    BugState s = work.back();
    work.pop_back();
    for (BugState next : NextStates(s)) {
      if (reached.insert(next).second) work.push_back(next);
    }
  }
  EXPECT_EQ(reached.size(), AllBugStates().size());
  for (BugState s : AllBugStates()) {
    // A reviewer may reopen even a closed bug.
    EXPECT_FALSE(NextStates(s).empty()) << BugStateName(s);
    EXPECT_FALSE(IsLegalTransition(s, s)) << BugStateName(s);
  }
  EXPECT_TRUE(IsOpen(BugState::kNew));
  EXPECT_FALSE(IsOpen(BugState::kDuplicate));
  EXPECT_FALSE(IsOpen(BugState::kClosed));
  EXPECT_FALSE(IsOpen(BugState::kInvalid));
  EXPECT_EQ(NextStates(BugState::kClosed),
            std::vector<BugState>{BugState::kNew});
}

TEST(LifecycleRegistryTest, VerbsRoundTripAndAreTransitions) {
  std::set<std::string_view> names;
  for (TriageVerb v : AllTriageVerbs()) {
    auto parsed = ParseTriageVerb(TriageVerbName(v));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, v);
    EXPECT_TRUE(names.insert(TriageVerbName(v)).second);
    EXPECT_FALSE(TriageVerbDescription(v).empty());
    EXPECT_FALSE(TriageVerbFromStates(v).empty());
    // Every verb's move is a lifecycle transition.
    for (BugState from : TriageVerbFromStates(v)) {
      EXPECT_TRUE(IsLegalTransition(from, TriageVerbTarget(v)))
          << TriageVerbName(v) << " from " << BugStateName(from);
      EXPECT_TRUE(CheckTriageVerb(v, from).ok());
    }
  }
  EXPECT_EQ(TriageVerbNames(),
            "approve, reject, redraft, duplicate, invalid, close, reopen");
  EXPECT_EQ(ParseTriageVerb("nuke").status().message(),
            "unknown verb 'nuke' (valid: approve, reject, redraft, duplicate, "
            "invalid, close, reopen)");
}

TEST(LifecycleRegistryTest, VerbsApplyWhereTheIssueSays) {
  auto from = [](TriageVerb v) {
    std::set<BugState> s;
    for (BugState b : TriageVerbFromStates(v)) s.insert(b);
    return s;
  };
  std::set<BugState> open, not_closed;
  for (BugState s : AllBugStates()) {
    if (IsOpen(s)) open.insert(s);
    if (s != BugState::kClosed) not_closed.insert(s);
  }
  using enum BugState;
  EXPECT_EQ(from(TriageVerb::kApprove), std::set<BugState>{kProposed});
  EXPECT_EQ(from(TriageVerb::kReject), std::set<BugState>{kProposed});
  EXPECT_EQ(from(TriageVerb::kRedraft),
            (std::set<BugState>{kProposed, kRejected, kPatchVerified,
                                kPatchDrafted}));
  EXPECT_EQ(from(TriageVerb::kDuplicate), open);
  EXPECT_EQ(from(TriageVerb::kInvalid), open);
  EXPECT_EQ(from(TriageVerb::kClose), not_closed);
  EXPECT_EQ(from(TriageVerb::kReopen),
            (std::set<BugState>{kClosed, kInvalid, kDuplicate, kNotReproducible,
                                kFixed}));
  EXPECT_EQ(TriageVerbTarget(TriageVerb::kReopen), kNew);
  EXPECT_EQ(TriageVerbTarget(TriageVerb::kRedraft), kCulpritFound);
  Status s = CheckTriageVerb(TriageVerb::kApprove, kNew);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(s.message(),
            "cannot approve a bug in state new (approve applies to: "
            "proposed)");
}

using LifecycleStoreTest = StoreTest;

TEST_F(LifecycleStoreTest, TransitionWritesStateAndOneEventEach) {
  auto store = OpenStore(&clock_);
  auto id = store->CreateBug({.signature = "sig", .title = "t"}, "api",
                             Json::MakeObject());
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  clock_.Advance(5);
  auto bug = store->TransitionBug(*id, BugState::kFlaky, "reproducer#1",
                                  Json::Object{{"runs", Json(10)}},
                                  {.flaky_rate = 0.3});
  ASSERT_TRUE(bug.ok()) << bug.status().ToString();
  EXPECT_EQ(bug->state, BugState::kFlaky);
  EXPECT_EQ(bug->flaky_rate, 0.3);
  EXPECT_EQ(bug->updated_ms, clock_.NowMillis());
  auto no_case = store->TransitionBug(*id, BugState::kMinimized, "m", Json());
  EXPECT_EQ(no_case.status().message(),
            "bug 1: a move to minimized needs the minimized case "
            "(minimized_sha256)");
  ASSERT_TRUE(store->PutCase(std::string(64, 'e'), "cases/e", Json()).ok());
  auto minimized =
      store->TransitionBug(*id, BugState::kMinimized, "minimizer", Json(),
                           {.minimized_sha256 = std::string(64, 'e')});
  ASSERT_TRUE(minimized.ok()) << minimized.status().ToString();
  EXPECT_EQ(minimized->minimized_sha256, std::string(64, 'e'));
  EXPECT_EQ(minimized->flaky_rate, 0.3);  // Untouched fields stay.
  auto events = store->ListEvents(*id, 0, 100);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 3u);
  EXPECT_FALSE((*events)[0].from.has_value());
  EXPECT_EQ((*events)[0].to, BugState::kNew);
  EXPECT_EQ((*events)[1].from, BugState::kNew);
  EXPECT_EQ((*events)[1].to, BugState::kFlaky);
  EXPECT_EQ((*events)[1].actor, "reproducer#1");
  EXPECT_EQ((*events)[1].evidence.Dump(), R"({"runs":10})");
  EXPECT_EQ((*events)[1].at_ms, clock_.NowMillis());
  EXPECT_EQ((*events)[2].to, BugState::kMinimized);
}

TEST_F(LifecycleStoreTest, IllegalOrIncompleteMovesWriteNothing) {
  auto store = OpenStore(&clock_);
  int64_t id = *store->CreateBug({.signature = "s"}, "api", Json());
  auto bad =
      store->TransitionBug(id, BugState::kPatchVerified, "agent", Json());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "bug 1: illegal bug transition new -> patch_verified (from new: "
            "reproduced, not_reproducible, flaky, closed, duplicate, "
            "invalid)");
  auto no_rate = store->TransitionBug(id, BugState::kFlaky, "r", Json());
  EXPECT_EQ(no_rate.status().code(), StatusCode::kInvalidArgument);
  auto bad_rate = store->TransitionBug(id, BugState::kFlaky, "r", Json(),
                                       {.flaky_rate = 1.5});
  EXPECT_EQ(bad_rate.status().code(), StatusCode::kInvalidArgument);
  auto self_dup = store->TransitionBug(id, BugState::kDuplicate, "r", Json(),
                                       {.duplicate_of = id});
  EXPECT_EQ(self_dup.status().code(), StatusCode::kFailedPrecondition);
  auto missing = store->TransitionBug(id, BugState::kDuplicate, "r", Json(),
                                      {.duplicate_of = 42});
  EXPECT_NE(missing.status().message().find("bug 42, which does not exist"),
            std::string::npos);
  EXPECT_EQ(store->TransitionBug(7, BugState::kReproduced, "r", Json())
                .status()
                .code(),
            StatusCode::kNotFound);
  EXPECT_EQ(store->GetBug(id)->state, BugState::kNew);
  EXPECT_EQ(store->ListEvents(id, 0, 100)->size(), 1u);
  EXPECT_FALSE(store->db()->InTransaction());
}

// The bug's state and its event row are one transaction: when the event
// cannot be written, the state does not move (and no bug is created).
TEST_F(LifecycleStoreTest, FailedEventWriteRollsBackTheStateChange) {
  auto store = OpenStore(&clock_);
  int64_t id = *store->CreateBug({.signature = "s"}, "api", Json());
  ASSERT_TRUE(store->db()
                  ->Exec("CREATE TEMP TRIGGER no_events BEFORE INSERT ON "
                         "events BEGIN SELECT RAISE(ABORT, 'injected'); END")
                  .ok());
  auto moved = store->TransitionBug(id, BugState::kReproduced, "r", Json(),
                                    {.signature = "refined"});
  ASSERT_FALSE(moved.ok());
  EXPECT_NE(moved.status().message().find("injected"), std::string::npos)
      << moved.status().message();
  auto created = store->CreateBug({.signature = "t"}, "api", Json());
  EXPECT_FALSE(created.ok());
  ASSERT_TRUE(store->db()->Exec("DROP TRIGGER temp.no_events").ok());
  auto bug = store->GetBug(id);
  EXPECT_EQ(bug->state, BugState::kNew);
  EXPECT_EQ(bug->signature, "s");
  EXPECT_EQ(store->ListBugs(std::nullopt, 0, 10)->size(), 1u);
  EXPECT_EQ(store->ListEvents(std::nullopt, 0, 10)->size(), 1u);
}

TEST_F(LifecycleStoreTest, DuplicatesPointAtTheRootAndLeaveDedup) {
  auto store = OpenStore(&clock_);
  int64_t a = *store->CreateBug({.signature = "s"}, "fuzz", Json());
  int64_t b = *store->CreateBug({.signature = "s"}, "fuzz", Json());
  int64_t c = *store->CreateBug({.signature = "s"}, "fuzz", Json());
  ASSERT_TRUE(store
                  ->TransitionBug(b, BugState::kDuplicate, "o", Json(),
                                  {.duplicate_of = a})
                  .ok());
  auto bug_c = store->TransitionBug(c, BugState::kDuplicate, "o", Json(),
                                    {.duplicate_of = b});
  ASSERT_TRUE(bug_c.ok()) << bug_c.status().ToString();
  EXPECT_EQ(bug_c->duplicate_of, a);
  auto open = store->FindOpenBugBySignature("s");
  ASSERT_TRUE(open.ok() && open->has_value());
  EXPECT_EQ((*open)->id, a);
  ASSERT_TRUE(
      store->TransitionBug(a, BugState::kNotReproducible, "o", Json()).ok());
  EXPECT_FALSE(store->FindOpenBugBySignature("s")->has_value());
  auto counts = store->CountBugsByState();
  ASSERT_TRUE(counts.ok());
  EXPECT_EQ((*counts)[BugState::kDuplicate], 2);
  EXPECT_EQ((*counts)[BugState::kNotReproducible], 1);
  EXPECT_EQ((*counts)[BugState::kNew], 0);
}

TEST_F(LifecycleStoreTest, RacingMovesOfOneBugSerialise) {
  int64_t id;
  {
    auto store = OpenStore(&clock_);
    id = *store->CreateBug({.signature = "race"}, "api", Json());
  }
  // Both connections try new -> reproduced; exactly one can win.
  std::vector<Status> results(2);
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      auto store = OpenStore(&clock_);
      results[t] = store
                       ->TransitionBug(id, BugState::kReproduced,
                                       "worker" + std::to_string(t), Json())
                       .status();
    });
  }
  for (auto& t : threads) t.join();
  int ok = results[0].ok() + results[1].ok();
  EXPECT_EQ(ok, 1);
  const Status& loser = results[0].ok() ? results[1] : results[0];
  EXPECT_NE(loser.message().find("reproduced -> reproduced"), std::string::npos)
      << loser.ToString();
  auto store = OpenStore(&clock_);
  EXPECT_EQ(store->ListEvents(id, 0, 100)->size(), 2u);
}

}  // namespace
}  // namespace trench::orchestrator
