#!/bin/bash
# Build time of the target side alone (-DTRENCH_TARGET_ONLY=ON), as the
# daemon rebuilds it per commit: a fresh build without ccache, then an
# incremental rebuild after touching one pass file.
#   bash bench/target_build_time.sh [JOBS]   (default: 2)
set -euo pipefail
jobs="${1:-2}"
src="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d /tmp/target_build_time.XXXXXX)"
trap 'rm -rf "$work"' EXIT
export CCACHE_DISABLE=1
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
seconds() { local s e; s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N); awk "BEGIN { print $e - $s }"; }
# Two flag sets: the two set-up commands' (-O2, no debug info; what the
# target tools are built with) and config/demo.json's per-commit build
# command (-O1, as the demo's daemon rebuilds each commit).
echo "| build (-j$jobs, no ccache) | flags | seconds |"
echo "| --- | --- | ---: |"
for flags in "-O2 -DNDEBUG" "-O1 -DNDEBUG"; do
  rm -rf "$work/t"
  cmake -S "$src" -B "$work/t" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
    "-DCMAKE_CXX_FLAGS_RELEASE=$flags" -DTRENCH_TARGET_ONLY=ON >/dev/null
  fresh=$(seconds cmake --build "$work/t" -j "$jobs")
  touch "$src/compiler/passes/dce.cc"
  incremental=$(seconds cmake --build "$work/t" -j "$jobs")
  printf "| target only, fresh | %s | %.1f |\n" "$flags" "$fresh"
  printf "| target only, after touching compiler/passes/dce.cc | %s | %.1f |\n" \
    "$flags" "$incremental"
done
