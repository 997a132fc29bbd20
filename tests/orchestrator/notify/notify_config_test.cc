// The config's "notify" section: parsing (daemon_config.h) and its
// resolution at start-up (notify_setup.h).
#include <gtest/gtest.h>

#include <map>

#include "orchestrator/config/daemon_config.h"
#include "orchestrator/notify/notify_setup.h"

namespace trench::orchestrator {
namespace {

StatusOr<DaemonConfig> Parse(const std::string& notify) {
  return ParseDaemonConfig(
      R"({"repo": "/r", "var_dir": "/v", "notify": )" + notify + "}",
      "trench.json", "/etc");
}

std::string ErrorOf(const std::string& notify) {
  StatusOr<DaemonConfig> c = Parse(notify);
  EXPECT_FALSE(c.ok()) << notify;
  return c.ok() ? "" : c.status().message();
}

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(NotifyConfigTest, ReadsEveryField) {
  StatusOr<DaemonConfig> c = Parse(R"({
    "webhooks": [{"url": "https://h.example/a", "secret_env": "S1"},
                 {"url": "http://127.0.0.1:9/b", "secret_env": "S2",
                  "events": ["finding", "proposed"]}],
    "email": {"smtp_url": "smtp://127.0.0.1:25", "from": "t@example.org",
              "to": ["a@example.org", "b@example.org"],
              "username_env": "U", "password_env": "P", "starttls": "none"},
    "max_attempts": 3, "backoff_seconds": 0.5, "max_age_seconds": 60})");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const NotifyConfig& n = c->notify;
  ASSERT_EQ(n.webhooks.size(), 2u);
  EXPECT_EQ(n.webhooks[1].url, "http://127.0.0.1:9/b");
  EXPECT_EQ(n.webhooks[1].events,
            (std::vector<std::string>{"finding", "proposed"}));
  EXPECT_EQ(n.email.to.size(), 2u);
  EXPECT_EQ(n.email.starttls, "none");
  EXPECT_EQ(n.max_attempts, 3);
  EXPECT_EQ(n.backoff_seconds, 0.5);
  EXPECT_EQ(n.max_age_seconds, 60);
  EXPECT_TRUE(n.enabled());
}

TEST(NotifyConfigTest, AbsentMeansNoNotifier) {
  StatusOr<DaemonConfig> c =
      ParseDaemonConfig(R"({"repo": "/r", "var_dir": "/v"})", "t.json", "/");
  ASSERT_TRUE(c.ok());
  EXPECT_FALSE(c->notify.enabled());
}

TEST(NotifyConfigTest, RefusesUnknownFieldsAndWrongTypesNamingThem) {
  EXPECT_EQ(ErrorOf(R"({"webhook": []})"),
            "trench.json: notify.webhook: unknown field (a typo?)");
  EXPECT_EQ(ErrorOf(R"({"webhooks": [{"url": "http://h/", "secret_env": "S",
                                      "evnts": []}]})"),
            "trench.json: notify.webhooks[0].evnts: unknown field (a typo?)");
  EXPECT_EQ(ErrorOf(R"({"webhooks": {"url": "http://h/"}})"),
            "trench.json: notify.webhooks: expected an array of objects");
  EXPECT_EQ(ErrorOf(R"({"webhooks": [3]})"),
            "trench.json: notify.webhooks[0]: expected an object");
  EXPECT_EQ(
      ErrorOf(R"({"webhooks": [{"url": "ftp://h/", "secret_env": "S"}]})"),
      "trench.json: notify.webhooks[0].url: required: an http:// or "
      "https:// URL, got \"ftp://h/\"");
  EXPECT_EQ(ErrorOf(R"({"webhooks": [{"url": "http://h/"}]})"),
            "trench.json: notify.webhooks[0].secret_env: required: the "
            "variable holding the signing secret");
  EXPECT_EQ(ErrorOf(R"({"webhooks": [{"url": "http://h/", "secret_env": "S",
                                      "events": "finding"}]})"),
            "trench.json: notify.webhooks[0].events: expected an array of "
            "strings");
  EXPECT_EQ(ErrorOf(R"({"email": {"smtp_url": "http://m", "from": "a@b",
                                  "to": ["c@d"]}})"),
            "trench.json: notify.email.smtp_url: required: an smtp:// or "
            "smtps:// URL, got \"http://m\"");
  EXPECT_EQ(ErrorOf(R"({"email": {"smtp_url": "smtp://m", "from": "a@b"}})"),
            "trench.json: notify.email.to: required (at least one address)");
  EXPECT_EQ(ErrorOf(R"({"email": {"smtp_url": "smtp://m", "from": "a@b",
                                  "to": ["c@d"], "starttls": "yes"}})"),
            "trench.json: notify.email.starttls: expected one of none, "
            "require, try, got \"yes\"");
  EXPECT_EQ(ErrorOf(R"({"max_attempts": 0})"),
            "trench.json: notify.max_attempts: expected an integer in [1, "
            "1000], got 0");
  EXPECT_EQ(ErrorOf(R"({"backoff_seconds": "1"})"),
            "trench.json: notify.backoff_seconds: expected a number of "
            "seconds >= 0, got \"1\"");
  EXPECT_EQ(ErrorOf(R"([])"), "trench.json: notify: expected an object");
}

NotifyConfig Valid() {
  NotifyConfig n;
  n.webhooks.push_back({"http://h/a", "S1", {}});
  n.email.smtp_url = "smtp://127.0.0.1:2525";
  n.email.from = "trench@example.org";
  n.email.to = {"dev@example.org"};
  return n;
}

TEST(NotifyConfigTest, ResolvesSecretsFromTheEnvironment) {
  NotifyConfig n = Valid();
  n.email.username_env = "U";
  n.email.password_env = "P";
  StatusOr<NotifySetup> s =
      ResolveNotifyConfig(n, Env({{"S1", "k"}, {"U", "u"}, {"P", "p"}}));
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->destinations.size(), 2u);
  EXPECT_EQ(s->destinations[0].key, "webhook:http://h/a");
  EXPECT_EQ(s->destinations[0].secret, "k");
  EXPECT_TRUE(s->destinations[0].Wants("finding"));
  EXPECT_TRUE(s->destinations[0].Wants("fixed"));
  EXPECT_EQ(s->destinations[1].key, "email");
  EXPECT_EQ(s->destinations[1].password, "p");
  EXPECT_TRUE(s->destinations[1].Wants("finding"));
  EXPECT_TRUE(s->destinations[1].Wants("proposed"));
  EXPECT_FALSE(s->destinations[1].Wants("reproduced"));
}

TEST(NotifyConfigTest, NamesUnsetVariablesAndBadValues) {
  auto error = [](const NotifyConfig& n,
                  std::map<std::string, std::string> env) {
    StatusOr<NotifySetup> s = ResolveNotifyConfig(n, Env(env));
    EXPECT_FALSE(s.ok());
    return s.ok() ? "" : s.status().message();
  };
  EXPECT_EQ(error(Valid(), {}), "notify.webhooks[0].secret_env: S1 is not set");
  NotifyConfig n = Valid();
  n.email.password_env = "SMTP_PASSWORD";
  EXPECT_EQ(error(n, {{"S1", "k"}}),
            "notify.email.password_env: SMTP_PASSWORD is not set");
  n = Valid();
  n.webhooks[0].events = {"finding", "fixd"};
  EXPECT_NE(error(n, {{"S1", "k"}})
                .find("notify.webhooks[0].events: \"fixd\" is not an event "
                      "kind (finding, new, reproduced,"),
            std::string::npos);
  n = Valid();
  n.webhooks.push_back(n.webhooks[0]);
  EXPECT_EQ(error(n, {{"S1", "k"}}),
            "notify.webhooks[1].url: http://h/a is given twice (one webhook "
            "per URL)");
  n = Valid();
  n.email.to = {"Dev <dev@example.org>"};
  EXPECT_EQ(error(n, {{"S1", "k"}}),
            "notify.email.to: \"Dev <dev@example.org>\" is not a plain "
            "address (name@domain)");
  n = Valid();
  n.email.from = "evil@example.org\r\nBcc: x@y";
  EXPECT_NE(error(n, {{"S1", "k"}}).find("notify.email.from:"),
            std::string::npos);
}

}  // namespace
}  // namespace trench::orchestrator
