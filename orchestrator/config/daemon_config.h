// The daemon's configuration: config/trench.json (defaults) and
// config/demo.json. Every field is optional; unknown fields are refused
// (a typo must not silently fall back to a default).
//
//   {
//     "var_dir": "/var/lib/trench",     store.db, cases/, builds/, work/
//     "repo": "/srv/compiler",          the target repository (required)
//     "branch": "main",                 the watched branch (never written)
//     "good_commit": "",                known-good base for commit bisection
//                                       ("": the first commit watched)
//     "build_command": "",              "" : the default CMake target build
//     "tools_dir": "",                  hlo-diff, hlo-reduce, hlo-bisect,
//                                       hlo-fuzz ("": next to `trench`)
//     "poll_seconds": 10,
//     "fuzz": {"budget_seconds": 60, "jobs": 1, "seed": 1,
//              "corpus": "",            trace corpus dir ("": none)
//              "continuous": true,      when idle, fuzz the built head
//                                       again (new seed each round)
//              "shards": 1,             a campaign is this many runs at
//                                       once (Slurm jobs or local runs)
//                                       for the whole budget, shard k
//                                       running programs k, k+N, ... of
//                                       the seed's sequence (hlo-fuzz
//                                       --shard); their findings are
//                                       merged by signature
//              "reach_stop_programs": 0},  > 0: a commit's campaign on a
//                                       coverage build ends once every
//                                       changed line was reached by this
//                                       many programs and nothing was
//                                       found (hlo-fuzz --reach-stop)
//              "coverage": "off",       "auto": a single commit's campaign
//                                       runs on the target's coverage
//                                       flavour (built by the daemon, key
//                                       "<sha>-coverage") when the target
//              "coverage_build_command": "" offers one: with this command,
//                                       or ("") the default CMake build
//                                       plus the flags of the target's
//                                       description when build_command
//                                       is ""; else it is not built and
//                                       the campaign is focused by pass
//                                       and op alone
//     "reproduce_runs": 3,              re-runs to call a bug reproduced
//     "reduce_seconds": 300,            hlo-reduce's time limit
//     "regression": ["dir", ...],       cases a patched build must still
//                                       pass (case dirs, or dirs of them:
//                                       e.g. the bugzoo witnesses)
//     "verify_fuzz_seconds": 20,        focused fuzzing of a patched build
//     "max_draft_rounds": 3,            drafts before a human is asked
//     "build_timeout_seconds": 1800,
//     "builder": {"disk_bytes": 4294967296,   the builds' work dir is an
//                 "inodes": 262144,          ext4 image this large, with
//                                            this many files (0: a plain
//                                            directory, unbounded)
//                 "clean": false},           wipe the worktree, build dir
//                                            and ccache before each build
//                                            (no state shared between
//                                            builds of different commits)
//     "step_timeout_seconds": 900,      any other tool run
//     "max_concurrent_runs": 2,         sandboxed runs at once (global cap)
//     "executor": {"kind": "local"},    where sandboxed runs execute
//                                       (ExecutorConfig)
//     "drain_seconds": 30,              graceful shutdown: wait for steps
//     "max_crashes": 50,                a job whose runs the daemon lost
//                                       (killed, crashed) this often is
//                                       parked as a crash loop
//     "http": {"address": "127.0.0.1", "port": 7878,
//              "token_env": "TRENCH_TOKEN", "body_limit": 8388608,
//              "max_connections": 256,   open at once (http_server.h)
//              "read_token_env": ""},    when set, the variable holding
//                                        the token reads need (it must be
//                                        set: the start is refused
//                                        otherwise); "": reads are open
//     "sandbox": {"namespaces": true, "uid": 65534, "gid": 65534,
//                 "memory_bytes": 4294967296,   RLIMIT_AS per process
//                 "uid_range": {"first": 200000, "count": 64},
//                                   as root, each concurrent run gets a uid
//                                   (= gid) of its own from here; count 0:
//                                   every run uses uid/gid. count >=
//                                   max_concurrent_runs
//                 "run_memory_bytes": 8589934592,  a run's processes
//                                   together (cgroup memory.max; 0: none)
//                 "run_processes": 4096,     a run's processes and threads
//                                   (cgroup pids.max; 0: none)
//                 "scratch_bytes": 1073741824, "scratch_inodes": 100000},
//                                   each tool run's work dir, a tmpfs of
//                                   this size (as root)
//     "log": {"format": "human" | "json", "level": "info"},
//     "swarm": {"<role>": {"count": 1, "brain": "builtin" | "openai" |
//                          "anthropic"}},   roles: stress_test_author,
//                                           reproducer, minimizer,
//                                           patch_drafter
//     "llm": {"openai": {...}, "anthropic": {...}},   LlmBackendConfig:
//                                      the backends the swarm's brains name
//                                      base_url: up to and including
//                                      the API version; the client POSTs
//                                      to base_url + "/chat/completions"
//                                      (openai: "http://127.0.0.1:8080/v1")
//                                      or + "/messages" (anthropic:
//                                      "https://api.anthropic.com/v1";
//                                      refused without the version)
//     "budgets": {"turns": 20, "tokens": 200000, "wall_seconds": 600,
//                 "bug_tokens": 1000000,    per session; per bug
//                 "bug_cost_usd": 0},       per bug, at the llm prices
//                                           (0: no cost budget)
//     "review": {"on_approve": "none" | "push",   what an approval does:
//                "push_remote": "",     push: trench/bug-<id> goes to this
//                                       git URL or path (required for push;
//                                       never the watched branch)
//                "push_token_env": ""}, names the variable holding an
//                                       HTTPS token for the push ("": none)
//     "notify": {...},                  webhooks and e-mail (notify_config.h)
//     "prompts_dir": ""                 the roles' prompt templates
//                                       ("": those built into trench;
//                                       a directory: <role>.md there
//                                       replaces them, and must exist for
//                                       every role with an LLM brain)
//   }
// Relative paths are taken relative to the config file's directory.
// Every section is checked when the file is parsed: unknown fields, wrong
// types and values out of range are refused with the field's name
// ("trench.json: llm.openai.strem: unknown field (a typo?)"), and a
// swarm role whose brain names a backend without an llm section too, so
// the daemon refuses to start rather than fall back at the first session.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"
#include "orchestrator/config/notify_config.h"

namespace trench::orchestrator {

struct RoleConfig {
  int count = 1;
  std::string brain = "builtin";
};

// One LLM backend: llm.<backend>, backend "openai" or "anthropic"
// (agents/llm_client.h).
//   {"base_url": "http://127.0.0.1:8080/v1",  required; http(s), ending at
//                                   the API version (".../v1")
//    "model": "local",              required
//    "api_key_env": "OPENAI_API_KEY",   the variable holding the key ("":
//                                   no key). A role whose brain uses the
//                                   backend while the variable is unset
//                                   stops the daemon at start-up.
//    "stream": false,               openai: SSE streaming
//    "timeout_seconds": 120,        each HTTP request, > 0
//    "max_retries": 4,              further tries after a 408, 409, 429,
//                                   5xx or transport failure (0: none);
//                                   quota errors and other 4xx are never
//                                   retried
//    "max_retry_after_seconds": 60, caps every wait between tries: the
//                                   exponential backoff (1 s, 2 s, 4 s..)
//                                   and a server's Retry-After
//    "input_usd_per_mtok": 0,       prices: USD per million tokens
//    "output_usd_per_mtok": 0}      (absent: 0, free)
struct LlmBackendConfig {
  std::string base_url;
  std::string model;
  std::string api_key_env;
  bool stream = false;
  double timeout_seconds = 120;
  int max_retries = 4;
  double max_retry_after_seconds = 60;
  double input_usd_per_mtok = 0;
  double output_usd_per_mtok = 0;
};

// executor: where every sandboxed run executes (pipeline/executor.h).
//   {"kind": "local"}                 the daemon's host (the default), or
//   {"kind": "slurm",                 each run a Slurm job:
//    "partition": "trench",           required: it must exist and be up
//    "account": "",                   --account ("": none)
//    "max_jobs": 16,                  jobs in the queue or running at once
//    "time_limit": 0,                 a job's --time in minutes (0: the
//                                     run's own wall limit plus 2 min)
//    "shared_dir": "/shared/trench",  required, absolute: mounted by every
//                                     node at the same path; cases/,
//                                     builder/ and work/ live there
//    "extra_args": ["--qos=low"],     more sbatch options ("--name" or
//                                     "--name=value")
//    "slurm_bin_dir": "",             sbatch & co. ("": from PATH)
//    "slurm_conf": "",                SLURM_CONF for them ("": default)
//    "poll_seconds": 1}               how often a job's state is read
// The daemon refuses to start when a Slurm command is missing, the
// partition does not exist, or shared_dir is not a writable directory.
struct ExecutorConfig {
  std::string kind = "local";  // "local" | "slurm".
  std::string partition;
  std::string account;
  int max_jobs = 16;
  int time_limit_minutes = 0;
  std::string shared_dir;
  std::vector<std::string> extra_args;
  std::string slurm_bin_dir;
  std::string slurm_conf;
  double poll_seconds = 1;
};

struct DaemonConfig {
  std::string var_dir;
  std::string repo;
  std::string branch = "main";
  std::string good_commit;
  std::string build_command;
  std::string tools_dir;
  double poll_seconds = 10;
  double fuzz_budget_seconds = 60;
  int fuzz_jobs = 1;
  int fuzz_shards = 1;
  uint64_t fuzz_seed = 1;
  std::string fuzz_corpus;
  bool fuzz_continuous = true;
  int64_t fuzz_reach_stop_programs = 0;
  std::string fuzz_coverage = "off";  // "auto" | "off".
  std::string fuzz_coverage_build_command;
  int reproduce_runs = 3;
  double reduce_seconds = 300;
  std::vector<std::string> regression;
  double verify_fuzz_seconds = 20;
  int max_draft_rounds = 3;
  double build_timeout_seconds = 1800;
  // Our own target's build (worktree, Release build dir, ccache) takes
  // about 40 MB in 1,700 files: a hundredfold and more.
  uint64_t builder_disk_bytes = 4ull << 30;
  uint64_t builder_inodes = 1ull << 18;
  bool builder_clean = false;
  double step_timeout_seconds = 900;
  int max_concurrent_runs = 2;
  ExecutorConfig executor;
  double drain_seconds = 30;
  int max_crashes = 50;
  std::string http_address = "127.0.0.1";
  int http_port = 7878;  // 0: ephemeral.
  std::string token_env = "TRENCH_TOKEN";
  std::string read_token_env;  // "": reads need no token.
  uint64_t body_limit = 8u << 20;
  int http_max_connections = 256;
  bool sandbox_namespaces = true;
  uint32_t sandbox_uid = 65534, sandbox_gid = 65534;
  uint64_t sandbox_memory_bytes = 4ull << 30;
  uint32_t sandbox_uid_first = 200000, sandbox_uid_count = 64;
  uint64_t sandbox_run_memory_bytes = 8ull << 30;
  uint64_t sandbox_run_processes = 4096;
  uint64_t sandbox_scratch_bytes = 1ull << 30;
  uint64_t sandbox_scratch_inodes = 100000;
  std::string log_format = "human";
  std::string log_level = "info";
  std::map<std::string, RoleConfig> swarm;      // Every role present.
  std::map<std::string, LlmBackendConfig> llm;  // By backend name.
  int budget_turns = 20;
  int64_t budget_tokens = 200000;
  double budget_wall_seconds = 600;
  int64_t budget_bug_tokens = 1000000;
  double budget_bug_cost_usd = 0;          // 0: none.
  std::string prompts_dir;                 // "": the built-in prompts.
  std::string review_on_approve = "none";  // "none" | "push".
  std::string review_push_remote;          // Required for "push".
  std::string review_push_token_env;       // "": no credentials.
  NotifyConfig notify;                     // Nothing configured: no notifier.
};

// The roles of DESIGN.md "Agents", in pipeline order.
const std::vector<std::string>& SwarmRoles();
// The brains a role can have: "builtin" and the LLM backends.
const std::vector<std::string>& LlmBackends();  // "anthropic", "openai".

// Parses config text. `base_dir` resolves relative paths. Errors:
// kInvalidArgument naming the file, line:column for JSON syntax, or the
// field ("trench.json: fuzz.jobs: expected an integer >= 1, got \"two\""),
// for an unknown field, and for a swarm role whose brain has no llm
// section ("trench.json: swarm.reproducer.brain: \"openai\" has no
// llm.openai section").
StatusOr<DaemonConfig> ParseDaemonConfig(std::string_view text,
                                         const std::string& file_name,
                                         const std::string& base_dir);
// Reads and parses a config file (kIoError when unreadable).
StatusOr<DaemonConfig> LoadDaemonConfig(const std::string& path);

// The config as config file JSON: every field, so that ParseDaemonConfig
// reads it back to the same DaemonConfig (paths are written as they are:
// a parsed config's are absolute). What `trench demo` leaves for `trench
// serve` on its state (DIR/var.json). It holds the names of the variables
// with secrets, never a secret.
Json DaemonConfigToJson(const DaemonConfig& config);

}  // namespace trench::orchestrator
