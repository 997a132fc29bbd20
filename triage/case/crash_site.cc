#include "triage/case/crash_site.h"

#include <cxxabi.h>
#include <stdlib.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <optional>

#include "base/lines.h"

namespace trench::hlo_diff {
namespace {

bool StartsWith(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
    s.remove_prefix(1);
  }
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
    s.remove_suffix(1);
  }
  return s;
}

bool IsHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)); }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)); }

// Skips "0x<hex>" and the blanks after it at the front of *s.
void SkipAddress(std::string_view* s) {
  if (StartsWith(*s, "0x")) {
    size_t i = 2;
    while (i < s->size() && IsHex((*s)[i])) ++i;
    *s = Trim(s->substr(i));
  }
}

// The function name at the front of `s`: up to the parameter list or a
// blank outside of <...>, {...}, "(anonymous namespace)" kept whole.
std::string FunctionName(std::string_view s) {
  std::string out;
  int angle = 0, brace = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (StartsWith(s.substr(i), "(anonymous namespace)")) {
      out += "(anonymous namespace)";
      i += 20;
      continue;
    }
    if (StartsWith(s.substr(i), "operator()")) {
      out += "operator()";
      i += 9;
      continue;
    }
    if (c == '<') ++angle;
    if (c == '>' && angle > 0) --angle;
    if (c == '{') ++brace;
    if (c == '}' && brace > 0) --brace;
    if (angle == 0 && brace == 0 && (c == '(' || c == ' ')) break;
    out += c;
  }
  // Compiler clones: "f.constprop.0", "f.isra.1", "f.cold", "f.part.2".
  for (const char* suffix : {".constprop", ".isra", ".cold", ".part"}) {
    const size_t at = out.find(suffix);
    if (at != std::string::npos && at > 0) out.erase(at);
  }
  return out;
}

std::string Demangled(const std::string& symbol) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(
      abi::__cxa_demangle(symbol.c_str(), nullptr, nullptr, &status), ::free);
  return status == 0 && d ? std::string(d.get()) : symbol;
}

// The function of a backtrace line ("" for a frame without a symbol);
// nullopt when `line` is not a frame.
std::optional<std::string> FrameOf(std::string_view line) {
  std::string_view s = Trim(line);
  if (StartsWith(s, "#") && s.size() > 1 && IsDigit(s[1])) {
    // "#3 0x55d1 in ns::Fn(int) /src/x.cc:12" (sanitizers, gdb).
    size_t i = 1;
    while (i < s.size() && IsDigit(s[i])) ++i;
    if (i < s.size() && s[i] != ' ') return std::nullopt;
    s = Trim(s.substr(i));
    SkipAddress(&s);
    if (StartsWith(s, "in ")) s = Trim(s.substr(3));
    return FunctionName(s);
  }
  if (!s.empty() && IsDigit(s[0])) {
    // " 3# ns::Fn(int) at /src/x.cc:12" (std::stacktrace, boost).
    size_t i = 0;
    while (i < s.size() && IsDigit(s[i])) ++i;
    if (i + 1 >= s.size() || s[i] != '#' || s[i + 1] != ' ') {
      return std::nullopt;
    }
    return FunctionName(Trim(s.substr(i + 1)));
  }
  if (StartsWith(s, "@ ")) {
    // "@     0x55d1  ns::Fn()" (glog, absl).
    s = Trim(s.substr(1));
    SkipAddress(&s);
    return FunctionName(s);
  }
  // "./hloc(_ZN2ns2FnEi+0x1a) [0x55d1]" (glibc backtrace_symbols).
  const size_t bracket = s.rfind(" [0x");
  if (bracket == std::string_view::npos || s.back() != ']') return std::nullopt;
  const std::string_view head = Trim(s.substr(0, bracket));
  const size_t open = head.rfind('(');
  if (open == std::string_view::npos || head.back() != ')') return std::nullopt;
  std::string_view sym = head.substr(open + 1, head.size() - open - 2);
  sym = sym.substr(0, sym.rfind('+'));
  return FunctionName(Demangled(std::string(sym)));
}

// Frames of the crash machinery rather than of the program.
bool IsMachinery(const std::string& f) {
  if (f.empty() || f == "??" || f == "(unknown)" || f == "<unknown>") {
    return true;
  }
  for (const char* p : {"__sanitizer",
                        "__asan",
                        "__ubsan",
                        "__msan",
                        "__tsan",
                        "__lsan",
                        "__interceptor",
                        "___interceptor",
                        "__libc_",
                        "__GI_",
                        "__pthread",
                        "pthread_kill",
                        "raise",
                        "abort",
                        "gsignal",
                        "__assert",
                        "__cxa_",
                        "__cxxabiv1",
                        "std::terminate",
                        "std::__terminate",
                        "__gnu_cxx::__verbose_terminate",
                        "_Unwind",
                        "backtrace",
                        "__restore_rt",
                        "_start"}) {
    if (StartsWith(f, p)) return true;
  }
  for (const char* p : {"SignalHandler", "StackTrace", "PrintStack",
                        "FailureSignal", "DumpStack"}) {
    if (f.find(p) != std::string::npos) return true;
  }
  return false;
}

bool SaysACheckFailed(std::string_view line) {
  std::string l(line);
  std::transform(l.begin(), l.end(), l.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (l.find("assertion") != std::string::npos &&
      l.find("failed") != std::string::npos) {
    return true;
  }
  for (const char* p : {"check failed", "what():", "runtime error:",
                        "sanitizer", "fatal", "panic", "terminate called"}) {
    if (l.find(p) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

CrashSite FindCrashSite(std::string_view stderr_text, size_t max_frames) {
  const std::vector<std::string_view> lines = SplitLineViews(stderr_text);
  CrashSite site;
  // The first block of frames.
  size_t first = lines.size();
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::optional<std::string> f = FrameOf(lines[i]);
    if (!f) {
      if (first < lines.size() && !Trim(lines[i]).empty()) break;
      continue;
    }
    if (first == lines.size()) first = i;
    if (!IsMachinery(*f) && site.frames.size() < max_frames) {
      site.frames.push_back(*f);
    }
  }
  std::string_view fallback;
  for (size_t i = first; i-- > 0;) {
    const std::string_view l = Trim(lines[i]);
    if (l.empty()) continue;
    if (SaysACheckFailed(l)) {
      site.check = std::string(l);
      return site;
    }
    if (fallback.empty()) fallback = l;
  }
  if (first < lines.size()) site.check = std::string(fallback);
  return site;
}

std::string CrashSiteLine(std::string_view stderr_text,
                          const std::string& last_line) {
  const CrashSite site = FindCrashSite(stderr_text);
  if (site.empty() || (site.frames.empty() && site.check == last_line)) {
    return last_line;
  }
  std::string line = site.check;
  if (!site.frames.empty()) {
    line += line.empty() ? "[frames: " : " [frames: ";
    for (size_t i = 0; i < site.frames.size(); ++i) {
      line += (i ? "; " : "") + site.frames[i];
    }
    line += "]";
  }
  return line;
}

}  // namespace trench::hlo_diff
