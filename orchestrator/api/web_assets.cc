#include "orchestrator/api/web_assets.h"

#include <string>
#include <vector>

#include "base/sha256.h"
#include "orchestrator/api/api_query.h"

namespace trench::orchestrator {
namespace {

constexpr std::string_view kStaticPrefix = "/static/";
constexpr std::string_view kBugPrefix = "/bugs/";

constexpr std::string_view kCsp =
    "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; object-src 'none'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

struct Extension {
  std::string_view suffix, type;
};
constexpr Extension kTypes[] = {
    {".html", "text/html; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".ico", "image/x-icon"},
    {".txt", "text/plain; charset=utf-8"},
    {".json", "application/json"},
};

void AddSecurityHeaders(ApiResponse& r) {
  r.headers.emplace_back("Content-Security-Policy", std::string(kCsp));
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  r.headers.emplace_back("X-Frame-Options", "DENY");
}

const EmbeddedFile* FindAsset(std::string_view name) {
  for (const EmbeddedFile& f : EmbeddedWebAssets()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

ApiResponse NotFound(std::string_view what) {
  ApiResponse r = ErrorResponse(404, "not_found", std::string(what));
  AddSecurityHeaders(r);
  return r;
}

ApiResponse Serve(const ApiRequest& request, const EmbeddedFile& file) {
  // The ETag of each file, computed once (the bytes never change).
  static const std::vector<std::string> etags = [] {
    std::vector<std::string> v;
    for (const EmbeddedFile& f : EmbeddedWebAssets()) {
      v.push_back("\"" + Sha256Hex(f.data).substr(0, 32) + "\"");
    }
    return v;
  }();
  const std::string& etag = etags[&file - EmbeddedWebAssets().data()];
  ApiResponse r;
  r.content_type = std::string(WebContentType(file.name));
  r.headers.emplace_back("ETag", etag);
  r.headers.emplace_back("Cache-Control", "no-cache");
  AddSecurityHeaders(r);
  auto it = request.headers.find("if-none-match");
  if (it != request.headers.end() &&
      (it->second == etag || it->second == "W/" + etag)) {
    r.status = 304;
    return r;
  }
  r.body = std::string(file.data);
  return r;
}

}  // namespace

std::string_view WebContentType(std::string_view name) {
  for (const Extension& e : kTypes) {
    if (name.ends_with(e.suffix)) return e.type;
  }
  return "application/octet-stream";
}

std::optional<ApiResponse> ServeWeb(const ApiRequest& request) {
  const std::string& p = request.path;
  std::string_view page;
  if (p == "/") {
    page = "overview.html";
  } else if (p == "/bugs" || p == "/bugs/") {
    page = "bugs.html";
  } else if (p.starts_with(kBugPrefix)) {
    if (!ParsePositive(std::string_view(p).substr(kBugPrefix.size()))) {
      return NotFound("no page " + p + " (bug ids are positive integers)");
    }
    page = "bug.html";
  } else if (!p.starts_with(kStaticPrefix)) {
    return std::nullopt;
  }
  if (request.method != "GET") {
    ApiResponse r = MethodNotAllowed(request, "GET");
    AddSecurityHeaders(r);
    return r;
  }
  if (page.empty()) page = std::string_view(p).substr(kStaticPrefix.size());
  // Only an exact name of the table: no path is ever built from the URL.
  const EmbeddedFile* file = FindAsset(page);
  if (file == nullptr) return NotFound("no file " + p);
  return Serve(request, *file);
}

}  // namespace trench::orchestrator
