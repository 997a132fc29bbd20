// The bug page's downloads (web_data.h): a bug's case or minimized case
// as .tar.gz (tar_gz.h) and a drafted patch as a git-style .patch file
// (`git am` reads it). Files are named by ids only; the case directory is
// the store's case row's, never a path from the request.
#include <ctime>
#include <string>

#include "base/display_text.h"
#include "orchestrator/api/tar_gz.h"
#include "orchestrator/api/web_data.h"

namespace trench::orchestrator {
namespace {

// The largest case a download archives.
constexpr uint64_t kMaxCaseBytes = 256ull << 20;

ApiResponse Attachment(std::string body, const std::string& content_type,
                       const std::string& file_name) {
  ApiResponse r;
  r.content_type = content_type;
  r.body = std::move(body);
  // file_name is made of ids and fixed words: nothing to quote.
  r.headers.emplace_back("Content-Disposition",
                         "attachment; filename=\"" + file_name + "\"");
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  return r;
}

// RFC 2822 date of `ms` (UTC), as git format-patch writes it.
std::string MailDate(int64_t ms) {
  const std::time_t t = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%a, %d %b %Y %H:%M:%S +0000", &tm);
  return buf;
}

}  // namespace

ApiResponse WebCaseDownload(Store* store, int64_t id, bool minimized) {
  StatusOr<Bug> bug = store->GetBug(id);
  if (!bug.ok()) return StatusResponse(bug.status());
  const std::optional<std::string>& sha =
      minimized ? bug->minimized_sha256 : bug->case_sha256;
  const std::string what = minimized ? "minimized case" : "case";
  if (!sha) {
    return ErrorResponse(404, "not_found",
                         "bug " + std::to_string(id) + " has no " + what);
  }
  StatusOr<Case> c = store->GetCase(*sha);
  if (!c.ok()) return StatusResponse(c.status());
  if (c->path.empty()) {
    return ErrorResponse(
        404, "not_found",
        "bug " + std::to_string(id) + "'s " + what + " has no files");
  }
  const std::string name =
      "bug-" + std::to_string(id) + (minimized ? "-minimized" : "-case");
  StatusOr<std::string> archive = TarGzDirectory(c->path, name, kMaxCaseBytes);
  if (!archive.ok()) return StatusResponse(archive.status());
  return Attachment(std::move(*archive), "application/gzip", name + ".tar.gz");
}

ApiResponse WebPatchDownload(Store* store, int64_t patch_id) {
  auto read = [&]() -> StatusOr<ApiResponse> {
    ASSIGN_OR_RETURN(
        Statement st,
        store->db()->Prepare("SELECT p.bug_id, p.branch, p.diff, "
                             "p.created_ms, b.title FROM patches p JOIN bugs "
                             "b ON b.id = p.bug_id WHERE p.id = ?1"));
    st.BindInt64(1, patch_id);
    ASSIGN_OR_RETURN(bool row, st.Step());
    if (!row) {
      return ErrorResponse(404, "not_found",
                           "no patch " + std::to_string(patch_id));
    }
    const int64_t bug = st.ColumnInt64(0);
    std::string diff = st.ColumnText(2);
    if (!diff.empty() && diff.back() != '\n') diff += '\n';
    std::string text =
        "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 "
        "2001\nFrom: trench <trench@localhost>\nDate: " +
        MailDate(st.ColumnInt64(3)) + "\nSubject: [PATCH] bug " +
        std::to_string(bug) + ": " + OneLine(st.ColumnText(4), 200) +
        "\n\nDrafted by trench for bug " + std::to_string(bug) + " (branch " +
        OneLine(st.ColumnText(1), 200) + ", patch " + std::to_string(patch_id) +
        ").\n---\n" + diff + "-- \ntrench\n";
    return Attachment(std::move(text), "text/x-patch; charset=utf-8",
                      "bug-" + std::to_string(bug) + "-patch-" +
                          std::to_string(patch_id) + ".patch");
  };
  StatusOr<ApiResponse> r = read();
  if (!r.ok()) return StatusResponse(r.status());
  return *std::move(r);
}

}  // namespace trench::orchestrator
