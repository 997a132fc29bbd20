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

std::string EtagOf(std::string_view bytes) {
  return "\"" + Sha256Hex(bytes).substr(0, 32) + "\"";
}

// A page: shell.html with @PAGE@ replaced by its name and @BODY@ by
// <name>.body.html, made once.
struct Page {
  std::string html, etag;
};

std::string ReplaceAll(std::string text, std::string_view from,
                       std::string_view to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

const Page* FindPage(std::string_view name) {
  static const std::vector<std::pair<std::string, Page>> pages = [] {
    std::vector<std::pair<std::string, Page>> v;
    const EmbeddedFile* shell = FindAsset("shell.html");
    for (const char* n : {"overview", "bugs", "bug"}) {
      const EmbeddedFile* body = FindAsset(std::string(n) + ".body.html");
      if (shell == nullptr || body == nullptr) continue;
      Page page;
      page.html =
          ReplaceAll(ReplaceAll(std::string(shell->data), "@BODY@", body->data),
                     "@PAGE@", n);
      page.etag = EtagOf(page.html);
      v.emplace_back(n, std::move(page));
    }
    return v;
  }();
  for (const auto& [n, page] : pages) {
    if (n == name) return &page;
  }
  return nullptr;
}

// `bytes` as the file `name` (its Content-Type), with caching and
// security headers; 304 when the client has this ETag.
ApiResponse Serve(const ApiRequest& request, std::string_view name,
                  std::string_view bytes, const std::string& etag) {
  ApiResponse r;
  r.content_type = std::string(WebContentType(name));
  r.headers.emplace_back("ETag", etag);
  r.headers.emplace_back("Cache-Control", "no-cache");
  AddSecurityHeaders(r);
  auto it = request.headers.find("if-none-match");
  if (it != request.headers.end() &&
      (it->second == etag || it->second == "W/" + etag)) {
    r.status = 304;
    return r;
  }
  r.body = std::string(bytes);
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
    page = "overview";
  } else if (p == "/bugs" || p == "/bugs/") {
    page = "bugs";
  } else if (p.starts_with(kBugPrefix)) {
    if (!ParsePositive(std::string_view(p).substr(kBugPrefix.size()))) {
      return NotFound("no page " + p + " (bug ids are positive integers)");
    }
    page = "bug";
  } else if (!p.starts_with(kStaticPrefix)) {
    return std::nullopt;
  }
  if (request.method != "GET") {
    ApiResponse r = MethodNotAllowed(request, "GET");
    AddSecurityHeaders(r);
    return r;
  }
  if (!page.empty()) {
    const Page* built = FindPage(page);
    if (built == nullptr) return NotFound("no page " + p);
    return Serve(request, "page.html", built->html, built->etag);
  }
  // Only an exact name of the table: no path is ever built from the URL.
  const EmbeddedFile* file =
      FindAsset(std::string_view(p).substr(kStaticPrefix.size()));
  if (file == nullptr) return NotFound("no file " + p);
  // The ETag of each file, computed once (the bytes never change).
  static const std::vector<std::string> etags = [] {
    std::vector<std::string> v;
    for (const EmbeddedFile& f : EmbeddedWebAssets())
      v.push_back(EtagOf(f.data));
    return v;
  }();
  return Serve(request, file->name, file->data,
               etags[file - EmbeddedWebAssets().data()]);
}

}  // namespace trench::orchestrator
