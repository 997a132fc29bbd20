// `trench serve --config FILE`: the daemon (orchestrator/daemon/daemon.h). Logs
// are set up from the config's "log" section before anything else runs.
#include <spdlog/spdlog.h>

#include "orchestrator/cli/cli.h"
#include "orchestrator/daemon/daemon.h"
#include "orchestrator/config/daemon_config.h"
#include "orchestrator/daemon/logging.h"

namespace trench::cli {

int CmdServe(const Context& ctx) {
  StatusOr<Flags> flags = ParseFlags(ctx.args, {"config"}, {});
  if (!flags.ok()) return UsageError(ctx, "serve", flags.status().message());
  if (!flags->positional.empty()) {
    return UsageError(ctx, "serve",
                      "unexpected argument '" + flags->positional[0] + "'");
  }
  if (!flags->Has("config")) return UsageError(ctx, "serve", "--config needed");
  StatusOr<orchestrator::DaemonConfig> config =
      orchestrator::LoadDaemonConfig(flags->Get("config"));
  if (!config.ok()) return Fail(ctx, config.status().message());
  Status s = orchestrator::SetUpLogging(config->log_format, config->log_level);
  if (!s.ok()) return Fail(ctx, flags->Get("config") + ": " + s.message());
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
