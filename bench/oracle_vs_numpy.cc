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
#include "oracle/spmd.h"

namespace trench {
namespace {

struct Workload {
  const char* name;
  const char* hlo;
  int64_t devices = 1;  // > 1: SPMD on a mesh of 1 x devices.
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
    // The same reduction across 4 devices: each device sums the 4 arrays
    // (numpy sums them once).
    {"all_reduce_f32_4dev_1M", R"(
HloModule all_reduce
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[1048576] parameter(0)
  ROOT r = f32[1048576] all-reduce(x), channel_id=1, replica_groups=[1,4]<=[4], use_global_device_ids=true, to_apply=add
})",
     4},
    {"all_gather_f32_4dev_256K", R"(
HloModule all_gather
ENTRY e {
  x = f32[262144] parameter(0)
  ROOT g = f32[1048576] all-gather(x), channel_id=1, replica_groups=[1,4]<=[4], use_global_device_ids=true, dimensions={0}
})",
     4},
};

// One evaluation: plain, or SPMD on every device when there are several
// argument lists.
Status EvaluateOnce(const HloModule& module,
                    const std::vector<std::vector<Literal>>& args) {
  if (args.size() == 1) return Evaluate(module, args[0]).status();
  SpmdOptions options;
  options.mesh = DeviceMesh{1, static_cast<int64_t>(args.size())};
  return EvaluateSpmd(module, args, options).status();
}

double MedianSeconds(const HloModule& module,
                     const std::vector<std::vector<Literal>>& args,
                     int repeats) {
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    Status result = EvaluateOnce(module, args);
    auto end = std::chrono::steady_clock::now();
    if (!result.ok()) {
      std::fprintf(stderr, "%s\n", result.ToString().c_str());
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
    std::vector<std::vector<Literal>> args;
    for (int64_t d = 0; d < w.devices; ++d) {
      args.push_back(
          RandomArguments(*(*module)->entry_computation(), /*seed=*/1 + d));
    }
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
