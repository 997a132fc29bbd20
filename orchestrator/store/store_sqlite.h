// A thin RAII wrapper over the SQLite3 C API, used by the orchestrator's
// store, its migrations and the job queue.
//
// Rules it enforces:
// - Values only ever reach SQL through bound parameters (Statement::Bind*);
//   there is no string-formatting helper.
// - Every error is a Status whose message names the file, the SQLite error
//   and the statement: "store /var/trench.db: sqlite: UNIQUE constraint
//   failed: cases.sha256 (constraint failed, code 1555) in `INSERT INTO
//   cases ...`".
// - Statements are prepared once per connection and cached by their SQL
//   text (Chromium //sql style: the SQL is written where it is used).
//
// Error codes: a corrupt or non-SQLite file, a full disk or an I/O failure
// give kIoError; a busy/locked database (after the busy timeout) gives
// kResourceExhausted; a constraint violation gives kFailedPrecondition;
// anything else (bad SQL, misuse) gives kInternal.
//
// Thread-safety: a Db (a connection) and its Statements are used by one
// thread at a time. Use one Db per thread; SQLite serialises writers
// across connections (WAL mode: readers never block the writer).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace trench::orchestrator {

class Db;

namespace internal {
// One compiled statement of a connection's cache.
struct CachedStatement {
  sqlite3_stmt* stmt;
  bool in_use;  // Handed out to a live Statement.
};
}  // namespace internal

// A prepared statement. Bind errors are sticky and reported by the next
// Step()/Run(), so a call site can bind all parameters and check once.
// Parameter indices are 1-based (SQLite's convention); columns are 0-based.
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  ~Statement();  // Resets a cached statement; finalizes an uncached one.

  Statement& BindInt64(int index, int64_t value);
  Statement& BindDouble(int index, double value);
  Statement& BindText(int index, std::string_view value);
  Statement& BindNull(int index);
  Statement& BindBool(int index, bool value) { return BindInt64(index, value); }
  // Binds `value` or NULL.
  Statement& BindOptionalInt64(int index, const std::optional<int64_t>& value);
  Statement& BindOptionalDouble(int index, const std::optional<double>& value);
  Statement& BindOptionalText(int index,
                              const std::optional<std::string>& value);
  // Binds compact JSON text (Json::Dump(); non-finite doubles become null).
  Statement& BindJson(int index, const Json& value);

  // Advances: true when a row is available, false when done. Errors name
  // the SQLite error and this statement's SQL.
  StatusOr<bool> Step();
  // Steps to completion, ignoring rows. For INSERT/UPDATE/DELETE.
  Status Run();

  // Column accessors for the current row. REQUIRES: Step() returned true.
  bool IsNull(int column) const;
  int64_t ColumnInt64(int column) const;
  double ColumnDouble(int column) const;
  std::string ColumnText(int column) const;
  std::optional<int64_t> ColumnOptionalInt64(int column) const;
  std::optional<double> ColumnOptionalDouble(int column) const;
  std::optional<std::string> ColumnOptionalText(int column) const;
  // Parses the column's text as JSON (NULL reads as JSON null). A stored
  // text that is not valid JSON gives kIoError naming `what` (e.g.
  // "jobs.payload of job 7") and the parse error.
  StatusOr<Json> ColumnJson(int column, std::string_view what) const;

 private:
  friend class Db;
  // `cache_slot` is null for an uncached statement (finalized when done).
  Statement(Db* db, sqlite3_stmt* stmt, internal::CachedStatement* cache_slot);

  Db* db_;
  sqlite3_stmt* stmt_;
  internal::CachedStatement* cache_slot_;
  Status bind_error_;
};

// One SQLite connection.
class Db {
 public:
  struct Options {
    bool create_if_missing = true;
    // How long a writer waits for another connection's lock before giving
    // up with kResourceExhausted.
    int busy_timeout_ms = 5000;
    // PRAGMA synchronous: NORMAL (false) keeps every committed transaction
    // across a process crash (kill -9), which is what the daemon needs;
    // FULL (true) also keeps the last ones across a power loss.
    bool full_sync = false;
  };

  // Opens (or creates) the database file at `path` in WAL mode with the
  // busy timeout and foreign keys on. Errors: kIoError when the file cannot
  // be opened or created, or is not an SQLite database ("... is not an
  // SQLite database or is corrupt"); kNotFound when it is missing and
  // !create_if_missing. The file is read at open time, so a non-SQLite file
  // is refused here, not on first use.
  static StatusOr<std::unique_ptr<Db>> Open(const std::string& path,
                                            const Options& options);
  ~Db();
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  // Runs one or more ';'-separated statements without parameters. For
  // schema text and pragmas only; values must go through Prepare().
  Status Exec(std::string_view sql);
  // A statement for `sql` (exactly one statement). Cached per connection:
  // the same text reuses the compiled statement unless it is in use.
  StatusOr<Statement> Prepare(const std::string& sql);

  int64_t LastInsertRowId() const;
  // Rows changed by the last INSERT/UPDATE/DELETE.
  int64_t Changes() const;
  // True inside an explicit transaction (BEGIN ... COMMIT).
  bool InTransaction() const;
  const std::string& path() const { return path_; }
  sqlite3* raw() const { return db_; }

  // The Status for the connection's current error, as described above;
  // `context` is the SQL or the operation.
  Status ErrorStatus(int rc, std::string_view context) const;

 private:
  Db(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
  // Node-based, so Statements may point at their slot.
  std::unordered_map<std::string, internal::CachedStatement> cache_;
};

// A transaction that rolls back unless committed. Begin() takes the write
// lock at once (BEGIN IMMEDIATE) so that two connections that read and
// then write never deadlock on a lock upgrade; it waits for the busy
// timeout when another connection is writing.
class Transaction {
 public:
  // REQUIRES: !db->InTransaction() (transactions do not nest).
  static StatusOr<Transaction> Begin(Db* db);
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction();  // Rolls back when neither committed nor rolled back.

  Status Commit();
  Status Rollback();

 private:
  explicit Transaction(Db* db) : db_(db) {}
  Db* db_;  // Null once finished.
};

// Runs `body` inside Transaction::Begin(db): commits when it returns OK,
// rolls back and returns its error otherwise.
template <typename Body>
Status InTransaction(Db* db, Body&& body) {
  ASSIGN_OR_RETURN(Transaction txn, Transaction::Begin(db));
  Status s = body();
  if (!s.ok()) return s;  // ~Transaction rolls back.
  return txn.Commit();
}

// Steps `st` through its rows; `read()` makes one T of the current row
// (StatusOr<T>). Returns them in order, or the first error of a step or a
// read.
template <typename T, typename Read>
StatusOr<std::vector<T>> ReadRows(Statement& st, Read&& read) {
  std::vector<T> out;
  while (true) {
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) return out;
    StatusOr<T> one = read();
    if (!one.ok()) return one.status();
    out.push_back(*std::move(one));
  }
}

}  // namespace trench::orchestrator
