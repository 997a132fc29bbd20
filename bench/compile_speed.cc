// Compile time per 1,000 HLO instructions: parsing (the peer: the
// cheapest pass over the same text), the pass pipeline and code generation,
// on generated modules of growing size. Prints milliseconds per 1,000
// instructions and compile/parse.
//   cmake --build build --target bench_compile_speed
//   build/bench/bench_compile_speed [N ...]
// N: generator sizes (default 500 1000 2000 4000 8000; the module has
// about twice as many instructions, the sum chain included).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "compiler/codegen/compile.h"
#include "compiler/ir/hlo_parser.h"

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

int Main(int argc, char** argv) {
  std::printf(
      "| instructions | parse ms/1k | compile ms/1k | of which codegen "
      "ms/1k | compile/parse |\n| ---: | ---: | ---: | ---: | ---: |\n");
  std::vector<int> sizes = {500, 1000, 2000, 4000, 8000};
  if (argc > 1) sizes.clear();
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  std::map<std::string, double> last_passes;
  for (int n : sizes) {
    const std::string text = MakeModule(n, 17 + n);
    std::vector<double> parse, compile, backend;
    std::map<std::string, double> per_pass;  // Of the last repetition.
    int64_t instructions = 0;
    const int reps = n >= 8000 ? 3 : 5;
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
      StatusOr<codegen::Compilation> c =
          codegen::Compile(**m, codegen::CompileOptions());
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
    if (n == sizes.back()) last_passes = per_pass;
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
