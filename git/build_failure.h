// Telling a build that the machine failed from one that the commit failed
// (a failed build is cached as "does not build"; an infrastructure failure
// must not be: it is built again later).
//
// The markers are lines that toolchains and shells print when the machine,
// not the code, is at fault: fork or vfork failing with EAGAIN or ENOMEM
// (a process limit shared with other runs, memory pressure), the compiler
// running out of memory or being killed, the build tool (ninja, make) or
// the compiler stopped by a signal from outside, the disk or its inodes
// full. A log holding one means an infrastructure failure even though the
// build command exited non-zero like a compile error would. A real compile
// error whose output happens to quote a marker is retried until the job's
// attempts run out, then parked for a human: never cached as a verdict.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trench::hlo_bisect {

// Every marker (case-sensitive substrings), in one list.
const std::vector<std::string_view>& InfraFailureMarkers();

// The first marker found in `text`, or "".
std::string_view FindInfraMarker(std::string_view text);

// The first marker found in the file `path`, read in pieces (a log may be
// large), or "" (also when the file cannot be read).
std::string_view FindInfraMarkerInFile(const std::string& path);

// Whether a build command's exit code is a shell's report that the
// command it ran last died of SIGHUP, SIGINT, SIGKILL or SIGTERM (128 + N):
// stopped from outside, not failed by the commit.
bool ShellReportsKillSignal(int exit_code);

// Whether the file system holding `dir` is (nearly) full: under 1% of its
// bytes or of its inodes free. A build that failed there failed for want
// of room, even when its log could not say so (the log is on it too).
bool FileSystemFull(const std::string& dir);

}  // namespace trench::hlo_bisect
