// DaemonConfig -> the JSON of config/trench.json (daemon_config.h): every
// field, under the names ParseDaemonConfig reads, so that reading it back
// gives the same DaemonConfig.
#include "orchestrator/config/daemon_config.h"

namespace trench::orchestrator {
namespace {

Json ExecutorJson(const ExecutorConfig& x) {
  Json e = Json::MakeObject();
  e["kind"] = x.kind;
  e["partition"] = x.partition;
  e["account"] = x.account;
  e["max_jobs"] = x.max_jobs;
  e["time_limit"] = x.time_limit_minutes;
  e["shared_dir"] = x.shared_dir;
  e["extra_args"] = Json::MakeStringArray(x.extra_args);
  e["slurm_bin_dir"] = x.slurm_bin_dir;
  e["slurm_conf"] = x.slurm_conf;
  e["poll_seconds"] = x.poll_seconds;
  return e;
}

Json LlmBackendJson(const LlmBackendConfig& b) {
  Json j = Json::MakeObject();
  j["base_url"] = b.base_url;
  j["model"] = b.model;
  j["api_key_env"] = b.api_key_env;
  j["stream"] = b.stream;
  j["timeout_seconds"] = b.timeout_seconds;
  j["max_retries"] = b.max_retries;
  j["max_retry_after_seconds"] = b.max_retry_after_seconds;
  j["input_usd_per_mtok"] = b.input_usd_per_mtok;
  j["output_usd_per_mtok"] = b.output_usd_per_mtok;
  return j;
}

Json NotifyJson(const NotifyConfig& n) {
  Json j = Json::MakeObject();
  Json hooks = Json::MakeArray();
  for (const NotifyWebhookConfig& w : n.webhooks) {
    Json h = Json::MakeObject();
    h["url"] = w.url;
    h["secret_env"] = w.secret_env;
    h["events"] = Json::MakeStringArray(w.events);
    hooks.push_back(std::move(h));
  }
  j["webhooks"] = std::move(hooks);
  if (!n.email.smtp_url.empty()) {  // The parser requires it when present.
    Json e = Json::MakeObject();
    e["smtp_url"] = n.email.smtp_url;
    e["from"] = n.email.from;
    e["to"] = Json::MakeStringArray(n.email.to);
    e["username_env"] = n.email.username_env;
    e["password_env"] = n.email.password_env;
    e["starttls"] = n.email.starttls;
    j["email"] = std::move(e);
  }
  j["max_attempts"] = n.max_attempts;
  j["backoff_seconds"] = n.backoff_seconds;
  j["max_age_seconds"] = n.max_age_seconds;
  return j;
}

}  // namespace

Json DaemonConfigToJson(const DaemonConfig& c) {
  Json j = Json::MakeObject();
  j["var_dir"] = c.var_dir;
  j["repo"] = c.repo;
  j["branch"] = c.branch;
  j["good_commit"] = c.good_commit;
  j["build_command"] = c.build_command;
  j["tools_dir"] = c.tools_dir;
  j["prompts_dir"] = c.prompts_dir;
  j["poll_seconds"] = c.poll_seconds;
  Json fuzz = Json::MakeObject();
  fuzz["budget_seconds"] = c.fuzz_budget_seconds;
  fuzz["jobs"] = c.fuzz_jobs;
  fuzz["shards"] = c.fuzz_shards;
  fuzz["seed"] = c.fuzz_seed;
  fuzz["continuous"] = c.fuzz_continuous;
  fuzz["reach_stop_programs"] = c.fuzz_reach_stop_programs;
  fuzz["coverage"] = c.fuzz_coverage;
  fuzz["coverage_build_command"] = c.fuzz_coverage_build_command;
  fuzz["corpus"] = c.fuzz_corpus;
  j["fuzz"] = std::move(fuzz);
  j["reproduce_runs"] = c.reproduce_runs;
  j["reduce_seconds"] = c.reduce_seconds;
  j["regression"] = Json::MakeStringArray(c.regression);
  j["verify_fuzz_seconds"] = c.verify_fuzz_seconds;
  j["max_draft_rounds"] = c.max_draft_rounds;
  j["build_timeout_seconds"] = c.build_timeout_seconds;
  Json builder = Json::MakeObject();
  builder["disk_bytes"] = c.builder_disk_bytes;
  builder["inodes"] = c.builder_inodes;
  builder["clean"] = c.builder_clean;
  j["builder"] = std::move(builder);
  j["step_timeout_seconds"] = c.step_timeout_seconds;
  j["max_concurrent_runs"] = c.max_concurrent_runs;
  j["executor"] = ExecutorJson(c.executor);
  j["drain_seconds"] = c.drain_seconds;
  j["max_crashes"] = c.max_crashes;
  Json http = Json::MakeObject();
  http["address"] = c.http_address;
  http["port"] = c.http_port;
  http["token_env"] = c.token_env;
  http["read_token_env"] = c.read_token_env;
  http["body_limit"] = c.body_limit;
  http["max_connections"] = c.http_max_connections;
  j["http"] = std::move(http);
  Json sandbox = Json::MakeObject();
  sandbox["namespaces"] = c.sandbox_namespaces;
  sandbox["uid"] = c.sandbox_uid;
  sandbox["gid"] = c.sandbox_gid;
  sandbox["memory_bytes"] = c.sandbox_memory_bytes;
  Json range = Json::MakeObject();
  range["first"] = c.sandbox_uid_first;
  range["count"] = c.sandbox_uid_count;
  sandbox["uid_range"] = std::move(range);
  sandbox["run_memory_bytes"] = c.sandbox_run_memory_bytes;
  sandbox["run_processes"] = c.sandbox_run_processes;
  sandbox["scratch_bytes"] = c.sandbox_scratch_bytes;
  sandbox["scratch_inodes"] = c.sandbox_scratch_inodes;
  j["sandbox"] = std::move(sandbox);
  Json log = Json::MakeObject();
  log["format"] = c.log_format;
  log["level"] = c.log_level;
  j["log"] = std::move(log);
  Json swarm = Json::MakeObject();
  for (const auto& [role, rc] : c.swarm) {
    Json r = Json::MakeObject();
    r["count"] = rc.count;
    r["brain"] = rc.brain;
    swarm[role] = std::move(r);
  }
  j["swarm"] = std::move(swarm);
  Json llm = Json::MakeObject();
  for (const auto& [backend, b] : c.llm) llm[backend] = LlmBackendJson(b);
  j["llm"] = std::move(llm);
  Json budgets = Json::MakeObject();
  budgets["turns"] = c.budget_turns;
  budgets["tokens"] = c.budget_tokens;
  budgets["wall_seconds"] = c.budget_wall_seconds;
  budgets["bug_tokens"] = c.budget_bug_tokens;
  budgets["bug_cost_usd"] = c.budget_bug_cost_usd;
  j["budgets"] = std::move(budgets);
  Json review = Json::MakeObject();
  review["on_approve"] = c.review_on_approve;
  review["push_remote"] = c.review_push_remote;
  review["push_token_env"] = c.review_push_token_env;
  j["review"] = std::move(review);
  j["notify"] = NotifyJson(c.notify);
  return j;
}

}  // namespace trench::orchestrator
