// hlo-fmt: parses, verifies and pretty-prints an HLO module.
//
//   hlo-fmt MODULE [--check] [--short]
//
// MODULE is a path, or `-` for stdin. The module is parsed
// (ParseHloModule), verified (VerifyModule) and printed to `out` in XLA's
// text format (PrintHloModule). With --check nothing is printed on
// success. Errors go to `err` as "MODULE:line:col: message" for parse
// errors and for verifier errors about an instruction (the verifier names
// its line:col), else "MODULE: message".
//
// Exit codes: 0 ok; 1 bad input (unreadable file, parse or verifier
// error); 2 usage (unknown flag, missing or extra MODULE). --help and
// --version print to `out` and return 0 (base/flags.h).
#pragma once

#include <ostream>

namespace trench {

inline constexpr int kHloFmtOk = 0;
inline constexpr int kHloFmtBadInput = 1;
inline constexpr int kHloFmtUsage = 2;

// Runs the tool with argv[1..argc-1] as its arguments; reads stdin for
// MODULE `-`. Returns the exit code above. Never throws.
int RunHloFmt(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace trench
