#include "orchestrator/store/store.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/orchestrator/store/store_test_util.h"

namespace trench::orchestrator {
namespace {

using ::trench::orchestrator::testing::Ack;
using ::trench::orchestrator::testing::RunChildAndKill;
using ::trench::orchestrator::testing::StoreTest;

std::string Sha(char c) { return std::string(64, c); }

std::string PragmaText(Store* store, const std::string& pragma) {
  auto st = store->db()->Prepare("PRAGMA " + pragma);
  EXPECT_TRUE(st.ok());
  auto row = st->Step();
  EXPECT_TRUE(row.ok() && *row);
  return st->ColumnText(0);
}

TEST_F(StoreTest, OpensARealFileInWalModeWithForeignKeys) {
  auto store = OpenStore(&clock_);
  ASSERT_NE(store, nullptr);
  EXPECT_TRUE(std::filesystem::exists(path_));
  EXPECT_EQ(PragmaText(store.get(), "journal_mode"), "wal");
  EXPECT_EQ(PragmaText(store.get(), "foreign_keys"), "1");
  EXPECT_EQ(PragmaText(store.get(), "busy_timeout"), "5000");
  // Foreign keys are enforced: a run of an unknown bug is refused.
  ASSERT_TRUE(*store->PutCase(Sha('a'), "cases/a", Json::MakeObject()));
  auto run = store->AddRun(Sha('a'), 99, "c0ffee", Json(), 0.5);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(run.status().message().find("FOREIGN KEY constraint failed"),
            std::string::npos)
      << run.status().message();
}

TEST_F(StoreTest, StatementErrorsNameTheSqlAndTheSqliteError) {
  auto store = OpenStore(&clock_);
  Db* db = store->db();
  auto bad = db->Prepare("SELEC 1");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInternal);
  EXPECT_NE(bad.status().message().find("near \"SELEC\": syntax error"),
            std::string::npos)
      << bad.status().message();
  EXPECT_NE(bad.status().message().find("`SELEC 1`"), std::string::npos);
  EXPECT_FALSE(db->Prepare("SELECT 1; SELECT 2").ok());
  // A bad bind is reported by Step(), naming the parameter.
  auto st = db->Prepare("SELECT ?1");
  ASSERT_TRUE(st.ok());
  auto row = st->BindInt64(1, 5).BindText(7, "x").Step();
  ASSERT_FALSE(row.ok());
  EXPECT_NE(row.status().message().find("binding parameter 7"),
            std::string::npos)
      << row.status().message();
  // The same SQL prepared while in use gets its own statement.
  auto outer = db->Prepare("SELECT value FROM json_each('[1,2]')");
  ASSERT_TRUE(outer.ok());
  ASSERT_TRUE(*outer->Step());
  auto inner = db->Prepare("SELECT value FROM json_each('[1,2]')");
  ASSERT_TRUE(inner.ok());
  ASSERT_TRUE(*inner->Step());
  ASSERT_TRUE(*inner->Step());
  EXPECT_EQ(inner->ColumnInt64(0), 2);
  EXPECT_EQ(outer->ColumnInt64(0), 1);
  // Text with NUL bytes and quotes round-trips through a bound parameter.
  auto echo = db->Prepare("SELECT ?1");
  constexpr char kText[] = "a'b\0c\"; DROP TABLE bugs; --";
  const std::string text(kText, sizeof(kText) - 1);
  ASSERT_TRUE(*echo->BindText(1, text).Step());
  EXPECT_EQ(echo->ColumnText(0), text);
}

TEST_F(StoreTest, EverythingWrittenIsThereAfterReopen) {
  int64_t bug_id, patch_id, session_id;
  {
    auto store = OpenStore(&clock_);
    Json origin = Json::Object{{"fuzz_seed", Json(7)}};
    ASSERT_TRUE(*store->PutCase(Sha('b'), "cases/b", origin));
    EXPECT_FALSE(*store->PutCase(Sha('b'), "elsewhere", Json()));  // Same.
    bug_id = *store->CreateBug(
        {.signature = "mismatch/f32", .title = "add", .case_sha256 = Sha('b')},
        "fuzz", Json::Object{{"seed", Json(7)}});
    ASSERT_TRUE(
        store->TransitionBug(bug_id, BugState::kReproduced, "r", Json()).ok());
    ASSERT_TRUE(store
                    ->AddRun(Sha('b'), bug_id, "abc123",
                             Json::Object{{"status", "mismatch"}}, 1.25)
                    .ok());
    ASSERT_TRUE(
        store->PutBuild("abc123", "", BuildStatus::kOk, "/b/abc", "ok").ok());
    patch_id = *store->AddPatch(bug_id, "trench/bug-1", "--- a\n+++ b\n");
    ASSERT_TRUE(
        store->SetPatchVerified(patch_id, true, Json::Object{{"runs", Json(3)}})
            .ok());
    session_id = *store->StartAgentSession(bug_id, "drafter", "builtin");
    ASSERT_TRUE(
        store->AddAgentMessage(session_id, "assistant", "try revert", 10, 5)
            .ok());
    ASSERT_TRUE(store->EndAgentSession(session_id, "done").ok());
  }
  auto store = OpenStore(&clock_);
  auto bug = store->GetBug(bug_id);
  ASSERT_TRUE(bug.ok()) << bug.status().ToString();
  EXPECT_EQ(bug->state, BugState::kReproduced);
  EXPECT_EQ(bug->signature, "mismatch/f32");
  EXPECT_EQ(bug->case_sha256, Sha('b'));
  auto c = store->GetCase(Sha('b'));
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->path, "cases/b");
  EXPECT_EQ(c->origin.Dump(), R"({"fuzz_seed":7})");
  auto runs = store->ListRunsForCase(Sha('b'));
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].verdict.Dump(), R"({"status":"mismatch"})");
  EXPECT_EQ((*runs)[0].seconds, 1.25);
  auto build = store->GetBuild("abc123", "");
  ASSERT_TRUE(build.ok());
  EXPECT_EQ(build->status, BuildStatus::kOk);
  EXPECT_EQ(build->bin_dir, "/b/abc");
  EXPECT_EQ(store->GetBuild("abc123", "p1").status().code(),
            StatusCode::kNotFound);
  auto patches = store->ListPatches(bug_id);
  ASSERT_EQ(patches->size(), 1u);
  EXPECT_TRUE((*patches)[0].verified);
  EXPECT_EQ((*patches)[0].diff, "--- a\n+++ b\n");
  auto messages = store->ListAgentMessages(session_id);
  ASSERT_EQ(messages->size(), 1u);
  EXPECT_EQ((*messages)[0].content, "try revert");
  EXPECT_EQ(*store->TotalAgentTokens(), 15);
  EXPECT_EQ(store->ListEvents(std::nullopt, 0, 100)->size(), 2u);
}

TEST_F(StoreTest, BuildUpsertKeepsOneRowPerCommitAndPatch) {
  auto store = OpenStore(&clock_);
  int64_t a = *store->PutBuild("c1", "", BuildStatus::kPending, "", "");
  clock_.Advance(10);
  int64_t b = *store->PutBuild("c1", "", BuildStatus::kFailed, "", "error: x");
  int64_t c = *store->PutBuild("c1", "p", BuildStatus::kOk, "/bin", "");
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  auto build = store->GetBuild("c1", "");
  EXPECT_EQ(build->status, BuildStatus::kFailed);
  EXPECT_EQ(build->log_tail, "error: x");
  EXPECT_EQ(build->updated_ms, build->created_ms + 10);
}

TEST_F(StoreTest, GetBugsReadsTheGivenIdsInIdOrder) {
  auto store = OpenStore(&clock_);
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(store
                    ->CreateBug({.signature = "s" + std::to_string(i),
                                 .title = "bug " + std::to_string(i)},
                                "api", Json())
                    .ok());
  }
  auto bugs = store->GetBugs({4, 2, 99, 1});
  ASSERT_TRUE(bugs.ok()) << bugs.status().ToString();
  ASSERT_EQ(bugs->size(), 3u);
  EXPECT_EQ((*bugs)[0].id, 1);
  EXPECT_EQ((*bugs)[1].id, 2);
  EXPECT_EQ((*bugs)[2].id, 4);
  EXPECT_EQ((*bugs)[2].title, "bug 3");
  EXPECT_EQ((*bugs)[1].signature, "s1");
  EXPECT_TRUE(store->GetBugs({})->empty());
}

TEST_F(StoreTest, BadArgumentsAreRefused) {
  auto store = OpenStore(&clock_);
  EXPECT_EQ(store->PutCase("ABC", "p", Json()).status().code(),
            StatusCode::kInvalidArgument);
  auto bug = store->CreateBug({.case_sha256 = Sha('c')}, "api", Json());
  EXPECT_EQ(bug.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      store->AddRun(Sha('c'), std::nullopt, "x", Json(), 1).status().code(),
      StatusCode::kFailedPrecondition);
  EXPECT_EQ(store->SetPatchVerified(5, true, Json()).code(),
            StatusCode::kNotFound);
  EXPECT_EQ(store->GetBug(1).status().message(), "no bug 1");
  EXPECT_TRUE(store->ListBugs(std::nullopt, 0, 10)->empty());
}

TEST_F(StoreTest, MalformedStoredDataIsAClearError) {
  auto store = OpenStore(&clock_);
  int64_t id = *store->CreateBug({.signature = "s"}, "api", Json());
  ASSERT_TRUE(store->db()->Exec("UPDATE bugs SET details = '{oops'").ok());
  auto bug = store->GetBug(id);
  ASSERT_FALSE(bug.ok());
  EXPECT_EQ(bug.status().code(), StatusCode::kIoError);
  EXPECT_NE(bug.status().message().find("bugs.details of bug 1 is not valid "
                                        "JSON"),
            std::string::npos)
      << bug.status().message();
  ASSERT_TRUE(store->db()
                  ->Exec("UPDATE bugs SET details = '{}', state = 'zombie'")
                  .ok());
  bug = store->GetBug(id);
  EXPECT_NE(bug.status().message().find("unknown bug state 'zombie'"),
            std::string::npos)
      << bug.status().message();
  EXPECT_FALSE(store->ListBugs(std::nullopt, 0, 10).ok());
  EXPECT_FALSE(store->CountBugsByState().ok());
  EXPECT_FALSE(
      store->TransitionBug(id, BugState::kReproduced, "r", Json()).ok());
  ASSERT_TRUE(store->db()->Exec("UPDATE events SET evidence = '[1,'").ok());
  EXPECT_NE(store->ListEvents(id, 0, 10).status().message().find(
                "events.evidence of event 1"),
            std::string::npos);
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST_F(StoreTest, NonSqliteFileIsRefusedClearly) {
  WriteFile(path_, std::string(5000, 'x'));
  StoreOptions options;
  options.clock = &clock_;
  auto store = Store::Open(path_, options);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIoError);
  EXPECT_NE(store.status().message().find("is not an SQLite database or is "
                                          "corrupt"),
            std::string::npos)
      << store.status().message();
}

TEST_F(StoreTest, DamagedSchemaPageIsRefusedClearly) {
  { ASSERT_NE(OpenStore(&clock_), nullptr); }  // Closing checkpoints the WAL.
  std::string bytes;
  {
    std::ifstream in(path_, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GT(bytes.size(), 4096u);
  for (size_t i = 100; i < 4096; ++i) bytes[i] = static_cast<char>(i * 37);
  WriteFile(path_, bytes);
  StoreOptions options;
  options.clock = &clock_;
  auto store = Store::Open(path_, options);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIoError)
      << store.status().ToString();
}

TEST_F(StoreTest, MissingFileWithoutCreateAndDirectoryPathFail) {
  StoreOptions options;
  options.clock = &clock_;
  options.create_if_missing = false;
  EXPECT_EQ(Store::Open(path_, options).status().code(), StatusCode::kNotFound);
  options.create_if_missing = true;
  auto dir = Store::Open(dir_, options);
  EXPECT_EQ(dir.status().code(), StatusCode::kIoError)
      << dir.status().ToString();
}

// A child commits bugs one at a time (acknowledging each), then opens a
// big transaction and is SIGKILLed in the middle of it.
TEST_F(StoreTest, KillMidTransactionKeepsCommittedAndDropsTheRest) {
  constexpr int kCommitted = 20;
  int acks = RunChildAndKill(
      [&](int ack) {
        StoreOptions options;
        options.clock = &clock_;
        auto store = Store::Open(path_, options);
        if (!store.ok()) _exit(2);
        for (int i = 0; i < kCommitted; ++i) {
          auto id = (*store)->CreateBug({.title = "ok"}, "child", Json());
          if (!id.ok() ||
              !(*store)
                   ->TransitionBug(*id, BugState::kReproduced, "child", Json())
                   .ok()) {
            _exit(2);
          }
          Ack(ack);
        }
        Db* db = (*store)->db();
        auto txn = Transaction::Begin(db);
        if (!txn.ok()) _exit(2);
        for (int i = 0; i < 2000; ++i) {  // Spills pages to the WAL.
          if (!db->Exec("INSERT INTO bugs (state, title, created_ms, "
                        "updated_ms, details) VALUES ('new', 'uncommitted', "
                        "0, 0, '" +
                        std::string(500, 'z') + "')")
                   .ok()) {
            _exit(2);
          }
        }
        Ack(ack);
        pause();
      },
      kCommitted + 1);
  ASSERT_EQ(acks, kCommitted + 1);
  auto store = OpenStore(&clock_);
  EXPECT_EQ(PragmaText(store.get(), "integrity_check"), "ok");
  auto bugs = store->ListBugs(std::nullopt, 0, 10000);
  ASSERT_TRUE(bugs.ok()) << bugs.status().ToString();
  ASSERT_EQ(bugs->size(), static_cast<size_t>(kCommitted));
  for (const Bug& bug : *bugs) {
    EXPECT_EQ(bug.title, "ok");
    EXPECT_EQ(bug.state, BugState::kReproduced);
    EXPECT_EQ(store->ListEvents(bug.id, 0, 10)->size(), 2u);
  }
}

// A child that exits (without SIGKILL, without closing the store) inside a
// transaction leaves nothing of it behind.
TEST_F(StoreTest, ExitInsideATransactionRollsItBack) {
  int acks = RunChildAndKill(
      [&](int ack) {
        StoreOptions options;
        options.clock = &clock_;
        auto store = Store::Open(path_, options);
        if (!store.ok()) _exit(2);
        if (!(*store)->CreateBug({.title = "kept"}, "child", Json()).ok()) {
          _exit(2);
        }
        Ack(ack);
        auto txn = Transaction::Begin((*store)->db());
        if (!txn.ok() || !(*store)
                              ->db()
                              ->Exec("UPDATE bugs SET state = 'closed', "
                                     "title = 'lost'")
                              .ok()) {
          _exit(2);
        }
        _exit(0);
      },
      2);
  EXPECT_EQ(acks, 1);  // The child ended on its own.
  auto store = OpenStore(&clock_);
  auto bug = store->GetBug(1);
  ASSERT_TRUE(bug.ok()) << bug.status().ToString();
  EXPECT_EQ(bug->title, "kept");
  EXPECT_EQ(bug->state, BugState::kNew);
}

// A child moves bugs along the lifecycle as fast as it can and is killed
// at an arbitrary moment: every acknowledged move is there, and every bug's
// state agrees with its last event (nothing half-written).
TEST_F(StoreTest, KillAtAnyMomentLeavesStateAndEventsConsistent) {
  const BugState line[] = {BugState::kReproduced, BugState::kMinimized,
                           BugState::kLocalized, BugState::kCulpritFound};
  const TransitionFields fields = {.minimized_sha256 = Sha('f'),
                                   .culprit_commit = "deadbeef"};
  {
    auto store = OpenStore(&clock_);
    ASSERT_TRUE(store->PutCase(Sha('f'), "cases/f", Json()).ok());
  }
  for (int round = 0; round < 8; ++round) {
    const int want = 10 + 13 * round;
    int acks = RunChildAndKill(
        [&](int ack) {
          StoreOptions options;
          options.clock = &clock_;
          auto store = Store::Open(path_, options);
          if (!store.ok()) _exit(2);
          while (true) {
            auto id = (*store)->CreateBug({.title = "c"}, "child", Json());
            if (!id.ok()) _exit(2);
            Ack(ack);
            for (BugState to : line) {
              if (!(*store)
                       ->TransitionBug(*id, to, "child", Json(), fields)
                       .ok()) {
                _exit(2);
              }
              Ack(ack);
            }
          }
        },
        want);
    ASSERT_EQ(acks, want);
    auto store = OpenStore(&clock_);
    EXPECT_EQ(PragmaText(store.get(), "integrity_check"), "ok");
    auto events = store->ListEvents(std::nullopt, 0, 100000);
    ASSERT_TRUE(events.ok());
    EXPECT_GE(static_cast<int>(events->size()), want);
    auto bugs = store->ListBugs(std::nullopt, 0, 100000);
    ASSERT_TRUE(bugs.ok());
    for (const Bug& bug : *bugs) {
      auto history = store->ListEvents(bug.id, 0, 100);
      ASSERT_FALSE(history->empty());
      EXPECT_EQ(history->back().to, bug.state) << "bug " << bug.id;
      for (size_t i = 1; i < history->size(); ++i) {
        EXPECT_EQ((*history)[i].from, (*history)[i - 1].to);
      }
    }
  }
}

}  // namespace
}  // namespace trench::orchestrator
