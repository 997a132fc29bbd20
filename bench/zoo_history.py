#!/usr/bin/env python3
"""The commit level of hlo-bisect on real histories of the target side.

For each chosen bug of tests/bugzoo, builds a git history of our own target
side and runs `hlo-bisect commits` on the bug's witness with a real,
incremental build (CMake + Ninja + ccache, -DTRENCH_TARGET_ONLY=ON):

  base       a copy of the target side at HEAD of this repository
             (`git archive HEAD base compiler tpu tools CMakeLists.txt`)
  1..N       small harmless changes, one file each (a comment line of a
             .cc file edited in place, so line numbers stay), except:
  BROKEN     replaces a comment line by `#error`: does not build (skip)
  BROKEN+1   repairs it
  PATCH      the bug's bug.patch ("zoo: <bug id>")

The bugs share one repository (branch zoo/<bug> each, from the same base;
commit dates are fixed, so commits before the patch have the same sha for
every bug and across runs) and one work directory (worktree, build
directory and build cache), so builds after the first are incremental.
Checks that hlo-bisect names the patch commit and confirms it by revert,
and prints one table row per bug: commits, patch position, culprit right,
confirmed, builds run, cache hits, seconds.

  python3 bench/zoo_history.py --hlo-bisect BUILD/hlo-bisect \
      [--bugs 03,07,11] [--work DIR] [--commits 22] [--jobs 2]

Uses the git CLI to make the history (this is a benchmark script; the
tool itself uses libgit2 only).
"""

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import time

from zoo_common import ROOT, TARGET_SIDE, ZOO, bug_dirs as zoo_bug_dirs

# Where the patch lands for each run, cycling (1-based commit positions).
PATCH_POSITIONS = [15, 7, 18, 4, 20, 10]


def git(repo, *args, env_extra=None, input_bytes=None):
    env = dict(os.environ)
    env.update({"GIT_AUTHOR_NAME": "zoo", "GIT_AUTHOR_EMAIL": "zoo@localhost",
                "GIT_COMMITTER_NAME": "zoo",
                "GIT_COMMITTER_EMAIL": "zoo@localhost"})
    if env_extra:
        env.update(env_extra)
    r = subprocess.run(["git", "-C", repo] + list(args), env=env,
                       input=input_bytes, capture_output=True)
    if r.returncode != 0:
        raise RuntimeError("git %s: %s" % (" ".join(args),
                                           r.stderr.decode(errors="replace")))
    return r.stdout.decode(errors="replace").strip()


def commit(repo, message, n):
    # Fixed dates: the same history has the same shas in every run.
    date = "2026-01-01T00:%02d:%02d+00:00" % (n // 60, n % 60)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message,
        env_extra={"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})
    return git(repo, "rev-parse", "HEAD")


def bug_dirs(wanted=""):
    """The zoo's bug names ("03-algsimp-..."), `wanted` as zoo_common's."""
    return [os.path.basename(d) for d in zoo_bug_dirs(wanted)]


def make_base(repo):
    """The repository with the target side at HEAD on branch `base`."""
    if os.path.isdir(os.path.join(repo, ".git")):
        return git(repo, "rev-parse", "base")
    os.makedirs(repo)
    git(repo, "init", "-q", "-b", "base")
    archive = subprocess.run(["git", "-C", ROOT, "archive", "HEAD"] +
                             TARGET_SIDE, capture_output=True, check=True)
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(repo)
    return commit(repo, "base: the target side at %s" %
                  git(ROOT, "rev-parse", "--short=12", "HEAD"), 0)


def harmless_files(repo, avoid):
    """.cc files of the compiler and the machine that no zoo patch touches."""
    out = []
    for d in ["compiler/passes", "compiler/codegen", "tpu", "compiler/ir"]:
        for f in sorted(os.listdir(os.path.join(repo, d))):
            path = d + "/" + f
            if f.endswith(".cc") and path not in avoid:
                with open(os.path.join(repo, path)) as src:
                    if any(re.match(r"\s*// ", l) for l in src):
                        out.append(path)
    # Spread over the folders.
    return out[::max(1, len(out) // 40)]


def edit_comment(repo, path, replacement_of):
    """Rewrites the first `// ` comment line of `path` in place."""
    full = os.path.join(repo, path)
    with open(full) as f:
        lines = f.readlines()
    for i, line in enumerate(lines):
        if re.match(r"\s*// ", line):
            lines[i] = replacement_of(line)
            break
    else:
        raise RuntimeError(path + ": no comment line")
    with open(full, "w") as f:
        f.writelines(lines)


def make_history(repo, base, bug, n, patch_at, broken_at):
    """Branch zoo/<bug>: n commits after base. Returns (tip, patch sha)."""
    branch = "zoo/" + bug
    git(repo, "checkout", "-q", "-f", "-B", branch, base)
    avoid = set()
    for b in bug_dirs():
        with open(os.path.join(ZOO, b, "meta.json")) as f:
            avoid.update(json.load(f)["files"])
    files = harmless_files(repo, avoid)
    broken_file = files[-1]
    saved = None
    patch_sha = None
    for i in range(1, n + 1):
        if i == patch_at:
            git(repo, "apply", os.path.join(ZOO, bug, "bug.patch"))
            patch_sha = commit(repo, "zoo: " + bug, i)
        elif i == broken_at:
            with open(os.path.join(repo, broken_file)) as f:
                saved = f.read()
            edit_comment(repo, broken_file,
                         lambda l: '#error "zoo_history: this commit does '
                                   'not build"\n')
            commit(repo, "break the build in " + broken_file, i)
        elif i == broken_at + 1:
            with open(os.path.join(repo, broken_file), "w") as f:
                f.write(saved)
            commit(repo, "repair the build in " + broken_file, i)
        else:
            path = files[i % (len(files) - 1)]
            edit_comment(repo, path,
                         lambda l: l.rstrip("\n") + " (history note %d)\n" % i)
            commit(repo, "comment edit %d in %s" % (i, path), i)
    return git(repo, "rev-parse", "HEAD"), patch_sha


def build_command(jobs):
    return ("cmake -S \"$TRENCH_WORKTREE\" -B \"$TRENCH_BUILD_DIR\" -G Ninja "
            "-DTRENCH_TARGET_ONLY=ON -DCMAKE_BUILD_TYPE=Release "
            "'-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG' && "
            "cmake --build \"$TRENCH_BUILD_DIR\" -j %d "
            "--target hloc tpusim hlo-run" % jobs)


def search_commits(bug, k, hlo_bisect, work, commits=22, jobs=2):
    """Makes bug's history (the k-th bug's patch position) and runs
    `hlo-bisect commits` on its witness. Returns a row dict: commits,
    patch_at, culprit, right, confirmed, skipped, builds, cache_hits,
    seconds; or {"error": ...}."""
    repo = os.path.join(work, "repo")
    base = make_base(repo)
    broken_at = commits // 2
    patch_at = PATCH_POSITIONS[k % len(PATCH_POSITIONS)]
    if patch_at in (broken_at, broken_at + 1):
        patch_at += 2
    tip, patch_sha = make_history(repo, base, bug, commits, patch_at,
                                  broken_at)
    cmd = [hlo_bisect, "commits", os.path.join(ZOO, bug, "witness"),
           "--repo", repo, "--good", base, "--bad", tip,
           "--work", os.path.join(work, "bisect"),
           "--build-cmd", build_command(jobs), "--json"]
    start = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    seconds = time.time() - start
    with open(os.path.join(work, bug + ".log"), "w") as f:
        f.write(r.stderr)
    try:
        report = json.loads(r.stdout)
    except ValueError:
        return {"error": "hlo-bisect failed (exit %d): %s" %
                         (r.returncode, r.stderr[-3000:])}
    with open(os.path.join(work, bug + ".json"), "w") as f:
        json.dump(report, f, indent=1)
    culprit = (report.get("culprit") or {}).get("sha")
    return {"commits": report["commits"], "patch_at": patch_at,
            "culprit": culprit, "right": culprit == patch_sha,
            "confirmed": report.get("confirmed", False),
            "skipped": sum(1 for s in report["steps"]
                           if s.get("outcome") == "skip"),
            "builds": report["builds"], "cache_hits": report["cache_hits"],
            "seconds": seconds}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hlo-bisect", required=True)
    ap.add_argument("--bugs", default="03,07,11",
                    help="comma-separated bug number prefixes, or 'all'")
    ap.add_argument("--work", default="/tmp/zoo-history")
    ap.add_argument("--commits", type=int, default=22)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    if args.commits < 20:
        sys.exit("--commits must be at least 20")

    bugs = bug_dirs("" if args.bugs == "all" else args.bugs)
    rows = []
    failures = 0
    for k, bug in enumerate(bugs):
        row = search_commits(bug, k, args.hlo_bisect, args.work, args.commits,
                             args.jobs)
        if "error" in row:
            print("%s: %s" % (bug, row["error"]), file=sys.stderr)
            failures += 1
            continue
        if not (row["right"] and row["confirmed"]):
            failures += 1
        rows.append((bug, row["commits"], row["patch_at"], row["right"],
                     row["confirmed"], row["skipped"], row["builds"],
                     row["cache_hits"], row["seconds"]))
        print("%s: culprit %s (%s), confirmed %s, %d builds, %.0f s" %
              (bug, (row["culprit"] or "none")[:12],
               "right" if row["right"] else "WRONG", row["confirmed"],
               row["builds"], row["seconds"]), file=sys.stderr, flush=True)

    print("| bug | commits | patch at | culprit | confirmed | skipped | "
          "builds | cache hits | seconds |")
    print("| --- | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: |")
    for b, n, p, right, conf, skip, builds, hits, s in rows:
        print("| %s | %d | %d | %s | %s | %d | %d | %d | %.0f |" %
              (b, n, p, "right" if right else "WRONG",
               "yes" if conf else "no", skip, builds, hits, s))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
