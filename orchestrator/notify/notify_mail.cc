// E-mail messages and their SMTP sending (notify_mail.h).
#include "orchestrator/notify/notify_mail.h"

#include <curl/curl.h>

#include <cstring>
#include <ctime>
#include <memory>

#include "base/display_text.h"

namespace trench::orchestrator {
namespace {

constexpr size_t kMaxLine = 998;  // SMTP's limit, without CRLF.

std::string Base64(std::string_view in) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    const uint32_t v =
        (uint8_t(in[i]) << 16) | (uint8_t(in[i + 1]) << 8) | uint8_t(in[i + 2]);
    for (int s : {18, 12, 6, 0}) out += kAlphabet[(v >> s) & 63];
  }
  if (i < in.size()) {
    uint32_t v = uint8_t(in[i]) << 16;
    if (i + 1 < in.size()) v |= uint8_t(in[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < in.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

bool IsPrintableAscii(std::string_view s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c >= 0x7f) return false;
  }
  return true;
}

// RFC 2047 encoded words of UTF-8 `text`, each at most 75 characters (45
// bytes of text, cut at character boundaries), folded onto lines of their
// own.
std::string EncodedWords(std::string_view text) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    size_t end = std::min(text.size(), i + 45);
    while (end < text.size() && (uint8_t(text[end]) & 0xc0) == 0x80) --end;
    if (!out.empty()) out += "\r\n ";
    out += "=?UTF-8?B?" + Base64(text.substr(i, end - i)) + "?=";
    i = end;
  }
  return out;
}

std::string RfcDate(int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed",
                                          "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr",
                                            "May", "Jun", "Jul", "Aug",
                                            "Sep", "Oct", "Nov", "Dec"};
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s, %02d %s %04d %02d:%02d:%02d +0000",
                kDays[tm.tm_wday], tm.tm_mday, kMonths[tm.tm_mon],
                tm.tm_year + 1900, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return buf;
}

// `text`'s lines (split at \n; a \r before it dropped).
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t nl = text.find('\n', start);
    if (nl == std::string::npos) nl = text.size();
    std::string line = text.substr(start, nl - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    start = nl + 1;
  }
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

// Quoted-printable (RFC 2045) of one line, soft-broken at 76 characters.
std::string QuotedPrintable(const std::string& line) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  size_t col = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const unsigned char c = line[i];
    const bool last = i + 1 == line.size();
    std::string piece;
    if ((c >= 33 && c <= 126 && c != '=') ||
        ((c == ' ' || c == '\t') && !last)) {
      piece = std::string(1, static_cast<char>(c));
    } else {
      piece = {'=', kHex[c >> 4], kHex[c & 15]};
    }
    if (col + piece.size() > 75) {
      out += "=\r\n";
      col = 0;
    }
    out += piece;
    col += piece.size();
  }
  return out;
}

std::string Domain(const std::string& address) {
  return address.substr(address.find('@') + 1);
}

}  // namespace

std::string MailSubject(int64_t id, const std::string& title) {
  const std::string subject =
      "[trench] bug " + std::to_string(id) + ": " + OneLine(title, 150);
  return IsPrintableAscii(subject) ? subject : EncodedWords(subject);
}

std::string RenderMail(const NotifyEmailConfig& email,
                       const MailContent& content) {
  const Bug& bug = content.bug;
  const std::string link = "/bugs/" + std::to_string(bug.id);
  std::string body;
  if (content.kind == "proposed") {
    body += "trench proposes a patch for bug " + std::to_string(bug.id) +
            " (branch " + EscapeControls(content.branch, false) + ").\n";
  } else {
    body += "trench found a new bug.\n";
  }
  body += "\ntitle:     " + OneLine(bug.title, 300) +
          "\nstate:     " + std::string(BugStateName(bug.state)) +
          "\nsignature: " + OneLine(bug.signature, 300) +
          "\ndashboard: " + link + "\n";
  if (content.kind == "proposed") {
    body += "\nThe patch:\n\n" + EscapeControls(content.diff, true);
    if (!content.diff.empty() && content.diff.back() != '\n') body += "\n";
  }
  body += "\nThe triage report:\n\n" + EscapeControls(content.report, true);
  body +=
      "\n---\nThis mail was sent by trench, an automated compiler bug "
      "finder.\nReview and triage the bug on the dashboard: " +
      link + "\n";
  std::vector<std::string> lines = Lines(body);
  bool long_line = false;
  for (const std::string& l : lines) long_line |= l.size() > kMaxLine;

  std::string to;
  for (const std::string& a : email.to) to += (to.empty() ? "" : ", ") + a;
  const std::string domain = Domain(email.from);
  std::string m;
  m += "From: " + email.from + "\r\n";
  m += "To: " + to + "\r\n";
  m += "Subject: " + MailSubject(bug.id, bug.title) + "\r\n";
  m += "Date: " + RfcDate(content.now_ms) + "\r\n";
  m += "Message-ID: <" + content.delivery_id + "@" + domain + ">\r\n";
  if (!content.thread_id.empty() && content.thread_id != content.delivery_id) {
    const std::string parent = "<" + content.thread_id + "@" + domain + ">";
    m += "In-Reply-To: " + parent + "\r\n";
    m += "References: " + parent + "\r\n";
  }
  m += "MIME-Version: 1.0\r\n";
  m += "Content-Type: text/plain; charset=utf-8\r\n";
  m += std::string("Content-Transfer-Encoding: ") +
       (long_line ? "quoted-printable" : "8bit") + "\r\n";
  m += "X-Trench-Delivery: " + content.delivery_id + "\r\n";
  m += "X-Trench-Event: " + content.kind + "\r\n";
  m += "\r\n";
  for (const std::string& l : lines) {
    m += (long_line ? QuotedPrintable(l) : l) + "\r\n";
  }
  return m;
}

namespace {

struct Upload {
  const std::string* data;
  size_t pos = 0;
};

size_t ReadUpload(char* buffer, size_t size, size_t n, void* user) {
  Upload* u = static_cast<Upload*>(user);
  const size_t len = std::min(size * n, u->data->size() - u->pos);
  std::memcpy(buffer, u->data->data() + u->pos, len);
  u->pos += len;
  return len;
}

int Progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* cancel = static_cast<const std::atomic<bool>*>(user);
  return cancel != nullptr && cancel->load() ? 1 : 0;
}

}  // namespace

SendResult SendMail(const NotifyDestination& destination,
                    const std::string& message, double timeout_seconds,
                    const std::atomic<bool>* cancel) {
  const NotifyEmailConfig& e = destination.email;
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(),
                                                           curl_easy_cleanup);
  if (!curl) return {SendOutcome::kRetry, "curl_easy_init failed"};
  curl_slist* rcpt = nullptr;
  for (const std::string& to : e.to) {
    rcpt = curl_slist_append(rcpt, ("<" + to + ">").c_str());
  }
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> rcpt_owner(
      rcpt, curl_slist_free_all);
  Upload upload{&message};
  const std::string from = "<" + e.from + ">";
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, e.smtp_url.c_str());
  curl_easy_setopt(c, CURLOPT_MAIL_FROM, from.c_str());
  curl_easy_setopt(c, CURLOPT_MAIL_RCPT, rcpt);
  curl_easy_setopt(c, CURLOPT_READFUNCTION, ReadUpload);
  curl_easy_setopt(c, CURLOPT_READDATA, &upload);
  curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(timeout_seconds * 1000));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::min(timeout_seconds, 10.0) * 1000));
  curl_easy_setopt(c, CURLOPT_USE_SSL,
                   e.starttls == "require" ? CURLUSESSL_ALL
                   : e.starttls == "try"   ? CURLUSESSL_TRY
                                           : CURLUSESSL_NONE);
  if (!destination.username.empty()) {
    curl_easy_setopt(c, CURLOPT_USERNAME, destination.username.c_str());
  }
  if (!destination.password.empty()) {
    curl_easy_setopt(c, CURLOPT_PASSWORD, destination.password.c_str());
  }
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, Progress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, cancel);
  const CURLcode rc = curl_easy_perform(c);
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  std::string detail = "SMTP " + e.smtp_url;
  if (code != 0) detail += ": reply " + std::to_string(code);
  if (rc == CURLE_OK) return {SendOutcome::kSent, detail};
  detail += ": " + std::string(curl_easy_strerror(rc));
  if (code >= 500 && code < 600) return {SendOutcome::kRefused, detail};
  if (code >= 400 && code < 500) return {SendOutcome::kRetry, detail};
  switch (rc) {
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
    case CURLE_LOGIN_DENIED:
    case CURLE_USE_SSL_FAILED:
      return {SendOutcome::kRefused, detail};
    default:
      return {SendOutcome::kRetry, detail};
  }
}

}  // namespace trench::orchestrator
