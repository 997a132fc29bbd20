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
//              "continuous": true},     when idle, fuzz the built head
//                                       again (new seed each round)
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
//     "drain_seconds": 30,              graceful shutdown: wait for steps
//     "max_crashes": 50,                a job whose runs the daemon lost
//                                       (killed, crashed) this often is
//                                       parked as a crash loop
//     "http": {"address": "127.0.0.1", "port": 7878,
//              "token_env": "TRENCH_TOKEN", "body_limit": 8388608,
//              "max_connections": 256},  open at once (http_server.h)
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
//     "llm": {"openai": {"base_url", "model", "api_key_env", "stream",
//                        "input_usd_per_mtok": 0, "output_usd_per_mtok": 0},
//             "anthropic": {...}},     prices: USD per million tokens
//                                      (absent: 0, free)
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
//     "prompts_dir": "prompts"          the roles' prompt templates
//   }
// Relative paths are taken relative to the config file's directory.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/json.h"
#include "base/status.h"

namespace trench::orchestrator {

struct RoleConfig {
  int count = 1;
  std::string brain = "builtin";
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
  uint64_t fuzz_seed = 1;
  std::string fuzz_corpus;
  bool fuzz_continuous = true;
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
  double drain_seconds = 30;
  int max_crashes = 50;
  std::string http_address = "127.0.0.1";
  int http_port = 7878;  // 0: ephemeral.
  std::string token_env = "TRENCH_TOKEN";
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
  std::map<std::string, RoleConfig> swarm;  // Every role present.
  Json llm = Json::MakeObject();            // Per backend (agents/).
  int budget_turns = 20;
  int64_t budget_tokens = 200000;
  double budget_wall_seconds = 600;
  int64_t budget_bug_tokens = 1000000;
  double budget_bug_cost_usd = 0;  // 0: none.
  std::string prompts_dir;         // "": <tools_dir>/../prompts
};

// The roles of DESIGN.md "Agents", in pipeline order.
const std::vector<std::string>& SwarmRoles();

// Parses config text. `base_dir` resolves relative paths. Errors:
// kInvalidArgument naming the file, line:column for JSON syntax, or the
// field ("trench.json: fuzz.jobs: expected an integer >= 1, got \"two\"").
StatusOr<DaemonConfig> ParseDaemonConfig(std::string_view text,
                                         const std::string& file_name,
                                         const std::string& base_dir);
// Reads and parses a config file (kIoError when unreadable).
StatusOr<DaemonConfig> LoadDaemonConfig(const std::string& path);

}  // namespace trench::orchestrator
