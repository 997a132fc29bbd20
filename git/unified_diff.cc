#include "git/unified_diff.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

namespace trench::agents {
namespace {

bool StartsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

Status LineError(size_t line, const std::string& what) {
  return InvalidArgument("line " + std::to_string(line) + ": " + what);
}

// Git quotes paths holding '"', '\\' or control characters C-style.
bool NeedsQuoting(std::string_view path) {
  for (unsigned char c : path) {
    if (c == '"' || c == '\\' || c < 0x20 || c == 0x7f) return true;
  }
  return false;
}

std::string Quote(std::string_view prefix, std::string_view path,
                  bool force = false) {
  if (!force && !NeedsQuoting(path)) {
    return std::string(prefix) + std::string(path);
  }
  std::string out = "\"" + std::string(prefix);
  for (unsigned char c : path) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          const char oct[] = {'\\', char('0' + (c >> 6)),
                              char('0' + ((c >> 3) & 7)), char('0' + (c & 7))};
          out.append(oct, 4);
        } else {
          out += char(c);
        }
    }
  }
  return out + "\"";
}

// Undoes Quote on a leading quoted string of `s`; returns the unquoted text
// and sets `*rest` to what follows. Unquoted input is returned as is.
std::string Unquote(std::string_view s, std::string_view* rest) {
  if (s.empty() || s[0] != '"') {
    if (rest) *rest = {};
    return std::string(s);
  }
  std::string out;
  size_t i = 1;
  for (; i < s.size() && s[i] != '"'; ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      out += s[i];
      continue;
    }
    const char e = s[++i];
    if (e >= '0' && e <= '7' && i + 2 < s.size()) {
      out +=
          char(((e - '0') << 6) | ((s[i + 1] - '0') << 3) | (s[i + 2] - '0'));
      i += 2;
    } else {
      out += e == 't' ? '\t' : e == 'n' ? '\n' : e;
    }
  }
  if (rest) *rest = i + 1 < s.size() ? s.substr(i + 1) : std::string_view();
  return out;
}

// A path of a ---/+++ line: "/dev/null" -> "", "a/x" -> "x", a trailing
// "\t<timestamp>" (diff -u) dropped.
std::string HeaderPath(std::string_view s) {
  if (!s.empty() && s[0] != '"') s = s.substr(0, s.find('\t'));
  std::string p = Unquote(s, nullptr);
  if (p == "/dev/null") return "";
  if (StartsWith(p, "a/") || StartsWith(p, "b/")) return p.substr(2);
  return p;
}

// "a/X b/Y" of a "diff --git" line.
void GitLinePaths(std::string_view s, FileDiff* f) {
  if (!s.empty() && s[0] == '"') {
    std::string_view rest;
    f->old_path = Unquote(s, &rest);
    if (StartsWith(f->old_path, "a/")) f->old_path.erase(0, 2);
    if (!rest.empty() && rest[0] == ' ') rest.remove_prefix(1);
    f->new_path = HeaderPath(rest);
    return;
  }
  // "a/P b/P" with equal halves is the common case, even with spaces in P.
  if (StartsWith(s, "a/") && s.size() >= 5 && s.size() % 2 == 1) {
    const size_t n = (s.size() - 5) / 2;
    if (s.substr(2 + n, 3) == " b/" && s.substr(2, n) == s.substr(5 + n)) {
      f->old_path = f->new_path = std::string(s.substr(2, n));
      return;
    }
  }
  // The first " b/" (or quoted " \"b/") separates the two paths.
  const size_t b = std::min(s.find(" b/"), s.find(" \"b/"));
  f->old_path = HeaderPath(s.substr(0, b));
  f->new_path =
      b == std::string_view::npos ? f->old_path : HeaderPath(s.substr(b + 1));
}

// Parses the decimal at s[*i]; false when there is none or it is > 1e9.
bool ParseNumber(std::string_view s, size_t* i, int64_t* out) {
  const size_t begin = *i;
  int64_t v = 0;
  while (*i < s.size() && s[*i] >= '0' && s[*i] <= '9') {
    v = v * 10 + (s[*i] - '0');
    if (v > 1000000000) return false;
    ++*i;
  }
  *out = v;
  return *i > begin;
}

bool ParseRange(std::string_view s, size_t* i, int64_t* start, int64_t* count) {
  if (!ParseNumber(s, i, start)) return false;
  *count = 1;
  if (*i < s.size() && s[*i] == ',') {
    ++*i;
    return ParseNumber(s, i, count);
  }
  return true;
}

// "@@ -s[,c] +s[,c] @@[ section]".
bool ParseHunkHeader(std::string_view s, Hunk* h) {
  size_t i = 4;
  if (!StartsWith(s, "@@ -")) return false;
  if (!ParseRange(s, &i, &h->old_start, &h->old_count)) return false;
  if (s.substr(i, 2) != " +") return false;
  i += 2;
  if (!ParseRange(s, &i, &h->new_start, &h->new_count)) return false;
  if (s.substr(i, 3) != " @@") return false;
  i += 3;
  std::string_view section = s.substr(i);
  if (!section.empty() && section[0] == ' ') section.remove_prefix(1);
  h->section = std::string(section);
  return true;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : lines_(SplitLineViews(text)) {}

  StatusOr<UnifiedDiff> Run() {
    while (i_ < lines_.size()) {
      const std::string_view l = lines_[i_];
      if (StartsWith(l, "diff --git ")) {
        StartFile();
        GitLinePaths(l.substr(11), cur());
        in_header_ = true;
        ++i_;
      } else if (StartsWith(l, "--- ") && Next("+++ ")) {
        if (!in_header_ || saw_paths_) StartFile();
        cur()->old_path = HeaderPath(l.substr(4));
        cur()->new_path = HeaderPath(lines_[i_ + 1].substr(4));
        saw_paths_ = true;
        in_header_ = false;
        i_ += 2;
      } else if (StartsWith(l, "--- ") && in_header_) {
        return LineError(i_ + 1, "'---' line not followed by a '+++' line");
      } else if (StartsWith(l, "@@")) {
        if (!saw_paths_) {
          return LineError(i_ + 1,
                           "hunk outside of a file (no '---'/'+++' header)");
        }
        RETURN_IF_ERROR(ParseHunk());
      } else if (in_header_) {
        HeaderLine(l);
        ++i_;
      } else {
        ++i_;  // Text between files or before the first one.
      }
    }
    FinishFile();
    if (out_.files.empty()) {
      return InvalidArgument(
          "no file diff found (no 'diff --git' or '---'/'+++' header)");
    }
    return std::move(out_);
  }

 private:
  FileDiff* cur() { return &out_.files.back(); }
  bool Next(std::string_view prefix) const {
    return i_ + 1 < lines_.size() && StartsWith(lines_[i_ + 1], prefix);
  }

  void StartFile() {
    FinishFile();
    out_.files.emplace_back();
    saw_paths_ = false;
  }
  void FinishFile() {
    if (out_.files.empty()) return;
    if (cur()->is_new) cur()->old_path.clear();
    if (cur()->is_deleted) cur()->new_path.clear();
  }

  // An extended header line of git (unknown lines are ignored).
  void HeaderLine(std::string_view l) {
    FileDiff* f = cur();
    auto rest = [&](std::string_view p) {
      return std::string(l.substr(p.size()));
    };
    if (StartsWith(l, "old mode ")) {
      f->old_mode = rest("old mode ");
    } else if (StartsWith(l, "new mode ")) {
      f->new_mode = rest("new mode ");
    } else if (StartsWith(l, "deleted file mode ")) {
      f->is_deleted = true;
      f->old_mode = rest("deleted file mode ");
    } else if (StartsWith(l, "new file mode ")) {
      f->is_new = true;
      f->new_mode = rest("new file mode ");
    } else if (StartsWith(l, "similarity index ")) {
      f->similarity = rest("similarity index ");
    } else if (StartsWith(l, "rename from ") || StartsWith(l, "copy from ")) {
      const bool rename = l[0] == 'r';
      (rename ? f->is_rename : f->is_copy) = true;
      f->old_path = Unquote(l.substr(rename ? 12 : 10), nullptr);
    } else if (StartsWith(l, "rename to ") || StartsWith(l, "copy to ")) {
      f->new_path = Unquote(l.substr(l[0] == 'r' ? 10 : 8), nullptr);
    } else if (StartsWith(l, "index ")) {
      // "index <old>..<new>[ <mode>]".
      const std::string_view v = l.substr(6);
      const size_t sp = v.find(' ');
      const std::string_view oids = v.substr(0, sp);
      const size_t dots = oids.find("..");
      if (dots == std::string_view::npos) return;
      f->index_old = std::string(oids.substr(0, dots));
      f->index_new = std::string(oids.substr(dots + 2));
      f->index_mode = sp == v.npos ? "" : std::string(v.substr(sp + 1));
    } else if (StartsWith(l, "Binary files ")) {
      f->binary = true;
    } else if (StartsWith(l, "GIT binary patch")) {
      f->binary = true;
      while (i_ + 1 < lines_.size() &&
             !StartsWith(lines_[i_ + 1], "diff --git "))
        ++i_;
    }
  }

  Status ParseHunk() {
    const size_t header_line = i_ + 1;
    Hunk h;
    if (!ParseHunkHeader(lines_[i_], &h)) {
      return LineError(header_line,
                       "malformed hunk header (expected '@@ -a,b +c,d @@')");
    }
    ++i_;
    int64_t old_left = h.old_count, new_left = h.new_count;
    while (old_left > 0 || new_left > 0) {
      if (i_ >= lines_.size()) {
        return LineError(header_line,
                         "hunk ends early: " + std::to_string(old_left) +
                             " old and " + std::to_string(new_left) +
                             " new lines missing");
      }
      const std::string_view l = lines_[i_];
      const char kind = l.empty() ? ' ' : l[0];
      if (kind == '\\') {
        if (h.lines.empty()) {
          return LineError(i_ + 1, "'\\ No newline' before any line");
        }
        h.lines.back().no_newline = true;
        ++i_;
        continue;
      }
      if (kind != ' ' && kind != '-' && kind != '+') {
        return LineError(i_ + 1,
                         "unexpected line in a hunk body (expected ' ', '-', "
                         "'+' or '\\'; the @@ counts may be wrong)");
      }
      const bool old_side = kind != '+', new_side = kind != '-';
      if ((old_side && old_left == 0) || (new_side && new_left == 0)) {
        return LineError(i_ + 1, std::string("more '") + kind +
                                     "' lines than the hunk header at line " +
                                     std::to_string(header_line) + " says");
      }
      old_left -= old_side;
      new_left -= new_side;
      h.lines.push_back({kind, l.empty() ? "" : std::string(l.substr(1))});
      ++i_;
    }
    if (i_ < lines_.size() && StartsWith(lines_[i_], "\\") &&
        !h.lines.empty()) {
      h.lines.back().no_newline = true;
      ++i_;
    }
    cur()->hunks.push_back(std::move(h));
    return Status::Ok();
  }

  std::vector<std::string_view> lines_;
  size_t i_ = 0;
  UnifiedDiff out_;
  bool in_header_ = false;  // After "diff --git", before ---/+++ or a hunk.
  bool saw_paths_ = false;  // The current file had its ---/+++ lines.
};

std::string Range(int64_t start, int64_t count) {
  return std::to_string(start) +
         (count == 1 ? "" : "," + std::to_string(count));
}

}  // namespace

int UnifiedDiff::HunkCount() const {
  int n = 0;
  for (const FileDiff& f : files) n += static_cast<int>(f.hunks.size());
  return n;
}

int UnifiedDiff::ChangedLines() const {
  int n = 0;
  for (const FileDiff& f : files) {
    for (const Hunk& h : f.hunks) {
      for (const DiffLine& l : h.lines) n += l.kind != ' ';
    }
  }
  return n;
}

StatusOr<UnifiedDiff> ParseUnifiedDiff(std::string_view text) {
  return Parser(text).Run();
}

std::string RenderUnifiedDiff(const UnifiedDiff& diff) {
  std::string o;
  for (const FileDiff& f : diff.files) {
    const std::string& a = f.old_path.empty() ? f.new_path : f.old_path;
    const std::string& b = f.new_path.empty() ? f.old_path : f.new_path;
    // The "diff --git" line splits at the first " b/": quote an old path
    // that holds one (git's own text is ambiguous there).
    const bool force = a != b && a.find(" b/") != std::string::npos;
    o += "diff --git " + Quote("a/", a, force) + " " + Quote("b/", b) + "\n";
    if (f.is_deleted) o += "deleted file mode " + f.old_mode + "\n";
    if (f.is_new) o += "new file mode " + f.new_mode + "\n";
    if (!f.is_new && !f.is_deleted) {
      if (!f.old_mode.empty()) o += "old mode " + f.old_mode + "\n";
      if (!f.new_mode.empty()) o += "new mode " + f.new_mode + "\n";
    }
    if (!f.similarity.empty()) o += "similarity index " + f.similarity + "\n";
    if (f.is_rename || f.is_copy) {
      const std::string kind = f.is_rename ? "rename" : "copy";
      o += kind + " from " + Quote("", f.old_path) + "\n";
      o += kind + " to " + Quote("", f.new_path) + "\n";
    }
    if (!f.index_old.empty()) {
      o += "index " + f.index_old + ".." + f.index_new +
           (f.index_mode.empty() ? "" : " " + f.index_mode) + "\n";
    }
    if (f.binary) {
      o += "Binary files " +
           (f.old_path.empty() ? "/dev/null" : Quote("a/", f.old_path)) +
           " and " +
           (f.new_path.empty() ? "/dev/null" : Quote("b/", f.new_path)) +
           " differ\n";
    }
    // Without hunks, ---/+++ are written only when the header lines above
    // do not give the paths back.
    const bool paths_from_header = (!f.old_path.empty() || f.is_new) &&
                                   (!f.new_path.empty() || f.is_deleted) &&
                                   (f.old_path == f.new_path || f.is_new ||
                                    f.is_deleted || f.is_rename || f.is_copy);
    if (f.hunks.empty() && paths_from_header) continue;
    o += "--- " + (f.old_path.empty() ? "/dev/null" : Quote("a/", f.old_path)) +
         "\n";
    o += "+++ " + (f.new_path.empty() ? "/dev/null" : Quote("b/", f.new_path)) +
         "\n";
    for (const Hunk& h : f.hunks) {
      o += "@@ -" + Range(h.old_start, h.old_count) + " +" +
           Range(h.new_start, h.new_count) + " @@" +
           (h.section.empty() ? "" : " " + h.section) + "\n";
      for (const DiffLine& l : h.lines) {
        o += l.kind;
        o += l.text + "\n";
        if (l.no_newline) o += "\\ No newline at end of file\n";
      }
    }
  }
  return o;
}

std::vector<std::string_view> SplitLineViews(std::string_view text) {
  std::vector<std::string_view> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    out.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

std::vector<std::string> SplitLines(std::string_view text) {
  const std::vector<std::string_view> views = SplitLineViews(text);
  return std::vector<std::string>(views.begin(), views.end());
}

}  // namespace trench::agents
