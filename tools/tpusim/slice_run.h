// tpusim on a slice of several chips (tpu/slice.h): one directory per chip.
#pragma once

#include <ostream>
#include <string>

#include "tpu/executable.h"
#include "tpu/simulator.h"

namespace trench::tpusim {

// Runs `exe` on a slice of `chips` chips (2..8): chip c reads its inputs
// from IN/<c>/0.npy, 1.npy, ... and writes its outputs, taps/ and
// report.json (as a single chip would) to OUT/<c>/; OUT/report.json is the
// slice's: status, message, the failing "chip" (-1 when ok), "chips",
// "topology", "cycles" (the slice's: the slowest chip), "chip_cycles",
// "steps", "link_bytes_sent", "link_transfers", "flag_stall_cycles" and
// the memory errors (each naming its chip). `in` may be empty when the
// program takes no inputs. Returns tpusim's exit code; says what went wrong
// on `err`.
int RunSlice(const tpu::Executable& exe, int chips, const std::string& in,
             const std::string& out_dir, std::ostream& out, std::ostream& err);

// Prints "status S, N cycles<detail>" on `out` and, for a failed run, the
// message on `err`; returns the exit code for the status.
int PrintStatus(const tpu::RunReport& report, const std::string& detail,
                std::ostream& out, std::ostream& err);

}  // namespace trench::tpusim
