// GET /api/v1/bugs/{id}/graph.svg (web_data.h): the minimized module (else
// the case's) drawn by Graphviz (bug_graph.h) with the localized
// instruction highlighted. SVGs are cached by (case, highlight).
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "orchestrator/api/bug_graph.h"
#include "orchestrator/api/web_data.h"

namespace trench::orchestrator {
namespace {

constexpr size_t kCacheEntries = 64;
constexpr size_t kMaxModuleBytes = 4 << 20;

StatusOr<std::string> ReadModule(const std::string& dir) {
  std::ifstream in(std::filesystem::path(dir) / "module.hlo", std::ios::binary);
  if (!in) return NotFound("the case has no module.hlo");
  std::ostringstream s;
  s << in.rdbuf();
  std::string text = std::move(s).str();
  if (text.size() > kMaxModuleBytes) {
    return ResourceExhausted("the module is too large to draw");
  }
  return text;
}

}  // namespace

ApiResponse WebBugGraph(Store* store, const ApiOptions& options, int64_t id) {
  StatusOr<Bug> bug = store->GetBug(id);
  if (!bug.ok()) return StatusResponse(bug.status());
  const std::optional<std::string> sha =
      bug->minimized_sha256 ? bug->minimized_sha256 : bug->case_sha256;
  std::optional<Case> c;
  if (sha) {
    if (StatusOr<Case> got = store->GetCase(*sha); got.ok()) c = *got;
  }
  if (!c || c->path.empty()) {
    return ErrorResponse(404, "not_found",
                         "bug " + std::to_string(id) + " has no module");
  }
  const GraphHighlight h = LocalizedHighlight(bug->details);
  const std::string key = options.dot_program + '\0' + c->sha256 + '\0' +
                          h.instruction + '\0' + h.fusion + '\0' +
                          h.fused_instruction;
  static std::map<std::string, std::string> cache;  // Handle is serialised.
  auto cached = cache.find(key);
  std::string svg;
  if (cached != cache.end()) {
    svg = cached->second;
  } else {
    StatusOr<std::string> module = ReadModule(c->path);
    if (!module.ok()) return StatusResponse(module.status());
    StatusOr<std::string> dot = ModuleDot(*module, h);
    if (!dot.ok()) {
      if (dot.status().code() == StatusCode::kResourceExhausted) {
        return ErrorResponse(413, "too_large", dot.status().message());
      }
      return StatusResponse(dot.status());
    }
    StatusOr<std::string> drawn = RenderSvg(
        options.dot_program, *dot, 20, 16 << 20, options.graph_sandbox.get());
    if (!drawn.ok()) {
      if (drawn.status().code() == StatusCode::kUnimplemented) {
        return ErrorResponse(503, "unavailable", drawn.status().message());
      }
      return StatusResponse(drawn.status());
    }
    if (cache.size() >= kCacheEntries) cache.clear();
    svg = cache[key] = std::move(*drawn);
  }
  ApiResponse r;
  r.content_type = "image/svg+xml";
  r.body = std::move(svg);
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Content-Security-Policy", "script-src 'none'");
  return r;
}

}  // namespace trench::orchestrator
