#include "agents/builtin_brains.h"

namespace trench::agents {

const std::vector<std::string>& RoleNames() {
  static const std::vector<std::string> kRoles = {
      "stress_test_author", "reproducer", "minimizer", "patch_drafter"};
  return kRoles;
}

StatusOr<std::unique_ptr<Brain>> MakeBuiltinBrain(const std::string& role) {
  if (role == "stress_test_author") return MakeBuiltinStressAuthor();
  if (role == "reproducer") return MakeBuiltinReproducer();
  if (role == "minimizer") return MakeBuiltinMinimizer();
  if (role == "patch_drafter") return MakeBuiltinDrafter();
  return InvalidArgument("unknown role '" + role +
                         "' (expected stress_test_author, reproducer, "
                         "minimizer or patch_drafter)");
}

Status CheckTaskObject(const Json& task) {
  if (!task.is_object()) return InvalidArgument("task: expected a JSON object");
  return Status::Ok();
}

StatusOr<std::optional<std::string>> TaskString(const Json& task,
                                                std::string_view key) {
  const Json* v = task.Find(key);
  if (v == nullptr || v->is_null()) return std::optional<std::string>();
  if (!v->is_string()) {
    return InvalidArgument("task: " + std::string(key) + ": expected a string");
  }
  return std::optional<std::string>(v->string_value());
}

StatusOr<int64_t> TaskInt(const Json& task, std::string_view key, int64_t def) {
  const Json* v = task.Find(key);
  if (v == nullptr || v->is_null()) return def;
  StatusOr<int64_t> i = v->GetInt64();
  if (!i.ok()) {
    return InvalidArgument("task: " + std::string(key) +
                           ": expected an integer");
  }
  return *i;
}

StatusOr<std::vector<std::string>> TaskStrings(const Json& area,
                                               std::string_view key) {
  std::vector<std::string> out;
  const Json* v = area.Find(key);
  if (v == nullptr || v->is_null()) return out;
  if (!v->is_array()) {
    return InvalidArgument("task: area." + std::string(key) +
                           ": expected an array of strings");
  }
  for (const Json& s : v->array()) {
    if (!s.is_string()) {
      return InvalidArgument("task: area." + std::string(key) +
                             ": expected an array of strings");
    }
    out.push_back(s.string_value());
  }
  return out;
}

std::string OutString(const Json& out, std::string_view key,
                      const std::string& def) {
  const Json* v = out.Find(key);
  return v && v->is_string() ? v->string_value() : def;
}

int64_t OutInt(const Json& out, std::string_view key, int64_t def) {
  const Json* v = out.Find(key);
  if (v == nullptr || !v->is_number()) return def;
  StatusOr<int64_t> i = v->GetInt64();
  if (i.ok()) return *i;
  const double d = v->number_value();  // A double, or above INT64_MAX.
  return d > -9e18 && d < 9e18 ? static_cast<int64_t>(d) : def;
}

}  // namespace trench::agents
