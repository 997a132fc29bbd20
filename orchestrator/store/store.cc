#include "orchestrator/store/store.h"

#include "orchestrator/store/migrations.h"

namespace trench::orchestrator {

StatusOr<std::unique_ptr<Store>> Store::Open(const std::string& path,
                                             const StoreOptions& options) {
  if (options.clock == nullptr) {
    return InvalidArgument("store " + path + ": no clock");
  }
  Db::Options db_options;
  db_options.create_if_missing = options.create_if_missing;
  db_options.busy_timeout_ms = options.busy_timeout_ms;
  db_options.full_sync = options.full_sync;
  ASSIGN_OR_RETURN(std::unique_ptr<Db> db, Db::Open(path, db_options));
  RETURN_IF_ERROR(ApplyMigrations(db.get(), StoreMigrations()));
  return std::unique_ptr<Store>(new Store(std::move(db), options.clock));
}

}  // namespace trench::orchestrator
