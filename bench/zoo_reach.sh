#!/usr/bin/env bash
# Changed-line reach per zoo bug (issue 21 section 1): each
# tests/bugzoo/<bug>/bug.patch is applied as "the commit" to a source tree,
# the target's coverage build flavour (-DTRENCH_TARGET_COVERAGE=ON, clang)
# is rebuilt incrementally, and a commit-aimed campaign
# (hlo-fuzz --changed-lines bug.patch) reports how many of the patch's
# changed lines its programs reached. Prints one line per bug and leaves
# each campaign's summary in $WORK/<bug>.json.
#
#   bench/zoo_reach.sh [SECONDS] [BUG ...]     (default 60 s, every bug)
#
# Environment: SRC a source tree to patch (default: a fresh git worktree
# of HEAD under $WORK; each patch is reverted with `git apply -R` after
# its campaign), BUILD the coverage build directory of SRC (default
# $WORK/build, configured here), HLO_FUZZ (default build/hlo-fuzz of this
# checkout), JOBS (default 2), SEED (default 1), WORK (default
# /tmp/trench-zoo-reach).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECONDS_PER_BUG="${1:-60}"
shift || true
WORK="${WORK:-/tmp/trench-zoo-reach}"
JOBS="${JOBS:-2}"
SEED="${SEED:-1}"
HLO_FUZZ="${HLO_FUZZ:-$ROOT/build/hlo-fuzz}"
mkdir -p "$WORK"
if [ -z "${SRC:-}" ]; then
  SRC="$WORK/src"
  [ -d "$SRC" ] || git -C "$ROOT" worktree add --detach "$SRC" HEAD >/dev/null
fi
BUILD="${BUILD:-$WORK/build}"
if [ ! -f "$BUILD/CMakeCache.txt" ]; then
  launcher=
  command -v ccache >/dev/null && launcher=-DCMAKE_CXX_COMPILER_LAUNCHER=ccache
  cmake -S "$SRC" -B "$BUILD" -DTRENCH_TARGET_ONLY=ON \
    -DTRENCH_TARGET_COVERAGE=ON -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=Release '-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG' \
    $launcher >/dev/null
fi
bugs=("$@")
if [ ${#bugs[@]} -eq 0 ]; then
  for d in "$ROOT"/tests/bugzoo/*/; do
    [ -f "$d/bug.patch" ] && bugs+=("$(basename "$d")")
  done
fi
printf '%-40s %8s %8s %9s %9s %8s\n' bug reached lines no_code programs findings
for bug in "${bugs[@]}"; do
  patch="$ROOT/tests/bugzoo/$bug/bug.patch"
  git -C "$SRC" apply "$patch"
  trap 'git -C "$SRC" apply -R "$patch"' EXIT
  cmake --build "$BUILD" -j "$JOBS" --target hlo-run >/dev/null
  rm -rf "$WORK/$bug.out"
  "$HLO_FUZZ" --budget "${SECONDS_PER_BUG}s" --jobs "$JOBS" --seed "$SEED" \
    --out "$WORK/$bug.out" --hlo-run "$BUILD/hlo-run" \
    --changed-lines "$patch" --no-progress >"$WORK/$bug.json" \
    2>"$WORK/$bug.err" || true
  git -C "$SRC" apply -R "$patch"
  trap - EXIT
  python3 - "$WORK/$bug.json" "$bug" <<'PY'
import json, sys
try:
    s = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"{sys.argv[2]:40s} campaign failed: {e}")
    sys.exit(0)
r = s.get("reach") or {}
print(f"{sys.argv[2]:40s} {r.get('reached', '-'):>8} {r.get('lines', '-'):>8} "
      f"{r.get('no_code', '-'):>9} {s['programs']:>9} {s['distinct_findings']:>8}")
PY
done
# The source tree is as it was; the build holds the last bug's hlo-run
# until the next run rebuilds it.
