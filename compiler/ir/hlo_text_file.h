// Lit-style HLO test files: several modules in one file separated by lines
// `// -----`, with `// RUN:` and `// CHECK...` lines for FileCheck.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trench {

struct HloTextPiece {
  std::string text;    // The piece, RUN/CHECK lines blanked out.
  int first_line = 1;  // Line number of text's first line in the file.
};

// Splits `file` at lines whose content (after leading whitespace) is
// `// -----`. Lines starting with `// RUN:` or `// CHECK` (any CHECK
// variant: CHECK-NEXT, CHECK-LABEL, CHECK-PARTITIONED-HLO, ...) are replaced
// by empty lines, so that line numbers inside a piece plus first_line - 1
// are line numbers in the file (pass first_line to ParseHloModule). Pieces
// with nothing but whitespace and comments left are dropped.
std::vector<HloTextPiece> SplitHloTextFile(std::string_view file);

}  // namespace trench
