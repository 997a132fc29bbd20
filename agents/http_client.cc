// HttpFetch over libcurl's easy interface: one handle per call.
#include "agents/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>

namespace trench::agents {
namespace {

constexpr int kMaxRedirects = 5;

// curl_global_init is not thread-safe; run it once for the process.
void GlobalInitOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(uint8_t(c)));
  return out;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' ||
                        s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", s);
  return buf;
}

struct Transfer {
  const HttpRequest* request;
  HttpResponse* response;
  bool aborted_by_reader = false;
  bool cancelled = false;
  bool redirect = false;  // The current response is a 3xx: body dropped.
};

bool IsRedirect(long status) {
  return status == 301 || status == 302 || status == 303 || status == 307 ||
         status == 308;
}

size_t OnBody(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
  if (t->redirect) return len;  // Not the answer; never the reader's.
  if (t->request->on_body) {
    if (!t->request->on_body(std::string_view(data, len))) {
      t->aborted_by_reader = true;
      return 0;  // Makes curl stop with CURLE_WRITE_ERROR.
    }
  } else {
    t->response->body.append(data, len);
  }
  return len;
}

// curl's progress callback: called at least once a second during the
// transfer, also while nothing arrives. Non-zero aborts it.
int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* t = static_cast<Transfer*>(user);
  if (t->request->cancel != nullptr && t->request->cancel->load()) {
    t->cancelled = true;
    return 1;  // CURLE_ABORTED_BY_CALLBACK.
  }
  return 0;
}

size_t OnHeader(char* data, size_t size, size_t n, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t len = size * n;
  std::string_view line(data, len);
  if (line.starts_with("HTTP/")) {
    // A new status line: a 100-continue came before; keep only the last
    // response's headers.
    t->response->headers.clear();
    const size_t sp = line.find(' ');
    t->redirect =
        sp != std::string_view::npos &&
        IsRedirect(std::atol(std::string(line.substr(sp + 1, 3)).c_str()));
    return len;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return len;  // Blank line at the end.
  t->response->headers.emplace_back(Lower(Trim(line.substr(0, colon))),
                                    std::string(Trim(line.substr(colon + 1))));
  return len;
}

Status CheckRequest(const HttpRequest& r) {
  static constexpr std::string_view kMethods[] = {"GET", "POST", "PUT",
                                                  "DELETE"};
  if (std::find(std::begin(kMethods), std::end(kMethods), r.method) ==
      std::end(kMethods)) {
    return InvalidArgument("unsupported HTTP method '" + r.method +
                           "' (expected GET, POST, PUT or DELETE)");
  }
  CURLU* url = curl_url();
  const CURLUcode rc = curl_url_set(url, CURLUPART_URL, r.url.c_str(), 0);
  char* scheme = nullptr;
  if (rc == CURLUE_OK) curl_url_get(url, CURLUPART_SCHEME, &scheme, 0);
  const std::string s = scheme ? Lower(scheme) : "";
  curl_free(scheme);
  curl_url_cleanup(url);
  if (rc != CURLUE_OK) {
    return InvalidArgument("malformed URL '" + r.url +
                           "': " + curl_url_strerror(rc));
  }
  if (s != "http" && s != "https") {
    return InvalidArgument("malformed URL '" + r.url +
                           "': scheme must be http or https");
  }
  return Status::Ok();
}

// "scheme://host:port" of an absolute URL, the port made explicit; "" when
// it does not parse.
std::string Origin(const std::string& url) {
  CURLU* u = curl_url();
  std::string out;
  if (curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK) {
    char *scheme = nullptr, *host = nullptr, *port = nullptr;
    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
    curl_url_get(u, CURLUPART_HOST, &host, 0);
    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
    if (scheme && host && port) {
      out = Lower(scheme) + "://" + Lower(host) + ":" + port;
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
  }
  curl_url_cleanup(u);
  return out;
}

using CurlPtr = std::unique_ptr<CURL, decltype(&curl_easy_cleanup)>;
using SlistPtr = std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)>;

}  // namespace

std::string HttpResponse::Header(std::string_view lower_name) const {
  for (const auto& [name, value] : headers) {
    if (name == lower_name) return value;
  }
  return "";
}

namespace {

// One request/response exchange, no redirect followed; *location receives
// the absolute URL a 3xx answer points to ("" when none).
StatusOr<HttpResponse> FetchOnce(const HttpRequest& request,
                                 std::string* location) {
  CurlPtr curl(curl_easy_init(), &curl_easy_cleanup);
  if (!curl) return Internal("curl_easy_init failed");
  CURL* h = curl.get();

  HttpResponse response;
  Transfer transfer{&request, &response};
  char errbuf[CURL_ERROR_SIZE] = {};

  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // Threads: no SIGALRM.
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, &OnBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, &OnHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &transfer);
  if (request.cancel != nullptr) {
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, &OnProgress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, &transfer);
  }
  // Redirects are followed by HttpFetch, which knows the credentials.
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(request.timeout_seconds * 1000));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(request.connect_timeout_seconds * 1000));

  const bool send_body = !request.body.empty() || request.method == "POST" ||
                         request.method == "PUT";
  if (send_body) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  }
  if (request.method != "POST" && (send_body || request.method != "GET")) {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  }

  curl_slist* raw_headers = nullptr;
  // No "Expect: 100-continue" round trip for larger bodies.
  raw_headers = curl_slist_append(raw_headers, "Expect:");
  for (const auto& [name, value] : request.headers) {
    raw_headers = curl_slist_append(raw_headers, (name + ": " + value).c_str());
  }
  SlistPtr header_list(raw_headers, &curl_slist_free_all);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, header_list.get());

  const std::string what = request.method + " " + request.url;
  if (request.cancel != nullptr && request.cancel->load()) {
    return Cancelled(what + ": cancelled");
  }
  const CURLcode rc = curl_easy_perform(h);
  if (transfer.cancelled) return Cancelled(what + ": cancelled");
  if (rc == CURLE_OPERATION_TIMEDOUT) {
    return Status(
        StatusCode::kDeadlineExceeded,
        what + ": timed out after " + Seconds(request.timeout_seconds) + " s");
  }
  if (transfer.aborted_by_reader) {
    return IoError(what + ": aborted by the reader");
  }
  if (rc != CURLE_OK) {
    const std::string detail = errbuf[0] ? errbuf : curl_easy_strerror(rc);
    return IoError(what + ": " + detail);
  }
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  response.status = static_cast<int>(status);
  location->clear();
  char* next = nullptr;
  if (IsRedirect(status) &&
      curl_easy_getinfo(h, CURLINFO_REDIRECT_URL, &next) == CURLE_OK &&
      next != nullptr) {
    *location = next;
  }
  return response;
}

}  // namespace

StatusOr<HttpResponse> HttpFetch(const HttpRequest& request) {
  RETURN_IF_ERROR(CheckRequest(request));
  GlobalInitOnce();
  HttpRequest hop = request;
  const std::string origin = Origin(request.url);
  for (int redirects = 0;; ++redirects) {
    std::string location;
    ASSIGN_OR_RETURN(HttpResponse response, FetchOnce(hop, &location));
    if (location.empty()) return response;
    const std::string what = request.method + " " + request.url;
    if (redirects == kMaxRedirects) {
      return IoError(what + ": more than " + std::to_string(kMaxRedirects) +
                     " redirects");
    }
    // The headers carry credentials (x-api-key, Authorization): they go to
    // the origin they were configured for and nowhere else.
    const std::string to = Origin(location);
    if (to != origin) {
      return FailedPrecondition(
          what + ": refused a redirect (" + std::to_string(response.status) +
          ") from " + origin + " to " + (to.empty() ? location : to) +
          ": credentials are sent only to the configured host");
    }
    hop.url = location;
    // 303 (and 301/302 of a POST, as curl and browsers do) become a GET.
    if (response.status == 303 ||
        ((response.status == 301 || response.status == 302) &&
         hop.method == "POST")) {
      hop.method = "GET";
      hop.body.clear();
    }
  }
}

}  // namespace trench::agents
