#!/usr/bin/python3
"""Minimize and localize every bug of the zoo: the table of issue 5.

For every tests/bugzoo/<bug>/, with the bug's patch applied to a copy of the
target side (zoo_common: one incremental -DTRENCH_TARGET_ONLY=ON build):

  1. hlo-bisect on the witness (the culprit pass the reducer's "same bug"
     test checks; the witness's refined signature);
  2. hlo-reduce on the witness against the patched target (interestingness:
     the same bug, --culprit-pass from step 1), --jobs J;
  3. hlo-diff and hlo-bisect on the reduced case: it must reproduce the
     witness's verdict status and refined signature, and the localization
     must name meta.json's pass and opcode (and a rewrite site for bugs in
     a pass);
  4. (unpatched again) the commit level: a >= 20-commit history of the
     target side with the bug's patch somewhere in it (zoo_history.py), and
     `hlo-bisect commits` on the witness must name and confirm the patch.

Prints one table row per bug: size before -> after (instructions, tensor
elements), reducer tests and seconds, same signature, pass / site / opcode
found (against meta.json), localization runs against a linear scan, and the
commit search's result and builds. Exit 1 if any bug misses a check.

Usage (after building hlo-reduce, hlo-bisect and hlo-diff in BUILD):
    /usr/bin/python3 bench/zoo_triage.py [--build build] [--bugs 03,07]
        [--jobs 2] [--work DIR] [--no-commits] [--json FILE]
"""
import argparse
import json
import os
import shutil
import sys
import time

from zoo_common import build_targets, bug_dirs, patched, prepare, run
import zoo_history


def tool_json(cmd):
    """Runs a tool that prints JSON; returns (exit code, JSON or None, err)."""
    r = run(cmd)
    try:
        return r.returncode, json.loads(r.stdout), r.stderr
    except ValueError:
        return r.returncode, None, r.stderr


def localize(args, case_dir, hlo_run):
    code, rep, err = tool_json([os.path.join(args.build, "hlo-bisect"),
                                case_dir, "--json", "--serve", "--hlo-run",
                                hlo_run, "--timeout", "120"])
    if rep is None:
        raise RuntimeError("hlo-bisect %s: exit %d: %s" %
                           (case_dir, code, err.strip()[-300:]))
    return rep


def triage_patched(args, bug_dir, meta, hlo_run):
    """Steps 1-3 on the patched target; returns the row's fields."""
    name = os.path.basename(bug_dir)
    witness = os.path.join(bug_dir, "witness")
    before = localize(args, witness, hlo_run)
    sig0 = before["signature"]
    out = os.path.join(args.work, "reduced", name)
    shutil.rmtree(out, ignore_errors=True)
    cmd = [os.path.join(args.build, "hlo-reduce"), witness, "--out", out,
           "--jobs", str(args.jobs), "--hlo-run", hlo_run,
           "--target", "serve", "--timeout", "120"]
    if sig0.get("pass"):
        cmd += ["--culprit-pass", sig0["pass"]]
    start = time.time()
    code, red, err = tool_json(cmd)
    seconds = time.time() - start
    if red is None or code != 0:
        raise RuntimeError("hlo-reduce: exit %d: %s" %
                           (code, err.strip()[-300:]))
    best = os.path.join(out, "best")
    _, diff, _ = tool_json([os.path.join(args.build, "hlo-diff"), best,
                            "--hlo-run", hlo_run])
    after = localize(args, best, hlo_run)
    sig1 = after["signature"]
    return {
        "before": red["before"], "after": red["after"],
        "reduce_tests": red["stats"]["tests"], "reduce_seconds": seconds,
        "status0": before["status"],
        "status1": diff["status"] if diff else "error",
        "sig0": sig0, "sig1": sig1,
        "same_signature": (diff is not None and
                           diff["status"] == before["status"] and
                           sig1["sig"] == sig0["sig"]),
        "pass": sig1["pass"], "site": sig1["site"], "opcode": sig1["opcode"],
        "pass_ok": sig1["pass"] == meta["pass"],
        "opcode_ok": sig1["opcode"] == meta["opcode"],
        # Bugs in a pass name the rewrite decision too.
        "site_ok": meta["pass"] in ("codegen", "buffer-assignment") or
                   bool(sig1["site"]),
        "runs": after["runs"]["localize"],
        "linear": after["runs"]["linear_scan"],
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--bugs", default="")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--work", default="/tmp/trench-zoo-triage")
    p.add_argument("--no-commits", action="store_true")
    p.add_argument("--commits", type=int, default=22)
    p.add_argument("--json", default="")
    args = p.parse_args()
    args.build = os.path.abspath(args.build)
    args.work = os.path.abspath(args.work)
    for tool in ("hlo-reduce", "hlo-bisect", "hlo-diff"):
        if not os.path.exists(os.path.join(args.build, tool)):
            sys.exit("no %s in %s" % (tool, args.build))
    os.makedirs(args.work, exist_ok=True)
    src, zoo_build, env = prepare(os.path.join(args.work, "zoo"))
    hlo_run = os.path.join(zoo_build, "hlo-run")
    rows = []
    for k, bug_dir in enumerate(bug_dirs(args.bugs)):
        name = os.path.basename(bug_dir)
        meta = json.load(open(os.path.join(bug_dir, "meta.json")))
        row = {"bug": name, "meta_pass": meta["pass"],
               "meta_opcode": meta["opcode"]}
        try:
            with patched(src, bug_dir):
                ok, log = build_targets(zoo_build, env)
                if not ok:
                    raise RuntimeError("build failed: " + log)
                row.update(triage_patched(args, bug_dir, meta, hlo_run))
            if not args.no_commits:
                c = zoo_history.search_commits(
                    name, k, os.path.join(args.build, "hlo-bisect"),
                    os.path.join(args.work, "history"), args.commits,
                    args.jobs)
                if "error" in c:
                    raise RuntimeError(c["error"])
                row["commit"] = c
        except RuntimeError as e:
            row["error"] = str(e)
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    print_table(rows, args)
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)
    sys.exit(0 if all(ok_row(r, args) for r in rows) else 1)


def ok_row(r, args):
    if "error" in r:
        return False
    ok = (r["same_signature"] and r["pass_ok"] and r["opcode_ok"] and
          r["site_ok"])
    if not args.no_commits:
        ok = ok and r["commit"]["right"] and r["commit"]["confirmed"]
    return ok


def print_table(rows, args):
    print("| bug | instructions | elements | reducer tests | reducer s "
          "| same sig | pass (meta) | site | opcode (meta) | runs / linear "
          "| culprit commit | builds |")
    print("| --- | ---: | ---: | ---: | ---: | --- | --- | --- | --- | ---: "
          "| --- | ---: |")
    for r in rows:
        if "error" in r:
            print("| %s | error: %s |" % (r["bug"], r["error"][:200]))
            continue
        c = r.get("commit")
        print("| %s | %d -> %d | %d -> %d | %d | %.0f | %s | %s%s | %s | "
              "%s%s | %d / %d | %s | %s |" % (
                  r["bug"], r["before"]["instructions"],
                  r["after"]["instructions"], r["before"]["elements"],
                  r["after"]["elements"], r["reduce_tests"],
                  r["reduce_seconds"],
                  "yes" if r["same_signature"] else "NO",
                  r["pass"], "" if r["pass_ok"] else
                  " (meta: %s)" % r["meta_pass"], r["site"] or "-",
                  r["opcode"], "" if r["opcode_ok"] else
                  " (meta: %s)" % r["meta_opcode"], r["runs"], r["linear"],
                  "-" if not c else "%s%s, at %d of %d" % (
                      "right" if c["right"] else "WRONG",
                      ", confirmed" if c["confirmed"] else "", c["patch_at"],
                      c["commits"]),
                  "-" if not c else str(c["builds"])))
    done = [r for r in rows if "error" not in r]
    print("%d bugs: %d all checks pass; reduced instructions %d -> %d, "
          "elements %d -> %d; localization runs %d vs linear scan %d" % (
              len(rows), sum(ok_row(r, args) for r in rows),
              sum(r["before"]["instructions"] for r in done),
              sum(r["after"]["instructions"] for r in done),
              sum(r["before"]["elements"] for r in done),
              sum(r["after"]["elements"] for r in done),
              sum(r["runs"] for r in done), sum(r["linear"] for r in done)))


if __name__ == "__main__":
    main()
