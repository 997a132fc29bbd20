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
//
//   build/bench/bench_compile_speed --emit N > m.hlo   # the module alone
//   build/bench/bench_compile_speed --fresh K [N ...]
// compiles each size once per process, as hloc does (a fresh heap, not
// one left by the sizes before), in K rounds that visit the sizes in turn
// so that a busy moment of the machine falls on all of them alike; per
// size, the fastest CPU time of parse and compile over the rounds, and
// their growth per doubling. Parsing is one linear walk over the text:
// its growth is what the machine's memory makes of linear work at that
// size, the peer to read the compile's growth against.
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <utility>
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

// One parse and one compile of a module of size `n` in a child process;
// their CPU seconds, or {-1, -1} when the child failed.
std::pair<double, double> FreshProcessRun(int n) {
  int fds[2];
  if (pipe(fds) != 0) return {-1, -1};
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return {-1, -1};
  }
  if (pid == 0) {
    close(fds[0]);
    const std::string text = MakeModule(n, 17 + n);
    double out[2] = {-1, -1};
    const double p0 = ThreadCpuSeconds();
    StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(text);
    out[0] = ThreadCpuSeconds() - p0;
    if (m.ok()) {
      const double c0 = ThreadCpuSeconds();
      StatusOr<codegen::Compilation> c =
          codegen::Compile(**m, codegen::CompileOptions());
      out[1] = c.ok() ? ThreadCpuSeconds() - c0 : -1;
    }
    const ssize_t w = write(fds[1], out, sizeof(out));
    _exit(w == static_cast<ssize_t>(sizeof(out)) ? 0 : 1);
  }
  close(fds[1]);
  double in[2] = {-1, -1};
  size_t got = 0;
  while (got < sizeof(in)) {
    const ssize_t r =
        read(fds[0], reinterpret_cast<char*>(in) + got, sizeof(in) - got);
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != sizeof(in) || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return {-1, -1};
  }
  return {in[0], in[1]};
}

// "2.31x" per doubling from `a` at size `na` to `b` at size `nb`.
std::string Growth(double a, int64_t na, double b, int64_t nb) {
  const double doublings =
      std::log2(static_cast<double>(nb) / static_cast<double>(na));
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2fx", std::pow(b / a, 1.0 / doublings));
  return buf;
}

int FreshMain(int rounds, const std::vector<int>& sizes) {
  std::vector<int64_t> counts;
  for (int n : sizes) {
    StatusOr<std::unique_ptr<HloModule>> m =
        ParseHloModule(MakeModule(n, 17 + n));
    if (!m.ok()) {
      std::fprintf(stderr, "parse: %s\n", m.status().ToString().c_str());
      return 1;
    }
    counts.push_back((*m)->instruction_count());
  }
  std::vector<double> parse(sizes.size(), 1e30), compile(sizes.size(), 1e30);
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = 0; i < sizes.size(); ++i) {
      const auto [p, c] = FreshProcessRun(sizes[i]);
      if (p < 0 || c < 0) {
        std::fprintf(stderr, "the child compiling size %d failed\n", sizes[i]);
        return 1;
      }
      parse[i] = std::min(parse[i], p);
      compile[i] = std::min(compile[i], c);
    }
  }
  std::printf(
      "| instructions | parse CPU ms | parse growth per doubling | compile "
      "CPU s | compile ms/1k | compile growth per doubling |\n| ---: | ---: "
      "| ---: | ---: | ---: | ---: |\n");
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::string pg, cg;
    if (i > 0 && counts[i] > counts[i - 1]) {
      pg = Growth(parse[i - 1], counts[i - 1], parse[i], counts[i]);
      cg = Growth(compile[i - 1], counts[i - 1], compile[i], counts[i]);
    }
    std::printf("| %lld | %.1f | %s | %.3f | %.2f | %s |\n",
                static_cast<long long>(counts[i]), parse[i] * 1e3, pg.c_str(),
                compile[i], compile[i] * 1e6 / static_cast<double>(counts[i]),
                cg.c_str());
  }
  if (sizes.size() > 1 && counts.back() > counts.front()) {
    std::printf(
        "\nover %lld-%lld instructions: parse %s, compile %s per doubling "
        "(fastest of %d fresh processes per size)\n",
        static_cast<long long>(counts.front()),
        static_cast<long long>(counts.back()),
        Growth(parse.front(), counts.front(), parse.back(), counts.back())
            .c_str(),
        Growth(compile.front(), counts.front(), compile.back(), counts.back())
            .c_str(),
        rounds);
  }
  return 0;
}

int Main(int argc, char** argv) {
  {
    std::vector<int> sizes;
    int fresh = 0;
    for (int i = 1; i < argc; ++i) {
      if (std::string(argv[i]) == "--fresh" && i + 1 < argc) {
        fresh = std::atoi(argv[++i]);
      } else if (std::string(argv[i]) == "--emit" && i + 1 < argc) {
        // The module of size N as text (to compile it with hloc).
        const int n = std::atoi(argv[++i]);
        std::fputs(MakeModule(n, 17 + n).c_str(), stdout);
        return 0;
      } else if (std::string(argv[i]) == "--reps" && i + 1 < argc) {
        ++i;
      } else {
        sizes.push_back(std::atoi(argv[i]));
      }
    }
    if (fresh > 0) {
      if (sizes.empty()) sizes = {4000, 8000, 16000};
      return FreshMain(fresh, sizes);
    }
  }
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
