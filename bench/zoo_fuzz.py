#!/usr/bin/python3
"""Does hlo-fuzz find the bugs of the zoo without being told where they are?

For every tests/bugzoo/<bug>/: apply bug.patch to a copy of the target side,
rebuild hlo-run (one -DTRENCH_TARGET_ONLY=ON build, incremental per bug),
run `hlo-fuzz --budget B --jobs J --corpus shared/traces --linger L` against
the patched hlo-run, and check every finding's case with the unpatched
hlo-run through hlo-diff: a finding counts for the bug only if the
unpatched compiler passes it. Prints one table row per bug: time to the
first attributable finding, programs executed until then and in all,
distinct signatures (attributable / all).

Usage (after building hlo-fuzz, hlo-diff and hlo-run in build/):
    /usr/bin/python3 bench/zoo_fuzz.py [--build build] [--budget 300]
        [--jobs 2] [--linger 60] [--bugs 01,05] [--work DIR]
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, check=False,
                          **kw)


def prepare(work):
    """Copies the target side and configures its build; returns both dirs."""
    src, build = os.path.join(work, "src"), os.path.join(work, "build")
    shutil.rmtree(src, ignore_errors=True)
    files = run(["git", "ls-files", "base", "compiler", "tpu", "tools",
                 "CMakeLists.txt"], cwd=ROOT).stdout.split()
    for f in files:
        os.makedirs(os.path.dirname(os.path.join(src, f)), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, f), os.path.join(src, f))
    env = dict(os.environ, CCACHE_BASEDIR=work, CCACHE_NOHASHDIR="1")
    cfg = run(["cmake", "-S", src, "-B", build, "-G", "Ninja",
               "-DTRENCH_TARGET_ONLY=ON", "-DCMAKE_BUILD_TYPE=Release"],
              env=env)
    if cfg.returncode != 0:
        sys.exit("configure failed: " + cfg.stderr)
    return src, build, env


def build_hlo_run(build, env):
    b = run(["cmake", "--build", build, "--target", "hlo-run", "-j2"],
            env=env)
    return b.returncode == 0, b.stdout[-2000:] + b.stderr[-2000:]


def attributable(case_dir, build):
    """True when the unpatched compiler passes the finding's case."""
    v = run([os.path.join(build, "hlo-diff"), case_dir,
             "--hlo-run", os.path.join(build, "hlo-run")])
    try:
        return json.loads(v.stdout)["status"] == "pass"
    except (ValueError, KeyError):
        return False


def fuzz_bug(bug_dir, args, src, zoo_build, env):
    name = os.path.basename(bug_dir)
    patch = os.path.join(bug_dir, "bug.patch")
    if run(["git", "apply", patch], cwd=src).returncode != 0:
        return {"bug": name, "error": "patch does not apply"}
    try:
        ok, log = build_hlo_run(zoo_build, env)
        if not ok:
            return {"bug": name, "error": "build failed: " + log}
        out = os.path.join(args.work, "findings", name)
        shutil.rmtree(out, ignore_errors=True)
        start = time.time()
        f = run([os.path.join(args.build, "hlo-fuzz"), "--no-progress",
                 "--budget", str(args.budget), "--jobs", str(args.jobs),
                 "--linger", str(args.linger), "--seed", str(args.seed),
                 "--corpus", os.path.join(ROOT, "..", "shared", "traces"),
                 "--target", "serve",
                 "--hlo-run", os.path.join(zoo_build, "hlo-run"),
                 "--out", out])
        wall = time.time() - start
        summary = json.loads(f.stdout)
    finally:
        run(["git", "apply", "-R", patch], cwd=src)
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
    args = p.parse_args()
    args.build = os.path.abspath(args.build)
    os.makedirs(args.work, exist_ok=True)
    src, zoo_build, env = prepare(args.work)
    wanted = [b for b in args.bugs.split(",") if b]
    rows = []
    for bug_dir in sorted(glob.glob(os.path.join(ROOT, "tests", "bugzoo",
                                                 "[0-9]*"))):
        name = os.path.basename(bug_dir)
        if wanted and not any(name.startswith(w) for w in wanted):
            continue
        row = fuzz_bug(bug_dir, args, src, zoo_build, env)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    print("budget %ds, jobs %d, linger %ds, seed %d, corpus shared/traces" %
          (args.budget, args.jobs, args.linger, args.seed))
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
