// The coverage runtime of the target's coverage build flavour (DESIGN.md
// "Target contract"; CMake option TRENCH_TARGET_COVERAGE). That flavour
// compiles the compiler's libraries with clang's SanitizerCoverage
// (-fsanitize-coverage=inline-8bit-counters,pc-table,no-prune) and
// -gline-tables-only; this file, always linked and never instrumented,
// receives the compiler-inserted callbacks and answers which coverage
// points (one per instrumented basic block, in the order of the PC table)
// a program hit.
//
// In a build without the flavour no callback comes: Available() is false,
// Size() is 0 and the other calls do nothing.
//
// Attribution per program: Reset() before it, Hits() after it. Not thread
// safe against a program running concurrently (hlo-run runs one at a time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace trench::coverage {

// Whether the running binary holds instrumented code with a PC table.
bool Available();
// The number of coverage points (the PC table's length).
size_t Size();
// Clears every point's counter.
void Reset();
// The points hit since the last Reset(): a bitmap over the PC table in
// lowercase hex, 4 points per digit, point i in bit (i % 4) of digit i / 4
// (so "" when Size() is 0).
std::string HitsHex();
// The indices the hex bitmap `hex` sets (its inverse; bad digits skipped).
std::vector<size_t> HitsOfHex(const std::string& hex);
// Each point's address minus the load bias of the object holding it
// (the executable's virtual address for a PIE, the form llvm-symbolizer
// and the DWARF line table use), in PC table order.
std::vector<uint64_t> PcOffsets();

}  // namespace trench::coverage
