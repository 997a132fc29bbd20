#include "orchestrator/cli/api_client.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <ctime>

#include "agents/http_client.h"
#include "base/display_text.h"
#include "orchestrator/api/api_bodies.h"

namespace trench::cli {

ApiClient::ApiClient(const Context& ctx, const std::string& server)
    : server_(!server.empty()
                  ? server
                  : ctx.Env("TRENCH_SERVER").value_or(kDefaultServer)),
      token_(ctx.Env("TRENCH_TOKEN").value_or("")) {
  while (server_.size() > 1 && server_.back() == '/') server_.pop_back();
}

StatusOr<JsonDoc> ApiClient::Call(const std::string& method,
                                  const std::string& path,
                                  const std::string& body,
                                  int timeout_seconds) {
  agents::HttpRequest req;
  req.method = method;
  req.url = server_ + path;
  req.body = body;
  req.timeout_seconds = timeout_seconds;
  req.connect_timeout_seconds = 10;
  // The daemon's triage verbs record "cli:triage" as the actor.
  req.headers.emplace_back("User-Agent", "trench-cli");
  if (!body.empty())
    req.headers.emplace_back("Content-Type", "application/json");
  if (method != "GET" && !token_.empty()) {
    req.headers.emplace_back("Authorization", "Bearer " + token_);
  }
  StatusOr<agents::HttpResponse> resp = agents::HttpFetch(req);
  if (!resp.ok()) {
    if (resp.status().code() == StatusCode::kIoError) {
      return IoError("no daemon at " + server_ + " (" +
                     resp.status().message() + ")");
    }
    return resp.status();
  }
  StatusOr<JsonDoc> json = ParseJsonDoc(resp->body);
  if (resp->status < 200 || resp->status >= 300) {
    std::string msg;
    if (json.ok()) {
      StatusOr<orchestrator::ErrorBody> e = orchestrator::ParseErrorBody(*json);
      if (e.ok()) msg = e->message;
    }
    if (msg.empty()) {
      msg = "unexpected reply: " +
            resp->body.substr(0, std::min<size_t>(resp->body.find('\n'), 200));
    }
    if (resp->status == 401 && token_.empty()) {
      msg += "; set TRENCH_TOKEN to the daemon's API token";
    }
    const StatusCode code = resp->status == 404 ? StatusCode::kNotFound
                            : resp->status == 503
                                ? StatusCode::kResourceExhausted
                                : StatusCode::kFailedPrecondition;
    return Status(code, msg + " (HTTP " + std::to_string(resp->status) + ")");
  }
  if (!json.ok() || !json->is_object()) {
    return Internal("unexpected reply from " + req.url + " (HTTP " +
                    std::to_string(resp->status) + "): not a JSON object" +
                    (json.ok() ? "" : ": " + json.status().message()));
  }
  return std::move(*json);
}

std::optional<int64_t> PositiveId(const std::string& s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v <= 0) {
    return std::nullopt;
  }
  return v;
}

std::string Time(int64_t ms) {
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M", &tm);
  return buf;
}

std::string QueryValue(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      char buf[4];
      std::snprintf(buf, sizeof(buf), "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

std::string Unexpected(const Status& s) {
  return "unexpected reply: " + s.message();
}

int ApiFail(const Context& ctx, const Status& s) {
  return Fail(ctx, EscapeControls(s.message()));
}

void ServerFlag(FlagParser* p, std::string* server) {
  p->String("server", "URL", server,
            "the daemon (default: $TRENCH_SERVER, else\n" +
                std::string(kDefaultServer) + ")");
}

}  // namespace trench::cli
