// The web data routes (web_data.h): which path goes to which handler.
#include <string>
#include <string_view>

#include "base/display_text.h"
#include "orchestrator/api/api_query.h"
#include "orchestrator/api/web_data.h"

namespace trench::orchestrator {
namespace {

constexpr std::string_view kBugsPrefix = "/api/v1/bugs/";
constexpr std::string_view kPatchesPrefix = "/api/v1/patches/";
constexpr std::string_view kPatchSuffix = ".patch";

// The 404 for an id that is not a positive integer (shown shortened: it is
// the client's text).
ApiResponse BadId(std::string_view what, std::string_view id_text) {
  return ErrorResponse(404, "not_found",
                       "no " + std::string(what) + " '" +
                           OneLine(std::string(id_text), 40) + "' (" +
                           std::string(what) + " ids are positive integers)");
}

// GET-only: the handler's answer, or 405.
template <typename F>
ApiResponse GetOnly(const ApiRequest& request, F&& handler) {
  if (request.method != "GET") return MethodNotAllowed(request, "GET");
  return handler();
}

}  // namespace

std::optional<ApiResponse> RouteWebData(Store* store, const ApiOptions& options,
                                        const ApiRequest& request) {
  const std::string& p = request.path;
  if (p == "/api/v1/overview") {
    return GetOnly(request, [&] { return WebOverview(store, options); });
  }
  if (p == "/api/v1/bugs") {
    return GetOnly(request,
                   [&] { return WebBugList(store, options, request); });
  }
  if (p == "/api/v1/signatures") {
    return GetOnly(request,
                   [&] { return WebSignatures(store, options, request); });
  }
  if (p.starts_with(kBugsPrefix)) {
    std::string_view rest = std::string_view(p).substr(kBugsPrefix.size());
    const size_t slash = rest.find('/');
    if (slash == std::string_view::npos) return std::nullopt;
    const std::string_view what = rest.substr(slash + 1);
    if (what != "view" && what != "graph.svg" && what != "case.tar.gz" &&
        what != "minimized.tar.gz") {
      return std::nullopt;
    }
    const std::string_view id_text = rest.substr(0, slash);
    return GetOnly(request, [&]() -> ApiResponse {
      std::optional<int64_t> id = ParsePositive(id_text);
      if (!id) return BadId("bug", id_text);
      if (what == "view") return WebBugView(store, options, *id);
      if (what == "graph.svg") return WebBugGraph(store, options, *id);
      return WebCaseDownload(store, *id, what == "minimized.tar.gz");
    });
  }
  if (p.starts_with(kPatchesPrefix) && p.ends_with(kPatchSuffix) &&
      p.find('/', kPatchesPrefix.size()) == std::string::npos) {
    const std::string_view id_text = std::string_view(p).substr(
        kPatchesPrefix.size(),
        p.size() - kPatchesPrefix.size() - kPatchSuffix.size());
    return GetOnly(request, [&]() -> ApiResponse {
      std::optional<int64_t> id = ParsePositive(id_text);
      if (!id) return BadId("patch", id_text);
      return WebPatchDownload(store, *id);
    });
  }
  return std::nullopt;
}

}  // namespace trench::orchestrator
