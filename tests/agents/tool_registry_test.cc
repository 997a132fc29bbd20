#include "agents/tool_registry.h"

#include <gtest/gtest.h>

#include <set>

#include "agents/json_schema.h"

namespace trench::agents {
namespace {

std::set<std::string> Names(const std::vector<ToolSpec>& specs) {
  std::set<std::string> names;
  for (const ToolSpec& s : specs) names.insert(s.name);
  return names;
}

TEST(ToolRegistryTest, EveryEntryIsWellFormed) {
  Status s = RegistryStatus();
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::set<std::string_view> seen;
  for (const ToolDef& t : AllTools()) {
    EXPECT_TRUE(seen.insert(t.name).second) << "duplicate " << t.name;
    EXPECT_TRUE(t.schema.is_object()) << t.name;
    EXPECT_FALSE(t.description.empty()) << t.name;
    EXPECT_GT(t.wall_seconds, 0) << t.name;
  }
  EXPECT_EQ(AllTools().size(), 11u);
}

TEST(ToolRegistryTest, ThereIsNoShellTool) {
  for (const ToolDef& t : AllTools()) {
    EXPECT_NE(t.runner, "sh");
    EXPECT_NE(t.runner, "bash");
    EXPECT_EQ(t.name.find("shell"), std::string_view::npos);
    EXPECT_EQ(t.name.find("exec"), std::string_view::npos);
  }
}

TEST(ToolRegistryTest, RolesGetTheirTools) {
  StatusOr<std::vector<ToolSpec>> drafter = SpecsForRole("patch_drafter");
  ASSERT_TRUE(drafter.ok());
  const std::set<std::string> d = Names(*drafter);
  EXPECT_TRUE(d.contains("culprit_diff"));
  EXPECT_TRUE(d.contains("try_patch"));
  EXPECT_TRUE(d.contains("submit_patch"));
  EXPECT_FALSE(d.contains("fuzz"));
  StatusOr<std::vector<ToolSpec>> author = SpecsForRole("stress_test_author");
  ASSERT_TRUE(author.ok());
  const std::set<std::string> a = Names(*author);
  EXPECT_TRUE(a.contains("fuzz"));
  EXPECT_TRUE(a.contains("write_case"));
  EXPECT_FALSE(a.contains("submit_patch"));
  EXPECT_FALSE(a.contains("try_patch"));
  // A report describing its program in words: a campaign in its area.
  EXPECT_TRUE(Names(*SpecsForRole("reproducer")).contains("fuzz"));
  EXPECT_FALSE(Names(*SpecsForRole("minimizer")).contains("fuzz"));
  for (const char* role :
       {"stress_test_author", "reproducer", "minimizer", "patch_drafter"}) {
    StatusOr<std::vector<ToolSpec>> specs = SpecsForRole(role);
    ASSERT_TRUE(specs.ok()) << role;
    EXPECT_TRUE(Names(*specs).contains("finish")) << role;
    EXPECT_TRUE(Names(*specs).contains("run_case")) << role;
  }
  EXPECT_TRUE(RoleMayUse("minimizer", "reduce_case"));
  EXPECT_FALSE(RoleMayUse("reproducer", "reduce_case"));
  EXPECT_FALSE(RoleMayUse("reproducer", "no_such_tool"));
  EXPECT_FALSE(RoleMayUse("janitor", "finish"));
}

TEST(ToolRegistryTest, UnknownRole) {
  EXPECT_EQ(SpecsForRole("janitor").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(FindTool("rm"), nullptr);
  ASSERT_NE(FindTool("run_case"), nullptr);
  EXPECT_EQ(FindTool("run_case")->runner, "hlo-diff");
}

TEST(ToolRegistryTest, SchemasValidateTheDocumentedExample) {
  const ToolDef* run = FindTool("run_case");
  ASSERT_NE(run, nullptr);
  const std::string id(64, 'a');
  StatusOr<Json> args = ParseJson(R"({"case": ")" + id + R"(", "runs": "3"})");
  ASSERT_TRUE(args.ok());
  EXPECT_EQ(ValidateJson(run->schema, *args).message(),
            "runs: expected an integer, got \"3\"");
  (*args)["runs"] = 3;
  EXPECT_TRUE(ValidateJson(run->schema, *args).ok());
  // The finish tool takes the role's claim fields next to its own.
  const ToolDef* finish = FindTool("finish");
  ASSERT_NE(finish, nullptr);
  StatusOr<Json> claim = ParseJson(
      R"({"outcome": "done", "summary": "s", "case": null, "runs": 3})");
  ASSERT_TRUE(claim.ok());
  EXPECT_TRUE(ValidateJson(finish->schema, *claim).ok());
  (*claim)["outcome"] = "maybe";
  EXPECT_FALSE(ValidateJson(finish->schema, *claim).ok());
}

}  // namespace
}  // namespace trench::agents
