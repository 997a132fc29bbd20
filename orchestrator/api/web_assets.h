// The dashboard's pages (issue 20): HTML shells and static assets built
// into the binary from orchestrator/api/web/ (cmake/embed_files.cmake), so
// the daemon serves them with no build step and no file read at run time.
// The shells hold no data: the scripts fetch it from /api/v1/* and insert
// every string as text.
//
//   GET /                 the overview      GET /bugs       the bug list
//   GET /bugs/{id}        one bug ({id} a positive integer, else 404)
//                         Each page is shell.html (the header, the token
//                         form) with @PAGE@ its name (overview, bugs, bug:
//                         its script /static/<name>.js) and @BODY@ the
//                         sections of <name>.body.html.
//   GET /static/<file>    the embedded file of that exact name: 404 for any
//                         other name (so "..", "/" or an encoded "%2e%2e"
//                         never reach a file system: there is none).
//
// Every answer carries Content-Type by extension, "Cache-Control:
// no-cache" with a strong ETag of the bytes (If-None-Match answers 304),
// and the security headers: a Content-Security-Policy allowing only this
// origin's scripts, styles and connections (no inline script, images from
// 'self' and data:), X-Content-Type-Options nosniff, Referrer-Policy
// no-referrer and X-Frame-Options DENY. Other methods than GET get 405.
#pragma once

#include <optional>
#include <span>
#include <string_view>

#include "orchestrator/api/api_request.h"

namespace trench::orchestrator {

struct EmbeddedFile {
  std::string_view name;  // File name, e.g. "app.js".
  std::string_view data;
};

// The files of orchestrator/api/web/, sorted by name (generated source).
std::span<const EmbeddedFile> EmbeddedWebAssets();

// The answer for a page or asset route, or nullopt when `request.path` is
// not one (the API routes it then).
std::optional<ApiResponse> ServeWeb(const ApiRequest& request);

// The Content-Type for a file name, by extension
// (application/octet-stream when unknown).
std::string_view WebContentType(std::string_view name);

}  // namespace trench::orchestrator
