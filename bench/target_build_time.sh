#!/bin/bash
# Build time of the target side alone (-DTRENCH_TARGET_ONLY=ON), as the
# daemon rebuilds it per commit: a fresh build without ccache, then an
# incremental rebuild after touching one pass file. The peer is the same
# fresh build with the whole project (tests included) for scale.
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
cmake -S "$src" -B "$work/t" "${gen[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTRENCH_TARGET_ONLY=ON >/dev/null
fresh=$(seconds cmake --build "$work/t" -j "$jobs")
touch "$src/compiler/passes/dce.cc"
incremental=$(seconds cmake --build "$work/t" -j "$jobs")
echo "| build (-j$jobs, no ccache) | seconds |"
echo "| --- | ---: |"
printf "| target only, fresh | %.1f |\n" "$fresh"
printf "| target only, after touching compiler/passes/dce.cc | %.1f |\n" "$incremental"
