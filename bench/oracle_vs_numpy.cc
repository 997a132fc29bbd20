// Times the reference oracle on the workloads of bench/oracle_vs_numpy.py
// and prints one JSON object: {"workload": median_seconds, ...}.
// The python script runs numpy on the same dtypes and shapes and prints
// the ratios; run it rather than this binary.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/random_inputs.h"
#include "oracle/evaluator.h"

namespace trench {
namespace {

struct Workload {
  const char* name;
  const char* hlo;
};

// Keep in sync with WORKLOADS in oracle_vs_numpy.py.
constexpr Workload kWorkloads[] = {
    {"elementwise_chain_f32_1M", R"(
HloModule chain
ENTRY e {
  x = f32[1048576] parameter(0)
  w = f32[1048576] parameter(1)
  b = f32[1048576] parameter(2)
  t1 = f32[1048576] multiply(x, w)
  t2 = f32[1048576] add(t1, b)
  t3 = f32[1048576] maximum(t2, x)
  t4 = f32[1048576] multiply(t3, t3)
  t5 = f32[1048576] abs(x)
  t6 = f32[1048576] multiply(t5, w)
  ROOT t7 = f32[1048576] subtract(t4, t6)
})"},
    {"reduce_rows_f32_1024x1024", R"(
HloModule reduce_rows
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[1024,1024] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[1024] reduce(x, z), dimensions={1}, to_apply=add
})"},
    {"dot_f32_512x512x512", R"(
HloModule dot
ENTRY e {
  a = f32[512,512] parameter(0)
  b = f32[512,512] parameter(1)
  ROOT d = f32[512,512] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})"},
    {"transpose_f32_1024x1024", R"(
HloModule transpose
ENTRY e {
  x = f32[1024,1024] parameter(0)
  ROOT t = f32[1024,1024] transpose(x), dimensions={1,0}
})"},
};

double MedianSeconds(const HloModule& module, const std::vector<Literal>& args,
                     int repeats) {
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    StatusOr<Literal> result = Evaluate(module, args);
    auto end = std::chrono::steady_clock::now();
    if (!result.ok()) {
      std::fprintf(stderr, "%s\n", result.status().ToString().c_str());
      std::exit(1);
    }
    times.push_back(std::chrono::duration<double>(end - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

int Main(int argc, char** argv) {
  int repeats = argc > 1 ? std::atoi(argv[1]) : 15;
  std::printf("{");
  bool first = true;
  for (const Workload& w : kWorkloads) {
    auto module = ParseHloModule(w.hlo);
    if (!module.ok()) {
      std::fprintf(stderr, "%s: %s\n", w.name,
                   module.status().ToString().c_str());
      return 1;
    }
    std::vector<Literal> args =
        RandomArguments(*(*module)->entry_computation(), /*seed=*/1);
    MedianSeconds(**module, args, 2);  // Warm-up.
    double t = MedianSeconds(**module, args, repeats);
    std::printf("%s\"%s\": %.6g", first ? "" : ", ", w.name, t);
    first = false;
  }
  std::printf("}\n");
  return 0;
}

}  // namespace
}  // namespace trench

int main(int argc, char** argv) { return trench::Main(argc, argv); }
