// DaemonConfigToJson (daemon_config.h): what it writes, ParseDaemonConfig
// reads back to the same config.
#include <gtest/gtest.h>

#include "orchestrator/config/daemon_config.h"

namespace trench::orchestrator {
namespace {

// Every field the parser reads, none at its default value.
constexpr char kEveryField[] = R"({
  "var_dir": "/srv/var", "repo": "/srv/repo", "branch": "dev",
  "good_commit": "abc123", "build_command": "make -j 3",
  "tools_dir": "/opt/tools", "prompts_dir": "/opt/prompts",
  "poll_seconds": 2.5,
  "fuzz": {"budget_seconds": 12.5, "jobs": 3, "shards": 4, "seed": 99,
           "continuous": false, "reach_stop_programs": 7,
           "coverage": "auto", "coverage_build_command": "make cov",
           "corpus": "/srv/traces"},
  "reproduce_runs": 5, "reduce_seconds": 45, "regression": ["/z/a", "/z/b"],
  "verify_fuzz_seconds": 9, "max_draft_rounds": 4,
  "build_timeout_seconds": 600,
  "builder": {"disk_bytes": 1000000, "inodes": 5000, "clean": true},
  "step_timeout_seconds": 300, "max_concurrent_runs": 3,
  "executor": {"kind": "slurm", "partition": "fuzz", "account": "team",
               "max_jobs": 8, "time_limit": 30, "shared_dir": "/shared/t",
               "extra_args": ["--qos=low"], "slurm_bin_dir": "/opt/slurm",
               "slurm_conf": "/etc/slurm/x.conf", "poll_seconds": 0.5},
  "drain_seconds": 5, "max_crashes": 9,
  "http": {"address": "0.0.0.0", "port": 9000, "token_env": "TOK",
           "read_token_env": "RTOK", "body_limit": 4096,
           "max_connections": 16},
  "sandbox": {"namespaces": false, "uid": 1000, "gid": 1001,
              "memory_bytes": 123456789,
              "uid_range": {"first": 300000, "count": 8},
              "run_memory_bytes": 987654321, "run_processes": 512,
              "scratch_bytes": 2097152, "scratch_inodes": 1000},
  "log": {"format": "json", "level": "debug"},
  "swarm": {"stress_test_author": {"count": 2, "brain": "openai"},
            "reproducer": {"count": 0, "brain": "anthropic"},
            "minimizer": {"count": 3, "brain": "builtin"},
            "patch_drafter": {"count": 4, "brain": "openai"}},
  "llm": {"openai": {"base_url": "http://127.0.0.1:8080/v1", "model": "m1",
                     "api_key_env": "OK", "stream": true,
                     "timeout_seconds": 30, "max_retries": 2,
                     "max_retry_after_seconds": 7,
                     "input_usd_per_mtok": 1.5, "output_usd_per_mtok": 6},
          "anthropic": {"base_url": "https://api.example/v1", "model": "m2",
                        "api_key_env": "AK", "stream": false,
                        "timeout_seconds": 60, "max_retries": 0,
                        "max_retry_after_seconds": 3,
                        "input_usd_per_mtok": 3, "output_usd_per_mtok": 15}},
  "budgets": {"turns": 11, "tokens": 5000, "wall_seconds": 90,
              "bug_tokens": 70000, "bug_cost_usd": 2.25},
  "review": {"on_approve": "push", "push_remote": "https://git.example/r.git",
             "push_token_env": "PUSH"},
  "notify": {"webhooks": [{"url": "https://hooks.example/t",
                           "secret_env": "HOOK", "events": ["finding"]}],
             "email": {"smtp_url": "smtp://mail.example:587",
                       "from": "t@example.org", "to": ["a@example.org"],
                       "username_env": "SU", "password_env": "SP",
                       "starttls": "require"},
             "max_attempts": 3, "backoff_seconds": 4,
             "max_age_seconds": 500}
})";

// `a` and `b` hold the same members (in any order) with the same values;
// numbers compare by value (12 and 12.0 are one number). Differences are
// listed as paths.
void Same(const Json& a, const Json& b, const std::string& path,
          std::vector<std::string>* diffs) {
  if (a.is_number() && b.is_number()) {
    if (a.number_value() != b.number_value()) diffs->push_back(path);
    return;
  }
  if (a.type() != b.type()) {
    diffs->push_back(path + " (" + a.Dump() + " vs " + b.Dump() + ")");
    return;
  }
  if (a.is_object()) {
    for (const auto& [k, v] : a.object()) {
      const Json* w = b.Find(k);
      if (!w) {
        diffs->push_back(path + "." + k + " (missing)");
      } else {
        Same(v, *w, path + "." + k, diffs);
      }
    }
    for (const auto& [k, v] : b.object()) {
      if (!a.Find(k)) diffs->push_back(path + "." + k + " (extra)");
    }
  } else if (a.is_array()) {
    if (a.array().size() != b.array().size()) {
      diffs->push_back(path + " (lengths)");
      return;
    }
    for (size_t i = 0; i < a.array().size(); ++i) {
      Same(a.array()[i], b.array()[i], path + "[" + std::to_string(i) + "]",
           diffs);
    }
  } else if (!(a == b)) {
    diffs->push_back(path + " (" + a.Dump() + " vs " + b.Dump() + ")");
  }
}

std::vector<std::string> Diffs(const Json& a, const Json& b) {
  std::vector<std::string> diffs;
  Same(a, b, "", &diffs);
  return diffs;
}

TEST(DaemonConfigJsonTest, EveryFieldIsWrittenAsTheParserReadsIt) {
  StatusOr<DaemonConfig> c = ParseDaemonConfig(kEveryField, "t.json", "/");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const Json written = DaemonConfigToJson(*c);
  EXPECT_EQ(Diffs(*ParseJson(kEveryField), written), std::vector<std::string>())
      << written.DumpPretty();
  // Read back: the same config (written again, the same text).
  StatusOr<DaemonConfig> again =
      ParseDaemonConfig(written.DumpPretty(), "w.json", "/elsewhere");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(DaemonConfigToJson(*again).Dump(), written.Dump());
  EXPECT_EQ(again->fuzz_seed, 99u);
  EXPECT_EQ(again->executor.shared_dir, "/shared/t");
  EXPECT_EQ(again->notify.email.starttls, "require");
  EXPECT_EQ(again->swarm.at("reproducer").count, 0);
}

TEST(DaemonConfigJsonTest, DefaultsRoundTripWithNothingAdded) {
  // No llm section, no e-mail, no webhooks: none appear when read back.
  StatusOr<DaemonConfig> c =
      ParseDaemonConfig(R"({"var_dir": "v", "repo": "r"})", "t.json", "/base");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const Json written = DaemonConfigToJson(*c);
  StatusOr<DaemonConfig> again =
      ParseDaemonConfig(written.Dump(), "w.json", "/elsewhere");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(DaemonConfigToJson(*again).Dump(), written.Dump());
  EXPECT_EQ(again->var_dir, "/base/v");  // Absolute once parsed.
  EXPECT_TRUE(again->llm.empty());
  EXPECT_FALSE(again->notify.enabled());
  EXPECT_EQ(again->executor.kind, "local");
  EXPECT_EQ(again->http_port, 7878);
  EXPECT_EQ(again->sandbox_memory_bytes, DaemonConfig().sandbox_memory_bytes);
  EXPECT_EQ(again->fuzz_coverage, "off");
}

}  // namespace
}  // namespace trench::orchestrator
