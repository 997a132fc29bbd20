// hloc: the target compiler's command line.
//
//   hloc compile MODULE.hlo -o PROG.tpux [--disable-passes=a,b]
//        [--pass-limit=N] [--rewrite-limit=N] [--taps=all|name,...]
//        [--dump-dir=D]
//   hloc --capabilities      JSON: ops, dtypes, flags, version, and the
//                            passes and emitters with their source files
//   hloc --help | --version
//
// Flags (base/flags.h) take `--f=v` or `--f v`. Exit codes (target_driver.h): 0
// ok; 1 bad input (unreadable module, parse/verifier error, unwritable output);
// 2 usage; 3 compile error (unsupported op or dtype, unknown tap, ...), with
// the message on `err`. With TRENCH_PASS_TRACE=FILE in the environment,
// every pass entered is appended to FILE (target_driver.h).
#pragma once

#include <ostream>

namespace trench {

// Runs hloc with argv[1..argc-1]; returns the exit code. Never throws.
int RunHloc(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace trench
