"""The bug zoo's build machinery, shared by the zoo benchmarks.

A copy of the target side (base compiler tpu tools CMakeLists.txt, tracked
and untracked-but-not-ignored files of this checkout, or the files of a git
revision when one is given: other sessions' uncommitted edits then do not
change the compiler under test) kept in sync under
WORK/src (changed files get a fresh mtime, so reused builds stay right), one
-DTRENCH_TARGET_ONLY=ON build of it under WORK/build, and per bug: apply
its bug.patch, rebuild incrementally, and take it out again.
"""
import contextlib
import glob
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ZOO = os.path.join(ROOT, "tests", "bugzoo")
TARGET_SIDE = ["base", "compiler", "tpu", "tools", "CMakeLists.txt"]


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, check=False,
                          **kw)


def target_side_files(rev=None):
    """The target side's files of this checkout, or of git revision `rev`
    (relative paths)."""
    if rev:
        return run(["git", "ls-tree", "-r", "--name-only", rev, "--"] +
                   TARGET_SIDE, cwd=ROOT).stdout.split()
    out = run(["git", "ls-files", "--cached", "--others", "--exclude-standard",
               "--"] + TARGET_SIDE, cwd=ROOT).stdout.split()
    return [f for f in out if os.path.isfile(os.path.join(ROOT, f))]


def read_target_file(f, rev=None):
    """The content of target-side file `f` in this checkout or at `rev`."""
    if rev:
        return subprocess.run(["git", "show", "%s:%s" % (rev, f)], cwd=ROOT,
                              capture_output=True, check=True).stdout
    with open(os.path.join(ROOT, f), "rb") as a:
        return a.read()


def sync_tree(src, rev=None):
    """Makes `src` a copy of the target side (of the working tree, or of
    git revision `rev`). Files whose content differs (or a killed run left
    patched) are rewritten with a fresh mtime, so an incremental build of
    `src` rebuilds exactly them; identical files keep theirs; files no
    longer in the target side are removed."""
    wanted = set(target_side_files(rev))
    for f in sorted(wanted):
        dst = os.path.join(src, f)
        data = read_target_file(f, rev)
        if os.path.isfile(dst):
            with open(dst, "rb") as b:
                if b.read() == data:
                    continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        with open(dst, "wb") as b:
            b.write(data)
        if os.path.exists(os.path.join(ROOT, f)):
            shutil.copymode(os.path.join(ROOT, f), dst)
    for d, _, names in os.walk(src):
        for n in names:
            rel = os.path.relpath(os.path.join(d, n), src)
            if rel not in wanted:
                os.remove(os.path.join(d, n))


def prepare(work, rev=None):
    """Syncs the target side (of the working tree, or of git revision `rev`)
    to WORK/src and configures WORK/build.

    Returns (src, build, env); env makes ccache share hits across copies.
    """
    src, build = os.path.join(work, "src"), os.path.join(work, "build")
    sync_tree(src, rev)
    env = dict(os.environ, CCACHE_BASEDIR=work, CCACHE_NOHASHDIR="1")
    cfg = run(["cmake", "-S", src, "-B", build, "-G", "Ninja",
               "-DTRENCH_TARGET_ONLY=ON", "-DCMAKE_BUILD_TYPE=Release"],
              env=env)
    if cfg.returncode != 0:
        sys.exit("configure failed: " + cfg.stderr)
    return src, build, env


def build_targets(build, env, targets=("hlo-run",)):
    """Builds `targets` in `build`; returns (ok, log tail)."""
    b = run(["cmake", "--build", build, "-j2", "--target"] + list(targets),
            env=env)
    return b.returncode == 0, b.stdout[-2000:] + b.stderr[-2000:]


def bug_dirs(wanted=""):
    """tests/bugzoo/<NN>-*/ in order; `wanted` = "01,05" selects by prefix."""
    prefixes = [w for w in wanted.split(",") if w]
    return [d for d in sorted(glob.glob(os.path.join(ZOO, "[0-9]*")))
            if not prefixes or
            any(os.path.basename(d).startswith(p) for p in prefixes)]


@contextlib.contextmanager
def patched(src, bug_dir):
    """Applies bug_dir/bug.patch to `src` for the `with` block.

    Raises RuntimeError when the patch does not apply.
    """
    patch = os.path.join(bug_dir, "bug.patch")
    r = run(["git", "apply", patch], cwd=src)
    if r.returncode != 0:
        raise RuntimeError("patch does not apply: " + r.stderr.strip())
    try:
        yield
    finally:
        run(["git", "apply", "-R", patch], cwd=src)
