// A module's fingerprint: a 64-bit hash of everything its text shows,
// computed from the IR without printing it.
#pragma once

#include <cstdint>

#include "compiler/ir/hlo_module.h"

namespace trench {

// Modules whose texts (PrintHloModule with the default options) are equal
// have equal fingerprints. Modules whose texts differ in more than the
// order of their lines and computations have different ones, up to 64-bit
// hash collisions. It hashes what the printer would write, field by field,
// without formatting it or walking the graph: the pass pipeline
// fingerprints the module around every pass.
uint64_t HloModuleFingerprint(const HloModule& module);

}  // namespace trench
