// hlo-bisect: hierarchical localization of a failing case (localize.h).
//
//   hlo-bisect CASE_DIR [--levels=pass,rewrite,graph,fusion,callee,branch]
//              [--json|--text] [--out FILE] [--keep DIR]
//              [--hloc P --tpusim P | --hlo-run P [--serve]] [--bin-dir D]
//              [--timeout S]
//   hlo-bisect commits ...   (the commit level: commit_cli.h)
//
// Prints the localization report (localization_report.h), JSON by default,
// to stdout or FILE. Target flags are hlo-diff's: the binaries of --bin-dir
// (default: hlo-bisect's own directory), hloc + tpusim unless --hlo-run or
// --serve is given. Target runs happen in a temporary directory, or in DIR
// (kept) with --keep.
// Exit codes: 0 localized (the report was written); 1 the case cannot be
// read or does not fail; 2 usage or harness error.
#pragma once

#include <ostream>

namespace trench {

int RunHloBisect(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace trench
