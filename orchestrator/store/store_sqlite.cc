#include "orchestrator/store/store_sqlite.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <utility>

namespace trench::orchestrator {
namespace {

// Short SQL for messages: one line, at most 120 characters.
std::string Abbreviate(std::string_view sql) {
  std::string out;
  for (char c : sql) {
    if (c == '\n' || c == '\t' || c == '\r') c = ' ';
    if (c == ' ' && !out.empty() && out.back() == ' ') continue;
    out.push_back(c);
  }
  while (!out.empty() && out.front() == ' ') out.erase(out.begin());
  if (out.size() > 120) out = out.substr(0, 117) + "...";
  return out;
}

StatusCode CodeFor(int rc) {
  switch (rc & 0xff) {
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PERM:
      return StatusCode::kIoError;
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_NOMEM:
      return StatusCode::kResourceExhausted;
    case SQLITE_CONSTRAINT:
      return StatusCode::kFailedPrecondition;
    default:
      return StatusCode::kInternal;
  }
}

}  // namespace

// ---- Statement ----

Statement::Statement(Db* db, sqlite3_stmt* stmt,
                     internal::CachedStatement* cache_slot)
    : db_(db), stmt_(stmt), cache_slot_(cache_slot) {}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_),
      stmt_(std::exchange(other.stmt_, nullptr)),
      cache_slot_(other.cache_slot_),
      bind_error_(std::move(other.bind_error_)) {}

Statement::~Statement() {
  if (stmt_ == nullptr) return;
  if (cache_slot_ != nullptr) {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    cache_slot_->in_use = false;
  } else {
    sqlite3_finalize(stmt_);
  }
}

#define TRENCH_BIND(call)                                              \
  do {                                                                 \
    int rc = (call);                                                   \
    if (rc != SQLITE_OK && bind_error_.ok()) {                         \
      bind_error_ = db_->ErrorStatus(                                  \
          rc, "binding parameter " + std::to_string(index) + " of `" + \
                  Abbreviate(sqlite3_sql(stmt_)) + "`");               \
    }                                                                  \
    return *this;                                                      \
  } while (0)

Statement& Statement::BindInt64(int index, int64_t value) {
  TRENCH_BIND(sqlite3_bind_int64(stmt_, index, value));
}
Statement& Statement::BindDouble(int index, double value) {
  TRENCH_BIND(sqlite3_bind_double(stmt_, index, value));
}
Statement& Statement::BindText(int index, std::string_view value) {
  TRENCH_BIND(sqlite3_bind_text64(stmt_, index, value.data(), value.size(),
                                  SQLITE_TRANSIENT, SQLITE_UTF8));
}
Statement& Statement::BindNull(int index) {
  TRENCH_BIND(sqlite3_bind_null(stmt_, index));
}
#undef TRENCH_BIND

Statement& Statement::BindOptionalInt64(int index,
                                        const std::optional<int64_t>& value) {
  return value ? BindInt64(index, *value) : BindNull(index);
}
Statement& Statement::BindOptionalDouble(int index,
                                         const std::optional<double>& value) {
  return value ? BindDouble(index, *value) : BindNull(index);
}
Statement& Statement::BindOptionalText(
    int index, const std::optional<std::string>& value) {
  return value ? BindText(index, *value) : BindNull(index);
}
Statement& Statement::BindJson(int index, const Json& value) {
  return BindText(index, value.Dump());
}

StatusOr<bool> Statement::Step() {
  if (!bind_error_.ok()) return bind_error_;
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return db_->ErrorStatus(rc, "`" + Abbreviate(sqlite3_sql(stmt_)) + "`");
}

Status Statement::Run() {
  while (true) {
    ASSIGN_OR_RETURN(bool row, Step());
    if (!row) return Status::Ok();
  }
}

bool Statement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}
int64_t Statement::ColumnInt64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}
double Statement::ColumnDouble(int column) const {
  return sqlite3_column_double(stmt_, column);
}
std::string Statement::ColumnText(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) return "";
  return std::string(reinterpret_cast<const char*>(text),
                     sqlite3_column_bytes(stmt_, column));
}
std::optional<int64_t> Statement::ColumnOptionalInt64(int column) const {
  if (IsNull(column)) return std::nullopt;
  return ColumnInt64(column);
}
std::optional<double> Statement::ColumnOptionalDouble(int column) const {
  if (IsNull(column)) return std::nullopt;
  return ColumnDouble(column);
}
std::optional<std::string> Statement::ColumnOptionalText(int column) const {
  if (IsNull(column)) return std::nullopt;
  return ColumnText(column);
}

StatusOr<Json> Statement::ColumnJson(int column, std::string_view what) const {
  if (IsNull(column)) return Json();
  StatusOr<Json> json = ParseJson(ColumnText(column));
  if (!json.ok()) {
    return IoError("store " + db_->path() + ": " + std::string(what) +
                   " is not valid JSON: " + json.status().message());
  }
  return json;
}

// ---- Db ----

namespace {

// Switches `db` to WAL and returns the journal mode in force. Switching a
// new file takes an exclusive lock, and SQLite reports busy at once rather
// than call the busy handler when another connection is switching the same
// file (two daemons creating one store): busy is retried here until the
// busy timeout has passed.
StatusOr<std::string> EnableWal(Db* db, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(std::max(timeout_ms, 0));
  while (true) {
    StatusOr<Statement> wal = db->Prepare("PRAGMA journal_mode=WAL");
    Status failed = wal.status();
    if (wal.ok()) {
      StatusOr<bool> row = wal->Step();
      if (row.ok()) return *row ? wal->ColumnText(0) : std::string();
      failed = row.status();
    }
    if (failed.code() != StatusCode::kResourceExhausted ||
        std::chrono::steady_clock::now() >= deadline) {
      return failed;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

}  // namespace

StatusOr<std::unique_ptr<Db>> Db::Open(const std::string& path,
                                       const Options& options) {
  struct stat st;
  if (!options.create_if_missing && ::stat(path.c_str(), &st) != 0) {
    return NotFound("store " + path + ": no such file");
  }
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
  if (options.create_if_missing) flags |= SQLITE_OPEN_CREATE;
  sqlite3* raw = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  // The handle exists even on failure and must be closed.
  std::unique_ptr<Db> db(new Db(raw, path));
  if (rc != SQLITE_OK) {
    return db->ErrorStatus(rc, "opening the database");
  }
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, options.busy_timeout_ms);
  // The first statement reads the header: a non-SQLite file fails here.
  ASSIGN_OR_RETURN(std::string mode,
                   EnableWal(db.get(), options.busy_timeout_ms));
  if (mode != "wal") {
    return IoError("store " + path + ": cannot enable WAL mode (journal mode " +
                   "is '" + mode + "')");
  }
  RETURN_IF_ERROR(db->Exec(options.full_sync ? "PRAGMA synchronous=FULL"
                                             : "PRAGMA synchronous=NORMAL"));
  RETURN_IF_ERROR(db->Exec("PRAGMA foreign_keys=ON"));
  // Check the whole header and schema once: a file with an SQLite header
  // but a damaged schema page fails on the first schema read.
  RETURN_IF_ERROR(db->Exec("SELECT count(*) FROM sqlite_schema"));
  return db;
}

Db::~Db() {
  for (auto& [sql, entry] : cache_) sqlite3_finalize(entry.stmt);
  sqlite3_close_v2(db_);
}

Status Db::Exec(std::string_view sql) {
  std::string text(sql);
  char* err = nullptr;
  int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &err);
  sqlite3_free(err);
  if (rc != SQLITE_OK) return ErrorStatus(rc, "`" + Abbreviate(sql) + "`");
  return Status::Ok();
}

StatusOr<Statement> Db::Prepare(const std::string& sql) {
  auto it = cache_.find(sql);
  if (it != cache_.end() && !it->second.in_use) {
    it->second.in_use = true;
    return Statement(this, it->second.stmt, &it->second);
  }
  sqlite3_stmt* stmt = nullptr;
  const char* tail = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.c_str(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, &tail);
  if (rc != SQLITE_OK) {
    sqlite3_finalize(stmt);
    return ErrorStatus(rc, "preparing `" + Abbreviate(sql) + "`");
  }
  if (stmt == nullptr) {
    return Internal("sqlite: empty statement `" + Abbreviate(sql) + "`");
  }
  if (tail != nullptr && std::string_view(tail).find_first_not_of(" \t\n;") !=
                             std::string_view::npos) {
    sqlite3_finalize(stmt);
    return Internal("sqlite: more than one statement in `" + Abbreviate(sql) +
                    "`");
  }
  // In use already: a second, uncached statement for the same text.
  if (it != cache_.end()) return Statement(this, stmt, nullptr);
  auto [slot, inserted] =
      cache_.emplace(sql, internal::CachedStatement{stmt, true});
  return Statement(this, stmt, &slot->second);
}

int64_t Db::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }
int64_t Db::Changes() const { return sqlite3_changes64(db_); }
bool Db::InTransaction() const { return sqlite3_get_autocommit(db_) == 0; }

Status Db::ErrorStatus(int rc, std::string_view context) const {
  std::string message = "sqlite: ";
  const char* msg = db_ != nullptr ? sqlite3_errmsg(db_) : nullptr;
  // sqlite3_errmsg describes the most recent failing call on the
  // connection, which is the one reporting `rc` here.
  message += msg != nullptr ? msg : sqlite3_errstr(rc);
  message += " (";
  message += sqlite3_errstr(rc);
  message += ", code " + std::to_string(rc) + ") in " + std::string(context);
  int primary = rc & 0xff;
  if (primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT) {
    message = "store " + path_ +
              " is not an SQLite database or is corrupt: " + message;
  } else {
    message = "store " + path_ + ": " + message;
  }
  return Status(CodeFor(rc), std::move(message));
}

// ---- Transaction ----

StatusOr<Transaction> Transaction::Begin(Db* db) {
  if (db->InTransaction()) {
    return Internal("store " + db->path() +
                    ": transaction begun inside another one");
  }
  RETURN_IF_ERROR(db->Exec("BEGIN IMMEDIATE"));
  return Transaction(db);
}

Transaction::Transaction(Transaction&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)) {}

Transaction::~Transaction() {
  if (db_ != nullptr) (void)Rollback();
}

Status Transaction::Commit() {
  if (db_ == nullptr)
    return Internal("store: commit of a finished transaction");
  Status s = db_->Exec("COMMIT");
  if (!s.ok()) {
    // A failed COMMIT may leave the transaction open; do not leave it so.
    if (db_->InTransaction()) (void)db_->Exec("ROLLBACK");
    db_ = nullptr;
    return s;
  }
  db_ = nullptr;
  return Status::Ok();
}

Status Transaction::Rollback() {
  if (db_ == nullptr) return Status::Ok();
  Db* db = std::exchange(db_, nullptr);
  // An error may already have rolled the transaction back.
  if (!db->InTransaction()) return Status::Ok();
  return db->Exec("ROLLBACK");
}

}  // namespace trench::orchestrator
