#include "orchestrator/store/migrations.h"

#include <gtest/gtest.h>

#include <thread>

#include "tests/orchestrator/store/store_test_util.h"

namespace trench::orchestrator {
namespace {

using MigrationsTest = testing::StoreTest;

std::unique_ptr<Db> OpenDb(const std::string& path) {
  auto db = Db::Open(path, Db::Options{});
  EXPECT_TRUE(db.ok()) << db.status().ToString();
  return db.ok() ? std::move(db).value() : nullptr;
}

bool HasTable(Db* db, const std::string& name) {
  auto st = db->Prepare(
      "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1");
  EXPECT_TRUE(st.ok());
  auto row = st->BindText(1, name).Step();
  EXPECT_TRUE(row.ok());
  return row.ok() && *row;
}

TEST_F(MigrationsTest, RegistryIsNumberedFromOne) {
  auto migrations = StoreMigrations();
  ASSERT_FALSE(migrations.empty());
  for (size_t i = 0; i < migrations.size(); ++i) {
    EXPECT_EQ(migrations[i].version, static_cast<int>(i) + 1);
  }
  EXPECT_EQ(LatestSchemaVersion(), migrations.back().version);
}

TEST_F(MigrationsTest, FreshDatabaseGetsEveryTableAndTheLatestVersion) {
  auto db = OpenDb(path_);
  EXPECT_EQ(*ReadSchemaVersion(db.get()), 0);
  ASSERT_TRUE(ApplyMigrations(db.get(), StoreMigrations()).ok());
  EXPECT_EQ(*ReadSchemaVersion(db.get()), LatestSchemaVersion());
  for (const char* table :
       {"meta", "bugs", "cases", "runs", "events", "jobs", "builds", "patches",
        "agent_sessions", "agent_messages"}) {
    EXPECT_TRUE(HasTable(db.get(), table)) << table;
  }
}

TEST_F(MigrationsTest, ReapplyingIsANoOp) {
  {
    auto db = OpenDb(path_);
    ASSERT_TRUE(ApplyMigrations(db.get(), StoreMigrations()).ok());
    ASSERT_TRUE(db->Exec("INSERT INTO cases VALUES ('" + std::string(64, 'a') +
                         "', 'p', '{}', 1)")
                    .ok());
  }
  auto db = OpenDb(path_);
  Status s = ApplyMigrations(db.get(), StoreMigrations());
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(*ReadSchemaVersion(db.get()), LatestSchemaVersion());
  auto st = db->Prepare("SELECT count(*) FROM cases");
  ASSERT_TRUE(st.ok());
  ASSERT_TRUE(*st->Step());
  EXPECT_EQ(st->ColumnInt64(0), 1);  // Data kept, nothing recreated.
}

TEST_F(MigrationsTest, AppliesOnlyTheMissingStepsInOrder) {
  const Migration v1[] = {{1, "a", "CREATE TABLE a (x INTEGER)"}};
  const Migration v3[] = {
      {1, "a", "CREATE TABLE a (x INTEGER)"},
      {2, "b", "CREATE TABLE b (y INTEGER); INSERT INTO a VALUES (2)"},
      {3, "c", "INSERT INTO a SELECT count(*) + 10 FROM b"},
  };
  auto db = OpenDb(path_);
  ASSERT_TRUE(ApplyMigrations(db.get(), v1).ok());
  EXPECT_EQ(*ReadSchemaVersion(db.get()), 1);
  Status s = ApplyMigrations(db.get(), v3);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(*ReadSchemaVersion(db.get()), 3);
  auto st = db->Prepare(
      "SELECT group_concat(x) FROM (SELECT x FROM a "
      "ORDER BY rowid)");
  ASSERT_TRUE(st.ok());
  ASSERT_TRUE(*st->Step());
  EXPECT_EQ(st->ColumnText(0), "2,10");  // Step 1 not re-run; 2 before 3.
}

// Two daemons (connections) creating the same new store at once: each
// step runs once, both end up at the latest version.
TEST_F(MigrationsTest, ConcurrentFirstOpensMigrateOnce) {
  const Migration counted[] = {
      {1, "a", "CREATE TABLE a (x INTEGER)"},
      {2, "b", "INSERT INTO a VALUES (1)"},
  };
  std::vector<Status> results(3);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      auto db = Db::Open(path_, Db::Options{});
      results[t] = db.ok() ? ApplyMigrations(db->get(), counted) : db.status();
    });
  }
  for (auto& t : threads) t.join();
  for (const Status& s : results) EXPECT_TRUE(s.ok()) << s.ToString();
  auto db = OpenDb(path_);
  auto st = db->Prepare("SELECT count(*) FROM a");
  ASSERT_TRUE(st.ok() && *st->Step());
  EXPECT_EQ(st->ColumnInt64(0), 1);
  EXPECT_EQ(*ReadSchemaVersion(db.get()), 2);
}

TEST_F(MigrationsTest, FailingStepLeavesNoTraceAndKeepsEarlierOnes) {
  const Migration bad[] = {
      {1, "a", "CREATE TABLE a (x INTEGER)"},
      {2, "half", "CREATE TABLE b (y INTEGER); INSERT INTO nowhere VALUES (1)"},
  };
  auto db = OpenDb(path_);
  Status s = ApplyMigrations(db.get(), bad);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("migration 2 (half)"), std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("no such table: nowhere"), std::string::npos)
      << s.message();
  EXPECT_FALSE(db->InTransaction());
  EXPECT_EQ(*ReadSchemaVersion(db.get()), 1);
  EXPECT_TRUE(HasTable(db.get(), "a"));
  EXPECT_FALSE(HasTable(db.get(), "b"));  // Rolled back with the step.
}

TEST_F(MigrationsTest, NewerSchemaIsRefusedAndLeftAlone) {
  {
    auto db = OpenDb(path_);
    ASSERT_TRUE(ApplyMigrations(db.get(), StoreMigrations()).ok());
    ASSERT_TRUE(
        db->Exec("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
            .ok());
  }
  StoreOptions options;
  options.clock = &clock_;
  auto store = Store::Open(path_, options);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(store.status().message().find("schema version 99 is newer"),
            std::string::npos)
      << store.status().message();
  auto db = OpenDb(path_);
  EXPECT_EQ(*ReadSchemaVersion(db.get()), 99);
}

TEST_F(MigrationsTest, GarbledVersionIsAClearError) {
  auto db = OpenDb(path_);
  ASSERT_TRUE(ApplyMigrations(db.get(), StoreMigrations()).ok());
  ASSERT_TRUE(
      db->Exec("UPDATE meta SET value = 'two' WHERE key = 'schema_version'")
          .ok());
  Status s = ApplyMigrations(db.get(), StoreMigrations());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_NE(s.message().find("'two', not a version number"), std::string::npos)
      << s.message();
}

TEST_F(MigrationsTest, MisnumberedListIsRefused) {
  const Migration gap[] = {{1, "a", "SELECT 1"}, {3, "c", "SELECT 1"}};
  auto db = OpenDb(path_);
  Status s = ApplyMigrations(db.get(), gap);
  EXPECT_EQ(s.code(), StatusCode::kInternal) << s.ToString();
  EXPECT_EQ(*ReadSchemaVersion(db.get()), 0);
}

}  // namespace
}  // namespace trench::orchestrator
