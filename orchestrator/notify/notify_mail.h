// E-mail reports in the style of syzbot: one mail per new bug (kind
// "finding") and one per proposed patch (kind "proposed"), plain text,
// sent through libcurl's SMTP client.
//
// The message (RFC 5322, CRLF line ends), built once when the delivery is
// queued so that a resend is the same message:
//   From, To (the config's plain addresses), Subject "[trench] bug N:
//   <title>" (the title as one line without controls, OneLine; when it is
//   not ASCII the subject is RFC 2047 encoded words, UTF-8 base64),
//   Date, Message-ID <delivery id@from's domain> (a resend keeps it, so
//   mail readers drop repeats), In-Reply-To / References the bug's first
//   mail for a patch, MIME-Version, Content-Type text/plain; charset=utf-8,
//   Content-Transfer-Encoding 8bit (quoted-printable when a line would
//   pass SMTP's 998 octets), X-Trench-Delivery, X-Trench-Event.
//   Body: what happened and the dashboard link, for a patch its diff
//   inline, then the triage report (triage_report.h) with controls
//   escaped (display_text.h).
// Lines starting with '.' are sent as they are: libcurl dot-stuffs.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "orchestrator/notify/notify_send.h"
#include "orchestrator/notify/notify_setup.h"
#include "orchestrator/store/store.h"

namespace trench::orchestrator {

struct MailContent {
  std::string kind;         // "finding" or "proposed".
  std::string delivery_id;  // This mail's.
  std::string thread_id;    // The bug's first mail's delivery id ("": none).
  Bug bug;
  std::string report;  // BugReportText of the bug.
  std::string diff;    // The proposed patch ("" for a new bug).
  std::string branch;  // Its branch.
  int64_t now_ms = 0;
};

// The whole message, CRLF line ends.
std::string RenderMail(const NotifyEmailConfig& email,
                       const MailContent& content);

// The Subject header's value for bug `id` (header-safe: one line, ASCII).
std::string MailSubject(int64_t id, const std::string& title);

// Sends `message` through the destination's SMTP server. `cancel` (may be
// null) aborts (a kRetry). Classified as notify_send.h says.
SendResult SendMail(const NotifyDestination& destination,
                    const std::string& message, double timeout_seconds,
                    const std::atomic<bool>* cancel);

}  // namespace trench::orchestrator
