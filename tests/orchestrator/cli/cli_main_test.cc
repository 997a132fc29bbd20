// The `trench` binary as a process: usage, exit codes, and the subcommand
// table (cli.h).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <string>

#include "orchestrator/cli/cli.h"
#include "orchestrator/config/daemon_config.h"

namespace trench::cli {
namespace {

struct ProcessRun {
  int code = -1;
  std::string output;  // stdout and stderr.
};

ProcessRun RunProcess(const std::string& args) {
  const std::string cmd =
      std::string(TRENCH_BINARY_DIR) + "/trench " + args + " 2>&1";
  ProcessRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) r.output.append(buf, n);
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

TEST(CliMainTest, BinaryUsageAndExitCodes) {
  ProcessRun r = RunProcess("no-such-command");
  EXPECT_EQ(r.code, kExitUsage) << r.output;
  EXPECT_NE(r.output.find("trench: unknown command 'no-such-command'"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("usage: trench COMMAND"), std::string::npos);
  r = RunProcess("");
  EXPECT_EQ(r.code, kExitUsage);
  r = RunProcess("--help");
  EXPECT_EQ(r.code, kExitOk);
  for (const Command& c : Commands()) {
    EXPECT_NE(r.output.find("  " + std::string(c.name) + " "),
              std::string::npos)
        << c.name;
  }
  r = RunProcess("show --help");
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_NE(r.output.find("usage: trench show N"), std::string::npos);
  r = RunProcess("bugs --no-such-flag");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.output.find("unknown flag '--no-such-flag'"), std::string::npos);
  r = RunProcess("serve");
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_NE(r.output.find("--config"), std::string::npos);
  r = RunProcess("serve --config /nonexistent/trench.json");
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_NE(r.output.find("/nonexistent/trench.json"), std::string::npos);
}

// A config naming a corpus or regression directory that is not there is
// refused at start, naming the key and the path.
TEST(CliMainTest, ServeRefusesMissingInputDirectories) {
  std::string dir = ::testing::TempDir() + "trench-serve-XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const std::string tools = TRENCH_BINARY_DIR;
  const std::string common = "\"var_dir\": \"" + dir + "/var\", \"repo\": \"" +
                             dir + "\", \"tools_dir\": \"" + tools + "\"";
  const std::pair<std::string, std::string> cases[] = {
      {"\"fuzz\": {\"corpus\": \"/nonexistent/traces\"}",
       "config fuzz.corpus: /nonexistent/traces: no such file or directory"},
      {"\"regression\": [\"" + dir + "\", \"/nonexistent/zoo\"]",
       "config regression: /nonexistent/zoo: no such file or directory"},
  };
  for (const auto& [extra, message] : cases) {
    std::ofstream(dir + "/c.json") << "{" << common << ", " << extra << "}";
    ProcessRun r = RunProcess("serve --config " + dir + "/c.json");
    EXPECT_EQ(r.code, kExitFailure) << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << r.output;
  }
  std::filesystem::remove_all(dir);
}

TEST(CliMainTest, OneTableOfCommands) {
  std::set<std::string> names;
  for (const Command& c : Commands()) {
    EXPECT_TRUE(names.insert(std::string(c.name)).second) << c.name;
    EXPECT_FALSE(c.summary.empty());
    EXPECT_NE(c.run, nullptr);
  }
  for (const char* n : {"serve", "report", "bugs", "show", "review", "events",
                        "triage", "fuzz"}) {
    EXPECT_TRUE(names.count(n)) << n;
  }
}

// (Was the test of cli.h's own ParseFlags; the subcommands now declare
// their flags on base/flags.h's parser, CommandParser.)
struct Flags {
  std::vector<std::string> x, positional;
  bool s = false;
  FlagParser p = CommandParser("bugs");

  bool Has(const std::string& name) const { return p.Given(name); }
  std::string Get(const std::string& name) const {
    return name == "x" && !x.empty() ? x.back() : "";
  }
};

// Parses `args` with the valued flag "x" (repeated), the switch "s" and
// positionals.
StatusOr<std::unique_ptr<Flags>> ParseFlags(
    const std::vector<std::string>& args) {
  auto f = std::make_unique<Flags>();
  f->p.Strings("x", "X", &f->x, "");
  f->p.Bool("s", &f->s, "");
  f->p.Rest("ARGS", &f->positional, "");
  RETURN_IF_ERROR(f->p.Parse(args));
  return f;
}

TEST(CliFlagsTest, ValuesSwitchesPositionals) {
  StatusOr<std::unique_ptr<Flags>> f =
      ParseFlags({"a", "--x", "1", "--x=2", "--s", "-", "--", "--not-a-flag"});
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ((*f)->Get("x"), "2");
  EXPECT_EQ((*f)->x.size(), 2u);
  EXPECT_TRUE((*f)->Has("s"));
  EXPECT_EQ((*f)->positional,
            (std::vector<std::string>{"a", "-", "--not-a-flag"}));
  EXPECT_FALSE(ParseFlags({"--x"}).ok());
  EXPECT_FALSE(ParseFlags({"--s=1"}).ok());
  EXPECT_FALSE(ParseFlags({"--y"}).ok());
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// config/trench.json parses and holds the defaults of daemon_config.h.
TEST(CliConfigTest, ShippedConfigIsTheDefaults) {
  const std::string dir = std::string(TRENCH_SOURCE_DIR) + "/config";
  StatusOr<orchestrator::DaemonConfig> c = orchestrator::ParseDaemonConfig(
      Slurp(dir + "/trench.json"), "trench.json", dir);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  const orchestrator::DaemonConfig d;
  EXPECT_EQ(c->var_dir, "/var/lib/trench");
  EXPECT_EQ(c->repo, "/srv/compiler");
  EXPECT_EQ(c->http_port, d.http_port);
  EXPECT_EQ(c->http_address, d.http_address);
  EXPECT_EQ(c->token_env, d.token_env);
  EXPECT_EQ(c->body_limit, d.body_limit);
  EXPECT_EQ(c->fuzz_budget_seconds, d.fuzz_budget_seconds);
  EXPECT_EQ(c->fuzz_continuous, d.fuzz_continuous);
  EXPECT_EQ(c->reproduce_runs, d.reproduce_runs);
  EXPECT_EQ(c->drain_seconds, d.drain_seconds);
  EXPECT_EQ(c->sandbox_memory_bytes, d.sandbox_memory_bytes);
  EXPECT_EQ(c->log_format, d.log_format);
  EXPECT_EQ(c->log_level, d.log_level);
  EXPECT_EQ(c->swarm.size(), orchestrator::SwarmRoles().size());

  const std::string unit = Slurp(dir + "/trench.service");
  for (const char* line :
       {"Type=notify",
        "ExecStart=/usr/local/bin/trench serve --config "
        "/etc/trench/trench.json",
        "EnvironmentFile=", "Restart=on-failure", "KillSignal=SIGTERM",
        "TimeoutStopSec=", "NoNewPrivileges=true", "ProtectSystem=strict",
        "ReadWritePaths=/var/lib/trench", "PrivateTmp=true"}) {
    EXPECT_NE(unit.find(line), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace trench::cli
