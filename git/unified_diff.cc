#include "git/unified_diff.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "base/lines.h"

namespace trench::agents {
namespace {

bool StartsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

Status LineError(size_t line, const std::string& what) {
  return InvalidArgument("line " + std::to_string(line) + ": " + what);
}

Status LineError(size_t line, size_t column, const std::string& what) {
  return InvalidArgument("line " + std::to_string(line) + ":" +
                         std::to_string(column) + ": " + what);
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

// A name of a ---/+++ line without its quoting and a tab and what follows;
// for a plain diff (no "diff --git" line) also without what diff -u or a
// person put after it: trailing blanks, a trailing " YYYY-MM-DD
// hh:mm:ss[.frac][ +zone]". "/dev/null" stays as is.
bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(),
                                   [](char c) { return c >= '0' && c <= '9'; });
}

// `s` without a trailing " YYYY-MM-DD hh:mm:ss[.frac][ +zone]".
std::string_view DropTimestamp(std::string_view s) {
  std::string_view t = s;
  auto cut_word = [&t]() {  // The last ' '-separated word of t, removed.
    const size_t sp = t.rfind(' ');
    if (sp == std::string_view::npos) return std::string_view();
    std::string_view w = t.substr(sp + 1);
    t = t.substr(0, sp);
    return w;
  };
  std::string_view w = cut_word();
  if (w.size() == 5 && (w[0] == '+' || w[0] == '-') && AllDigits(w.substr(1)))
    w = cut_word();
  const size_t dot = w.find('.');
  if (dot != std::string_view::npos) {
    if (!AllDigits(w.substr(dot + 1))) return s;
    w = w.substr(0, dot);
  }
  if (!(w.size() == 8 && w[2] == ':' && w[5] == ':' &&
        AllDigits(w.substr(0, 2)) && AllDigits(w.substr(3, 2)) &&
        AllDigits(w.substr(6))))
    return s;
  w = cut_word();
  if (!(w.size() == 10 && w[4] == '-' && w[7] == '-' &&
        AllDigits(w.substr(0, 4)) && AllDigits(w.substr(5, 2)) &&
        AllDigits(w.substr(8))))
    return s;
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  return t.empty() ? s : t;
}

std::string RawHeaderPath(std::string_view s, bool plain) {
  if (!s.empty() && s[0] == '"') return Unquote(s, nullptr);
  s = s.substr(0, s.find('\t'));
  if (!plain) return std::string(s);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(DropTimestamp(s));
}

// The paths of a "---"/"+++" pair: "/dev/null" -> "", "a/" and "b/"
// stripped as a pair only (git diff --no-prefix writes neither).
void PairPaths(std::string old_raw, std::string new_raw, std::string* old_path,
               std::string* new_path) {
  const bool old_null = old_raw == "/dev/null",
             new_null = new_raw == "/dev/null";
  const bool prefixed = (old_null || StartsWith(old_raw, "a/")) &&
                        (new_null || StartsWith(new_raw, "b/")) &&
                        !(old_null && new_null);
  if (prefixed && !old_null) old_raw.erase(0, 2);
  if (prefixed && !new_null) new_raw.erase(0, 2);
  *old_path = old_null ? "" : std::move(old_raw);
  *new_path = new_null ? "" : std::move(new_raw);
}

// A path of a "diff --git" line: "a/x" -> "x".
std::string HeaderPath(std::string_view s) {
  std::string p = RawHeaderPath(s, /*plain=*/false);
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

std::string Shown(std::string_view s) { return ShownInMessage(s); }

// What stands at s[i] for a message: the rest of the line, or "the end of
// the line".
std::string GotAt(std::string_view s, size_t i) {
  return i >= s.size() ? "the end of the line" : Shown(s.substr(i));
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

// Parses "s[,c]" at s[*i] (`side` is "old" or "new"); "" or what was
// expected there (then *i is where).
std::string ParseRange(std::string_view s, size_t* i, const char* side,
                       int64_t* start, int64_t* count) {
  if (!ParseNumber(s, i, start)) {
    return std::string("the ") + side + " start line (a number up to 10^9)";
  }
  *count = 1;
  if (*i < s.size() && s[*i] == ',') {
    ++*i;
    if (!ParseNumber(s, i, count)) {
      return std::string("the ") + side +
             " line count (a number up to 10^9) after ','";
    }
  }
  return "";
}

// "@@ -s[,c] +s[,c] @@[ section]". "" or what was expected, with *col the
// 1-based column where it was not found.
std::string ParseHunkHeader(std::string_view s, Hunk* h, size_t* col) {
  size_t i = 0;
  std::string want;
  auto expect = [&](std::string_view lit) {
    for (size_t k = 0; k < lit.size(); ++k, ++i) {
      if (i >= s.size() || s[i] != lit[k]) return false;
    }
    return true;
  };
  if (!expect("@@ -")) {
    want = "'@@ -'";
  } else if (want = ParseRange(s, &i, "old", &h->old_start, &h->old_count);
             !want.empty()) {
  } else if (!expect(" +")) {
    want = "' +' after the old range";
  } else if (want = ParseRange(s, &i, "new", &h->new_start, &h->new_count);
             !want.empty()) {
  } else if (!expect(" @@")) {
    want = "' @@' after the new range";
  }
  if (!want.empty()) {
    *col = i + 1;
    return want + " expected, got " + GotAt(s, i);
  }
  std::string_view section = s.substr(i);
  if (!section.empty() && section[0] == ' ') section.remove_prefix(1);
  h->section = std::string(section);
  return "";
}

class Parser {
 public:
  explicit Parser(std::string_view text) : lines_(SplitLineViews(text)) {}

  StatusOr<UnifiedDiff> Run() {
    while (i_ < lines_.size()) {
      const std::string_view l = lines_[i_];
      if (StartsWith(l, "diff --git ")) {
        StartFile(/*git=*/true);
        GitLinePaths(l.substr(11), cur());
        in_header_ = true;
        ++i_;
      } else if (StartsWith(l, "--- ") && Next("+++ ")) {
        if (!in_header_ || saw_paths_) StartFile(/*git=*/false);
        RETURN_IF_ERROR(FilePaths());
        saw_paths_ = true;
        in_header_ = false;
        i_ += 2;
        if (!git_ && (i_ >= lines_.size() || !StartsWith(lines_[i_], "@@"))) {
          return LineError(i_ + 1,
                           "a hunk header '@@ -a,b +c,d @@' expected after " +
                               Shown(lines_[i_ - 1]) + ", got " +
                               (i_ >= lines_.size() ? "the end of the patch"
                                                    : Shown(lines_[i_])));
        }
      } else if (StartsWith(l, "--- ") && in_header_) {
        return LineError(i_ + 1, "'---' line not followed by a '+++' line");
      } else if (StartsWith(l, "@@")) {
        if (!saw_paths_) return HunkOutsideOfAFile();
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

  void StartFile(bool git) {
    FinishFile();
    out_.files.emplace_back();
    cur()->line = static_cast<int64_t>(i_ + 1);
    saw_paths_ = false;
    git_ = git;
  }
  void FinishFile() {
    if (out_.files.empty()) return;
    FileDiff* f = cur();
    if (!git_ && !f->is_rename && !f->is_copy) {
      // A plain diff says new and deleted files with /dev/null only.
      if (f->old_path.empty() && !f->new_path.empty() && !f->is_new) {
        f->is_new = true;
        if (f->new_mode.empty()) f->new_mode = "100644";
      } else if (f->new_path.empty() && !f->old_path.empty() &&
                 !f->is_deleted) {
        f->is_deleted = true;
        if (f->old_mode.empty()) f->old_mode = "100644";
      } else if (f->old_path != f->new_path) {
        f->old_path = f->new_path;  // patch(1): the "+++" file.
      }
    }
    if (f->is_new) f->old_path.clear();
    if (f->is_deleted) f->new_path.clear();
  }

  // The names of the "---"/"+++" pair at line i_.
  Status FilePaths() {
    std::string raw[2];
    for (int k = 0; k < 2; ++k) {
      raw[k] = RawHeaderPath(lines_[i_ + k].substr(4), !git_);
      if (raw[k].empty()) {
        return LineError(i_ + k + 1, "'" + std::string(k ? "+++" : "---") +
                                         "' line names no file (use "
                                         "/dev/null for a new or deleted "
                                         "file)");
      }
    }
    PairPaths(raw[0], raw[1], &cur()->old_path, &cur()->new_path);
    return Status::Ok();
  }

  Status HunkOutsideOfAFile() const {
    const std::string_view prev = i_ > 0 ? lines_[i_ - 1] : "";
    if (StartsWith(prev, "--- ")) {
      return LineError(i_ + 1, "a '+++ ' line expected after " + Shown(prev) +
                                   ", got " + Shown(lines_[i_]));
    }
    if (StartsWith(prev, "+++ ")) {
      return LineError(i_, "a '--- ' line expected before " + Shown(prev));
    }
    return LineError(i_ + 1, "hunk outside of a file (no '---'/'+++' header)");
  }

  // "hunk K of 'file' (line H: '@@ ...')" for messages.
  std::string HunkName(const Hunk& h) {
    return "hunk " + std::to_string(cur()->hunks.size() + 1) + " of " +
           Shown(cur()->path()) + " (line " + std::to_string(h.line) + ": " +
           Shown(lines_[h.line - 1]) + ")";
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

  // A line that starts the next hunk or file (a hunk body cut short).
  bool StartsNextPart(size_t k) const {
    const std::string_view l = lines_[k];
    return StartsWith(l, "@@") || StartsWith(l, "diff --git ") ||
           (StartsWith(l, "--- ") && k + 1 < lines_.size() &&
            StartsWith(lines_[k + 1], "+++ ") && k + 2 < lines_.size() &&
            StartsWith(lines_[k + 2], "@@"));
  }

  Status ParseHunk() {
    const size_t header_line = i_ + 1;
    Hunk h;
    h.line = static_cast<int64_t>(header_line);
    size_t col = 0;
    if (const std::string why = ParseHunkHeader(lines_[i_], &h, &col);
        !why.empty()) {
      return LineError(header_line, col,
                       "malformed hunk header " + Shown(lines_[i_]) +
                           " (expected '@@ -a,b +c,d @@'): " + why);
    }
    ++i_;
    int64_t old_left = h.old_count, new_left = h.new_count;
    auto missing = [&] {
      return std::to_string(old_left) + " old and " + std::to_string(new_left) +
             " new lines missing (its header counts " +
             std::to_string(h.old_count) + " old and " +
             std::to_string(h.new_count) + " new lines)";
    };
    while (old_left > 0 || new_left > 0) {
      if (i_ >= lines_.size()) {
        return LineError(header_line, HunkName(h) +
                                          " ends early at the end of the "
                                          "patch: " +
                                          missing());
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
        if (StartsNextPart(i_)) {
          return LineError(i_ + 1, HunkName(h) + " ends early: " + missing());
        }
        return LineError(i_ + 1, 1,
                         "a hunk body line starts with ' ', '-', '+' or "
                         "'\\', got " +
                             Shown(l) + " (in " + HunkName(h) +
                             "; its counts may be wrong)");
      }
      const bool old_side = kind != '+', new_side = kind != '-';
      if ((old_side && old_left == 0) || (new_side && new_left == 0)) {
        return LineError(i_ + 1, std::string("more '") + kind + "' lines in " +
                                     HunkName(h) + " than its header counts (" +
                                     std::to_string(h.old_count) + " old, " +
                                     std::to_string(h.new_count) + " new)");
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
    // A body line right after the counted ones: the counts are too small
    // (the lines would otherwise be dropped as text between files).
    if (i_ < lines_.size()) {
      const std::string_view l = lines_[i_];
      const bool body_like =
          !l.empty() && (l[0] == '+' || l[0] == '-' || l[0] == ' ');
      if (body_like && l != "-- " && !StartsNextPart(i_)) {
        return LineError(i_ + 1, HunkName(h) +
                                     " has more lines than its header "
                                     "counts (" +
                                     std::to_string(h.old_count) + " old, " +
                                     std::to_string(h.new_count) + " new)");
      }
    }
    cur()->hunks.push_back(std::move(h));
    return Status::Ok();
  }

  std::vector<std::string_view> lines_;
  size_t i_ = 0;
  UnifiedDiff out_;
  bool in_header_ = false;  // After "diff --git", before ---/+++ or a hunk.
  bool saw_paths_ = false;  // The current file had its ---/+++ lines.
  bool git_ = false;        // The current file began with "diff --git".
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

std::string ShownInMessage(std::string_view s) {
  constexpr size_t kMax = 60;
  const bool cut = s.size() > kMax;
  std::string q = Quote("", s.substr(0, kMax), /*force=*/true);
  q = q.substr(1, q.size() - 2);  // Without the quotes.
  return "'" + q + (cut ? "...'" : "'");
}

std::vector<std::string_view> SplitLineViews(std::string_view text) {
  return trench::SplitLineViews(text);
}

std::vector<std::string> SplitLines(std::string_view text) {
  const std::vector<std::string_view> views = SplitLineViews(text);
  return std::vector<std::string>(views.begin(), views.end());
}

}  // namespace trench::agents
