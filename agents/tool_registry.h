// The tool registry (agents/tools.def, the ONE list) as data: lookup by
// name, the schema of each tool (parsed once), and the ToolSpecs a role may
// offer its model. Both brains use it through a ToolBox (agents/toolbox.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "agents/llm_client.h"
#include "base/json.h"
#include "base/status.h"

namespace trench::agents {

// Role bits for tools.def's `roles` column.
enum ToolRoleBits : unsigned {
  kAuthor = 1u << 0,      // stress_test_author
  kReproducer = 1u << 1,  // reproducer
  kMinimizer = 1u << 2,   // minimizer
  kDrafter = 1u << 3,     // patch_drafter
};

struct ToolDef {
  std::string_view name;
  std::string_view runner;  // "hlo-diff", ..., "builtin" or "callback".
  unsigned roles = 0;       // ToolRoleBits.
  double wall_seconds = 0;
  uint64_t memory_bytes = 0;  // 0: the sandbox default.
  std::string_view description;
  std::string_view schema_text;
  Json schema;  // Parsed schema_text.
};

// Every tool, in tools.def order. The schemas are parsed on first use; a
// schema that does not parse is a bug of tools.def, caught by
// RegistryStatus() (and the registry test), and leaves that tool's
// `schema` null (which then validates nothing: callers check
// RegistryStatus() at start-up).
const std::vector<ToolDef>& AllTools();

// Ok when every schema of tools.def parses and passes CheckSchema, every
// runner is known and every tool is offered to some role; otherwise
// kInternal naming the tool.
Status RegistryStatus();

// The tool `name`, or nullptr.
const ToolDef* FindTool(std::string_view name);

// The role bit of a role name ("reproducer" -> kReproducer).
// kInvalidArgument for an unknown role.
StatusOr<unsigned> RoleBit(std::string_view role);

// Whether `role` may use tool `name` (false for unknown roles / tools).
bool RoleMayUse(std::string_view role, std::string_view name);

// The specs `role` offers its model, in registry order. kInvalidArgument
// for an unknown role.
StatusOr<std::vector<ToolSpec>> SpecsForRole(std::string_view role);

}  // namespace trench::agents
