#!/usr/bin/env bash
# The whole test suite: installs missing Debian packages, builds (warnings
# are errors), runs every test (unit, slow and fuzz smoke), and checks that
# the target side builds alone (TRENCH_TARGET_ONLY).
#   scripts/test.sh            everything
#   scripts/test.sh -L unit    only tests with that ctest label (also: slow)
set -euo pipefail
source "$(dirname "$0")/deps.sh"
trench_install_deps

cd "$TRENCH_ROOT"
echo "== build (build/)"
trench_configure build -DTRENCH_WERROR=ON
cmake --build build -j "$TRENCH_JOBS"

echo "== target side alone (build-target/, TRENCH_TARGET_ONLY=ON)"
trench_configure build-target -DTRENCH_TARGET_ONLY=ON -DTRENCH_WERROR=ON
cmake --build build-target -j "$TRENCH_JOBS"

if [ "$#" -gt 0 ]; then
  ctest --test-dir build --output-on-failure -j "$TRENCH_JOBS" "$@"
  exit 0
fi

echo "== fuzz targets (build-fuzz/, clang + libFuzzer)"
# -O1 with line tables: what libFuzzer and ASan reports need, at about half
# the compile time of -O2 -g.
CXX=clang++ trench_configure build-fuzz -DTRENCH_FUZZ=ON -DBUILD_TESTING=OFF \
  -DTRENCH_WERROR=ON "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -gline-tables-only"
cmake --build build-fuzz -j "$TRENCH_JOBS" --target fuzzers

echo "== fuzz smoke tests"
ctest --test-dir build-fuzz --output-on-failure -L fuzz
echo "== tests (unit and slow)"
ctest --test-dir build --output-on-failure -j "$TRENCH_JOBS"
