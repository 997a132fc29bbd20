// The HTTP layer over a real socket: keep-alive, limits, auth, routing,
// malformed HTTP; after each bad request the server still answers and the
// store is unchanged.
#include <gtest/gtest.h>

#include "orchestrator/api/api_request.h"
#include "tests/orchestrator/api/api_test_util.h"

namespace trench::orchestrator::testing {
namespace {

constexpr char kReport[] = R"({"text": "wrong result for add"})";

TEST(ApiRequestTest, ParseTargetDecodesPathAndQuery) {
  std::string path;
  std::map<std::string, std::string> query;
  ASSERT_TRUE(ParseTarget("/a%20b?state=new&x=1+2&flag", &path, &query).ok());
  EXPECT_EQ(path, "/a b");
  EXPECT_EQ(query["state"], "new");
  EXPECT_EQ(query["x"], "1 2");
  EXPECT_EQ(query.count("flag"), 1u);
  EXPECT_FALSE(ParseTarget("/a%2", &path, &query).ok());
  EXPECT_FALSE(ParseTarget("no-slash", &path, &query).ok());
}

TEST(ApiRequestTest, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abcd"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
  // Enough near-misses that a comparison of only part of the digests
  // would accept one of them.
  for (int i = 0; i < 2000; ++i) {
    ASSERT_FALSE(ConstantTimeEquals(kToken, kToken + std::to_string(i)));
  }
}

TEST_F(ApiTest, HealthzAndKeepAlive) {
  HttpClient client(server_->port());
  ASSERT_TRUE(client.connected());
  for (int i = 0; i < 3; ++i) {  // Three requests on one connection.
    HttpReply r = client.Request("GET", "/healthz");
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.json().Find("status")->string_value(), "ok");
    EXPECT_EQ(r.headers["content-type"], "application/json");
  }
}

TEST_F(ApiTest, ConnectionCloseIsHonoured) {
  HttpClient client(server_->port());
  HttpReply r =
      client.Request("GET", "/healthz", "", "", "Connection: close\r\n");
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(client.AtEof());
}

TEST_F(ApiTest, UnknownRouteIs404) {
  HttpReply r = Call("GET", "/api/v1/nothing");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(r.json().Find("error")->Find("code")->string_value(), "not_found");
  EXPECT_NE(r.error_message().find("/api/v1/nothing"), std::string::npos);
}

TEST_F(ApiTest, WrongMethodIs405WithAllow) {
  StoreSnapshot before = Snapshot();
  HttpReply r = Call("DELETE", "/api/v1/bugs");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.headers["allow"], "GET");
  r = Call("GET", "/api/v1/reports");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.headers["allow"], "POST");
  EXPECT_NE(r.error_message().find("GET is not allowed"), std::string::npos);
  r = Call("POST", "/healthz", "{}", kToken);
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(Snapshot(), before);
  ExpectHealthy();
}

TEST_F(ApiTest, WritesNeedTheToken) {
  StoreSnapshot before = Snapshot();
  HttpReply r = Call("POST", "/api/v1/reports", kReport);
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(r.headers["www-authenticate"], "Bearer");
  EXPECT_NE(r.error_message().find("Authorization"), std::string::npos);
  r = Call("POST", "/api/v1/reports", kReport, "wrong-token");
  EXPECT_EQ(r.status, 403);
  r = Call("POST", "/api/v1/reports", kReport, std::string(kToken) + "x");
  EXPECT_EQ(r.status, 403);
  r = Call("POST", "/api/v1/patches/1/review", R"({"decision": "approve"})");
  EXPECT_EQ(r.status, 401);
  EXPECT_EQ(Snapshot(), before);
  ExpectHealthy();
  // Reads need no token.
  EXPECT_EQ(Call("GET", "/api/v1/bugs").status, 200);
}

TEST_F(ApiTest, NoConfiguredTokenRefusesWrites) {
  ApiHandlers open(store_.get(), ApiOptions{});
  ApiRequest req{"POST", "/api/v1/reports", {}, {}, kReport};
  req.headers["authorization"] = "Bearer ";
  EXPECT_EQ(open.Handle(req).status, 403);
}

TEST_F(ApiTest, HugeBodyIs413) {
  StoreSnapshot before = Snapshot();
  const std::string text(kBodyLimit * 4, 'x');
  const std::string body = R"({"text": ")" + text + R"("})";
  HttpClient client(server_->port());
  HttpReply r = client.Request("POST", "/api/v1/reports", body, kToken);
  EXPECT_EQ(r.status, 413);
  EXPECT_NE(r.error_message().find(std::to_string(kBodyLimit)),
            std::string::npos)
      << r.body;
  EXPECT_TRUE(client.AtEof());
  EXPECT_EQ(Snapshot(), before);
  ExpectHealthy();
}

TEST_F(ApiTest, MalformedHttpIs400) {
  HttpClient client(server_->port());
  ASSERT_TRUE(client.SendRaw("GARBAGE\r\n\r\n"));
  std::optional<HttpReply> r = client.ReadReply();
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->status, 400);
  EXPECT_NE(r->error_message().find("malformed HTTP"), std::string::npos);
  ExpectHealthy();
}

TEST_F(ApiTest, HugeHeaderIs431) {
  HttpClient client(server_->port());
  HttpReply r = client.Request("GET", "/healthz", "", "",
                               "X-Big: " + std::string(64 << 10, 'a') + "\r\n");
  EXPECT_EQ(r.status, 431);
  ExpectHealthy();
}

TEST_F(ApiTest, BadPercentEscapeIs400) {
  HttpReply r = Call("GET", "/api/v1/bugs?state=%zz");
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.error_message().find("percent escape"), std::string::npos);
}

TEST_F(ApiTest, StartReportsBadAddress) {
  HttpServerOptions options;
  options.address = "not an address";
  auto s = HttpServer::Start(ioc_, options,
                             [](const ApiRequest&) { return ApiResponse{}; });
  EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
  options.address = "127.0.0.1";
  options.port = server_->port();  // Taken.
  s = HttpServer::Start(ioc_, options,
                        [](const ApiRequest&) { return ApiResponse{}; });
  EXPECT_EQ(s.status().code(), StatusCode::kIoError);
}

class ApiShortTimeoutTest : public ApiTest {
 protected:
  HttpServerOptions ServerOptions() override {
    HttpServerOptions options = ApiTest::ServerOptions();
    options.read_timeout = std::chrono::milliseconds(50);
    return options;
  }
};

// A client that never finishes its request is disconnected (the client's
// own 20 s receive timeout would fail the test instead of hanging it).
TEST_F(ApiShortTimeoutTest, StalledRequestIsDisconnected) {
  HttpClient client(server_->port());
  ASSERT_TRUE(client.SendRaw("GET /healthz HTTP/1.1\r\nHost: t\r\n"));
  EXPECT_TRUE(client.AtEof());
  ExpectHealthy();
}

}  // namespace
}  // namespace trench::orchestrator::testing
