// Production traces through the target (see traces_compile_util.h): every
// module of shared/traces/ is cut into subgraphs the code generator can
// compile; each is compiled, run on random inputs and compared with the
// oracle. Prints one line per module; fails on any crash (run error,
// invalid executable, subgraph that does not verify) or disagreement.
// Suite TracesTest (labelled slow in tests/CMakeLists.txt).
#include <gtest/gtest.h>

#include <iostream>

#include "tests/compiler/codegen/traces_compile_util.h"

namespace trench::traces {
namespace {

// Subgraphs run per module: an evenly spaced sample keeps the test within
// budget (bench/trace_compile.cc runs all of them).
constexpr int64_t kMaxRunPerModule = 6;

TEST(TracesTest, CompiledSubgraphsAgreeWithTheOracle) {
  const std::vector<TraceResult> results = RunAllTraces(kMaxRunPerModule);
  ASSERT_GE(results.size(), 200u) << "traces missing under " << TracesDir();
  TraceResult total;
  int64_t modules = 0, skipped = 0;
  std::string failures;
  for (const TraceResult& r : results) {
    ++modules;
    if (!r.skipped.empty()) {
      ++skipped;
      std::cout << "[ skipped  ] " << r.where << ": " << r.skipped << "\n";
      continue;
    }
    std::cout << "[ trace    ] " << r.where << ": instructions "
              << r.instructions << ", compiled " << r.compiled << ", subgraphs "
              << r.subgraphs << " (scaled " << r.subgraphs_scaled
              << ", sampled " << r.subgraphs_sampled << ") compiled "
              << r.subgraphs_compiled << " run " << r.subgraphs_run
              << " agreeing " << r.subgraphs_agree << "\n";
    total.instructions += r.instructions;
    total.compiled += r.compiled;
    total.subgraphs += r.subgraphs;
    total.subgraphs_compiled += r.subgraphs_compiled;
    total.subgraphs_run += r.subgraphs_run;
    total.subgraphs_agree += r.subgraphs_agree;
    total.oracle_skipped += r.oracle_skipped;
    for (const std::string& f : r.failures) failures += f + "\n";
  }
  std::cout << "[ traces   ] modules " << modules << " (skipped " << skipped
            << "), instructions " << total.instructions << ", compiled "
            << total.compiled << ", subgraphs " << total.subgraphs
            << " compiled " << total.subgraphs_compiled << " run "
            << total.subgraphs_run << " agreeing " << total.subgraphs_agree
            << " (oracle could not evaluate " << total.oracle_skipped << ")\n";
  EXPECT_EQ(failures, "");
}

}  // namespace
}  // namespace trench::traces
