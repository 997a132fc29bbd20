#!/usr/bin/env bash
# The main job on the embedded default target: `trench demo`. Installs
# missing Debian packages, builds trench and its tools, then makes a target
# repository from this checkout's compiler/ and tpu/ sources with a
# realistic history in which one commit brings a bugzoo bug, and runs the
# service against it with the built-in brains (no network, no API key):
# the commit lands, gets built and fuzzed; the bug is found, reproduced,
# minimized, localized, bisected to that commit, and a verified patch is
# proposed on branch trench/bug-<id>. It ends with the triage report and
# how to review the branch.
#   scripts/demo.sh                 a random zoo bug
#   scripts/demo.sh --bug 07        that one
#   scripts/demo.sh --all           every zoo bug, then a table
set -euo pipefail
source "$(dirname "$0")/deps.sh"
trench_install_deps

cd "$TRENCH_ROOT"
trench_configure build
cmake --build build -j "$TRENCH_JOBS" --target trench hlo-diff hlo-reduce \
  hlo-bisect hlo-fuzz hlo-run hloc tpusim

# `trench demo` needs a choice (it starts no work without arguments).
if [ $# -eq 0 ]; then set -- --random; fi
exec build/trench demo "$@"
