// `trench serve` with a notify section: a report POSTed to the API comes
// out as a signed webhook at a loopback receiver (the daemon's notifier
// thread, woken by the event bell), /metrics counts it, and SIGTERM stops
// the notifier with the rest; an unset secret variable stops the start,
// naming it.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "agents/http_client.h"
#include "base/hmac.h"
#include "git/git_repo.h"
#include "tests/agents/scripted_llm_server.h"
#include "tests/orchestrator/daemon/daemon_test_util.h"

namespace trench::orchestrator::testing {
namespace {

using agents::testing::ScriptedLlmServer;
using agents::testing::ScriptedReply;

class DaemonNotifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "trench-daemon-notify-XXXXXX";
    ASSERT_NE(::mkdtemp(dir_.data()), nullptr);
    ::chmod(dir_.c_str(), 0755);
    auto repo = hlo_bisect::GitRepo::Init(dir_ + "/repo");
    ASSERT_TRUE(repo.ok()) << repo.status().ToString();
    ASSERT_TRUE((*repo)
                    ->CommitFiles("", {{"README", std::string("target\n")}},
                                  "first", "refs/heads/main")
                    .ok());
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string WriteConfig(const std::string& hook_url,
                          const std::string& secret_env) {
    Json c = Json::MakeObject();
    c["var_dir"] = dir_ + "/var";
    c["repo"] = dir_ + "/repo";
    c["tools_dir"] = TRENCH_BINARY_DIR;
    c["build_command"] = "exit 3";  // Builds fail; the API still serves.
    c["poll_seconds"] = 1;
    c["drain_seconds"] = 5;
    Json http = Json::MakeObject();
    http["port"] = 0;
    http["token_env"] = "TRENCH_NOTIFY_TEST_TOKEN";
    c["http"] = http;
    Json fuzz = Json::MakeObject();
    fuzz["continuous"] = false;
    c["fuzz"] = fuzz;
    Json hook = Json::MakeObject();
    hook["url"] = hook_url;
    hook["secret_env"] = secret_env;
    hook["events"] = Json::MakeArray();
    hook["events"].push_back("finding");
    Json notify = Json::MakeObject();
    notify["webhooks"] = Json::MakeArray();
    notify["webhooks"].push_back(hook);
    c["notify"] = notify;
    const std::string path = dir_ + "/trench.json";
    std::ofstream(path) << c.DumpPretty();
    return path;
  }

  std::string dir_;
};

TEST_F(DaemonNotifyTest, AReportComesOutAsASignedWebhook) {
  ScriptedLlmServer hook;
  ASSERT_TRUE(hook.ok());
  hook.Enqueue(ScriptedReply::WithText(200, "ok"));
  DaemonProcess daemon(WriteConfig(hook.url() + "/trench", "TRENCH_HOOK_KEY"),
                       dir_ + "/log");
  daemon.Start({"TRENCH_HOOK_KEY=hook-secret", "TRENCH_NOTIFY_TEST_TOKEN=tok"});
  int64_t port = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        StatusOr<Json> info = ParseJson(ReadAll(dir_ + "/var/daemon.json"));
        if (info.ok()) port = (*info)["port"].int64_value();
        return port > 0;
      },
      std::chrono::seconds(120), std::chrono::milliseconds(50)))
      << ReadAll(dir_ + "/log");
  const std::string api = "http://127.0.0.1:" + std::to_string(port);
  agents::HttpRequest report;
  report.method = "POST";
  report.url = api + "/api/v1/reports";
  report.headers = {{"Authorization", "Bearer tok"},
                    {"Content-Type", "application/json"}};
  report.body = R"({"title": "sum is wrong", "text": "see attached"})";
  auto posted = agents::HttpFetch(report);
  ASSERT_TRUE(posted.ok()) << posted.status().ToString();
  ASSERT_EQ(posted->status, 201) << posted->body;

  ASSERT_TRUE(WaitFor([&] { return !hook.requests().empty(); },
                      std::chrono::seconds(120), std::chrono::milliseconds(50)))
      << ReadAll(dir_ + "/log");
  const auto r = hook.requests().front();
  EXPECT_EQ(r.Header("x-trench-event"), "finding");
  EXPECT_EQ(r.Header("x-trench-signature"),
            "sha256=" + HmacSha256Hex("hook-secret", r.body));
  auto body = r.JsonBody();
  ASSERT_TRUE(body.ok());
  EXPECT_EQ((*body)["bug"]["title"].string_value(), "sum is wrong");
  EXPECT_EQ((*body)["link"].string_value(), "/bugs/1");

  agents::HttpRequest metrics;
  metrics.url = api + "/metrics";
  bool counted = WaitFor(
      [&] {
        auto m = agents::HttpFetch(metrics);
        return m.ok() &&
               m->body.find(
                   "trench_notify_deliveries_total{channel=\"webhook\","
                   "outcome=\"sent\"} 1\n") != std::string::npos;
      },
      std::chrono::seconds(60), std::chrono::milliseconds(100));
  EXPECT_TRUE(counted) << ReadAll(dir_ + "/log");

  const int status = daemon.Kill(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << status << "\n"
      << ReadAll(dir_ + "/log");
}

TEST_F(DaemonNotifyTest, AnUnsetSecretVariableStopsTheStart) {
  ::unsetenv("TRENCH_TEST_UNSET_HOOK_KEY");
  DaemonProcess daemon(
      WriteConfig("http://127.0.0.1:9/hook", "TRENCH_TEST_UNSET_HOOK_KEY"),
      dir_ + "/log");
  daemon.Start();
  // It exits by itself (Running() reaps it); a bound against a hang.
  ASSERT_TRUE(WaitFor([&] { return !daemon.Running(); },
                      std::chrono::seconds(120), std::chrono::milliseconds(50)))
      << ReadAll(dir_ + "/log");
  const std::string log = ReadAll(dir_ + "/log");
  EXPECT_NE(log.find("notify.webhooks[0].secret_env: "
                     "TRENCH_TEST_UNSET_HOOK_KEY is not set"),
            std::string::npos)
      << log;
}

}  // namespace
}  // namespace trench::orchestrator::testing
