// tpusim: runs a compiled program on the simulated TPU.
//
//   tpusim run PROG.tpux --inputs DIR --outputs DIR [--chips N]
//   tpusim --help | --version
//
// Reads DIR/0.npy, 1.npy, ... (one per program input, in order), runs, and
// writes the outputs as OUT/<i>.npy (flattened leaf order), the taps as
// OUT/taps/<label>.npy and OUT/report.json (compiler/driver/run_io.h). Exit
// codes: 0 ok; 1 bad input (unreadable program or inputs); 2 usage; 4 run_crash
// (trap); 5 memory_error; 6 timeout. The report is written for every run.
//
// On a slice of N > 1 chips (--chips N, by default the program's `slice`)
// every chip has that layout in its own directory, DIR/<chip>/ and
// OUT/<chip>/, and OUT/report.json is the slice's (slice_run.h).
#pragma once

#include <ostream>

namespace trench {

// Runs tpusim with argv[1..argc-1]; returns the exit code. Never throws.
int RunTpusim(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace trench
