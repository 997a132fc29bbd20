#include "agents/prompts.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "agents/brain.h"

namespace trench::agents {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(PromptsTest, EveryRoleHasItsBuiltInPromptEqualToTheFile) {
  for (const std::string& role : RoleNames()) {
    std::string source;
    StatusOr<std::string> text = LoadPrompt("", role, &source);
    ASSERT_TRUE(text.ok()) << role << ": " << text.status().ToString();
    const std::string file =
        ReadFile(std::string(TRENCH_SOURCE_DIR) + "/prompts/" + role + ".md");
    ASSERT_FALSE(file.empty()) << role;
    EXPECT_EQ(*text, file) << role;
    EXPECT_EQ(source, "built-in prompts/" + role + ".md");
  }
  EXPECT_EQ(LoadPrompt("", "oracle").status().code(), StatusCode::kNotFound);
}

TEST(PromptsTest, APromptsDirOverridesAndMustHoldTheFile) {
  const std::string dir = testing::TempDir() + "/prompts_override";
  std::filesystem::create_directories(dir);
  { std::ofstream(dir + "/reproducer.md") << "mine\n"; }
  StatusOr<std::string> text = LoadPrompt(dir, "reproducer");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "mine\n");
  StatusOr<std::string> missing = LoadPrompt(dir, "minimizer");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find(dir + "/minimizer.md"),
            std::string::npos);
}

}  // namespace
}  // namespace trench::agents
