// Test helpers: a hostile program (one C binary, the mode is argv[1]) built
// with the system C compiler at test time, work directories, and checks
// that a run left no process behind.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "sandbox/sandbox.h"

namespace trench::sandbox::testing {

// Path of the hostile binary, built once per test process into a directory
// readable by every uid. Modes (argv[1]):
//   hello             prints "uid=U cwd=DIR foo=$FOO args=N", writes
//                     ./hello.txt, exits 0
//   exit N            exits with N
//   forkbomb          forks forever (children too)
//   memhog            mallocs and touches 1 MiB blocks until malloc fails,
//                     prints "malloc failed after N MiB", exits 42
//   spin              burns CPU forever
//   sleep             pauses forever
//   net PORT          socket + connect to 127.0.0.1:PORT; prints
//                     "socket: ERRNO", "connect: ERRNO" or "connected"
//   write PATH...     creates each PATH; prints "PATH: ok" or "PATH: ERRNO"
//   escape exit|wait  a grandchild setsid()s and pauses forever, its parent
//                     exits; the main process then exits 0 or pauses
//   flood N           writes N bytes of 'o' to stdout and of 'e' to stderr,
//                     interleaved in 8 KiB chunks, exits 0
//   bigfile           writes ./big.bin until the file-size limit stops it
//   ptrace            calls ptrace(PTRACE_TRACEME); prints "ptrace: ERRNO"
//   procs N           forks N pausing children (fewer if fork fails),
//                     writes the count to ./held, prints "held N", pauses
//   forkwork N        N children at once, each execs /bin/true; prints
//                     "ok N" or "fork: ERRNO" (exit 1)
//   memkids N M       N children each touch M MiB and hold it; prints
//                     "touched T killed K" (K: children killed by a signal)
//   unix PATH         socket(AF_UNIX) + connect to PATH, prints "socket:
//                     ERRNO", "connect: ERRNO" or "connected"; then a
//                     socketpair round trip: "socketpair: ok"
//   read PATH...      opens each PATH for reading: "PATH: ok" or ERRNO
//   list DIR          prints "entry NAME" per entry, or "list: ERRNO"
//   fill              writes ./fill.bin until a write fails: "fill: ERRNO
//                     after N MiB"
//   files             creates empty files until one fails: "files: ERRNO
//                     after N"
// Aborts the test process when the compiler fails (tests cannot run).
const std::string& HostileBinary();
std::string HostileDir();

// A fresh directory under /tmp (removed by the caller with RemoveTree).
std::string MakeTempDir(const char* tag);
void RemoveTree(const std::string& dir);

// Options for HostileBinary() with `args`, in a fresh work dir, with a uid
// of its own (derived from the current test name) so that process counts
// and RLIMIT_NPROC do not mix with other tests.
Options HostileOptions(const std::vector<std::string>& args);

// Makes `o` run a script in its work dir that lacks the execute bit
// (execve fails with EACCES); returns the script's path.
std::string UseNonExecutableProgram(Options& o);

// Processes (zombies included) whose real uid is `uid`.
int ProcessesOfUid(uid_t uid);
// Children (zombies included) of this test process.
int ChildrenOfSelf();

// Runs `o` (sandbox::Run), prints its summary, and expects nothing of it
// left: no process of its uid (or no more of ours, without a uid switch)
// and no child of ours. A failed Run is a test failure and an empty
// Result.
Result RunLeavingNothing(const Options& o);

// The hostile "write" run's paths outside the work dir, for any tier:
// `outside`, world-writable under /var/tmp (only a read-only mount stops
// the write), and `host_tmp`, a world-writable dir of the host's /tmp (a
// private /tmp hides it). `args` writes there, to /etc and to the hostile
// binary's dir, then to ./inside.txt; `expected` is the output a contained
// run prints. The caller removes `dirs`.
struct OutsideWrites {
  std::string outside, host_tmp;
  std::vector<std::string> args, dirs;
  std::string expected;
};
OutsideWrites MakeOutsideWrites(const std::string& tag);

}  // namespace trench::sandbox::testing
