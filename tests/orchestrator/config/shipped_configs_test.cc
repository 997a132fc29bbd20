// The config files shipped in config/ load through the real loader, and
// the LLM backends they configure POST to the URLs the APIs serve (the
// client's own join, agents::ChatUrl). The shipped anthropic base_url once
// lacked "/v1", so every request went to /messages: a 404.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "agents/llm_client.h"
#include "orchestrator/config/daemon_config.h"

namespace trench::orchestrator {
namespace {

namespace fs = std::filesystem;

const std::string kConfigDir = std::string(TRENCH_SOURCE_DIR) + "/config";

// backend -> the URL its client POSTs to, for each llm section of `config`.
std::map<std::string, std::string> ChatUrls(const DaemonConfig& config) {
  std::map<std::string, std::string> urls;
  for (const auto& [backend, section] : config.llm) {
    agents::LlmConfig c;
    c.backend = backend;
    c.base_url = section.base_url;
    urls[backend] = agents::ChatUrl(c);
  }
  return urls;
}

TEST(ShippedConfigsTest, TrenchJsonPostsToTheApisEndpoints) {
  StatusOr<DaemonConfig> config = LoadDaemonConfig(kConfigDir + "/trench.json");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const std::map<std::string, std::string> want = {
      {"anthropic", "https://api.anthropic.com/v1/messages"},
      {"openai", "http://127.0.0.1:8080/v1/chat/completions"}};
  EXPECT_EQ(ChatUrls(*config), want);
}

// Every shipped config loads, and every LLM backend in it is accepted by
// the client factory (which refuses a base_url without the API version).
TEST(ShippedConfigsTest, EveryShippedConfigLoadsAndItsBackendsAreAccepted) {
  int files = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(kConfigDir)) {
    if (e.path().extension() != ".json") continue;
    ++files;
    StatusOr<DaemonConfig> config = LoadDaemonConfig(e.path().string());
    ASSERT_TRUE(config.ok()) << e.path() << ": " << config.status().ToString();
    for (const auto& [backend, url] : ChatUrls(*config)) {
      const LlmBackendConfig& section = config->llm.at(backend);
      agents::LlmConfig c;
      c.backend = backend;
      c.base_url = section.base_url;
      c.model = section.model;
      // No API key needed to check the URL.
      StatusOr<std::unique_ptr<agents::LlmClient>> client =
          agents::MakeLlmClient(c);
      EXPECT_TRUE(client.ok()) << e.path() << ": llm." << backend << ": "
                               << client.status().ToString();
      EXPECT_TRUE(
          url.ends_with("/v1/" + std::string(agents::ChatPath(backend))))
          << e.path() << ": " << url;
    }
  }
  EXPECT_GE(files, 2);  // trench.json and demo.json at least.
}

// A fresh clone has no ../shared: the shipped configs fuzz the trace
// corpus that ships in the repository (corpus/traces), found through
// their own directory.
TEST(ShippedConfigsTest, ShippedConfigsUseTheCorpusInTheRepository) {
  const fs::path corpus =
      fs::weakly_canonical(fs::path(TRENCH_SOURCE_DIR) / "corpus/traces");
  for (const char* name : {"trench.json", "demo.json"}) {
    StatusOr<DaemonConfig> config = LoadDaemonConfig(kConfigDir + "/" + name);
    ASSERT_TRUE(config.ok()) << name << ": " << config.status().ToString();
    EXPECT_EQ(fs::weakly_canonical(config->fuzz_corpus), corpus) << name;
  }
  int modules = 0;
  for (const auto& e : fs::recursive_directory_iterator(corpus)) {
    modules += e.path().extension() == ".hlo";
  }
  EXPECT_GE(modules, 100);
  EXPECT_TRUE(fs::is_regular_file(corpus / "README.md"));
  EXPECT_TRUE(fs::is_regular_file(corpus / "xla/LICENSE"));
}

}  // namespace
}  // namespace trench::orchestrator
