#include "agents/tool_registry.h"

#include <array>

#include "agents/json_schema.h"

namespace trench::agents {
namespace {

constexpr std::array<std::string_view, 6> kRunners = {
    "hlo-diff", "hlo-reduce", "hlo-bisect", "hlo-fuzz", "builtin", "callback"};

std::vector<ToolDef> BuildRegistry() {
  std::vector<ToolDef> tools;
#define TRENCH_TOOL(name, runner, roles, wall, mib, description, schema)   \
  tools.push_back(ToolDef{#name, runner, roles, wall, uint64_t{mib} << 20, \
                          description, schema, Json()});
#include "agents/tools.def"
#undef TRENCH_TOOL
  for (ToolDef& t : tools) {
    StatusOr<Json> schema = ParseSchema(t.schema_text);
    if (schema.ok()) t.schema = *std::move(schema);
  }
  return tools;
}

}  // namespace

const std::vector<ToolDef>& AllTools() {
  static const std::vector<ToolDef>* const tools =
      new std::vector<ToolDef>(BuildRegistry());
  return *tools;
}

Status RegistryStatus() {
  for (const ToolDef& t : AllTools()) {
    const std::string name(t.name);
    StatusOr<Json> schema = ParseSchema(t.schema_text);
    if (!schema.ok()) {
      return Internal("tools.def: " + name + ": " + schema.status().message());
    }
    const Json* type = schema->Find("type");
    if (type == nullptr || !(*type == Json("object"))) {
      return Internal("tools.def: " + name + ": schema type is not object");
    }
    bool known = false;
    for (std::string_view r : kRunners) known = known || r == t.runner;
    if (!known) {
      return Internal("tools.def: " + name + ": unknown runner " +
                      std::string(t.runner));
    }
    if (t.roles == 0) return Internal("tools.def: " + name + ": no roles");
    if (t.wall_seconds <= 0) {
      return Internal("tools.def: " + name + ": no wall-clock limit");
    }
  }
  return Status::Ok();
}

const ToolDef* FindTool(std::string_view name) {
  for (const ToolDef& t : AllTools()) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

StatusOr<unsigned> RoleBit(std::string_view role) {
  if (role == "stress_test_author") return unsigned{kAuthor};
  if (role == "reproducer") return unsigned{kReproducer};
  if (role == "minimizer") return unsigned{kMinimizer};
  if (role == "patch_drafter") return unsigned{kDrafter};
  return InvalidArgument("unknown role '" + std::string(role) +
                         "' (roles: stress_test_author, reproducer, "
                         "minimizer, patch_drafter)");
}

bool RoleMayUse(std::string_view role, std::string_view name) {
  StatusOr<unsigned> bit = RoleBit(role);
  const ToolDef* tool = FindTool(name);
  return bit.ok() && tool != nullptr && (tool->roles & *bit) != 0;
}

StatusOr<std::vector<ToolSpec>> SpecsForRole(std::string_view role) {
  ASSIGN_OR_RETURN(const unsigned bit, RoleBit(role));
  std::vector<ToolSpec> specs;
  for (const ToolDef& t : AllTools()) {
    if ((t.roles & bit) == 0) continue;
    specs.push_back(
        ToolSpec{std::string(t.name), std::string(t.description), t.schema});
  }
  return specs;
}

}  // namespace trench::agents
