#!/usr/bin/python3
"""Mutation analysis: how many wrong compilers does a commit-aimed campaign
catch?

Draws mutants of the target at random (seeded): one edit of one line of
compiler/passes/ or compiler/codegen/, of one of these kinds:
  relational   a comparison flipped (< <=, > >=, == !=, both ways)
  arithmetic   + and - swapped
  logical      && and || swapped
  constant     an integer literal off by one (+1 or -1)
  negate       an if's condition negated
  drop         an if's condition dropped (always taken)
Each mutant is applied to a copy of the target side (bench/zoo_common.py),
built incrementally (hlo-run), and given a campaign aimed as the daemon
aims one at a commit that changes that file: `hlo-fuzz --focus` with the
passes whose sources the file is (from `hloc --capabilities`), or the ops
of the emitters it implements; half of the programs large when the file is
one of the target's "large_arrays" sources; the trace corpus; `--linger 0`, so the
campaign ends at the first finding. A finding kills the mutant only when
the unmutated compiler passes its case (hlo-diff with this checkout's
build), as bench/zoo_fuzz.py counts them.

Prints one line per mutant and then: killed, survived, not buildable, the
mutation score killed / (killed + survived), the median time to the first
finding over the killed, and the survivors (file:line, kind, the edit) to
study. Results are appended to WORK/mutants.jsonl; a rerun with the same
seed skips the mutants already there.

Usage (after building hlo-fuzz, hlo-diff, hloc and hlo-run in build/):
    /usr/bin/python3 bench/mutation.py [--mutants 100] [--budget 120]
        [--jobs 2] [--seed 1] [--build build] [--work DIR]
        [--rerun-survivors TAG [--only GLOB]]
--rerun-survivors TAG gives the recorded run's survivors a fresh campaign
with the tools in --build (an improved fuzzer), into WORK/mutants-TAG.jsonl.
"""
import argparse
import fnmatch
import json
import os
import random
import re
import shutil
import statistics
import sys
import time

from zoo_common import ROOT, build_targets, prepare, run
from zoo_fuzz import attributable

DIRS = ("compiler/passes", "compiler/codegen")
RELATIONAL = {" < ": " <= ", " <= ": " < ", " > ": " >= ", " >= ": " > ",
              " == ": " != ", " != ": " == "}
ARITHMETIC = {" + ": " - ", " - ": " + "}
LOGICAL = {" && ": " || ", " || ": " && "}
INT_LITERAL = re.compile(r"(?<![\w.])(\d+)(?![\w.'])")
IF_OPEN = re.compile(r"\bif \(")


def outside_strings(line, pos):
    """True when `pos` of `line` is not inside a string or char literal."""
    return line[:pos].count('"') % 2 == 0 and line[:pos].count("'") % 2 == 0


def code_lines(text):
    """(index, line) of the lines a mutant may change: code, not comments,
    preprocessor lines or asserts."""
    for i, line in enumerate(text.split("\n")):
        s = line.strip()
        if (not s or s.startswith("//") or s.startswith("#") or
                s.startswith("*") or s.startswith("/*") or "assert" in s or
                "TRENCH_CHECK" in s):
            continue
        yield i, line


def if_condition(line):
    """(start, end) of the first if's condition (inside its parentheses)
    when it closes on this line, else None."""
    m = IF_OPEN.search(line)
    if not m or not outside_strings(line, m.start()):
        return None
    depth, start = 1, m.end()
    for j in range(start, len(line)):
        depth += {"(": 1, ")": -1}.get(line[j], 0)
        if depth == 0:
            return start, j
    return None


def edits_of(line):
    """Every (kind, new line) one mutation makes of `line`."""
    out = []
    for kind, table in (("relational", RELATIONAL),
                        ("arithmetic", ARITHMETIC), ("logical", LOGICAL)):
        for old, new in table.items():
            for m in re.finditer(re.escape(old), line):
                if outside_strings(line, m.start()):
                    out.append((kind, line[:m.start()] + new +
                                line[m.end():]))
    for m in INT_LITERAL.finditer(line):
        if not outside_strings(line, m.start()):
            continue
        v = int(m.group(1))
        for w in (v + 1, v - 1):
            if w >= 0:
                out.append(("constant", line[:m.start()] + str(w) +
                            line[m.end():]))
    cond = if_condition(line)
    if cond:
        a, b = cond
        out.append(("negate", line[:a] + "!(" + line[a:b] + ")" + line[b:]))
        out.append(("drop", line[:a] + "true" + line[b:]))
    return out


def draw_mutants(src, n, seed):
    """n distinct mutants (file, line index, kind, old, new), seeded."""
    rng = random.Random(seed)
    files = sorted(os.path.relpath(os.path.join(d, f), src)
                   for sub in DIRS
                   for d, _, names in os.walk(os.path.join(src, sub))
                   for f in names if f.endswith(".cc"))
    mutants, seen = [], set()
    while len(mutants) < n:
        f = rng.choice(files)
        with open(os.path.join(src, f)) as a:
            lines = list(code_lines(a.read()))
        rng.shuffle(lines)
        for i, line in lines:
            edits = edits_of(line)
            if not edits:
                continue
            kind, new = rng.choice(edits)
            key = (f, i, new)
            if key not in seen:
                seen.add(key)
                mutants.append({"file": f, "line": i + 1, "kind": kind,
                                "old": line.strip(), "new": new.strip(),
                                "_new": new, "_old": line})
            break
    return mutants


def large_of(path, capabilities):
    """--large-share/--large-elements for a change to `path`, as the
    daemon's aimed campaign adds them: half of the programs large when the
    file is one of the target's "large_arrays" sources."""
    groups = [g for g in capabilities.get("large_arrays", [])
              if any(fnmatch.fnmatch(path, s) for s in g.get("sources", []))]
    if not groups:
        return []
    g = max(groups, key=lambda g: g["from_elements"])
    flags = ["--large-share", "0.5", "--large-elements",
             str(g["from_elements"])]
    for k, v in g.get("frontend_attributes", {}).items():
        flags += ["--large-attribute", "%s=%s" % (k, v)]
    return flags


def focus_of(path, capabilities):
    """hlo-fuzz --focus for a change to `path`: the passes whose sources it
    is, else the ops of the emitters it implements, else none."""
    passes = [p["name"] for p in capabilities.get("passes", [])
              if any(fnmatch.fnmatch(path, g) for g in p.get("sources", []))]
    if passes:
        return ["--focus", "passes:" + ",".join(passes)]
    ops = sorted({o for e in capabilities.get("emitters", [])
                  if any(fnmatch.fnmatch(path, g)
                         for g in e.get("sources", []))
                  for o in e.get("ops", [])})
    return ["--focus", "ops:" + ",".join(ops)] if ops else []


def apply(src, m, new):
    path = os.path.join(src, m["file"])
    with open(path) as a:
        lines = a.read().split("\n")
    lines[m["line"] - 1] = new
    with open(path, "w") as b:
        b.write("\n".join(lines))


def campaign(args, build, out, index, focus, large):
    """One hlo-fuzz campaign on the mutant's hlo-run, ending at the first
    finding."""
    shutil.rmtree(out, ignore_errors=True)
    return run([os.path.join(args.build, "hlo-fuzz"), "--no-progress",
                "--budget", str(args.budget), "--jobs", str(args.jobs),
                "--linger", "0", "--seed", str(args.seed + index),
                "--corpus", os.path.join(ROOT, "corpus", "traces"),
                "--target", "serve", "--hlo-run",
                os.path.join(build, "hlo-run"), "--out", out]
               + focus + large)


def run_mutant(m, args, src, build, env, capabilities):
    apply(src, m, m["_new"])
    try:
        ok, log = build_targets(build, env)
        if not ok:
            return dict(m, verdict="not-buildable")
        out = os.path.join(args.work, "findings", "m%d" % m["index"])
        focus = focus_of(m["file"], capabilities)
        large = large_of(m["file"], capabilities)
        start = time.time()
        f = campaign(args, build, out, m["index"], focus, large)
        if f.returncode == 2 and "--focus" in f.stderr:
            # The file implements ops the generator does not draw (as the
            # daemon's aimed campaign, the focus is then dropped).
            focus = []
            start = time.time()
            f = campaign(args, build, out, m["index"], focus, large)
        wall = time.time() - start
        try:
            summary = json.loads(f.stdout)
        except ValueError:
            return dict(m, verdict="error", error=f.stderr[-500:])
        found = summary.get("findings", [])
        mine = [x for x in found
                if x.get("case") and attributable(x["case"], args.build)]
        common = dict(wall=wall, programs=summary.get("programs"),
                      focus=" ".join(focus[1:]) or "none",
                      large=int(large[3]) if large else 0,
                      unattributed=len(found) - len(mine))
        if not mine:
            return dict(m, verdict="survived", **common)
        first = min(x["first_seconds"] for x in mine)
        return dict(m, verdict="killed", first_seconds=first,
                    signature=mine[0].get("signature"), **common)
    finally:
        apply(src, m, m["_old"])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--mutants", type=int, default=100)
    p.add_argument("--budget", type=int, default=120)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--work", default="/tmp/trench-mutation")
    p.add_argument("--rerun-survivors", metavar="TAG",
                   help="give the survivors of the recorded run (same seed) "
                        "a new campaign with this build's tools (e.g. after "
                        "improving the fuzzer); results in "
                        "WORK/mutants-TAG.jsonl")
    p.add_argument("--only", metavar="GLOB",
                   help="with --rerun-survivors: only survivors in files "
                        "matching GLOB (e.g. '*/stream*')")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    src, build, env = prepare(args.work)
    ok, log = build_targets(build, env, ("hlo-run", "hloc"))
    if not ok:
        sys.exit("the unmutated target does not build: " + log)
    caps = run([os.path.join(build, "hloc"), "--capabilities"])
    capabilities = json.loads(caps.stdout)
    mutants = draw_mutants(src, args.mutants, args.seed)
    results_path = os.path.join(args.work, "mutants.jsonl")
    done = {}
    if os.path.exists(results_path):
        with open(results_path) as a:
            for line in a:
                r = json.loads(line)
                if r.get("seed") == args.seed:
                    done[r["index"]] = r
    for i, m in enumerate(mutants):
        m["index"], m["seed"] = i, args.seed
    if args.rerun_survivors:
        mutants = [m for m in mutants
                   if done.get(m["index"], {}).get("verdict") == "survived"
                   and fnmatch.fnmatch(m["file"], args.only or "*")]
        results_path = os.path.join(args.work,
                                    "mutants-%s.jsonl" % args.rerun_survivors)
        done = {}
        if os.path.exists(results_path):
            with open(results_path) as a:
                for line in a:
                    r = json.loads(line)
                    done[r["index"]] = r
    results = []
    for m in mutants:
        r = done.get(m["index"])
        if r is None:
            r = run_mutant(m, args, src, build, env, capabilities)
            r = {k: v for k, v in r.items() if not k.startswith("_")}
            with open(results_path, "a") as b:
                b.write(json.dumps(r) + "\n")
        results.append(r)
        print("%3d %-13s %-11s %s:%d  %s  ->  %s" %
              (r["index"], r["verdict"], r["kind"], r["file"], r["line"], r["old"],
               r["new"]), flush=True)
    count = {v: sum(r["verdict"] == v for r in results)
             for v in ("killed", "survived", "not-buildable", "error")}
    scored = count["killed"] + count["survived"]
    firsts = [r["first_seconds"] for r in results if r["verdict"] == "killed"]
    print("\nmutants %d: killed %d, survived %d, not buildable %d, errors %d" %
          (len(results), count["killed"], count["survived"],
           count["not-buildable"], count["error"]))
    if scored:
        print("mutation score %.1f%% (killed / (killed + survived))" %
              (100.0 * count["killed"] / scored))
    if firsts:
        print("median time to the first finding %.1f s" %
              statistics.median(firsts))
    print("survivors:")
    for r in results:
        if r["verdict"] == "survived":
            print("  %s:%d [%s] %s  ->  %s" % (r["file"], r["line"], r["kind"],
                                              r["old"], r["new"]))


if __name__ == "__main__":
    main()
