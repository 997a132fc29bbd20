// Store: the meta table's daemon settings (watched commit, base commit)
// and the daemon's bookkeeping in a bug's details.
#include "orchestrator/store/store.h"

namespace trench::orchestrator {

StatusOr<std::optional<std::string>> Store::GetMeta(const std::string& key) {
  ASSIGN_OR_RETURN(Statement st,
                   db()->Prepare("SELECT value FROM meta WHERE key = ?1"));
  ASSIGN_OR_RETURN(bool row, st.BindText(1, key).Step());
  if (!row) return std::optional<std::string>();
  return std::optional<std::string>(st.ColumnText(0));
}

Status Store::SetMeta(const std::string& key, const std::string& value) {
  if (key.rfind("schema", 0) == 0) {
    return InvalidArgument("meta key '" + key + "' belongs to the migrations");
  }
  ASSIGN_OR_RETURN(Statement st,
                   db()->Prepare("INSERT INTO meta (key, value) VALUES (?1, "
                                 "?2) ON CONFLICT (key) DO UPDATE SET value = "
                                 "excluded.value"));
  return st.BindText(1, key).BindText(2, value).Run();
}

}  // namespace trench::orchestrator

namespace trench::orchestrator {

Status Store::SetBugDetails(int64_t id, const Json& details) {
  ASSIGN_OR_RETURN(Statement st,
                   db()->Prepare("UPDATE bugs SET details = ?2, updated_ms = "
                                 "?3 WHERE id = ?1"));
  st.BindInt64(1, id).BindJson(2, details).BindInt64(3, clock_->NowMillis());
  RETURN_IF_ERROR(st.Run());
  if (db()->Changes() == 0) {
    return NotFound("no bug " + std::to_string(id));
  }
  return Status::Ok();
}

}  // namespace trench::orchestrator
