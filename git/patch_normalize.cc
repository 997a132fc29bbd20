#include "git/patch_normalize.h"

#include <algorithm>
#include <cctype>

namespace trench::agents {
namespace {

bool Blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](unsigned char c) { return std::isspace(c) != 0; });
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

Status CheckFile(const FileDiff& f) {
  const std::string at = "line " + std::to_string(f.line) + ": ";
  for (const std::string* p : {&f.old_path, &f.new_path}) {
    if (p->empty()) continue;  // /dev/null.
    if (const std::string why = UnsafePathReason(*p); !why.empty()) {
      return InvalidArgument(at + "unsafe path " + ShownInMessage(*p) + ": " +
                             why);
    }
  }
  for (const std::string* m : {&f.old_mode, &f.new_mode, &f.index_mode}) {
    if (*m == "120000" || *m == "160000") {
      return InvalidArgument(
          at + "mode " + *m + " of " + ShownInMessage(f.path()) +
          " is refused (" +
          (*m == "120000" ? "a symbolic link" : "a submodule") +
          "): patches change regular files only");
    }
  }
  return Status::Ok();
}

}  // namespace

std::string UnsafePathReason(std::string_view path) {
  if (path.empty()) return "the path is empty";
  if (path[0] == '/')
    return "an absolute path (paths are relative to the "
           "repository root)";
  for (unsigned char c : path) {
    if (c == '\\') return "a backslash";
    if (c < 0x20 || c == 0x7f) return "a control character";
  }
  size_t begin = 0;
  while (begin <= path.size()) {
    size_t end = path.find('/', begin);
    if (end == std::string_view::npos) end = path.size();
    const std::string_view part = path.substr(begin, end - begin);
    if (part.empty()) return "an empty path component ('//' or a final '/')";
    if (part == "..") return "a '..' component leaves the repository";
    if (part == ".") return "a '.' component";
    if (EqualsIgnoringCase(part, ".git")) {
      return "the repository's own .git directory";
    }
    begin = end + 1;
  }
  return "";
}

std::string DropTransportCarriageReturns(std::string_view text) {
  const std::vector<std::string_view> lines = SplitLineViews(text);
  if (lines.empty()) return std::string(text);
  // Without a final '\n' the last line need not end in '\r' either.
  const size_t must = text.back() == '\n' ? lines.size() : lines.size() - 1;
  if (must == 0) return std::string(text);
  for (size_t i = 0; i < must; ++i) {
    if (lines[i].empty() || lines[i].back() != '\r') return std::string(text);
  }
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view l = lines[i];
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    out.append(l);
    // The last line keeps its '\n' only when it had one.
    if (i + 1 < lines.size() || text.back() == '\n') out += '\n';
  }
  return out;
}

StatusOr<UnifiedDiff> ParsePatchText(std::string_view text) {
  if (Blank(text)) return InvalidArgument("the patch is empty");
  ASSIGN_OR_RETURN(UnifiedDiff diff,
                   ParseUnifiedDiff(DropTransportCarriageReturns(text)));
  for (const FileDiff& f : diff.files) RETURN_IF_ERROR(CheckFile(f));
  return diff;
}

}  // namespace trench::agents
