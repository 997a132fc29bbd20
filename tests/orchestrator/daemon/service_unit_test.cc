// config/trench.service (issue 19, "The unit"): what the unit promises,
// and `systemd-analyze verify` of it when systemd is installed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <string>

#include "base/subprocess.h"
#include "tests/orchestrator/daemon/daemon_test_util.h"

namespace trench::orchestrator::testing {
namespace {

std::string Unit() {
  return ReadAll(std::string(TRENCH_SOURCE_DIR) + "/config/trench.service");
}

// The value lines "Key=value" of `key`, in order.
std::vector<std::string> Values(const std::string& unit,
                                const std::string& key) {
  std::vector<std::string> out;
  std::istringstream in(unit);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + "=", 0) == 0)
      out.push_back(line.substr(key.size() + 1));
  }
  return out;
}

TEST(ServiceUnit, WaitsForTheNetworkAndTellsReadiness) {
  const std::string unit = Unit();
  ASSERT_FALSE(unit.empty());
  EXPECT_EQ(Values(unit, "Wants"),
            std::vector<std::string>{"network-online.target"});
  EXPECT_EQ(Values(unit, "After"),
            std::vector<std::string>{"network-online.target"});
  // Readiness by sd_notify: the daemon sends READY=1 (service_notify.h).
  EXPECT_EQ(Values(unit, "Type"), std::vector<std::string>{"notify"});
  EXPECT_EQ(
      Values(unit, "ExecStart"),
      std::vector<std::string>{
          "/usr/local/bin/trench serve --config /etc/trench/trench.json"});
  // The drain must fit in the stop timeout (config drain_seconds: 30).
  EXPECT_EQ(Values(unit, "TimeoutStopSec"), std::vector<std::string>{"60s"});
  // The sandbox needs its control groups and the builds their loop device.
  EXPECT_TRUE(Values(unit, "ProtectControlGroups").empty());
  EXPECT_TRUE(Values(unit, "PrivateDevices").empty());
  EXPECT_EQ(
      Values(unit, "DeviceAllow"),
      (std::vector<std::string>{"/dev/loop-control rw", "block-loop rw"}));
  // The install notes name every binary the daemon runs from tools_dir.
  for (const char* tool : {"build/trench", "build/hlo-diff", "build/hlo-reduce",
                           "build/hlo-bisect", "build/hlo-fuzz"}) {
    EXPECT_NE(unit.find(tool), std::string::npos) << tool;
  }
}

TEST(ServiceUnit, SystemdAnalyzeVerifies) {
  const char* analyze = "/usr/bin/systemd-analyze";
  if (::access(analyze, X_OK) != 0) {
    GTEST_SKIP() << "systemd-analyze is not installed";
  }
  std::string dir = ::testing::TempDir() + "trench-unit-XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  // verify checks that ExecStart's binary exists: point it at this build's.
  const std::string unit =
      std::regex_replace(Unit(), std::regex("/usr/local/bin/trench"),
                         std::string(TRENCH_BINARY_DIR) + "/trench");
  std::ofstream(dir + "/trench.service") << unit;
  hlo_diff::ProcessSpec spec;
  spec.argv = {analyze, "verify", dir + "/trench.service"};
  spec.timeout_seconds = 120;
  StatusOr<hlo_diff::ProcessResult> r = hlo_diff::RunProcess(spec);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // Unknown keys and bad values are warnings ("ignoring") with exit 0:
  // the output must be empty too.
  EXPECT_EQ(r->exit_code, 0) << r->out << r->err;
  EXPECT_EQ(r->out + r->err, "");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trench::orchestrator::testing
