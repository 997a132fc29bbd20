// Kernel assembly text: parse and print.
//
//   kernel add_f32 {
//     .vmem 65536                 ; VMEM scratch bytes the kernel uses
//     saddr s1, x                 ; base HBM address of buffer x
//   loop:
//     vld.f32 v0, vmem[s2+0], 800 @m0
//     sloop s3, loop
//   }
//
// parse(print(k)) == k for every kernel whose branch targets carry labels
// (everything the parser produces). Printing a target without a label
// invents ".L<index>"-style names, so such kernels round-trip up to labels.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "tpu/isa.h"

namespace trench::tpu {

// Parses all `kernel NAME { ... }` blocks in `text`. `first_line` is the
// line number of text's first line (for errors inside a larger file).
// Returns InvalidArgument "line:col: message" on malformed text; the result
// has passed ValidateKernel.
StatusOr<std::vector<Kernel>> ParseKernels(std::string_view text,
                                           int first_line = 1);
// As ParseKernels but requires exactly one kernel.
StatusOr<Kernel> ParseKernel(std::string_view text);
// One kernel from its parts: `name` (an identifier), its `.vmem` bytes and
// its body (the lines between `kernel NAME {` and `}`), whose first line
// is line `first_line` in errors. The same kernel ParseKernel makes of
// the whole block, without building the block's text first (the code
// generator assembles every kernel it emits).
StatusOr<Kernel> AssembleKernel(std::string_view name, int64_t vmem_bytes,
                                std::string_view body, int first_line = 1);

// Prints a kernel block (ends with a newline).
std::string PrintKernel(const Kernel& kernel);
// Prints one instruction of `kernel` without indentation; labels and buffer
// symbols are resolved through `kernel`. REQUIRES: instr is valid for kernel.
std::string PrintInstr(const Kernel& kernel, const Instr& instr);

}  // namespace trench::tpu
