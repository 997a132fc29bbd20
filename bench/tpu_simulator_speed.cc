// Simulator throughput on simple vector loops: vector instructions per
// second (each instruction works on all 1024 lanes). The simulator is on
// the fuzzing hot path; this is the number to watch when changing it. The
// last row runs the first loop on every chip of an 8-chip slice, which the
// scheduler interleaves instruction by instruction (its overhead is the
// gap to the first row).
//   cmake --build build --target bench_tpu_simulator_speed
//   build/bench/bench_tpu_simulator_speed
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "tpu/executable.h"
#include "tpu/simulator.h"
#include "tpu/slice.h"

namespace trench::tpu {
namespace {

// Runs `body` `iters` times in a loop on each of `chips` chips (1: the
// single-chip Simulator); returns vector instructions/second over all
// chips, or a negative number on error (after printing it).
double Rate(const char* label, const std::string& body, int iters,
            int vector_ops_per_iter, int chips = 1) {
  std::string text =
      "tpux 1\nkernel spin {\n  .vmem 65536\n  vimm.f32 v1, 1.5\n"
      "  vimm.f32 v2, 0.25\n  vst.f32 vmem[0], v1\n  simm s1, " +
      std::to_string(iters) + "\nloop:\n" + body +
      "  sloop s1, loop\n}\nlaunch spin\n";
  StatusOr<Executable> exe = ReadExecutable(text);
  if (!exe.ok()) {
    std::fprintf(stderr, "%s: %s\n", label, exe.status().ToString().c_str());
    return -1;
  }
  auto start = std::chrono::steady_clock::now();
  StatusOr<RunStatus> status = RunStatus::kOk;
  if (chips == 1) {
    StatusOr<std::unique_ptr<Simulator>> sim = Simulator::Create(*exe);
    if (sim.ok()) start = std::chrono::steady_clock::now();
    StatusOr<RunResult> r = sim.ok() ? (*sim)->Run() : sim.status();
    status = r.ok() ? StatusOr<RunStatus>(r->report.status) : r.status();
  } else {
    SliceOptions opts;
    opts.chips = chips;
    StatusOr<std::unique_ptr<SliceSimulator>> slice =
        SliceSimulator::Create(*exe, opts);
    if (slice.ok()) start = std::chrono::steady_clock::now();
    StatusOr<SliceRunResult> r = slice.ok() ? (*slice)->Run() : slice.status();
    status = r.ok() ? StatusOr<RunStatus>(r->report.status) : r.status();
  }
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (!status.ok() || *status != RunStatus::kOk) {
    std::fprintf(stderr, "%s: run failed: %s\n", label,
                 status.status().ToString().c_str());
    return -1;
  }
  double rate = static_cast<double>(iters) * vector_ops_per_iter * chips / secs;
  std::printf("%-28s %8.2f M vector instructions/s\n", label, rate / 1e6);
  return rate;
}

int Main() {
  Rate("vector ALU (add/mul/max/sub)",
       "  vadd.f32 v0, v1, v2\n  vmul.f32 v3, v0, v2\n"
       "  vmax.f32 v4, v3, v1\n  vsub.f32 v5, v4, v0\n",
       200000, 4);
  Rate("masked ALU",
       "  simm s2, 5\n  simm s3, 72\n  mbox m0, s2, s3\n"
       "  vadd.f32 v0, v1, v2 @m0\n  vmul.f32 v3, v0, v2 @m0\n",
       200000, 3);
  Rate("VMEM load/store", "  vld.f32 v0, vmem[0]\n  vst.f32 vmem[4096], v0\n",
       200000, 2);
  Rate("transcendental (vexp)", "  vexp.f32 v0, v1\n", 50000, 1);
  Rate("vector ALU, 8-chip slice",
       "  vadd.f32 v0, v1, v2\n  vmul.f32 v3, v0, v2\n"
       "  vmax.f32 v4, v3, v1\n  vsub.f32 v5, v4, v0\n",
       25000, 4, 8);
  return 0;
}

}  // namespace
}  // namespace trench::tpu

int main() { return trench::tpu::Main(); }
