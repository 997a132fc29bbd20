// The store's schema as numbered migrations, and the code that applies them.
//
// The `meta` table holds key/value rows; `schema_version` is the number of
// the last migration applied (absent: 0, an empty database). Opening a
// store applies every migration above that number, in order, each in its
// own transaction together with the version bump, so a failure leaves the
// database at the last good version and reopening is idempotent. A
// database whose version is newer than this build knows is refused.
//
// Migrations are append-only: never edit or renumber a released one; add
// the next number instead.
#pragma once

#include <span>
#include <string>

#include "base/status.h"
#include "orchestrator/store/store_sqlite.h"

namespace trench::orchestrator {

struct Migration {
  int version;       // 1, 2, 3, ... without gaps.
  const char* name;  // What it does, for logs and errors.
  const char* sql;   // One or more ';'-separated statements.
};

// trench's migrations, in order.
std::span<const Migration> StoreMigrations();
// The version a fully migrated store has (the last migration's number).
int LatestSchemaVersion();

// The schema version recorded in `db` (0 when it has no meta table or no
// version row). Errors: kIoError when the version row is not an integer.
StatusOr<int> ReadSchemaVersion(Db* db);

// Brings `db` up to the last of `migrations`. Errors:
// - kInternal when `migrations` are not numbered 1, 2, ... (a bug of ours);
// - kFailedPrecondition when the database's version is newer than the last
//   migration ("store schema version 9 is newer than this trench knows
//   (2); use a newer trench"), and nothing is changed;
// - the failing migration's error, prefixed by "migration N (name)"; the
//   migrations before it stay applied, it leaves no trace.
// REQUIRES: !db->InTransaction().
Status ApplyMigrations(Db* db, std::span<const Migration> migrations);

}  // namespace trench::orchestrator
