// Generation speed of the fuzzer's program sources (tools/hlo-fuzz):
// synthetic programs (GenerateSynthetic, parse + verify included) and trace
// samples (TraceCorpus::Sample over ../shared/traces), in programs per
// second, with the op and dtype histogram of the synthetic ones.
//
//   bench_fuzz_generate [N=1000] [instructions=20] [--print SEED]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include "compiler/ir/hlo_parser.h"
#include "triage/fuzz/generator.h"
#include "triage/fuzz/trace_corpus.h"

using namespace trench;
using namespace trench::fuzz;

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--print") == 0) {
    GeneratorOptions o;
    if (argc >= 4) o.instructions = std::atoi(argv[3]);
    auto c = GenerateSynthetic(std::strtoull(argv[2], nullptr, 10), o);
    if (!c.ok()) {
      std::fprintf(stderr, "%s\n", c.status().ToString().c_str());
      return 1;
    }
    std::printf("%s\n// origin: %s\n", c->hlo_text.c_str(),
                c->origin.Dump().c_str());
    return 0;
  }
  const int n = argc > 1 ? std::atoi(argv[1]) : 1000;
  GeneratorOptions o;
  if (argc > 2) o.instructions = std::atoi(argv[2]);
  using Clock = std::chrono::steady_clock;
  std::map<std::string, int64_t> ops, types;
  int64_t instructions = 0, failures = 0;
  auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    auto c = GenerateSynthetic(i, o);
    if (!c.ok()) {
      ++failures;
      continue;
    }
    auto m = ParseHloModule(c->hlo_text);
    if (!m.ok()) continue;
    for (const HloComputation* comp : (*m)->computations()) {
      for (const HloInstruction* instr : comp->instructions()) {
        ++instructions;
        ++ops[std::string(OpcodeName(instr->opcode()))];
        if (instr->shape().IsArray()) {
          ++types[std::string(
              PrimitiveTypeName(instr->shape().element_type()))];
        }
      }
    }
  }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf(
      "synthetic: %d programs (instructions=%d) in %.2fs: %.0f programs/s "
      "(histogram re-parse included), %.1f HLO instructions/program, "
      "%lld failures\n",
      n, o.instructions, secs, n / secs, double(instructions) / n,
      (long long)failures);
  for (const auto& [k, v] : ops)
    std::printf("  op %-24s %lld\n", k.c_str(), (long long)v);
  for (const auto& [k, v] : types)
    std::printf("  dtype %-6s %lld\n", k.c_str(), (long long)v);

  t0 = Clock::now();
  TraceCorpus corpus;
  Status s = corpus.Load({std::string(TRENCH_TRACES_DIR)});
  const double load = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!s.ok()) {
    std::fprintf(stderr, "%s\n", s.ToString().c_str());
    return 1;
  }
  std::printf("traces: loaded %lld files, %zu subgraphs in %.2fs\n",
              (long long)corpus.stats().files, corpus.subgraphs().size(), load);
  t0 = Clock::now();
  int ok = 0;
  for (int i = 0; i < n; ++i) ok += corpus.Sample(i, MutationOptions()).ok();
  const double st = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("traces: %d samples (%d ok) in %.2fs: %.0f samples/s\n", n, ok,
              st, n / st);
  return 0;
}
