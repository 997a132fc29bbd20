// Production traces through the target: for every module of
// shared/traces/, how many instructions the code generator compiles and
// how many of the cut subgraphs compile, run and agree with the oracle
// (the procedure of tests/compiler/codegen/traces_compile_util.h).
//   cmake --build build --target bench_trace_compile
//   build/bench/bench_trace_compile [--failures]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tests/compiler/codegen/traces_compile_util.h"

int main(int argc, char** argv) {
  using trench::traces::TraceResult;
  const bool show_failures =
      argc > 1 && std::strcmp(argv[1], "--failures") == 0;
  const auto start = std::chrono::steady_clock::now();
  const std::vector<TraceResult> results = trench::traces::RunAllTraces();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  std::printf(
      "| module | instructions | compiled | subgraphs | compiled | run "
      "| agree |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  TraceResult t;
  std::map<std::string, int64_t> reasons;
  int64_t modules = 0, skipped = 0, failures = 0, refusals = 0;
  for (const TraceResult& r : results) {
    ++modules;
    if (!r.skipped.empty()) {
      ++skipped;
      continue;
    }
    std::printf("| %s | %lld | %lld | %lld | %lld | %lld | %lld |\n",
                r.where.c_str(), (long long)r.instructions,
                (long long)r.compiled, (long long)r.subgraphs,
                (long long)r.subgraphs_compiled, (long long)r.subgraphs_run,
                (long long)r.subgraphs_agree);
    t.instructions += r.instructions;
    t.compiled += r.compiled;
    t.subgraphs += r.subgraphs;
    t.subgraphs_compiled += r.subgraphs_compiled;
    t.subgraphs_run += r.subgraphs_run;
    t.subgraphs_agree += r.subgraphs_agree;
    t.oracle_skipped += r.oracle_skipped;
    t.subgraphs_scaled += r.subgraphs_scaled;
    for (const auto& [why, n] : r.reasons) reasons[why] += n;
    failures += r.failures.size();
    refusals += r.refusals.size();
  }
  std::printf("| **total** | %lld | %lld | %lld | %lld | %lld | %lld |\n\n",
              (long long)t.instructions, (long long)t.compiled,
              (long long)t.subgraphs, (long long)t.subgraphs_compiled,
              (long long)t.subgraphs_run, (long long)t.subgraphs_agree);
  std::printf(
      "modules %lld, skipped %lld (parser/verifier), instructions compiled "
      "%.1f%%, subgraphs agreeing %lld of %lld, oracle could not evaluate "
      "%lld, subgraph compile refusals %lld, failures %lld, %.1f s\n",
      (long long)modules, (long long)skipped,
      t.instructions ? 100.0 * t.compiled / t.instructions : 0.0,
      (long long)t.subgraphs_agree, (long long)t.subgraphs,
      (long long)t.oracle_skipped, (long long)refusals, (long long)failures,
      seconds);
  std::map<std::string, int64_t> categories;
  std::vector<std::pair<int64_t, std::string>> details;
  for (const auto& [why, n] : reasons) {
    categories[why.substr(0, why.find(':'))] += n;
    details.push_back({-n, why});
  }
  std::sort(details.begin(), details.end());
  std::printf(
      "subgraphs scaled down %lld\n\n| instructions left out, by reason | "
      "count |\n| --- | ---: |\n",
      (long long)t.subgraphs_scaled);
  for (const auto& [why, n] : categories) {
    std::printf("| %s | %lld |\n", why.c_str(), (long long)n);
  }
  std::printf("\n| most frequent (reason: opcode) | count |\n| --- | ---: |\n");
  for (size_t k = 0; k < details.size() && k < 25; ++k) {
    std::printf("| %s | %lld |\n", details[k].second.c_str(),
                (long long)-details[k].first);
  }
  std::printf("\n");
  for (const TraceResult& r : results) {
    if (!r.skipped.empty()) {
      std::printf("skipped %s: %s\n", r.where.c_str(), r.skipped.c_str());
    }
    if (!show_failures) continue;
    for (const std::string& f : r.failures) std::printf("FAIL %s\n", f.c_str());
    for (const std::string& f : r.refusals)
      std::printf("REFUSED %s\n", f.c_str());
  }
  return failures == 0 ? 0 : 1;
}
