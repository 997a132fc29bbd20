#!/usr/bin/python3
"""hlo-reduce against C-Vise and C-Reduce on the bug zoo's witnesses.

For every selected tests/bugzoo/<bug>/: apply bug.patch to a copy of the
target side and rebuild hlo-run (zoo_common: one -DTRENCH_TARGET_ONLY=ON
build, incremental per bug). Then one interestingness script, shared by all
tools, decides whether a module still shows the bug:

    hlo-diff MODULE --random-inputs --hlo-run <patched hlo-run>
        has the witness's status (e.g. "mismatch", "compile_crash"),
    and (unless --no-unpatched-check) the same with the unpatched hlo-run
        passes, so the reduction cannot slip to a different bug.

The script takes the module path as $1 (hlo-reduce --test-module) or
reduces ./module.hlo in its working directory (cvise/creduce). Every run
appends a line to a counter file, so "runs" is counted the same way for
every tool. Since the script draws its own inputs, hlo-reduce runs without
its simplify-inputs pass (input edits cannot matter to this test).

Witnesses that only fail on their own inputs (e.g. an Inf that random
inputs never draw) use the witness's inputs instead ("witness inputs" in
the table's header): the script runs hlo-diff on a case directory, which
hlo-reduce writes as $1 (--test without --test-module; every pass,
simplify-inputs too) and which the script assembles from ./module.hlo and
the witness's case.json and inputs/ for cvise/creduce (so their modules
must keep the parameters' shapes: the inputs do not change with them).

Each tool starts from the witness's module.hlo:
    hlo-reduce WITNESS --out D --test SCRIPT --test-module --jobs 1 (and 2)
    cvise --n N --not-c SCRIPT module.hlo
    creduce --n N --not-c SCRIPT module.hlo
and is stopped after --tool-timeout seconds (the row then says so and
shows the size it had reached). Printed per bug and tool: time, runs of
the script, final size (instructions, bytes); then the ratios against
hlo-reduce --jobs 1 and its 1 -> 2 jobs speed-up.

Sizes: instructions and bytes of each result, and its bytes as hlo-fmt
prints it (hlo-reduce prints modules in the long form, with %names and
operand shapes, so raw bytes favour the text tools).

Usage (after building hlo-reduce, hlo-diff, hlo-run, hlo-fmt in BUILD; installs
the Debian packages cvise and creduce with apt-get when missing):
    /usr/bin/python3 bench/reduce_vs_cvise.py [--build build] [--bugs 12,03]
        [--tools hlo-reduce-1,hlo-reduce-2,cvise,creduce] [--n 1]
        [--tool-timeout 900] [--work /tmp/trench-reduce-bench]
        [--target-rev HEAD]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zoo_common import bug_dirs, build_targets, patched, prepare, run  # noqa

INSTR = re.compile(r"^\s*(ROOT\s+)?%?[A-Za-z_][\w.\-]*\s*=\s*\S")
def reduction_passes(build):
    """hlo-reduce's passes (its registry, --list-passes) but simplify-inputs:
    the script draws its own inputs, so input edits cannot matter."""
    out = subprocess.run([os.path.join(build, "hlo-reduce"), "--list-passes"],
                         capture_output=True, text=True, check=True).stdout
    names = [line.split("\t")[0] for line in out.splitlines() if line]
    return ",".join(n for n in names if n != "simplify-inputs")


def measure(text):
    """(instructions, bytes) of HLO text, counted the same for every tool."""
    n = sum(1 for line in text.splitlines()
            if INSTR.match(line) and not line.startswith("HloModule"))
    return n, len(text.encode())


def canonical(build, text):
    """The module as hlo-fmt prints it (one printer for every tool's result,
    so that spelling and line breaks do not count); None if it fails."""
    r = subprocess.run([os.path.join(build, "hlo-fmt"), "-"], input=text,
                       capture_output=True, text=True, check=False)
    return r.stdout if r.returncode == 0 else None


def sizes(build, text):
    """(instructions, bytes, canonical bytes); instructions are counted on
    the canonical form (cvise may put several on one line)."""
    canon = canonical(build, text)
    instructions = measure(canon if canon is not None else text)[0]
    return (instructions, len(text.encode()),
            len(canon.encode()) if canon is not None else -1)


def ensure_tools():
    missing = [t for t in ("cvise", "creduce") if shutil.which(t) is None]
    if missing:
        r = run(["apt-get", "install", "-y"] + missing)
        if r.returncode != 0:
            print("apt-get install %s failed: %s" % (missing, r.stderr[-500:]),
                  file=sys.stderr)


def write_script(path, args, patched_run, status, witness=None):
    """The interestingness script. With `witness` (a case directory), runs
    hlo-diff on a case with the witness's inputs: $1 (hlo-reduce's case
    directory), or ./module.hlo with the witness's case.json and inputs/
    copied next to it into a temporary directory; else on $1 or
    ./module.hlo with random inputs."""
    hlo_diff = os.path.join(args.build, "hlo-diff")
    unpatched = os.path.join(args.build, "hlo-run")
    if witness is None:
        setup = "M=${1:-module.hlo}\n"
        target = "\"$M\" --random-inputs"
    else:
        setup = ("if [ -n \"$1\" ]; then M=$1; else\n"
                 "  M=$(mktemp -d) && trap 'rm -rf \"$M\"' EXIT &&\n"
                 "  cp module.hlo \"$M/\" && cp -r '%s/case.json' '%s/inputs' "
                 "\"$M/\" || exit 1\nfi\n" % (witness, witness))
        target = "\"$M\""
    diff = ("$(timeout 120 '%s' %s --hlo-run '%%s' 2>/dev/null "
            "| grep -m1 '\"status\"')" % (hlo_diff, target))
    check = ("u=%s\n"
             "case \"$u\" in *'\"pass\"'*) exit 0;; *) exit 1;; esac\n" %
             (diff % unpatched)) if args.unpatched_check else "exit 0\n"
    with open(path, "w") as f:
        f.write("#!/bin/sh\n%s"
                "echo x >> \"$REDUCE_BENCH_COUNT\"\n"
                "v=%s\n"
                "case \"$v\" in *'\"%s\"'*) ;; *) exit 1;; esac\n%s" %
                (setup, diff % patched_run, status, check))
    os.chmod(path, 0o755)


def witness_status(args, witness, patched_run, random_inputs):
    """hlo-diff's status on the witness, with random inputs or its own."""
    target = ([os.path.join(witness, "module.hlo"), "--random-inputs"]
              if random_inputs else [witness])
    v = run([os.path.join(args.build, "hlo-diff")] + target +
            ["--hlo-run", patched_run])
    try:
        return json.loads(v.stdout)["status"]
    except (ValueError, KeyError):
        return "error: " + v.stderr[-300:]


def fails(status):
    return not (status in ("pass", "invalid_input") or
                status.startswith("error"))


def run_tool(tool, args, witness, script, wdir, own_inputs):
    """Runs one tool; returns its row (time, runs, size, finished).
    `own_inputs`: the script takes a case directory (witness inputs)."""
    shutil.rmtree(wdir, ignore_errors=True)
    os.makedirs(wdir)
    count = os.path.join(wdir, "count")
    env = dict(os.environ, REDUCE_BENCH_COUNT=count)
    module = os.path.join(wdir, "module.hlo")
    shutil.copy(os.path.join(witness, "module.hlo"), module)
    if tool.startswith("hlo-reduce"):
        jobs = tool.rsplit("-", 1)[1]
        cmd = [os.path.join(args.build, "hlo-reduce"), witness, "--out",
               os.path.join(wdir, "out"), "--test", script, "--jobs", jobs]
        if not own_inputs:
            cmd += ["--test-module",
                    "--passes=" + reduction_passes(args.build)]
        result = os.path.join(wdir, "out", "best", "module.hlo")
    else:
        cmd = [tool, "--n", str(args.n), "--not-c", script, "module.hlo"]
        result = module
    start = time.time()
    p = subprocess.Popen(cmd, cwd=wdir, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=args.tool_timeout)
        finished = p.returncode == 0
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)
        out, err = p.communicate()
        finished = False
    seconds = time.time() - start
    runs = 0
    if os.path.exists(count):
        with open(count) as f:
            runs = sum(1 for _ in f)
    text = open(result).read() if os.path.exists(result) else ""
    instructions, size, fmt_size = sizes(args.build, text)
    row = {"tool": tool, "seconds": seconds, "runs": runs,
           "instructions": instructions, "bytes": size,
           "fmt_bytes": fmt_size, "finished": finished}
    if not finished:
        row["note"] = (err.strip().splitlines() or ["timeout"])[-1][:120]
    if tool.startswith("hlo-reduce") and finished:
        s = json.loads(out)
        row["tests"] = s["stats"]["tests"]
        row["cache_hits"] = s["stats"]["cache_hits"]
        row["invalid"] = s["stats"]["invalid"]
    return row


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--bugs", default="12,03")
    p.add_argument("--tools", default="hlo-reduce-1,hlo-reduce-2,cvise,creduce")
    p.add_argument("--n", type=int, default=1, help="cvise/creduce --n")
    p.add_argument("--tool-timeout", type=float, default=900)
    p.add_argument("--no-unpatched-check", dest="unpatched_check",
                   action="store_false")
    p.add_argument("--work", default="/tmp/trench-reduce-bench")
    p.add_argument("--target-rev", default=None,
                   help="build the patched compiler from this git revision "
                        "(default: the working tree)")
    args = p.parse_args()
    args.build = os.path.abspath(args.build)
    ensure_tools()
    os.makedirs(args.work, exist_ok=True)
    src, zoo_build, env = prepare(args.work, args.target_rev)
    tables = []
    for bug_dir in bug_dirs(args.bugs):
        name = os.path.basename(bug_dir)
        witness = os.path.join(bug_dir, "witness")
        rows = []
        try:
            with patched(src, bug_dir):
                ok, log = build_targets(zoo_build, env)
                if not ok:
                    tables.append((name, None, "build failed: " + log[-300:]))
                    continue
                patched_run = os.path.join(zoo_build, "hlo-run")
                status = witness_status(args, witness, patched_run, True)
                own_inputs = not fails(status)
                if own_inputs:
                    status = witness_status(args, witness, patched_run, False)
                if not fails(status):
                    tables.append((name, None, "the witness: " + status))
                    continue
                script = os.path.join(args.work, name + "-interesting.sh")
                write_script(script, args, patched_run, status,
                             witness if own_inputs else None)
                for tool in args.tools.split(","):
                    row = run_tool(tool, args, witness, script,
                                   os.path.join(args.work, name, tool),
                                   own_inputs)
                    rows.append(row)
                    print(name, json.dumps(row), file=sys.stderr, flush=True)
                tables.append((name, rows, status + (
                    ", witness inputs" if own_inputs else "")))
        except RuntimeError as e:
            tables.append((name, None, str(e)))
    print("interestingness: hlo-diff --random-inputs (or the witness's "
          "inputs where said) status with the patched "
          "hlo-run%s; cvise/creduce --n %d; timeout %ds" %
          (" and pass with the unpatched one" if args.unpatched_check else "",
           args.n, args.tool_timeout))
    for name, rows, note in tables:
        if rows is None:
            print("\n%s: skipped (%s)" % (name, note))
            continue
        text = open(os.path.join(ZOO_WITNESS(name), "module.hlo")).read()
        start = sizes(args.build, text)
        print("\n%s (status %s; witness %d instructions, %d bytes, %d bytes "
              "as hlo-fmt prints it)" % (name, note, start[0], start[1],
                                         start[2]))
        print("| tool | seconds | runs | instructions | bytes | hlo-fmt bytes "
              "| finished | time / hlo-reduce-1 | runs / hlo-reduce-1 |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |")
        base = next((r for r in rows if r["tool"] == "hlo-reduce-1"), None)
        for r in rows:
            rt = ("%.1fx" % (r["seconds"] / base["seconds"])) if base else "-"
            rr = ("%.1fx" % (r["runs"] / max(1, base["runs"]))) if base else "-"
            print("| %s | %.1f | %d | %d | %d | %d | %s | %s | %s |" % (
                r["tool"], r["seconds"], r["runs"], r["instructions"],
                r["bytes"], r["fmt_bytes"],
                "yes" if r["finished"] else "no (stopped)", rt, rr))
        two = next((r for r in rows if r["tool"] == "hlo-reduce-2"), None)
        if base and two:
            print("hlo-reduce 1 -> 2 jobs: %.2fx faster" %
                  (base["seconds"] / two["seconds"]))


def ZOO_WITNESS(name):  # noqa: N802
    return os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "tests", "bugzoo", name, "witness")


if __name__ == "__main__":
    main()
