// The commits' events (commit_landed, build_ready): rows of the events
// table next to the bugs' state changes, once per commit even when the
// daemon is killed and lands the same commits again, and the migration that
// made room for them keeps the older stores' events.
#include <gtest/gtest.h>

#include <algorithm>

#include "orchestrator/pipeline/pipeline.h"
#include "orchestrator/store/migrations.h"
#include "tests/orchestrator/store/store_test_util.h"

namespace trench::orchestrator {
namespace {

using testing::Ack;
using testing::RunChildAndKill;
using testing::StoreTest;

std::string Commit(int i) {
  std::string sha = std::to_string(i);
  return std::string(40 - sha.size(), 'c') + sha;
}

int64_t CountEvents(Store* store, const std::string& sha,
                    CommitEventKind kind) {
  StatusOr<std::vector<CommitEvent>> events =
      store->ListCommitEvents(sha, 0, 1000);
  EXPECT_TRUE(events.ok()) << events.status().ToString();
  int64_t n = 0;
  for (const CommitEvent& e : *events) n += e.kind == kind;
  return n;
}

TEST_F(StoreTest, ACommitHasEachEventOnceInTheFeedOfBugEvents) {
  auto store = OpenStore(&clock_);
  const std::string a = Commit(1), b = Commit(2);
  EXPECT_TRUE(*store->RecordCommitEvent(a, CommitEventKind::kCommitLanded,
                                        "orchestrator", Json::MakeObject()));
  const int64_t bug = *store->CreateBug({.title = "t"}, "test", Json());
  Json built = Json::MakeObject();
  built["built"] = true;
  EXPECT_TRUE(*store->RecordCommitEvent(a, CommitEventKind::kBuildReady,
                                        "orchestrator", built));
  // Again (a step re-run): nothing new, the first row stands.
  EXPECT_FALSE(*store->RecordCommitEvent(a, CommitEventKind::kCommitLanded,
                                         "again", Json::MakeObject()));
  EXPECT_FALSE(*store->RecordCommitEvent(a, CommitEventKind::kBuildReady,
                                         "again", Json::MakeObject()));
  EXPECT_TRUE(*store->RecordCommitEvent(b, CommitEventKind::kCommitLanded,
                                        "orchestrator", Json::MakeObject()));
  EXPECT_EQ(
      store->RecordCommitEvent("", CommitEventKind::kCommitLanded, "x", Json())
          .status()
          .code(),
      StatusCode::kInvalidArgument);

  StatusOr<std::vector<CommitEvent>> all =
      store->ListCommitEvents(std::nullopt, 0, 100);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].commit_sha, a);
  EXPECT_EQ((*all)[0].kind, CommitEventKind::kCommitLanded);
  EXPECT_EQ((*all)[0].actor, "orchestrator");
  EXPECT_EQ((*all)[1].kind, CommitEventKind::kBuildReady);
  EXPECT_EQ((*all)[1].evidence, built);
  EXPECT_EQ((*all)[2].commit_sha, b);
  EXPECT_EQ(CommitEventName((*all)[1].kind), "build_ready");
  EXPECT_EQ(store->ListCommitEvents(b, 0, 100)->size(), 1u);
  EXPECT_EQ(store->ListCommitEvents(std::nullopt, (*all)[1].id, 100)->size(),
            1u);
  // One id sequence: the bug's creation sits between a's two events, and
  // the bug feed holds only the bug's row.
  StatusOr<std::vector<Event>> bug_events =
      store->ListEvents(std::nullopt, 0, 100);
  ASSERT_TRUE(bug_events.ok());
  ASSERT_EQ(bug_events->size(), 1u);
  EXPECT_EQ((*bug_events)[0].bug_id, bug);
  EXPECT_GT((*bug_events)[0].id, (*all)[0].id);
  EXPECT_LT((*bug_events)[0].id, (*all)[1].id);
}

// Lands kCommits commits in pushes of `push` (QueueLandedCommits: the
// events, then the build jobs), in a child SIGKILLed after `kills[r]`
// acknowledged pushes in round r (so mostly in the middle of the next
// push), each restart landing every push again from the first (the
// watcher had not recorded them as handled); then once to the end.
constexpr int kCommits = 40;
std::unique_ptr<Store> LandKilledAndRestarted(const std::string& path,
                                              FakeClock* clock, int push,
                                              const std::vector<int>& kills) {
  DaemonConfig config;
  auto land = [&](Store* store, int ack) {
    JobQueue queue(store);
    StepContext ctx;
    ctx.config = &config;
    ctx.store = store;
    ctx.queue = &queue;
    ctx.worker = "orchestrator";
    for (int i = 0; i < kCommits; i += push) {
      std::vector<std::string> landed;
      for (int k = i; k < std::min(i + push, kCommits); ++k) {
        landed.push_back(Commit(k));
      }
      if (!QueueLandedCommits(ctx, landed).ok()) _exit(2);
      if (ack >= 0) Ack(ack);
    }
  };
  StoreOptions options;
  options.clock = clock;
  for (int want : kills) {
    const int acks = RunChildAndKill(
        [&](int ack) {
          auto store = Store::Open(path, options);
          if (!store.ok()) _exit(2);
          land(store->get(), ack);
          _exit(0);
        },
        want);
    EXPECT_EQ(acks, want);
  }
  auto store = Store::Open(path, options);
  if (!store.ok()) return nullptr;
  land(store->get(), -1);  // The last start runs to the end.
  return std::move(store).value();
}

// The daemon is killed at arbitrary moments while landing commits one at
// a time. Every commit ends with exactly one commit_landed row and one
// build job.
TEST_F(StoreTest, KilledAndRestartedDaemonLandsEachCommitOnce) {
  auto store =
      LandKilledAndRestarted(path_, &clock_, 1, {3, 10, 17, 24, 31, 38});
  ASSERT_NE(store, nullptr);
  for (int i = 0; i < kCommits; ++i) {
    EXPECT_EQ(
        CountEvents(store.get(), Commit(i), CommitEventKind::kCommitLanded), 1)
        << i;
  }
  JobQueue queue(store.get());
  EXPECT_EQ(*queue.Count(JobState::kQueued), kCommits);
}

// The same with pushes of 5 commits, the kills landing inside a push
// (between its events, or between its builds): each commit still has one
// commit_landed row, the rows stay in landing order, and the builds are
// queued once each, newest first within every push.
TEST_F(StoreTest, KilledInTheMiddleOfAPushLandsItOnceNewestFirst) {
  constexpr int kPush = 5;
  auto store = LandKilledAndRestarted(path_, &clock_, kPush, {0, 1, 2, 4, 6});
  ASSERT_NE(store, nullptr);
  StatusOr<std::vector<CommitEvent>> events =
      store->ListCommitEvents(std::nullopt, 0, 1000);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  std::vector<std::string> landed, want_landed, built, want_built;
  for (const CommitEvent& e : *events) {
    if (e.kind == CommitEventKind::kCommitLanded)
      landed.push_back(e.commit_sha);
  }
  for (int i = 0; i < kCommits; ++i) want_landed.push_back(Commit(i));
  EXPECT_EQ(landed, want_landed);
  JobQueue queue(store.get());
  StatusOr<std::vector<Job>> jobs = queue.List(JobState::kQueued, 1000);
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  for (const Job& j : *jobs) {
    EXPECT_EQ(j.kind, "build");
    built.push_back(j.payload.Find("commit")->string_value());
  }
  for (int i = 0; i < kCommits; i += kPush) {
    for (int k = i + kPush - 1; k >= i; --k) want_built.push_back(Commit(k));
  }
  EXPECT_EQ(built, want_built);
}

using CommitEventsMigrationTest = StoreTest;

// A store made before commit events (schema 2) keeps its bug events, their
// ids and the bug-only rule of its rows after the upgrade.
TEST_F(CommitEventsMigrationTest, UpgradeKeepsTheBugEvents) {
  {
    auto db = Db::Open(path_, Db::Options{});
    ASSERT_TRUE(db.ok());
    ASSERT_TRUE(
        ApplyMigrations(db->get(), StoreMigrations().subspan(0, 2)).ok());
    ASSERT_TRUE((*db)
                    ->Exec("INSERT INTO bugs (id, state, created_ms, "
                           "updated_ms) VALUES (7, 'reproduced', 1, 2);"
                           "INSERT INTO events VALUES (5, 7, NULL, 'new', "
                           "'api', '{}', 1);"
                           "INSERT INTO events VALUES (9, 7, 'new', "
                           "'reproduced', 'w', '{\"event\":\"reproduced\"}', "
                           "2)")
                    .ok());
  }
  auto store = OpenStore(&clock_);
  ASSERT_NE(store, nullptr);
  StatusOr<std::vector<Event>> events = store->ListEvents(7, 0, 10);
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].id, 5);
  EXPECT_FALSE((*events)[0].from.has_value());
  EXPECT_EQ((*events)[1].id, 9);
  EXPECT_EQ((*events)[1].to, BugState::kReproduced);
  EXPECT_EQ((*events)[1].evidence.Find("event")->string_value(), "reproduced");
  // New rows continue the sequence.
  ASSERT_TRUE(*store->RecordCommitEvent(
      Commit(1), CommitEventKind::kCommitLanded, "o", Json::MakeObject()));
  EXPECT_EQ((*store->ListCommitEvents(std::nullopt, 0, 10))[0].id, 10);
  // A row that is neither a bug's nor a commit's is refused.
  EXPECT_FALSE(store->db()
                   ->Exec("INSERT INTO events (actor, evidence, at_ms) "
                          "VALUES ('x', '{}', 1)")
                   .ok());
  EXPECT_FALSE(store->db()
                   ->Exec("INSERT INTO events (bug_id, to_state, commit_sha, "
                          "name, actor, evidence, at_ms) VALUES (7, 'new', "
                          "'c', 'build_ready', 'x', '{}', 1)")
                   .ok());
}

}  // namespace
}  // namespace trench::orchestrator
