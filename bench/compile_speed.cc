// Compile time per 1,000 HLO instructions: parsing (the peer: the
// cheapest pass over the same text), the pass pipeline and code generation,
// on generated modules of growing size. Prints milliseconds per 1,000
// instructions and compile/parse (wall clock, median of the repetitions),
// then the compile's CPU time (this thread's, the fastest repetition: the
// figure least moved by other processes on a shared machine) and its
// growth per doubling of the instruction count; and the module
// fingerprint the pass pipeline takes around every pass, against printing
// the module and hashing its text.
//   cmake --build build --target bench_compile_speed
//   build/bench/bench_compile_speed [--reps R] [N ...]
// N: generator sizes (default 500 1000 2000 4000 8000; the module has
// about twice as many instructions, the sum chain included). R: the
// repetitions per size (default 5, 3 from N = 8000); more make the
// fastest CPU time steadier on a busy machine.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "compiler/codegen/compile.h"
#include "compiler/ir/hlo_fingerprint.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer.h"

namespace trench {
namespace {

// A module of about `n` instructions: a random DAG over f32[64,128] values
// of elementwise ops, with a row reduction broadcast back, a transpose
// pair and a dot every so often, as real models mix them.
std::string MakeModule(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::string t =
      "HloModule gen\nadd {\n  x = f32[] parameter(0)\n  y = f32[] "
      "parameter(1)\n  ROOT s = f32[] add(x, y)\n}\nENTRY e {\n"
      "  p0 = f32[64,128] parameter(0)\n  p1 = f32[64,128] parameter(1)\n"
      "  w = f32[128,128] parameter(2)\n  zero = f32[] constant(0)\n";
  std::vector<std::string> live = {"p0", "p1"};
  const char* binary[] = {"add", "multiply", "subtract", "maximum", "minimum"};
  const char* unary[] = {"exponential", "tanh", "negate", "abs", "logistic"};
  int id = 0;
  auto pick = [&] {
    // Prefer recent values so the graph is deep, as real programs are.
    int k = static_cast<int>(live.size());
    int lo = std::max(0, k - 8);
    return live[lo + static_cast<int>(rng() % (k - lo))];
  };
  int count = 4;
  while (count < n) {
    std::string name = "v" + std::to_string(id++);
    int kind = static_cast<int>(rng() % 20);
    if (kind < 10) {
      t += "  " + name + " = f32[64,128] " + binary[rng() % 5] + "(" + pick() +
           ", " + pick() + ")\n";
      count += 1;
    } else if (kind < 16) {
      t += "  " + name + " = f32[64,128] " + unary[rng() % 5] + "(" + pick() +
           ")\n";
      count += 1;
    } else if (kind < 18) {
      t += "  " + name + "r = f32[64] reduce(" + pick() +
           ", zero), dimensions={1}, to_apply=add\n";
      t += "  " + name + " = f32[64,128] broadcast(" + name +
           "r), dimensions={0}\n";
      count += 2;
    } else if (kind < 19) {
      t += "  " + name + "t = f32[128,64] transpose(" + pick() +
           "), dimensions={1,0}\n";
      t += "  " + name + " = f32[64,128] transpose(" + name +
           "t), dimensions={1,0}\n";
      count += 2;
    } else {
      t += "  " + name + " = f32[64,128] dot(" + pick() +
           ", w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
      count += 1;
    }
    live.push_back(name);
  }
  // Every value feeds the root so nothing is dead.
  std::string acc = live[0];
  for (size_t i = 1; i < live.size(); ++i) {
    std::string name = "acc" + std::to_string(i);
    t += "  " + name + " = f32[64,128] add(" + acc + ", " + live[i] + ")\n";
    acc = name;
  }
  t += "  ROOT r = f32[64,128] copy(" + acc + ")\n}\n";
  return t;
}

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

// This thread's CPU time: what the compile itself costs, without the time
// other processes held the core.
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) +
         1e-9 * static_cast<double>(ts.tv_nsec);
}

struct SizeRow {
  int64_t instructions = 0;
  double compile_cpu = 0;  // Seconds, the fastest repetition.
  // The pass pipeline's module fingerprint on the optimized module, and
  // its peer: printing the module and hashing the text (FNV-1a), as the
  // pipeline did before. CPU seconds, the fastest of `reps`.
  double fingerprint_cpu = 0, print_hash_cpu = 0;
};

// The fastest CPU time of `reps` calls of f.
template <typename F>
double FastestCpu(int reps, F&& f) {
  double best = 1e30;
  for (int i = 0; i < reps; ++i) {
    const double t0 = ThreadCpuSeconds();
    f();
    best = std::min(best, ThreadCpuSeconds() - t0);
  }
  return best;
}

uint64_t PrintedTextHash(const HloModule& m) {
  uint64_t h = 1469598103934665603ull;
  PrintHloModuleTo(m, [&h](std::string_view piece) {
    for (unsigned char c : piece) {
      h ^= c;
      h *= 1099511628211ull;
    }
  });
  return h;
}

int Main(int argc, char** argv) {
  std::printf(
      "| instructions | parse ms/1k | compile ms/1k | of which codegen "
      "ms/1k | compile/parse |\n| ---: | ---: | ---: | ---: | ---: |\n");
  std::vector<int> sizes;
  int reps_flag = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--reps" && i + 1 < argc) {
      reps_flag = std::atoi(argv[++i]);
    } else {
      sizes.push_back(std::atoi(argv[i]));
    }
  }
  if (sizes.empty()) sizes = {500, 1000, 2000, 4000, 8000};
  std::map<std::string, double> last_passes;
  std::vector<SizeRow> rows;
  for (int n : sizes) {
    const std::string text = MakeModule(n, 17 + n);
    std::vector<double> parse, compile, backend, compile_cpu;
    std::map<std::string, double> per_pass;  // Of the last repetition.
    std::unique_ptr<HloModule> optimized;    // Of the last repetition.
    int64_t instructions = 0;
    const int reps = reps_flag > 0 ? reps_flag : n >= 8000 ? 3 : 5;
    for (int rep = 0; rep < reps; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
      parse.push_back(Seconds(t0));
      if (!m.ok()) {
        std::fprintf(stderr, "parse: %s\n", m.status().ToString().c_str());
        return 1;
      }
      instructions = (*m)->instruction_count();
      auto t1 = std::chrono::steady_clock::now();
      const double cpu1 = ThreadCpuSeconds();
      StatusOr<codegen::Compilation> c =
          codegen::Compile(**m, codegen::CompileOptions());
      compile_cpu.push_back(ThreadCpuSeconds() - cpu1);
      compile.push_back(Seconds(t1));
      if (!c.ok()) {
        std::fprintf(stderr, "compile: %s\n", c.status().ToString().c_str());
        return 1;
      }
      per_pass.clear();
      for (const PassRunStats& st : c->passes) per_pass[st.pass] += st.seconds;
      auto t2 = std::chrono::steady_clock::now();
      StatusOr<tpu::Executable> exe =
          codegen::CompileModule(*c->optimized, codegen::CompileOptions());
      backend.push_back(Seconds(t2));
      if (!exe.ok()) {
        std::fprintf(stderr, "codegen: %s\n", exe.status().ToString().c_str());
        return 1;
      }
      optimized = std::move(c->optimized);
    }
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    const double k = 1000.0 / static_cast<double>(instructions);
    std::printf("| %lld | %.2f | %.2f | %.2f | %.1f |\n",
                static_cast<long long>(instructions), median(parse) * 1e3 * k,
                median(compile) * 1e3 * k, median(backend) * 1e3 * k,
                median(compile) / median(parse));
    std::fflush(stdout);
    SizeRow row;
    row.instructions = instructions;
    row.compile_cpu = *std::min_element(compile_cpu.begin(), compile_cpu.end());
    uint64_t a = 0, b = 0;
    row.fingerprint_cpu =
        FastestCpu(reps, [&] { a ^= HloModuleFingerprint(*optimized); });
    row.print_hash_cpu =
        FastestCpu(reps, [&] { b ^= PrintedTextHash(*optimized); });
    if (a == 42 && b == 42) std::printf(" ");  // Keeps both calls.
    rows.push_back(row);
    if (n == sizes.back()) last_passes = per_pass;
  }
  std::printf(
      "\n| instructions | compile CPU s (fastest) | CPU ms/1k | growth per "
      "doubling |\n| ---: | ---: | ---: | ---: |\n");
  for (size_t i = 0; i < rows.size(); ++i) {
    const SizeRow& r = rows[i];
    std::string growth = "";
    if (i > 0 && r.instructions > rows[i - 1].instructions) {
      const double doublings =
          std::log2(static_cast<double>(r.instructions) /
                    static_cast<double>(rows[i - 1].instructions));
      char buf[32];
      std::snprintf(
          buf, sizeof(buf), "%.2fx",
          std::pow(r.compile_cpu / rows[i - 1].compile_cpu, 1.0 / doublings));
      growth = buf;
    }
    std::printf("| %lld | %.3f | %.2f | %s |\n",
                static_cast<long long>(r.instructions), r.compile_cpu,
                r.compile_cpu * 1e6 / static_cast<double>(r.instructions),
                growth.c_str());
  }
  std::printf(
      "\n| instructions | module fingerprint ms | print + FNV-1a ms | "
      "ratio |\n| ---: | ---: | ---: | ---: |\n");
  for (const SizeRow& r : rows) {
    std::printf("| %lld | %.2f | %.2f | %.1fx |\n",
                static_cast<long long>(r.instructions), r.fingerprint_cpu * 1e3,
                r.print_hash_cpu * 1e3, r.print_hash_cpu / r.fingerprint_cpu);
  }
  std::printf("\nper pass at the largest size (ms):");
  for (const auto& [name, secs] : last_passes) {
    std::printf(" %s %.1f;", name.c_str(), secs * 1e3);
  }
  std::printf("\n");
  return 0;
}

}  // namespace
}  // namespace trench

int main(int argc, char** argv) { return trench::Main(argc, argv); }
