#!/usr/bin/python3
"""Programs per second through `hlo-run --serve` (one process, JSON-lines)
versus one `hlo-run` process per program, side by side on the same
programs, inputs and output directories.

Usage (after a build in build/):
    /usr/bin/python3 bench/serve_vs_process.py [--build build] [--programs N]

Each program is a small module of the kind a fuzzer sends (elementwise
chains, a reduction, a transpose, a dot), with its own shape so nothing is
cached between programs. Both sides compile with the full pass pipeline and
run on seeded random inputs; every answer must be "ok" or the benchmark
fails. Prints programs/s for both and the ratio serve/process (higher is
better for --serve).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

TEMPLATES = [
    """HloModule chain{i}
ENTRY e {{
  a = f32[{m},{n}] parameter(0)
  b = f32[{m},{n}] parameter(1)
  x = f32[{m},{n}] multiply(a, b)
  y = f32[{m},{n}] add(x, a)
  z = f32[{m},{n}] tanh(y)
  ROOT r = f32[{m},{n}] maximum(z, b)
}}
""",
    """HloModule reduce{i}
add {{
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}}
ENTRY e {{
  a = f32[{m},{n}] parameter(0)
  e = f32[{m},{n}] exponential(a)
  z = f32[] constant(0)
  ROOT r = f32[{m}] reduce(e, z), dimensions={{1}}, to_apply=add
}}
""",
    """HloModule transpose{i}
ENTRY e {{
  a = s32[{m},{n}] parameter(0)
  t = s32[{n},{m}] transpose(a), dimensions={{1,0}}
  ROOT r = s32[{n},{m}] add(t, t)
}}
""",
    """HloModule dot{i}
ENTRY e {{
  a = f32[{m},{n}] parameter(0)
  b = f32[{n},{m}] parameter(1)
  ROOT d = f32[{m},{m}] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
}}
""",
]


def make_programs(count, directory):
    paths = []
    for i in range(count):
        text = TEMPLATES[i % len(TEMPLATES)].format(i=i, m=3 + i % 13,
                                                    n=17 + (7 * i) % 150)
        path = os.path.join(directory, "p%03d.hlo" % i)
        with open(path, "w") as f:
            f.write(text)
        paths.append(path)
    return paths


def run_serve(hlo_run, programs, out_root):
    lines = []
    for i, p in enumerate(programs):
        lines.append(json.dumps({"id": i, "module": p, "seed": i,
                                 "output_dir": os.path.join(out_root, str(i))}))
    start = time.perf_counter()
    proc = subprocess.run([hlo_run, "--serve"], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, check=True)
    elapsed = time.perf_counter() - start
    answers = [json.loads(l) for l in proc.stdout.splitlines() if l.strip()]
    if len(answers) != len(programs):
        sys.exit("serve: %d answers for %d programs" % (len(answers),
                                                        len(programs)))
    for a in answers:
        if a["status"] != "ok":
            sys.exit("serve: program %s: %s %s" % (a.get("id"), a["status"],
                                                   a["message"]))
    return elapsed


def run_processes(hlo_run, programs, out_root):
    start = time.perf_counter()
    for i, p in enumerate(programs):
        r = subprocess.run([hlo_run, p, "--random-inputs", "--seed", str(i),
                            "--output-dir", os.path.join(out_root, str(i))],
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("process: program %d exited %d: %s" % (i, r.returncode,
                                                           r.stderr))
    return time.perf_counter() - start


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--programs", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    hlo_run = os.path.join(args.build, "hlo-run")
    if not os.access(hlo_run, os.X_OK):
        sys.exit("no %s: build first (cmake --build %s --target hlo-run)" %
                 (hlo_run, args.build))
    work = tempfile.mkdtemp(prefix="serve_vs_process_")
    try:
        programs = make_programs(args.programs, work)
        serve, proc = [], []
        for k in range(args.repeats):
            for name, fn, acc in (("serve", run_serve, serve),
                                  ("process", run_processes, proc)):
                out = os.path.join(work, "%s%d" % (name, k))
                acc.append(fn(hlo_run, programs, out))
                shutil.rmtree(out, ignore_errors=True)
        serve.sort()
        proc.sort()
        s = args.programs / serve[len(serve) // 2]
        p = args.programs / proc[len(proc) // 2]
        print("programs: %d (median of %d runs each)" % (args.programs,
                                                         args.repeats))
        print("| mode | programs/s |")
        print("| --- | ---: |")
        print("| hlo-run --serve | %.1f |" % s)
        print("| hlo-run per program | %.1f |" % p)
        print("ratio serve/process: %.2f" % (s / p))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
