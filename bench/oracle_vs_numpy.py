#!/usr/bin/python3
"""The oracle against numpy, side by side on the same dtypes and shapes.

Builds bench_oracle_vs_numpy, runs it (median of N evaluations per
workload, in process), times numpy on the same workloads in this process
(median of N), and prints the ratio oracle/numpy (lower is better; goal:
<= 2 for elementwise, reduce, transpose; <= 3 for dot).

Run with Debian's numpy: /usr/bin/python3 bench/oracle_vs_numpy.py
OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE are unset for numpy's side so that an
OpenBLAS numpy runs its best kernel; the BLAS numpy links is printed.
"""
import json
import os
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("TRENCH_BUILD", os.path.join(ROOT, "build"))
REPEATS = 15
GOALS = {"elementwise_chain_f32_1M": 2.0, "reduce_rows_f32_1024x1024": 2.0,
         "dot_f32_512x512x512": 3.0, "transpose_f32_1024x1024": 2.0,
         # SPMD (oracle/spmd.h): every one of the 4 devices computes its
         # result (4 sums, 4 gathers) where numpy computes one; the goal
         # allows that 4x.
         "all_reduce_f32_4dev_1M": 8.0, "all_gather_f32_4dev_256K": 8.0}


def chain(x, w, b):
    t3 = np.maximum(x * w + b, x)
    return t3 * t3 - np.abs(x) * w


def workloads(rng):
    n = 1 << 20
    x, w, b = (rng.uniform(-4, 4, n).astype(np.float32) for _ in range(3))
    m = rng.uniform(-4, 4, (1024, 1024)).astype(np.float32)
    a = rng.uniform(-4, 4, (512, 512)).astype(np.float32)
    c = rng.uniform(-4, 4, (512, 512)).astype(np.float32)
    d = [rng.uniform(-4, 4, n).astype(np.float32) for _ in range(4)]
    q = [rng.uniform(-4, 4, n // 4).astype(np.float32) for _ in range(4)]
    return {
        "elementwise_chain_f32_1M": lambda: chain(x, w, b),
        "reduce_rows_f32_1024x1024": lambda: m.sum(axis=1, dtype=np.float32),
        "dot_f32_512x512x512": lambda: a @ c,
        # A transpose that materializes, as the oracle's does.
        "transpose_f32_1024x1024": lambda: np.ascontiguousarray(m.T),
        # The same reduction across 4 devices' arrays, in device order.
        "all_reduce_f32_4dev_1M": lambda: ((d[0] + d[1]) + d[2]) + d[3],
        "all_gather_f32_4dev_256K": lambda: np.concatenate(q),
    }


def median_seconds(f, repeats):
    f()
    f()
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        f()
        times.append(time.perf_counter() - t)
    times.sort()
    return times[len(times) // 2]


def blas_name():
    try:
        maps = open("/proc/self/maps").read()
    except OSError:
        return "unknown"
    for lib in ("openblas", "blis", "mkl", "atlas", "libblas"):
        if lib in maps:
            for line in maps.splitlines():
                if lib in line:
                    return line.split()[-1]
    return "unknown"


def main():
    subprocess.run(["cmake", "--build", BUILD, "--target",
                    "bench_oracle_vs_numpy"], check=True,
                   stdout=subprocess.DEVNULL)
    oracle = json.loads(subprocess.run(
        [os.path.join(BUILD, "bench", "bench_oracle_vs_numpy"), str(REPEATS)],
        check=True, capture_output=True, text=True).stdout)
    rng = np.random.default_rng(1)
    numpy_times = {k: median_seconds(f, REPEATS)
                   for k, f in workloads(rng).items()}
    print(f"numpy {np.__version__}, BLAS: {blas_name()}, "
          f"cores: {os.cpu_count()}")
    print(f"{'workload':32} {'oracle ms':>10} {'numpy ms':>10} "
          f"{'ratio':>7} {'goal':>5}  ok")
    for name, t_np in numpy_times.items():
        t_or = oracle[name]
        ratio = t_or / t_np
        ok = "yes" if ratio <= GOALS[name] else "NO"
        print(f"{name:32} {t_or * 1e3:10.2f} {t_np * 1e3:10.2f} "
              f"{ratio:7.2f} {GOALS[name]:5.1f}  {ok}")


if __name__ == "__main__":
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if var in os.environ:
            # Re-exec without them: OpenBLAS reads them at load time.
            env = {k: v for k, v in os.environ.items()
                   if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
            os.execve(sys.executable, [sys.executable] + sys.argv, env)
    main()
