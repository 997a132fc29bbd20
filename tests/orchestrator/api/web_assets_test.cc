// The dashboard's static routes (web_assets.h) through the real HTTP
// server: content types, caching, the security headers, 404s, and no way
// out of the embedded table (raw and percent-encoded "..").
#include "orchestrator/api/web_assets.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/orchestrator/api/api_test_util.h"

namespace trench::orchestrator::testing {
namespace {

void ExpectSecurityHeaders(HttpReply& r) {
  const std::string csp = r.headers["content-security-policy"];
  EXPECT_NE(csp.find("default-src 'self'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << csp;
  EXPECT_NE(csp.find("img-src 'self' data:"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos) << csp;
  EXPECT_EQ(csp.find("unsafe-eval"), std::string::npos) << csp;
  EXPECT_EQ(r.headers["x-content-type-options"], "nosniff");
  EXPECT_EQ(r.headers["referrer-policy"], "no-referrer");
  EXPECT_EQ(r.headers["x-frame-options"], "DENY");
}

TEST(WebAssetsTest, EmbeddedTableHoldsThePagesAndScripts) {
  for (const char* name :
       {"shell.html", "overview.body.html", "bugs.body.html", "bug.body.html",
        "overview.js", "bugs.js", "bug.js", "common.js", "style.css"}) {
    bool found = false;
    for (const EmbeddedFile& f : EmbeddedWebAssets()) {
      if (f.name == name) found = !f.data.empty();
    }
    EXPECT_TRUE(found) << name;
  }
  EXPECT_EQ(WebContentType("a.js"), "text/javascript; charset=utf-8");
  EXPECT_EQ(WebContentType("a.css"), "text/css; charset=utf-8");
  EXPECT_EQ(WebContentType("a.html"), "text/html; charset=utf-8");
  EXPECT_EQ(WebContentType("a.bin"), "application/octet-stream");
}

TEST(WebAssetsTest, PagesHaveNoInlineScript) {
  // The CSP forbids inline script: a page that had one would break.
  for (const EmbeddedFile& f : EmbeddedWebAssets()) {
    if (!f.name.ends_with(".html")) continue;
    std::string html(f.data);
    size_t pos = 0;
    while ((pos = html.find("<script", pos)) != std::string::npos) {
      const size_t end = html.find('>', pos);
      ASSERT_NE(end, std::string::npos);
      EXPECT_NE(html.substr(pos, end - pos).find("src=\"/static/"),
                std::string::npos)
          << f.name << ": " << html.substr(pos, end - pos);
      EXPECT_EQ(html.compare(end + 1, 9, "</script>"), 0) << f.name;
      pos = end;
    }
    for (const char* attr : {"onclick=", "onload=", "onerror=", "onsubmit="}) {
      EXPECT_EQ(html.find(attr), std::string::npos) << f.name << " " << attr;
    }
  }
}

TEST_F(ApiTest, PagesAreServedWithSecurityHeaders) {
  for (const char* target : {"/", "/bugs", "/bugs/7", "/bugs/123456"}) {
    HttpReply r = Call("GET", target);
    EXPECT_EQ(r.status, 200) << target;
    EXPECT_EQ(r.headers["content-type"], "text/html; charset=utf-8") << target;
    EXPECT_NE(r.body.find("<!doctype html>"), std::string::npos) << target;
    EXPECT_EQ(r.headers["cache-control"], "no-cache") << target;
    EXPECT_FALSE(r.headers["etag"].empty()) << target;
    ExpectSecurityHeaders(r);
  }
  // No data in the shells: a bug's page is the same bytes for any id.
  EXPECT_EQ(Call("GET", "/bugs/7").body, Call("GET", "/bugs/8").body);
  // Each page is the shell with its own sections and script.
  HttpReply bug = Call("GET", "/bugs/7");
  EXPECT_NE(bug.body.find("<script src=\"/static/bug.js\" defer>"),
            std::string::npos);
  EXPECT_NE(bug.body.find("id=\"verbs\""), std::string::npos);
  EXPECT_EQ(bug.body.find('@'), std::string::npos);  // Every marker filled.
  HttpReply overview = Call("GET", "/");
  EXPECT_NE(overview.body.find("id=\"commits\""), std::string::npos);
  EXPECT_NE(overview.body.find("/static/overview.js"), std::string::npos);
  EXPECT_NE(overview.headers["etag"], bug.headers["etag"]);
}

TEST_F(ApiTest, StaticAssetsHaveTheirTypes) {
  HttpReply js = Call("GET", "/static/common.js");
  EXPECT_EQ(js.status, 200);
  EXPECT_EQ(js.headers["content-type"], "text/javascript; charset=utf-8");
  EXPECT_NE(js.body.find("textContent"), std::string::npos);
  ExpectSecurityHeaders(js);
  HttpReply css = Call("GET", "/static/style.css");
  EXPECT_EQ(css.status, 200);
  EXPECT_EQ(css.headers["content-type"], "text/css; charset=utf-8");
  ExpectSecurityHeaders(css);
}

TEST_F(ApiTest, EtagRevalidationAnswers304) {
  HttpReply first = Call("GET", "/static/common.js");
  const std::string etag = first.headers["etag"];
  ASSERT_FALSE(etag.empty());
  EXPECT_EQ(etag.front(), '"');
  HttpClient client(server_->port());
  HttpReply again = client.Request("GET", "/static/common.js", "", "",
                                   "If-None-Match: " + etag + "\r\n");
  EXPECT_EQ(again.status, 304);
  EXPECT_TRUE(again.body.empty());
  EXPECT_EQ(again.headers["etag"], etag);
  // Another ETag: the full answer.
  HttpReply other = client.Request("GET", "/static/common.js", "", "",
                                   "If-None-Match: \"stale\"\r\n");
  EXPECT_EQ(other.status, 200);
  EXPECT_EQ(other.body, first.body);
  // Each file has its own.
  EXPECT_NE(Call("GET", "/static/style.css").headers["etag"], etag);
}

TEST_F(ApiTest, UnknownAssetsAndPagesAre404) {
  for (const char* target :
       {"/static/", "/static/nope.js", "/static/common.js.map",
        "/static/COMMON.JS", "/bugs/0", "/bugs/x", "/bugs/7/extra", "/bugs/-1",
        "/static/web/common.js"}) {
    HttpReply r = Call("GET", target);
    EXPECT_EQ(r.status, 404) << target;
    EXPECT_EQ(r.json().Find("error")->Find("code")->string_value(), "not_found")
        << target;
    ExpectSecurityHeaders(r);
  }
}

TEST_F(ApiTest, NoPathTraversal) {
  // Raw and percent-encoded dot segments, slashes and NULs: the name must
  // match an embedded file exactly, so none reaches a file.
  for (const char* target :
       {"/static/../x", "/static/../../CMakeLists.txt", "/static/%2e%2e/x",
        "/static/%2E%2E/%2E%2E/etc/passwd", "/static/..%2fstore.db",
        "/static/%2e%2e%2fCMakeLists.txt", "/static/.%2e/common.js",
        "/static/./common.js", "/static//common.js", "/static/common.js%00.css",
        "/static/%2fetc%2fpasswd", "/static/..\\common.js"}) {
    HttpReply r = Call("GET", target);
    // 400 when the HTTP parser or the target decoder refuses it first.
    EXPECT_TRUE(r.status == 404 || r.status == 400)
        << target << ": " << r.status << " " << r.body.substr(0, 200);
    EXPECT_NE(r.status, 200) << target;
    EXPECT_EQ(r.body.find("root:"), std::string::npos) << target;
  }
  ExpectHealthy();
}

TEST_F(ApiTest, PagesAreGetOnly) {
  HttpReply r = Call("POST", "/static/common.js", "{}", kToken);
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.headers["allow"], "GET");
  r = Call("POST", "/bugs/3", "{}", kToken);
  EXPECT_EQ(r.status, 405);
}

}  // namespace
}  // namespace trench::orchestrator::testing
