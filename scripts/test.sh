#!/usr/bin/env bash
# The whole test suite: installs missing Debian packages, builds (warnings
# are errors), runs every test (unit, slow, browser and fuzz smoke), checks
# that the target side builds alone (TRENCH_TARGET_ONLY) and builds its
# coverage flavour (TRENCH_TARGET_COVERAGE) for the CoverageBuild suite.
#   scripts/test.sh            everything
#   scripts/test.sh -L unit    only tests with that ctest label (also: slow,
#                              browser, slurm)
set -euo pipefail
source "$(dirname "$0")/deps.sh"
# The browser tests (label "browser"): Debian's chromium, driven by node.
# Node.js and npm only when the machine has none: a machine whose nodejs
# comes from another repository (with npm bundled) cannot take Debian's npm.
TRENCH_PACKAGES+=(chromium)
# The Slurm tests (label "slurm"): a real single-node cluster the suite
# starts (tests/orchestrator/slurm/slurm_cluster.h).
TRENCH_PACKAGES+=(slurm-wlm munge)
command -v node >/dev/null || TRENCH_PACKAGES+=(nodejs)
command -v npm >/dev/null || TRENCH_PACKAGES+=(npm)
trench_install_deps

# Each phase's wall time, printed at the end (CI keeps the output's tail).
TRENCH_PHASE="packages"
TRENCH_PHASE_TIMES=()
trench_phase() {
  TRENCH_PHASE_TIMES+=("$TRENCH_PHASE: $((SECONDS - ${TRENCH_PHASE_START:-0})) s")
  TRENCH_PHASE="$1"
  TRENCH_PHASE_START=$SECONDS
  echo "== $1"
}

cd "$TRENCH_ROOT"
trench_phase "build (build/)"
trench_configure build -DTRENCH_WERROR=ON
cmake --build build -j "$TRENCH_JOBS"

# puppeteer-core for the browser tests, pinned by package-lock.json, into
# build/web-node (outside the source tree); never a browser download.
trench_browser_packages() {
  local dir=build/web-node src=tests/orchestrator/api/web
  if [ -f "$dir/node_modules/.package-lock.json" ] &&
     cmp -s "$src/package-lock.json" "$dir/package-lock.json"; then
    return
  fi
  echo "== browser test packages ($dir, npm ci)"
  rm -rf "$dir" && mkdir -p "$dir"
  cp "$src/package.json" "$src/package-lock.json" "$dir/"
  (cd "$dir" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund)
}
trench_browser_packages

trench_phase "target side alone (build-target/, TRENCH_TARGET_ONLY=ON)"
trench_configure build-target -DTRENCH_TARGET_ONLY=ON -DTRENCH_WERROR=ON
cmake --build build-target -j "$TRENCH_JOBS"

# The target's coverage build flavour (clang, SanitizerCoverage), which the
# slow CoverageBuild suite runs programs on; built here, not inside a test.
trench_coverage_build() {
  trench_phase "target coverage flavour (build-coverage/, clang)"
  CXX=clang++ trench_configure build-coverage -DTRENCH_TARGET_ONLY=ON \
    -DTRENCH_TARGET_COVERAGE=ON "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG"
  cmake --build build-coverage -j "$TRENCH_JOBS" --target hlo-run
  export TRENCH_COVERAGE_BUILD_DIR="$TRENCH_ROOT/build-coverage"
}

# ctest on build/, then the end of the output: the time of each phase, the
# slowest tests, and, when tests failed, why each failed.
trench_ctest() {
  local rc=0
  trench_phase "tests${*:+ ($*)}"
  ctest --test-dir build --output-on-failure -j "$TRENCH_JOBS" "$@" || rc=$?
  trench_phase "done"
  printf '== wall time per phase\n'
  printf '   %s\n' "${TRENCH_PHASE_TIMES[@]}"
  bash "$TRENCH_ROOT/scripts/ctest_digest.sh" build || true
  return "$rc"
}

if [ "$#" -gt 0 ]; then
  case " $* " in *slow*) trench_coverage_build ;; esac
  trench_ctest "$@"
  exit 0
fi
trench_coverage_build

trench_phase "fuzz targets (build-fuzz/, clang + libFuzzer)"
# -O1 with line tables: what libFuzzer and ASan reports need, at about half
# the compile time of -O2 -g.
CXX=clang++ trench_configure build-fuzz -DTRENCH_FUZZ=ON -DBUILD_TESTING=OFF \
  -DTRENCH_WERROR=ON "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -gline-tables-only"
cmake --build build-fuzz -j "$TRENCH_JOBS" --target fuzzers

trench_phase "fuzz smoke tests"
ctest --test-dir build-fuzz --output-on-failure -L fuzz
trench_ctest
