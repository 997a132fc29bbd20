#!/usr/bin/python3
"""hlo-reduce with 1 and 2 jobs, side by side, on the zoo's witnesses.

For every tests/bugzoo/<bug>/ (patch applied to a copy of the target side,
as zoo_triage.py does): hlo-reduce on the witness against the patched
target with its own same-bug test (hlo-run --serve workers, one per job),
--jobs 1 and --jobs 2 alternately, `--repeats` times each. Prints per bug
the median seconds, the test runs, the used outcomes that were tested ahead
(ddmin's `ahead`) and the 1 -> 2 jobs speed-up; the reduced cases must be
the same size for both.

Usage (after building hlo-reduce in BUILD):
    /usr/bin/python3 bench/reduce_jobs.py [--build build] [--bugs 01,08]
        [--repeats 3] [--work DIR]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

from zoo_common import build_targets, bug_dirs, patched, prepare


def reduce_once(args, witness, hlo_run, jobs, out):
    shutil.rmtree(out, ignore_errors=True)
    cmd = [os.path.join(args.build, "hlo-reduce"), witness, "--out", out,
           "--jobs", str(jobs), "--hlo-run", hlo_run, "--target", "serve",
           "--timeout", "120"]
    start = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.time() - start
    if p.returncode != 0:
        raise RuntimeError("hlo-reduce: exit %d: %s" %
                           (p.returncode, p.stderr.strip()[-300:]))
    s = json.loads(p.stdout)
    return seconds, s


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--bugs", default="")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--work", default="/tmp/trench-reduce-jobs")
    args = p.parse_args()
    args.build = os.path.abspath(args.build)
    if not os.path.exists(os.path.join(args.build, "hlo-reduce")):
        sys.exit("no hlo-reduce in %s" % args.build)
    os.makedirs(args.work, exist_ok=True)
    src, zoo_build, env = prepare(os.path.join(args.work, "zoo"))
    hlo_run = os.path.join(zoo_build, "hlo-run")
    print("| bug | instructions | -j1 s | -j2 s | tests -j1 / -j2 | "
          "ahead (-j2) | 1 -> 2 jobs |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    total = {1: 0.0, 2: 0.0}
    for bug_dir in bug_dirs(args.bugs):
        name = os.path.basename(bug_dir)
        witness = os.path.join(bug_dir, "witness")
        with patched(src, bug_dir):
            ok, log = build_targets(zoo_build, env)
            if not ok:
                sys.exit("%s: build failed: %s" % (name, log))
            times = {1: [], 2: []}
            last = {}
            for _ in range(args.repeats):
                for jobs in (1, 2):
                    sec, s = reduce_once(args, witness, hlo_run, jobs,
                                         os.path.join(args.work, "out"))
                    times[jobs].append(sec)
                    last[jobs] = s
        if last[1]["after"] != last[2]["after"]:
            sys.exit("%s: -j1 and -j2 reduced to different sizes" % name)
        med = {j: statistics.median(times[j]) for j in (1, 2)}
        for j in (1, 2):
            total[j] += med[j]
        print("| %s | %d -> %d | %.2f | %.2f | %d / %d | %d | %.2fx |" % (
            name, last[1]["before"]["instructions"],
            last[1]["after"]["instructions"], med[1], med[2],
            last[1]["stats"]["tests"], last[2]["stats"]["tests"],
            last[2]["stats"]["ahead"], med[1] / med[2]))
        sys.stdout.flush()
    print("| **all** | | %.2f | %.2f | | | %.2fx |" %
          (total[1], total[2], total[1] / total[2]))


if __name__ == "__main__":
    main()
