// Production traces through the target: for every module of
// shared/traces/, how many instructions the cut subgraphs that compile
// cover (shapes scaled down where needed), and how many of those
// subgraphs run on the simulator and agree with the oracle (the procedure
// of tests/compiler/codegen/traces_compile_util.h), with a histogram of
// why instructions are not covered and where the time goes.
//   cmake --build build --target bench_trace_compile
//   build/bench/bench_trace_compile [--failures] [--max-run N]
//   build/bench/bench_trace_compile --collectives
//   build/bench/bench_trace_compile --whole-model [--repeats N]
// --max-run N runs an evenly spaced sample of at most N compiled
// subgraphs per module (default: all of them). --collectives prints only
// the coverage of the traces with collectives by the corpus' cuts, before
// and after keeping collectives (trace_compile_collectives.h).
// --whole-model times the compile of the whole-model traces scaled to 4
// devices (trace_compile_whole.h).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "bench/trace_compile_collectives.h"
#include "bench/trace_compile_whole.h"
#include "tests/compiler/codegen/traces_compile_util.h"

namespace {

using trench::traces::TraceResult;

void Add(TraceResult& t, const TraceResult& r) {
  t.instructions += r.instructions;
  t.accepted += r.accepted;
  t.covered += r.covered;
  t.subgraphs += r.subgraphs;
  t.subgraphs_compiled += r.subgraphs_compiled;
  t.subgraphs_sampled += r.subgraphs_sampled;
  t.subgraphs_run += r.subgraphs_run;
  t.subgraphs_agree += r.subgraphs_agree;
  t.oracle_skipped += r.oracle_skipped;
  t.subgraphs_scaled += r.subgraphs_scaled;
  t.judge_s += r.judge_s;
  t.cut_s += r.cut_s;
  t.compile_s += r.compile_s;
  t.run_s += r.run_s;
  t.oracle_s += r.oracle_s;
  for (const auto& [why, n] : r.reasons) t.reasons[why] += n;
}

double Percent(int64_t a, int64_t b) { return b ? 100.0 * a / b : 0.0; }

void Row(const std::string& name, int64_t modules, const TraceResult& r) {
  std::printf(
      "| %s | %lld | %lld | %lld | %.1f%% | %lld | %lld | %lld | %lld | %lld "
      "|\n",
      name.c_str(), (long long)modules, (long long)r.instructions,
      (long long)r.covered, Percent(r.covered, r.instructions),
      (long long)r.subgraphs, (long long)r.subgraphs_compiled,
      (long long)r.subgraphs_sampled, (long long)r.subgraphs_run,
      (long long)r.subgraphs_agree);
}

}  // namespace

int main(int argc, char** argv) {
  bool show_failures = false;
  int64_t max_run = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--failures") == 0) {
      show_failures = true;
    } else if (std::strcmp(argv[i], "--collectives") == 0) {
      return trench::bench::RunCollectiveCoverage();
    } else if (std::strcmp(argv[i], "--whole-model") == 0) {
      int repeats = 3;
      if (i + 2 < argc && std::strcmp(argv[i + 1], "--repeats") == 0) {
        repeats = std::max(1, std::atoi(argv[i + 2]));
      }
      return trench::bench::RunWholeModelCompile(repeats);
    } else if (std::strcmp(argv[i], "--max-run") == 0 && i + 1 < argc) {
      max_run = std::atoll(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--failures] [--max-run N] | --collectives | "
                   "--whole-model [--repeats N]\n",
                   argv[0]);
      return 2;
    }
  }
  const auto start = std::chrono::steady_clock::now();
  std::printf(
      "progress: module: instructions, covered, subgraphs compiled/run/"
      "agree, seconds\n");
  std::fflush(stdout);
  auto progress = [&](const TraceResult& r) {
    if (!r.skipped.empty()) {
      std::printf("  %s: skipped (%s)\n", r.where.c_str(), r.skipped.c_str());
    } else {
      std::printf("  %s: %lld, %lld, %lld/%lld/%lld, %.1f s\n", r.where.c_str(),
                  (long long)r.instructions, (long long)r.covered,
                  (long long)r.subgraphs_compiled, (long long)r.subgraphs_run,
                  (long long)r.subgraphs_agree,
                  r.judge_s + r.cut_s + r.compile_s + r.run_s + r.oracle_s);
    }
    std::fflush(stdout);
  };
  const std::vector<TraceResult> results =
      trench::traces::RunAllTraces(max_run, progress);
  const double seconds = trench::traces::SecondsSince(start);

  // Rows: folders, except that a module of 1,000 instructions or more
  // gets a row of its own (the file).
  std::map<std::string, std::pair<int64_t, TraceResult>> rows;
  TraceResult total;
  int64_t modules = 0, skipped = 0, failures = 0, refusals = 0;
  for (const TraceResult& r : results) {
    ++modules;
    if (!r.skipped.empty()) {
      ++skipped;
      continue;
    }
    const std::string file = r.where.substr(0, r.where.rfind(':'));
    const std::string key =
        r.instructions >= 1000
            ? file
            : std::filesystem::path(file).parent_path().string() + "/";
    ++rows[key].first;
    Add(rows[key].second, r);
    Add(total, r);
    failures += r.failures.size();
    refusals += r.refusals.size();
  }
  std::printf(
      "\n| traces | modules | instructions | covered | %% | subgraphs | "
      "compiled | run | ran ok | agree |\n| --- | ---: | ---: | ---: | ---: "
      "| ---: | ---: | ---: | ---: | ---: |\n");
  for (const auto& [name, row] : rows)
    Row("`" + name + "`", row.first, row.second);
  Row("**total**", modules - skipped, total);
  std::printf(
      "\nmodules %lld, skipped %lld (parser/verifier); instructions %lld, "
      "accepted by the predicate %lld, covered by compiling subgraphs %lld "
      "(%.1f%%); subgraphs %lld (scaled %lld), compiled %lld, run %lld "
      "(max-run %lld per module), ran ok %lld, agree %lld, oracle could not "
      "evaluate %lld; compile refusals %lld, failures %lld; %.1f s\n",
      (long long)modules, (long long)skipped, (long long)total.instructions,
      (long long)total.accepted, (long long)total.covered,
      Percent(total.covered, total.instructions), (long long)total.subgraphs,
      (long long)total.subgraphs_scaled, (long long)total.subgraphs_compiled,
      (long long)total.subgraphs_sampled, (long long)max_run,
      (long long)total.subgraphs_run, (long long)total.subgraphs_agree,
      (long long)total.oracle_skipped, (long long)refusals, (long long)failures,
      seconds);
  std::printf(
      "time (s): judging instructions %.1f, cutting and scaling %.1f, "
      "compiling subgraphs %.1f, simulator %.1f, oracle %.1f\n",
      total.judge_s, total.cut_s, total.compile_s, total.run_s, total.oracle_s);

  std::map<std::string, int64_t> categories;
  std::vector<std::pair<int64_t, std::string>> details;
  int64_t left_out = 0;
  for (const auto& [why, n] : total.reasons) {
    categories[why.substr(0, why.find(':'))] += n;
    details.push_back({-n, why});
    left_out += n;
  }
  std::sort(details.begin(), details.end());
  std::printf(
      "\n| instructions not covered, by reason | count |\n| --- | ---: |\n");
  for (const auto& [why, n] : categories) {
    std::printf("| %s | %lld |\n", why.c_str(), (long long)n);
  }
  // Accepted but in no subgraph: pieces of only tuples, get-tuple-elements
  // and constants, and get-tuple-elements of values not accepted.
  const int64_t rest = total.instructions - total.covered - left_out;
  std::printf(
      "| not in a subgraph (alias-only pieces, tuple of a "
      "rejected value) | %lld |\n",
      (long long)rest);
  std::printf("| **total** | %lld |\n", (long long)(left_out + rest));
  std::printf("\n| reason: opcode | count |\n| --- | ---: |\n");
  for (size_t k = 0; k < details.size() && k < 40; ++k) {
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
    for (const std::string& f : r.refusals) {
      std::printf("REFUSED %s\n", f.c_str());
    }
  }
  return failures == 0 ? 0 : 1;
}
