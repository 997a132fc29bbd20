// `trench serve --config FILE`: the daemon (orchestrator/daemon/daemon.h). Logs
// are set up from the config's "log" section before anything else runs.
#include <spdlog/spdlog.h>

#include "orchestrator/cli/cli.h"
#include "orchestrator/config/daemon_config.h"
#include "orchestrator/daemon/daemon.h"
#include "orchestrator/daemon/logging.h"

namespace trench::cli {

int CmdServe(const Context& ctx) {
  std::string config_path;
  FlagParser p = CommandParser("serve");
  p.String("config", "FILE", &config_path,
           "the daemon's configuration (config/trench.json)");
  if (std::optional<int> exit = ParseArgs(ctx, p)) return *exit;
  if (!p.Given("config")) return UsageError(ctx, "serve", "--config needed");
  StatusOr<orchestrator::DaemonConfig> config =
      orchestrator::LoadDaemonConfig(config_path);
  if (!config.ok()) return Fail(ctx, config.status().message());
  Status s = orchestrator::SetUpLogging(config->log_format, config->log_level);
  if (!s.ok()) return Fail(ctx, config_path + ": " + s.message());
  StatusOr<std::unique_ptr<orchestrator::Daemon>> daemon =
      orchestrator::Daemon::Create(*config);
  if (!daemon.ok()) {
    spdlog::critical("cannot start: {}", daemon.status().message());
    return Fail(ctx, daemon.status().message());
  }
  s = (*daemon)->Run();
  if (!s.ok()) {
    spdlog::critical("stopped: {}", s.message());
    return Fail(ctx, s.message());
  }
  return kExitOk;
}

}  // namespace trench::cli
