// Who may do what, over a real socket: reads are open unless a read token
// is configured, then they need it (or the write token); writes need the
// write token and are refused when another site's page makes the browser
// send them (Origin, Sec-Fetch-Site) or when their body is not JSON. A
// refused request writes nothing.
#include <gtest/gtest.h>

#include "tests/orchestrator/api/api_test_util.h"

namespace trench::orchestrator::testing {
namespace {

constexpr char kReadToken[] = "r3ad-only";
constexpr char kReport[] = R"({"text": "wrong answer", "title": "t"})";

// A POST with exactly these headers (no Content-Type unless given).
HttpReply RawPost(uint16_t port, const std::string& target,
                  const std::string& headers, const std::string& body) {
  HttpClient client(port);
  EXPECT_TRUE(client.SendRaw(
      "POST " + target + " HTTP/1.1\r\nHost: test\r\n" + headers +
      "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body));
  return client.ReadReply().value_or(HttpReply{});
}

std::string Bearer(const std::string& token) {
  return "Authorization: Bearer " + token + "\r\n";
}

using ApiAuthTest = ApiTest;

TEST_F(ApiAuthTest, ReadsAreOpenWithoutAReadToken) {
  for (const char* path : {"/api/v1/bugs", "/api/v1/events", "/api/v1/jobs",
                           "/metrics", "/healthz"}) {
    EXPECT_EQ(Call("GET", path).status, 200) << path;
  }
}

TEST_F(ApiAuthTest, RefusesCrossSiteWritesAndWritesNothing) {
  const StoreSnapshot before = Snapshot();
  const std::string json = "Content-Type: application/json\r\n";
  HttpReply r = RawPost(
      server_->port(), "/api/v1/reports",
      Bearer(kToken) + json + "Origin: http://evil.example\r\n", kReport);
  EXPECT_EQ(r.status, 403) << r.body;
  EXPECT_NE(r.error_message().find("another origin"), std::string::npos)
      << r.body;
  r = RawPost(server_->port(), "/api/v1/reports",
              Bearer(kToken) + json + "Sec-Fetch-Site: cross-site\r\n",
              kReport);
  EXPECT_EQ(r.status, 403) << r.body;
  // A same-port different host is another origin too.
  r = RawPost(server_->port(), "/api/v1/reports",
              Bearer(kToken) + json + "Origin: http://test.evil\r\n", kReport);
  EXPECT_EQ(r.status, 403) << r.body;
  // From a browser, a body that is not declared JSON (what an HTML form
  // can send), even from the daemon's own origin.
  const std::string own = "Origin: http://test\r\n";
  r = RawPost(server_->port(), "/api/v1/reports",
              Bearer(kToken) + own + "Content-Type: text/plain\r\n", kReport);
  EXPECT_EQ(r.status, 415) << r.body;
  r = RawPost(server_->port(), "/api/v1/reports",
              Bearer(kToken) + "Sec-Fetch-Site: same-origin\r\n", kReport);
  EXPECT_EQ(r.status, 415) << r.body;
  EXPECT_EQ(Snapshot(), before);
  // Not from a browser (curl -d sends a form type by default): accepted.
  r = RawPost(
      server_->port(), "/api/v1/reports",
      Bearer(kToken) + "Content-Type: application/x-www-form-urlencoded\r\n",
      kReport);
  EXPECT_EQ(r.status, 201) << r.body;
  // The daemon's own page (same origin) and API clients (no Origin) write.
  r = RawPost(server_->port(), "/api/v1/reports",
              Bearer(kToken) +
                  "Content-Type: application/json; charset=utf-8"
                  "\r\nOrigin: http://test\r\n"
                  "Sec-Fetch-Site: same-origin\r\n",
              kReport);
  EXPECT_EQ(r.status, 201) << r.body;
  EXPECT_EQ(Call("POST", "/api/v1/reports", kReport, kToken).status, 201);
}

class ApiReadTokenTest : public ApiTest {
 protected:
  ApiOptions Options() override {
    ApiOptions options = ApiTest::Options();
    options.read_token = kReadToken;
    return options;
  }
};

TEST_F(ApiReadTokenTest, ReadsNeedTheReadOrTheWriteToken) {
  for (const char* path :
       {"/api/v1/bugs", "/api/v1/bugs/1", "/api/v1/events", "/api/v1/jobs",
        "/api/v1/events/stream", "/metrics", "/api/v1/nothing-here"}) {
    SCOPED_TRACE(path);
    HttpReply r = Call("GET", path);
    EXPECT_EQ(r.status, 401) << r.body;
    EXPECT_EQ(r.headers["www-authenticate"], "Bearer");
    EXPECT_EQ(Call("GET", path, "", "wrong").status, 403);
  }
  EXPECT_EQ(Call("GET", "/api/v1/bugs", "", kReadToken).status, 200);
  EXPECT_EQ(Call("GET", "/api/v1/bugs", "", kToken).status, 200);
  EXPECT_EQ(Call("GET", "/metrics", "", kReadToken).status, 200);
  // Liveness needs none.
  EXPECT_EQ(Call("GET", "/healthz").status, 200);
}

TEST_F(ApiReadTokenTest, TheReadTokenDoesNotWrite) {
  const StoreSnapshot before = Snapshot();
  EXPECT_EQ(Call("POST", "/api/v1/reports", kReport, kReadToken).status, 403);
  EXPECT_EQ(Snapshot(), before);
  EXPECT_EQ(Call("POST", "/api/v1/reports", kReport, kToken).status, 201);
}

}  // namespace
}  // namespace trench::orchestrator::testing
