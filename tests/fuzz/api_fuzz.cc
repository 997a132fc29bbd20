// fuzz-libs: trench_api
// The HTTP API's request handling without the socket: the first line of the
// input is "METHOD TARGET" (the target through ParseTarget), a second line
// "auth" sends the right bearer token, the rest is the body. Every request
// gets a response (never a crash), every response status is a valid HTTP
// status, and every JSON response body parses. The store is a real SQLite
// file in a temporary directory, shared by all inputs.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

#include "base/json.h"
#include "orchestrator/api/api_handlers.h"
#include "orchestrator/api/api_request.h"
#include "orchestrator/store/store.h"

namespace {

namespace orch = trench::orchestrator;

orch::ApiHandlers& Handlers() {
  static orch::ApiHandlers* handlers = [] {
    const std::string dir = (std::filesystem::temp_directory_path() /
                             ("api_fuzz." + std::to_string(getpid())))
                                .string();
    std::filesystem::create_directories(dir);
    auto store = orch::Store::Open(dir + "/trench.db", {});
    if (!store.ok()) std::abort();
    orch::ApiOptions options;
    options.token = "fuzz-token";
    return new orch::ApiHandlers(store->release(), options);
  }();
  return *handlers;
}

std::string_view Line(std::string_view* rest) {
  const size_t nl = rest->find('\n');
  std::string_view line = rest->substr(0, nl);
  rest->remove_prefix(nl == std::string_view::npos ? rest->size() : nl + 1);
  return line;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  const std::string_view first = Line(&rest);
  const size_t sp = first.find(' ');
  if (sp == std::string_view::npos) return 0;
  orch::ApiRequest request;
  request.method = std::string(first.substr(0, sp));
  if (!orch::ParseTarget(first.substr(sp + 1), &request.path, &request.query)
           .ok()) {
    return 0;
  }
  std::string_view probe = rest;
  if (Line(&probe) == "auth") {
    request.headers["authorization"] = "Bearer fuzz-token";
    rest = probe;
  }
  request.headers["content-type"] = "application/json";
  request.body = std::string(rest);
  const orch::ApiResponse response = Handlers().Handle(request);
  if (response.status < 100 || response.status > 599) std::abort();
  if (response.content_type == "application/json" &&
      !trench::ParseJson(response.body).ok()) {
    std::abort();
  }
  return 0;
}
