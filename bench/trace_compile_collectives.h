// bench_trace_compile --collectives (trace_compile_collectives.cc): per
// trace with collectives, the instructions the corpus' cuts cover before
// and after keeping collectives; prints a Markdown table, returns 0.
#pragma once

namespace trench::bench {

int RunCollectiveCoverage();

}  // namespace trench::bench
