#!/usr/bin/python3
"""Differential programs per second (generate + compile + run + oracle +
compare) through `hlo-run --serve` workers versus one `hlo-run` process
per program, side by side: the same campaign seed, the same generator
setting, the same number of programs and jobs, one after the other in this
script. Also prints the share of time spent in the oracle and in the target.

Usage (after building hlo-fuzz and hlo-run in build/):
    /usr/bin/python3 bench/diff_serve_vs_process.py [--build build]
        [--programs N] [--jobs J] [--instructions K] [--corpus DIR]

Both sides must see the same verdicts (same statuses), or the benchmark
fails: the comparison is between two ways of running the same work.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def campaign(build, mode, args, out):
    cmd = [os.path.join(build, "hlo-fuzz"), "--no-progress",
           "--budget", "1h", "--max-programs", str(args.programs),
           "--jobs", str(args.jobs), "--seed", str(args.seed),
           "--instructions", str(args.instructions),
           "--target", mode, "--out", out]
    if args.corpus:
        cmd += ["--corpus", args.corpus]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit("hlo-fuzz failed (%d): %s" % (done.returncode, done.stderr))
    return json.loads(done.stdout)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--programs", type=int, default=300)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--instructions", type=int, default=20)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--corpus", default="")
    args = p.parse_args()
    rows = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("serve", "hlo-run"):
            rows[mode] = campaign(args.build, mode, args,
                                  os.path.join(tmp, mode))
    if rows["serve"]["statuses"] != rows["hlo-run"]["statuses"]:
        sys.exit("verdicts differ: %s vs %s" % (rows["serve"]["statuses"],
                                                rows["hlo-run"]["statuses"]))
    print("programs %d, jobs %d, instructions %d, seed %d%s" %
          (args.programs, args.jobs, args.instructions, args.seed,
           ", corpus " + args.corpus if args.corpus else ""))
    print("statuses: %s" % json.dumps(rows["serve"]["statuses"]))
    print("| mode | programs/s | oracle share | target share |")
    print("| --- | ---: | ---: | ---: |")
    for mode, label in (("serve", "hlo-run --serve workers"),
                        ("hlo-run", "one hlo-run process per program")):
        r = rows[mode]
        print("| %s | %.1f | %.0f%% | %.0f%% |" %
              (label, r["programs_per_second"],
               100 * r["time"]["oracle_share"],
               100 * r["time"]["target_share"]))
    ratio = (rows["serve"]["programs_per_second"] /
             rows["hlo-run"]["programs_per_second"])
    print("ratio serve / process: %.2f" % ratio)


if __name__ == "__main__":
    main()
