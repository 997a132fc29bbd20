// The daemon learns the target from the target
// (orchestrator/pipeline/commit_tools.h: DescribeTarget, TargetOfBuild,
// ChangedAreaOfCommits): a commit's changed files map to passes and ops
// through the description the commit itself carries, so the focus follows a
// renamed file; a target that describes nothing is fuzzed without focus and
// says so once. The mirror is a real git repository, the store a real
// SQLite file, the tools run in the sandbox.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "git/patch_apply.h"
#include "orchestrator/pipeline/commit_tools.h"
#include "tests/orchestrator/pipeline/step_test_fixture.h"

namespace trench::orchestrator {
namespace {

namespace fs = std::filesystem;

// A manifest naming cse's file `cse_file`.
std::string Manifest(const std::string& cse_file) {
  return R"({"passes": [{"name": "cse", "sources": [")" + cse_file +
         R"("]},
                        {"name": "dce", "sources": ["compiler/passes/dce.*"]}],
             "emitters": [{"name": "EmitSort", "ops": ["sort"],
                           "sources": ["compiler/codegen/*sort*.cc"]}],
             "large_arrays": [{"from_elements": 4096,
                               "frontend_attributes": {"vmem": "65536"},
                               "sources": ["compiler/codegen/stream_*"]}]})";
}

class TargetFocusTest : public testing::StepTest {
 protected:
  void SetUp() override {
    StepTest::SetUp();
    config_.repo = "the target";
    config_.fuzz_budget_seconds = 1;
    config_.fuzz_jobs = 1;
    ctx_.worker = "stress_test_author#0";
  }

  std::string Commit(const std::vector<hlo_bisect::FileChange>& files,
                     const std::string& bin = TRENCH_BINARY_DIR) {
    return StepTest::Commit(files, "commit", bin);
  }

  // A build directory `name`: this checkout's hlo-run and tpusim behind an
  // hloc script that runs `capabilities` (shell lines) for --capabilities
  // and is the real hloc otherwise.
  std::string FakeHlocBin(const std::string& name,
                          const std::string& capabilities) {
    const std::string bin = paths_->build_cache + "/" + name + "/bin";
    fs::create_directories(bin);
    for (const char* tool : {"hlo-run", "tpusim"}) {
      fs::create_symlink(std::string(TRENCH_BINARY_DIR) + "/" + tool,
                         bin + "/" + tool);
    }
    {
      std::ofstream hloc(bin + "/hloc");
      hloc << "#!/bin/sh\n"
              "if [ \"$1\" = --capabilities ]; then\n"
           << capabilities
           << "  exit 0\n"
              "fi\n"
              "exec "
           << TRENCH_BINARY_DIR << "/hloc \"$@\"\n";
    }
    OpenBinToSandbox(name, {"hloc"});
    return bin;
  }

  ChangedArea AreaOf(const std::string& sha) {
    StatusOr<std::string> scratch = ctx_.Scratch(++jobs_, "describe");
    EXPECT_TRUE(scratch.ok());
    StatusOr<ChangedArea> area =
        ChangedAreaOfCommits(ctx_, sha, {sha}, scratch.ok() ? *scratch : "");
    EXPECT_TRUE(area.ok()) << area.status().ToString();
    return area.ok() ? *area : ChangedArea();
  }
};

// cse's file is renamed in a commit that also updates the manifest: the
// rename and the next change of the new file aim at cse, which the old
// description cannot know.
TEST_F(TargetFocusTest, TheFocusFollowsARenamedPassFile) {
  const std::string base =
      Commit({{"compiler/passes/cse.cc", "// v1\n"},
              {"compiler/passes/dce.cc", "// v1\n"},
              {"trench-target.json", Manifest("compiler/passes/cse.cc")}});
  const std::string renamed = Commit(
      {{"compiler/passes/cse.cc", std::nullopt},
       {"compiler/passes/redundancy.cc", "// v1\n"},
       {"trench-target.json", Manifest("compiler/passes/redundancy.cc")}});
  const std::string changed =
      Commit({{"compiler/passes/redundancy.cc", "// v2\n"},
              {"compiler/codegen/stream_sort.cc", "// v1\n"}});

  EXPECT_EQ(AreaOf(base).passes, (std::vector<std::string>{"cse", "dce"}));
  EXPECT_EQ(AreaOf(renamed).passes, std::vector<std::string>{"cse"});
  const ChangedArea area = AreaOf(changed);
  EXPECT_EQ(area.passes, std::vector<std::string>{"cse"});
  EXPECT_EQ(area.ops, std::vector<std::string>{"sort"});
  // stream_sort.cc runs only on large arrays; the passes' files do not.
  EXPECT_EQ(area.large_elements, 4096);
  EXPECT_EQ(area.large_attributes,
            (hlo_diff::FrontendAttributes{{"vmem", "65536"}}));
  EXPECT_EQ(AreaOf(base).large_elements, 0);

  // Each description is stored with its build, read from its own commit.
  StatusOr<Build> before = store_->GetBuild(base, "");
  StatusOr<Build> after = store_->GetBuild(changed, "");
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_NE(before->target.find("compiler/passes/cse.cc"), std::string::npos)
      << before->target;
  EXPECT_NE(after->target.find("compiler/passes/redundancy.cc"),
            std::string::npos)
      << after->target;
  // Through the description before the rename, the new file names nothing.
  StatusOr<hlo_diff::TargetDescription> old =
      hlo_diff::ParseTargetDescriptionText(before->target, "stored");
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  StatusOr<std::string> diff = agents::DiffOfCommit(*repo_, changed);
  ASSERT_TRUE(diff.ok());
  EXPECT_TRUE(ChangedAreaOf(*diff, *old).passes.empty());

  // A round over the range maps each commit through its own description.
  StatusOr<ChangedArea> round = ChangedAreaOfCommits(
      ctx_, changed, {renamed, changed}, *ctx_.Scratch(++jobs_, "describe"));
  ASSERT_TRUE(round.ok()) << round.status().ToString();
  EXPECT_EQ(round->passes, std::vector<std::string>{"cse"});
}

// A commit that changes only large-array code (no pass or emitter of its
// own) still gets an aimed campaign, of large programs with the group's
// size and module attributes.
TEST_F(TargetFocusTest, ALargeArrayChangeGetsAnAimedCampaign) {
  Commit({{"compiler/passes/cse.cc", "// v1\n"},
          {"trench-target.json", Manifest("compiler/passes/cse.cc")}});
  const std::string changed =
      Commit({{"compiler/codegen/stream_tiles.cc", "// v1\n"}});
  Json payload = Json::MakeObject();
  payload["commit"] = changed;
  StatusOr<Json> out = RunFuzzStep(ctx_, MakeJob("fuzz", std::move(payload)));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->Find("focus")->Find("large_elements")->int64_value(), 4096)
      << out->Dump();
  EXPECT_EQ(out->Find("focus")->Find("ops")->string_value(), "");
  const Json* author = out->Find("author");
  ASSERT_NE(author, nullptr) << out->Dump();
  EXPECT_EQ(out->Find("author_error"), nullptr) << out->Dump();
}

// A manifest that is not a description is stored as describing nothing
// (with a warning), so each commit is read once.
TEST_F(TargetFocusTest, AMalformedManifestLeavesTheCommitUnfocused) {
  const std::string sha =
      Commit({{"compiler/passes/cse.cc", "// v1\n"},
              {"trench-target.json", R"({"passes": [{"name": "cse"}],
                                         "emitters": "EmitSort"})"}});
  StatusOr<hlo_diff::TargetDescription> direct =
      DescribeTarget(ctx_, sha, TRENCH_BINARY_DIR, dir_);
  ASSERT_FALSE(direct.ok());
  EXPECT_NE(direct.status().message().find(
                "trench-target.json at " + sha.substr(0, 12) +
                ": emitters: expected an array of objects"),
            std::string::npos)
      << direct.status().message();
  EXPECT_TRUE(AreaOf(sha).passes.empty());
  EXPECT_FALSE(store_->GetBuild(sha, "")->target.empty());
}

// A target whose hloc --capabilities names no sources and whose repository
// has no manifest: every commit gets the unfocused campaign alone, and the
// log says so once, not once per commit.
TEST_F(TargetFocusTest, AnUndescribedTargetIsFuzzedUnfocusedAndSaysSoOnce) {
  // The build: this checkout's binaries behind an hloc whose capabilities
  // describe nothing (an older or foreign target).
  const std::string bin = FakeHlocBin("undescribed",
                                      "  echo '{\"tool\": \"hloc\", \"ops\": "
                                      "[\"add\"], \"passes\": [{\"name\": "
                                      "\"cse\"}]}'\n");
  const std::string one = Commit({{"compiler/passes/cse.cc", "// v1\n"}}, bin);
  const std::string two = Commit({{"compiler/passes/cse.cc", "// v2\n"}}, bin);

  std::ostringstream log;
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "test", std::make_shared<spdlog::sinks::ostream_sink_mt>(log)));
  std::vector<StatusOr<Json>> outs;
  for (const std::string& sha : {one, two}) {
    Json payload = Json::MakeObject();
    payload["commit"] = sha;
    outs.push_back(RunFuzzStep(ctx_, MakeJob("fuzz", std::move(payload))));
  }
  spdlog::set_default_logger(previous);

  for (const StatusOr<Json>& out : outs) {
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ(out->Find("author"), nullptr) << out->Dump();
    EXPECT_EQ(out->Find("focus")->Find("passes")->string_value(), "");
    EXPECT_EQ(out->Find("focus")->Find("ops")->string_value(), "");
    EXPECT_GT(out->Find("programs")->int64_value(), 0) << out->Dump();
  }
  const std::string text = log.str();
  const std::string line = "does not describe its passes and emitters";
  const size_t first = text.find(line);
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_EQ(text.find(line, first + 1), std::string::npos) << text;
  // Described once per build, then read from the store.
  EXPECT_FALSE(store_->GetBuild(two, "")->target.empty());
}

// A manifest larger than a description may take is refused without being
// loaded, and the commit is fuzzed without focus like any malformed one.
TEST_F(TargetFocusTest, AnOversizedManifestIsRefusedUnread) {
  const std::string huge = R"({"passes": [], "padding": ")" +
                           std::string(hlo_diff::kMaxDescriptionBytes, 'x') +
                           "\"}";
  const std::string sha = Commit(
      {{"compiler/passes/cse.cc", "// v1\n"}, {"trench-target.json", huge}});
  StatusOr<hlo_diff::TargetDescription> direct =
      DescribeTarget(ctx_, sha, TRENCH_BINARY_DIR, dir_);
  ASSERT_FALSE(direct.ok());
  EXPECT_EQ(direct.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(direct.status().message().find(
                std::to_string(huge.size()) + " bytes, more than the " +
                std::to_string(hlo_diff::kMaxDescriptionBytes) + " read"),
            std::string::npos)
      << direct.status().message();
  EXPECT_TRUE(AreaOf(sha).passes.empty());
  EXPECT_FALSE(store_->GetBuild(sha, "")->target.empty());
}

// An hloc killed while describing the target (the OOM killer, a timeout
// under load) is not a verdict on the target: nothing is stored, and the
// next ask gets the description.
TEST_F(TargetFocusTest, AKilledHlocIsAskedAgainNotRemembered) {
  const std::string bin = FakeHlocBin(
      "killed-once",
      "  if [ ! -e killed-once ]; then : > killed-once; kill -9 $$; fi\n"
      "  echo '{\"tool\": \"hloc\", \"passes\": [{\"name\": \"cse\", "
      "\"sources\": [\"compiler/passes/cse.cc\"]}]}'\n");
  const std::string sha = Commit({{"compiler/passes/cse.cc", "// v1\n"}}, bin);
  StatusOr<std::string> scratch = ctx_.Scratch(++jobs_, "describe");
  ASSERT_TRUE(scratch.ok());
  StatusOr<hlo_diff::TargetDescription> first =
      TargetOfBuild(ctx_, sha, *scratch);
  ASSERT_FALSE(first.ok());
  EXPECT_EQ(first.status().code(), StatusCode::kResourceExhausted)
      << first.status().ToString();
  EXPECT_NE(first.status().message().find("SIGKILL"), std::string::npos)
      << first.status().message();
  EXPECT_TRUE(store_->GetBuild(sha, "")->target.empty());

  StatusOr<hlo_diff::TargetDescription> second =
      TargetOfBuild(ctx_, sha, *scratch);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_TRUE(second->described());
  EXPECT_EQ(second->passes.at(0).name, "cse");
  EXPECT_FALSE(store_->GetBuild(sha, "")->target.empty());
}

}  // namespace
}  // namespace trench::orchestrator
