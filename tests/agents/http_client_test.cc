#include "agents/http_client.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/agents/scripted_llm_server.h"

namespace trench::agents {
namespace {

using testing::ScriptedLlmServer;
using testing::ScriptedReply;

TEST(HttpClientTest, PostSendsBodyAndHeadersAndReturnsResponse) {
  ScriptedLlmServer server;
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  server.Enqueue(ScriptedReply::WithText(201, R"({"ok":true})")
                     .Header("X-Custom", "  yes  "));
  HttpRequest req;
  req.method = "POST";
  req.url = server.url() + "/v1/things?x=1";
  req.headers = {{"Authorization", "Bearer k"}, {"Content-Type", "text/x"}};
  req.body = "hello body";
  auto resp = HttpFetch(req);
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  EXPECT_EQ(resp->status, 201);
  EXPECT_EQ(resp->body, R"({"ok":true})");
  EXPECT_EQ(resp->Header("x-custom"), "yes");
  EXPECT_EQ(resp->Header("content-type"), "application/json");
  EXPECT_EQ(resp->Header("absent"), "");

  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 1u);
  EXPECT_EQ(reqs[0].method, "POST");
  EXPECT_EQ(reqs[0].path, "/v1/things?x=1");
  EXPECT_EQ(reqs[0].Header("authorization"), "Bearer k");
  EXPECT_EQ(reqs[0].Header("content-type"), "text/x");
  EXPECT_FALSE(reqs[0].HasHeader("expect"));
  EXPECT_EQ(reqs[0].body, "hello body");
}

TEST(HttpClientTest, MethodsGetPutDeleteAndEmptyPost) {
  ScriptedLlmServer server;
  ASSERT_TRUE(server.ok());
  for (int i = 0; i < 4; ++i) server.Enqueue(ScriptedReply::WithText(200, ""));
  for (std::string method : {"GET", "PUT", "DELETE", "POST"}) {
    HttpRequest req;
    req.method = method;
    req.url = server.url() + "/m";
    if (method == "PUT") req.body = "put-body";
    auto resp = HttpFetch(req);
    ASSERT_TRUE(resp.ok()) << method << ": " << resp.status().ToString();
    EXPECT_EQ(resp->status, 200);
  }
  auto reqs = server.requests();
  ASSERT_EQ(reqs.size(), 4u);
  EXPECT_EQ(reqs[0].method, "GET");
  EXPECT_EQ(reqs[1].method, "PUT");
  EXPECT_EQ(reqs[1].body, "put-body");
  EXPECT_EQ(reqs[2].method, "DELETE");
  EXPECT_EQ(reqs[3].method, "POST");
  EXPECT_EQ(reqs[3].Header("content-length"), "0");
}

TEST(HttpClientTest, ErrorStatusesAreResponses) {
  ScriptedLlmServer server;
  ASSERT_TRUE(server.ok());
  server.Enqueue(
      ScriptedReply::WithText(429, "slow down").Header("Retry-After", "7"));
  server.Enqueue(ScriptedReply::WithText(503, "down"));
  HttpRequest req;
  req.url = server.url() + "/";
  auto a = HttpFetch(req);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->status, 429);
  EXPECT_EQ(a->Header("retry-after"), "7");
  EXPECT_EQ(a->body, "slow down");
  auto b = HttpFetch(req);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->status, 503);
}

TEST(HttpClientTest, StreamingBodyGoesToReader) {
  ScriptedLlmServer server;
  ASSERT_TRUE(server.ok());
  server.Enqueue(ScriptedReply::WithChunks({"data: a\n", "\n", "data: b\n\n"}));
  std::string seen;
  HttpRequest req;
  req.method = "POST";
  req.url = server.url() + "/s";
  req.on_body = [&](std::string_view chunk) {
    seen += chunk;
    return true;
  };
  auto resp = HttpFetch(req);
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  EXPECT_EQ(resp->status, 200);
  EXPECT_EQ(resp->body, "");
  EXPECT_EQ(seen, "data: a\n\ndata: b\n\n");
  EXPECT_EQ(resp->Header("content-type"), "text/event-stream");
}

TEST(HttpClientTest, ReaderCanAbort) {
  ScriptedLlmServer server;
  ASSERT_TRUE(server.ok());
  server.Enqueue(ScriptedReply::WithChunks({"one", "two"}));
  HttpRequest req;
  req.url = server.url() + "/s";
  req.on_body = [](std::string_view) { return false; };
  auto resp = HttpFetch(req);
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().code(), StatusCode::kIoError);
  EXPECT_NE(resp.status().message().find("aborted by the reader"),
            std::string::npos)
      << resp.status().message();
}

TEST(HttpClientTest, TimeoutIsDeadlineExceeded) {
  ScriptedLlmServer server;
  ASSERT_TRUE(server.ok());
  server.Enqueue(ScriptedReply::Hang());
  HttpRequest req;
  req.method = "POST";
  req.url = server.url() + "/v1/chat/completions";
  req.body = "{}";
  req.timeout_seconds = 0.2;
  auto resp = HttpFetch(req);
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(resp.status().message(),
            "POST " + req.url + ": timed out after 0.2 s");
}

TEST(HttpClientTest, ConnectionRefusedIsIoError) {
  int port = 0;
  {
    ScriptedLlmServer server;  // Find a port, then free it.
    ASSERT_TRUE(server.ok());
    port = server.port();
  }
  HttpRequest req;
  req.url = "http://127.0.0.1:" + std::to_string(port) + "/x";
  auto resp = HttpFetch(req);
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().code(), StatusCode::kIoError);
  EXPECT_EQ(resp.status().message().rfind("GET " + req.url + ": ", 0), 0u)
      << resp.status().message();
}

TEST(HttpClientTest, ClosedWithoutReplyIsIoError) {
  ScriptedLlmServer server;
  ASSERT_TRUE(server.ok());
  ScriptedReply r;
  r.close_without_reply = true;
  server.Enqueue(r);
  HttpRequest req;
  req.url = server.url() + "/x";
  auto resp = HttpFetch(req);
  ASSERT_FALSE(resp.ok());
  EXPECT_EQ(resp.status().code(), StatusCode::kIoError);
}

TEST(HttpClientTest, BadMethodAndUrlAreInvalidArgument) {
  HttpRequest req;
  req.method = "PATCHY";
  req.url = "http://127.0.0.1:1/";
  auto a = HttpFetch(req);
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(a.status().message().find("PATCHY"), std::string::npos);

  for (std::string url :
       {"", "not a url", "ftp://127.0.0.1/x", "file:///etc/passwd"}) {
    req.method = "GET";
    req.url = url;
    auto b = HttpFetch(req);
    ASSERT_FALSE(b.ok()) << url;
    EXPECT_EQ(b.status().code(), StatusCode::kInvalidArgument) << url;
  }
}

TEST(HttpClientTest, EmptyQueueAnswers500) {
  ScriptedLlmServer server;
  ASSERT_TRUE(server.ok());
  HttpRequest req;
  req.url = server.url() + "/x";
  auto resp = HttpFetch(req);
  ASSERT_TRUE(resp.ok());
  EXPECT_EQ(resp->status, 500);
  EXPECT_NE(resp->body.find("no reply queued"), std::string::npos);
}

}  // namespace
}  // namespace trench::agents
