#!/usr/bin/python3
"""hlo-bisect's localization on every bug of the zoo, against meta.json.

For every tests/bugzoo/<bug>/: apply bug.patch to a copy of the target side
(zoo_common), rebuild hlo-run incrementally, run
`hlo-bisect <bug>/witness --hlo-run <patched hlo-run> --serve` and compare
the refined signature with meta.json's pass and opcode. Prints one row per
bug: pass found vs meta, rewrite site, opcode found vs meta, target runs
used by the localization vs a linear scan (one run per pass-limit, per
rewrite-limit and per instruction), and a summary line.

Usage (after building hlo-bisect in BUILD):
    /usr/bin/python3 bench/localize_runs.py [--build build] [--bugs 03,07]
        [--work DIR] [--json FILE]
"""
import argparse
import json
import os
import sys

from zoo_common import build_targets, bug_dirs, patched, prepare, run


def localize(bug_dir, args, src, zoo_build, env):
    name = os.path.basename(bug_dir)
    meta = json.load(open(os.path.join(bug_dir, "meta.json")))
    row = {"bug": name, "meta_pass": meta["pass"],
           "meta_opcode": meta["opcode"]}
    try:
        with patched(src, bug_dir):
            ok, log = build_targets(zoo_build, env)
            if not ok:
                row["error"] = "build failed: " + log
                return row
            r = run([os.path.join(args.build, "hlo-bisect"),
                     os.path.join(bug_dir, "witness"), "--serve",
                     "--hlo-run", os.path.join(zoo_build, "hlo-run"),
                     "--timeout", "120"])
    except RuntimeError as e:
        row["error"] = str(e)
        return row
    try:
        report = json.loads(r.stdout)
    except ValueError:
        row["error"] = "hlo-bisect exit %d: %s" % (r.returncode,
                                                  r.stderr.strip()[-300:])
        return row
    sig = report["signature"]
    row.update(status=report["status"], pass_=sig["pass"], site=sig["site"],
               opcode=sig["opcode"], dtype=sig["dtype"],
               runs=report["runs"]["localize"],
               linear=report["runs"]["linear_scan"],
               levels={l["level"]: l["summary"] for l in report["levels"]})
    row["pass_ok"] = sig["pass"] == meta["pass"]
    row["opcode_ok"] = sig["opcode"] == meta["opcode"]
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--bugs", default="")
    p.add_argument("--work", default="/tmp/localize-zoo")
    p.add_argument("--json", default="")
    args = p.parse_args()
    args.build = os.path.abspath(args.build)
    if not os.path.exists(os.path.join(args.build, "hlo-bisect")):
        sys.exit("no hlo-bisect in " + args.build)
    src, zoo_build, env = prepare(args.work)
    ok, log = build_targets(zoo_build, env)
    if not ok:
        sys.exit("the unpatched target does not build: " + log)
    rows = []
    fmt = "%-42s %-18s %-18s %-26s %-14s %-14s %5s %6s"
    print(fmt % ("bug", "pass (meta)", "pass (found)", "site", "opcode (meta)",
                 "opcode (found)", "runs", "linear"))
    for bug in bug_dirs(args.bugs):
        row = localize(bug, args, src, zoo_build, env)
        rows.append(row)
        if "error" in row:
            print("%-42s error: %s" % (row["bug"], row["error"][:200]))
            continue
        print(fmt % (row["bug"], row["meta_pass"], row["pass_"],
                     row["site"], row["meta_opcode"], row["opcode"],
                     row["runs"], row["linear"]), flush=True)
    done = [r for r in rows if "error" not in r]
    print("pass matches meta.json: %d/%d; opcode matches: %d/%d; target runs "
          "%d vs linear scan %d" %
          (sum(r["pass_ok"] for r in done), len(rows),
           sum(r["opcode_ok"] for r in done), len(rows),
           sum(r["runs"] for r in done), sum(r["linear"] for r in done)))
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
