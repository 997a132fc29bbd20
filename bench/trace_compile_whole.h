// bench_trace_compile --whole-model (trace_compile_whole.cc): the largest
// traces with collectives (whole-model training steps of 1,000
// instructions or more), cut into the largest subgraphs the target
// compiles (no instruction limit: each computation's compilable regions
// whole), scaled to a mesh of at most 4 devices, and compiled by the whole
// compiler (pass pipeline and code generator) for that mesh; prints a
// Markdown table of the compile times, returns 0 (1 when no trace fits).
#pragma once

namespace trench::bench {

int RunWholeModelCompile(int repeats);

}  // namespace trench::bench
