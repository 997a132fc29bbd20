#include "orchestrator/config/daemon_config.h"

#include <gtest/gtest.h>

namespace trench::orchestrator {
namespace {

TEST(DaemonConfigTest, DefaultsAndRelativePaths) {
  StatusOr<DaemonConfig> c = ParseDaemonConfig(
      R"({"var_dir": "var", "repo": "/srv/compiler",
          "fuzz": {"budget_seconds": 30, "jobs": 2, "continuous": false},
          "regression": ["zoo", "/abs/cases"],
          "swarm": {"reproducer": {"count": 2, "brain": "openai"}},
          "llm": {"openai": {"base_url": "http://h/v1", "model": "m"}}})",
      "trench.json", "/etc/trench");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->var_dir, "/etc/trench/var");
  EXPECT_EQ(c->repo, "/srv/compiler");
  EXPECT_EQ(c->branch, "main");
  EXPECT_EQ(c->fuzz_budget_seconds, 30);
  EXPECT_EQ(c->fuzz_jobs, 2);
  EXPECT_FALSE(c->fuzz_continuous);
  EXPECT_EQ(c->regression,
            (std::vector<std::string>{"/etc/trench/zoo", "/abs/cases"}));
  EXPECT_EQ(c->swarm.at("reproducer").count, 2);
  EXPECT_EQ(c->swarm.at("reproducer").brain, "openai");
  // Every role is present, with the defaults.
  for (const std::string& role : SwarmRoles()) {
    ASSERT_TRUE(c->swarm.count(role)) << role;
  }
  EXPECT_EQ(c->swarm.at("patch_drafter").brain, "builtin");
  EXPECT_EQ(c->http_address, "127.0.0.1");
}

TEST(DaemonConfigTest, ErrorsNameTheFieldOrThePosition) {
  auto error = [](const std::string& text) {
    StatusOr<DaemonConfig> c = ParseDaemonConfig(text, "t.json", "/");
    EXPECT_FALSE(c.ok()) << text;
    return c.ok() ? std::string() : c.status().message();
  };
  EXPECT_EQ(error(R"({"var_dir": "v", "repo": "r", "fuzz": {"jobs": "two"}})"),
            "t.json: fuzz.jobs: expected an integer in [1, 256], got \"two\"");
  EXPECT_EQ(
      error(R"({"var_dir": "v", "repo": "r", "fuzz": {"continuous": 1}})"),
      "t.json: fuzz.continuous: expected true or false, got 1");
  EXPECT_EQ(
      error(R"({"var_dir": "v", "repo": "r", "fuzz": {"coverage": "on"}})"),
      "t.json: fuzz.coverage: expected one of auto, off, got \"on\"");
  EXPECT_EQ(error(R"({"var_dir": "v", "repo": "r", "polll_seconds": 3})"),
            "t.json: polll_seconds: unknown field (a typo?)");
  EXPECT_EQ(error(R"({"var_dir": "v"})"),
            "t.json: repo: required (the target repository)");
  EXPECT_EQ(error(R"({"var_dir": "v", "repo": "r",
                      "swarm": {"minimizer": {"brain": "gpt"}}})"),
            "t.json: swarm.minimizer.brain: expected one of anthropic, "
            "builtin, openai, got \"gpt\"");
  EXPECT_EQ(error(R"({"var_dir": "v", "repo": "r", "swarm": {"oracle": {}}})"),
            "t.json: swarm.oracle: unknown field (a typo?)");
  EXPECT_EQ(error("{\"var_dir\": \"v\",\n \"repo\": }").substr(0, 11),
            "t.json:2:10");
  EXPECT_EQ(error("[1]"), "t.json: expected a JSON object");
  EXPECT_EQ(error(R"({"var_dir": "v", "repo": "r", "regression": "zoo"})"),
            "t.json: regression: expected an array of paths");
  EXPECT_EQ(error(R"({"var_dir": "v", "repo": "r",
                      "budgets": {"bug_cost_usd": -1}})"),
            "t.json: budgets.bug_cost_usd: expected an amount >= 0, got -1");
}

TEST(DaemonConfigTest, ExecutorIsLocalByDefaultAndSlurmIsChecked) {
  StatusOr<DaemonConfig> d =
      ParseDaemonConfig(R"({"var_dir": "v", "repo": "r"})", "t.json", "/");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->executor.kind, "local");
  EXPECT_EQ(d->fuzz_shards, 1);
  StatusOr<DaemonConfig> s = ParseDaemonConfig(
      R"({"var_dir": "v", "repo": "r", "fuzz": {"shards": 4},
          "executor": {"kind": "slurm", "partition": "fuzz",
                       "account": "team-a", "max_jobs": 32,
                       "time_limit": 90, "shared_dir": "/shared/trench/",
                       "extra_args": ["--qos=low", "--exclusive"]}})",
      "t.json", "/");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->fuzz_shards, 4);
  EXPECT_EQ(s->executor.kind, "slurm");
  EXPECT_EQ(s->executor.partition, "fuzz");
  EXPECT_EQ(s->executor.account, "team-a");
  EXPECT_EQ(s->executor.max_jobs, 32);
  EXPECT_EQ(s->executor.time_limit_minutes, 90);
  EXPECT_EQ(s->executor.shared_dir, "/shared/trench");
  EXPECT_EQ(s->executor.extra_args,
            (std::vector<std::string>{"--qos=low", "--exclusive"}));
  auto error = [](const std::string& executor) {
    StatusOr<DaemonConfig> c = ParseDaemonConfig(
        R"({"var_dir": "v", "repo": "r", "executor": )" + executor + "}",
        "t.json", "/");
    EXPECT_FALSE(c.ok()) << executor;
    return c.ok() ? std::string() : c.status().message();
  };
  EXPECT_EQ(error(R"({"kind": "k8s"})"),
            "t.json: executor.kind: expected one of local, slurm, got \"k8s\"");
  EXPECT_EQ(error(R"({"kind": "slurm", "shared_dir": "/s"})"),
            "t.json: executor.partition: required with kind \"slurm\"");
  EXPECT_EQ(error(R"({"kind": "slurm", "partition": "p",
                      "shared_dir": "rel/dir"})"),
            "t.json: executor.shared_dir: required with kind \"slurm\": an "
            "absolute path every node mounts, got \"rel/dir\"");
  EXPECT_EQ(error(R"({"kind": "slurm", "partition": "p; rm -rf /",
                      "shared_dir": "/s"})"),
            "t.json: executor.partition: expected a Slurm name (letters, "
            "digits, _ . -), got \"p; rm -rf /\"");
  EXPECT_EQ(error(R"({"kind": "slurm", "partition": "p", "shared_dir": "/s",
                      "extra_args": ["--qos low"]})")
                .substr(0, 50),
            "t.json: executor.extra_args: expected sbatch optio");
  EXPECT_EQ(error(R"({"max_jobs": 0})"),
            "t.json: executor.max_jobs: expected an integer in [1, 100000], "
            "got 0");
  EXPECT_EQ(error(R"({"kind": "slurm", "partiton": "p"})"),
            "t.json: executor.partiton: unknown field (a typo?)");
}

TEST(DaemonConfigTest, SandboxUidRangeCoversTheConcurrentRuns) {
  StatusOr<DaemonConfig> d =
      ParseDaemonConfig(R"({"var_dir": "v", "repo": "r"})", "t.json", "/");
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_GE(d->sandbox_uid_count,
            static_cast<uint32_t>(d->max_concurrent_runs));
  EXPECT_GT(d->sandbox_uid_first, 0u);
  StatusOr<DaemonConfig> c = ParseDaemonConfig(
      R"({"var_dir": "v", "repo": "r", "max_concurrent_runs": 8,
          "sandbox": {"uid_range": {"first": 300000, "count": 4}}})",
      "t.json", "/");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "t.json: sandbox.uid_range.count: expected at least "
            "max_concurrent_runs (8) uids, got 4");
  c = ParseDaemonConfig(
      R"({"var_dir": "v", "repo": "r",
          "sandbox": {"uid_range": {"first": 0, "count": 4}}})",
      "t.json", "/");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message().rfind("t.json: sandbox.uid_range.first: ", 0),
            0u);
  c = ParseDaemonConfig(
      R"({"var_dir": "v", "repo": "r", "sandbox": {"uid_range": {"count": 0},
          "run_memory_bytes": 1073741824, "run_processes": 512,
          "scratch_bytes": 16777216, "scratch_inodes": 1000}})",
      "t.json", "/");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->sandbox_uid_count, 0u);  // Single-uid mode.
  EXPECT_EQ(c->sandbox_run_memory_bytes, 1ull << 30);
  EXPECT_EQ(c->sandbox_run_processes, 512u);
  EXPECT_EQ(c->sandbox_scratch_bytes, 16u << 20);
  EXPECT_EQ(c->sandbox_scratch_inodes, 1000u);
}

TEST(DaemonConfigTest, CostBudgetPerBug) {
  StatusOr<DaemonConfig> c =
      ParseDaemonConfig(R"({"var_dir": "v", "repo": "r"})", "t.json", "/");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->budget_bug_cost_usd, 0);  // No cost budget.
  c = ParseDaemonConfig(
      R"({"var_dir": "v", "repo": "r", "budgets": {"bug_cost_usd": 2.5}})",
      "t.json", "/");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->budget_bug_cost_usd, 2.5);
}

TEST(DaemonConfigTest, ShippedConfigsParse) {
  for (const char* name : {"trench.json", "demo.json"}) {
    StatusOr<DaemonConfig> c =
        LoadDaemonConfig(std::string(TRENCH_SOURCE_DIR) + "/config/" + name);
    EXPECT_TRUE(c.ok()) << name << ": " << c.status().ToString();
  }
  EXPECT_EQ(LoadDaemonConfig("/nonexistent/trench.json").status().code(),
            StatusCode::kIoError);
}

// The builder volume's size and inodes, and clean builds.
TEST(DaemonConfigTest, Builder) {
  StatusOr<DaemonConfig> d =
      ParseDaemonConfig(R"({"var_dir": "v", "repo": "r"})", "t.json", "/");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->builder_disk_bytes, 4ull << 30);
  EXPECT_EQ(d->builder_inodes, 1ull << 18);
  EXPECT_FALSE(d->builder_clean);
  StatusOr<DaemonConfig> c = ParseDaemonConfig(
      R"({"var_dir": "v", "repo": "r", "builder": {"disk_bytes": 0,
          "inodes": 5000, "clean": true}})",
      "t.json", "/");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->builder_disk_bytes, 0u);
  EXPECT_EQ(c->builder_inodes, 5000u);
  EXPECT_TRUE(c->builder_clean);
  EXPECT_FALSE(ParseDaemonConfig(
                   R"({"var_dir": "v", "repo": "r", "builder": {"inodes": 9}})",
                   "t.json", "/")
                   .ok());
}

// Every section refuses unknown fields and wrong types, naming the field.
TEST(DaemonConfigTest, EverySectionRefusesTyposAndWrongTypes) {
  const std::string head = R"({"var_dir": "v", "repo": "r", )";
  const std::string llm =
      R"("llm": {"openai": {"base_url": "http://h/v1", "model": "m")";
  const std::pair<std::string, std::string> cases[] = {
      {R"("polll_seconds": 1})", "t.json: polll_seconds: unknown field"},
      {R"("fuzz": {"jobz": 1}})", "t.json: fuzz.jobz: unknown field"},
      {R"("builder": {"clean": 1}})", "t.json: builder.clean: expected true"},
      {R"("builder": {"disks": 1}})", "t.json: builder.disks: unknown field"},
      {R"("http": {"prot": 1}})", "t.json: http.prot: unknown field"},
      {R"("http": {"port": "80"}})", "t.json: http.port: expected an integer"},
      {R"("sandbox": {"uids": 1}})", "t.json: sandbox.uids: unknown field"},
      {R"("sandbox": {"uid_range": {"frist": 1}}})",
       "t.json: sandbox.uid_range.frist: unknown field"},
      {R"("log": {"levle": "info"}})", "t.json: log.levle: unknown field"},
      {R"("swarm": {"reproducer": {"brian": "openai"}}})",
       "t.json: swarm.reproducer.brian: unknown field"},
      {R"("swarm": {"oracle": {}}})", "t.json: swarm.oracle: unknown field"},
      {R"("budgets": {"turn": 3}})", "t.json: budgets.turn: unknown field"},
      {R"("llm": {"openia": {}}})", "t.json: llm.openia: unknown field"},
      {R"("llm": []})", "t.json: llm: expected an object"},
      {llm + R"(, "strem": true}}})",
       "t.json: llm.openai.strem: unknown field"},
      {llm + R"(, "stream": "yes"}}})",
       "t.json: llm.openai.stream: expected true or false"},
      {llm + R"(, "max_retries": 1.5}}})",
       "t.json: llm.openai.max_retries: expected an integer"},
      {llm + R"(, "timeout_seconds": 0}}})",
       "t.json: llm.openai.timeout_seconds: expected a number of seconds > 0"},
      {llm + R"(, "input_usd_per_mtok": -1}}})",
       "t.json: llm.openai.input_usd_per_mtok: expected an amount >= 0"},
      {R"("llm": {"openai": {"model": "m"}}})",
       "t.json: llm.openai.base_url: required"},
      {R"("llm": {"openai": {"base_url": "http://h/v1"}}})",
       "t.json: llm.openai.model: required"},
      {R"("swarm": {"minimizer": {"brain": "anthropic"}}})",
       "t.json: swarm.minimizer.brain: \"anthropic\" has no llm.anthropic "
       "section"},
      {R"("review": {"on_aprove": "push"}})",
       "t.json: review.on_aprove: unknown field"},
      {R"("review": {"on_approve": "merge"}})",
       "t.json: review.on_approve: expected one of none, push, got \"merge\""},
      {R"("review": {"on_approve": "push"}})",
       "t.json: review.push_remote: required when on_approve is \"push\""},
      {R"("review": {"push_remote": 3}})",
       "t.json: review.push_remote: expected a string"},
  };
  for (const auto& [tail, want] : cases) {
    StatusOr<DaemonConfig> c = ParseDaemonConfig(head + tail, "t.json", "/");
    ASSERT_FALSE(c.ok()) << tail;
    EXPECT_EQ(c.status().message().substr(0, want.size()), want)
        << c.status().message();
  }
}

TEST(DaemonConfigTest, ReviewOnApprove) {
  const std::string head = R"({"var_dir": "v", "repo": "r")";
  StatusOr<DaemonConfig> c = ParseDaemonConfig(head + "}", "t.json", "/etc");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->review_on_approve, "none");
  c = ParseDaemonConfig(head + R"(, "review": {"on_approve": "push",
      "push_remote": "remote.git", "push_token_env": "GH_TOKEN"}})",
                        "t.json", "/etc");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->review_on_approve, "push");
  EXPECT_EQ(c->review_push_remote, "/etc/remote.git");  // A path.
  EXPECT_EQ(c->review_push_token_env, "GH_TOKEN");
  c = ParseDaemonConfig(head + R"(, "review": {"on_approve": "push",
      "push_remote": "https://git.example/x.git"}})",
                        "t.json", "/etc");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->review_push_remote, "https://git.example/x.git");  // A URL.
}

TEST(DaemonConfigTest, LlmSectionsAreTyped) {
  StatusOr<DaemonConfig> c = ParseDaemonConfig(
      R"({"var_dir": "v", "repo": "r",
          "swarm": {"reproducer": {"brain": "openai"}},
          "llm": {"openai": {"base_url": "http://h:1/v1", "model": "m",
                             "api_key_env": "K", "stream": true,
                             "timeout_seconds": 30, "max_retries": 2,
                             "max_retry_after_seconds": 5,
                             "input_usd_per_mtok": 1,
                             "output_usd_per_mtok": 2}}})",
      "t.json", "/");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const LlmBackendConfig& b = c->llm.at("openai");
  EXPECT_EQ(b.base_url, "http://h:1/v1");
  EXPECT_EQ(b.model, "m");
  EXPECT_EQ(b.api_key_env, "K");
  EXPECT_TRUE(b.stream);
  EXPECT_EQ(b.timeout_seconds, 30);
  EXPECT_EQ(b.max_retries, 2);
  EXPECT_EQ(b.max_retry_after_seconds, 5);
  EXPECT_EQ(b.input_usd_per_mtok, 1);
  EXPECT_EQ(b.output_usd_per_mtok, 2);
  EXPECT_FALSE(c->llm.count("anthropic"));
}

}  // namespace
}  // namespace trench::orchestrator
