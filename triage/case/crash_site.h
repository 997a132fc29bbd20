// Where a target crashed, from its stderr: the failing check's message and
// the top frames of a backtrace when one is printed. The runner puts it in
// a crash's message (TargetResult::message), so the coarse signature's
// "message" (verdict_record.h) and the refined signature
// (triage/localize/localization_report.h) tell two crashes of one pass
// apart, while NormalizeMessage makes instances of one crash equal.
//
// Backtrace lines recognised (one frame per line; the first block of
// consecutive frames, blank lines allowed inside, is the crash's):
//   sanitizers, gdb, LLVM:  "#3 0x55d1 in ns::Fn(int) /src/x.cc:12:3"
//   std::stacktrace, boost: " 3# ns::Fn(int) at /src/x.cc:12"
//   glibc backtrace_symbols: "./hloc(_ZN2ns2FnEi+0x1a) [0x55d1]"
//   glog / absl:            "    @     0x55d1  ns::Fn()"
// Frames of the crash machinery (libc's abort/raise/assert, the C++
// runtime's terminate, sanitizer and signal-handler frames, frames without
// a symbol) are skipped; a frame is its function's name without
// parameters, templates kept, compiler suffixes (".constprop.0", ".isra.1",
// ".cold", ".part.2") dropped.
//
// The check line: the last line before the frames (anywhere when there
// are none) that says a check failed: "Check failed", "CHECK failed",
// "Assertion ... failed", "assertion failed", "what():", "runtime error:",
// "<X>Sanitizer", "FATAL", "fatal error", "panic", "terminate called";
// with frames but no such line, the last non-blank line before them.
// Without frames and without such a line there is no site.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace trench::hlo_diff {

struct CrashSite {
  std::string check;                // The check line, trimmed ("" none).
  std::vector<std::string> frames;  // Function names, innermost first.

  bool empty() const { return check.empty() && frames.empty(); }
};

// The crash site in `stderr_text`, with at most `max_frames` frames.
CrashSite FindCrashSite(std::string_view stderr_text, size_t max_frames = 3);

// The line a crash's message is made of: the check line followed by
// " [frames: f1; f2; f3]" when a backtrace was found (frames only when
// there is no check line); `last_line` (stderr's last non-empty line, the
// message before crash sites were looked for) when `stderr_text` holds
// no site or its site is that line alone.
std::string CrashSiteLine(std::string_view stderr_text,
                          const std::string& last_line);

}  // namespace trench::hlo_diff
