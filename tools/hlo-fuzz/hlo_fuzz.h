// hlo-fuzz: a differential fuzzing campaign from the command line (flags in
// fuzz_flags.h, the campaign in campaign.h).
#pragma once

#include <ostream>

namespace trench {

// Runs hlo-fuzz with argv[1..argc-1] (at least one flag: with none it
// prints its usage and returns 2): the summary JSON goes to `out`,
// progress lines (when enabled) and errors to `err`. Returns the exit code
// (0 done, 2 usage, 3 campaign error, 10 findings with --fail-on-finding).
int RunHloFuzz(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace trench
