#!/usr/bin/python3
"""Does hlo-fuzz find the bugs of the zoo without being told where they are?

For every tests/bugzoo/<bug>/: apply bug.patch to a copy of the target side,
rebuild hlo-run (one -DTRENCH_TARGET_ONLY=ON build, incremental per bug),
run `hlo-fuzz --budget B --jobs J --corpus corpus/traces --linger L` against
the patched hlo-run, and check every finding's case with the unpatched
hlo-run through hlo-diff: a finding counts for the bug only if the
unpatched compiler passes it. Prints one table row per bug: time to the
first attributable finding, programs executed until then and in all,
distinct signatures (attributable / all).

--aim runs the campaign the daemon's stress-test author runs on the bug's
commit: focused on the pass its meta.json names (`--focus passes:P`), or
on its opcode when it names no pipeline pass (codegen bugs).

Usage (after building hlo-fuzz, hlo-diff and hlo-run in build/):
    /usr/bin/python3 bench/zoo_fuzz.py [--build build] [--budget 300]
        [--jobs 2] [--linger 60] [--bugs 01,05] [--work DIR] [--aim]
"""
import argparse
import json
import os
import shutil
import sys
import time

from zoo_common import ROOT, build_targets, bug_dirs, patched, prepare, run


def attributable(case_dir, build):
    """True when the unpatched compiler passes the finding's case."""
    v = run([os.path.join(build, "hlo-diff"), case_dir,
             "--hlo-run", os.path.join(build, "hlo-run")])
    try:
        return json.loads(v.stdout)["status"] == "pass"
    except (ValueError, KeyError):
        return False


def aim_flags(bug_dir):
    """hlo-fuzz's --focus for the bug's own area (meta.json)."""
    with open(os.path.join(bug_dir, "meta.json")) as f:
        meta = json.load(f)
    if meta.get("pass") and meta["pass"] != "codegen":
        return ["--focus", "passes:" + meta["pass"]]
    if meta.get("opcode"):
        return ["--focus", "ops:" + meta["opcode"]]
    return []


def fuzz_bug(bug_dir, args, src, zoo_build, env):
    name = os.path.basename(bug_dir)
    focus = aim_flags(bug_dir) if args.aim else []
    try:
        with patched(src, bug_dir):
            # hloc too: its --capabilities tell the campaign the slice
            # (without it every SPMD program is target_unsupported).
            ok, log = build_targets(zoo_build, env, ("hlo-run", "hloc"))
            if not ok:
                return {"bug": name, "error": "build failed: " + log}
            out = os.path.join(args.work, "findings", name)
            shutil.rmtree(out, ignore_errors=True)
            start = time.time()
            f = run([os.path.join(args.build, "hlo-fuzz"), "--no-progress",
                     "--budget", str(args.budget), "--jobs", str(args.jobs),
                     "--linger", str(args.linger), "--seed", str(args.seed),
                     "--corpus", os.path.join(ROOT, "corpus", "traces"),
                     "--target", "serve",
                     "--hlo-run", os.path.join(zoo_build, "hlo-run"),
                     "--hloc", os.path.join(zoo_build, "hloc"),
                     "--out", out] + focus)
            wall = time.time() - start
            summary = json.loads(f.stdout)
    except RuntimeError as e:
        return {"bug": name, "error": str(e)}
    mine = [x for x in summary["findings"]
            if x["case"] and attributable(x["case"], args.build)]
    first = min(mine, key=lambda x: x["first_seconds"]) if mine else None
    return {
        "bug": name,
        "found": first is not None,
        "first_seconds": first["first_seconds"] if first else None,
        "first_program": first["first_program"] if first else None,
        "first_status": first["status"] if first else None,
        "programs": summary["programs"],
        "seconds": wall,
        "signatures": len(mine),
        "all_signatures": len(summary["findings"]),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--budget", type=int, default=300)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--linger", type=int, default=60)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--bugs", default="")
    p.add_argument("--work", default="/tmp/trench-zoo-fuzz")
    p.add_argument("--aim", action="store_true",
                   help="focus on each bug's pass or opcode (meta.json)")
    args = p.parse_args()
    args.build = os.path.abspath(args.build)
    os.makedirs(args.work, exist_ok=True)
    src, zoo_build, env = prepare(args.work)
    rows = []
    for bug_dir in bug_dirs(args.bugs):
        row = fuzz_bug(bug_dir, args, src, zoo_build, env)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    print("budget %ds, jobs %d, linger %ds, seed %d, corpus corpus/traces%s" %
          (args.budget, args.jobs, args.linger, args.seed,
           ", aimed at each bug's pass or opcode" if args.aim else ""))
    print("| bug | found | first finding (s) | programs to first | status "
          "| programs run | signatures (bug / all) |")
    print("| --- | --- | ---: | ---: | --- | ---: | ---: |")
    for r in rows:
        if "error" in r:
            print("| %s | error: %s | | | | | |" % (r["bug"], r["error"][:80]))
            continue
        print("| %s | %s | %s | %s | %s | %d | %d / %d |" % (
            r["bug"], "yes" if r["found"] else "no",
            "%.1f" % r["first_seconds"] if r["found"] else "-",
            r["first_program"] if r["found"] else "-",
            r["first_status"] or "-", r["programs"], r["signatures"],
            r["all_signatures"]))
    found = sum(1 for r in rows if r.get("found"))
    print("found %d of %d bugs" % (found, len(rows)))


if __name__ == "__main__":
    main()
