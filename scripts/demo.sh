#!/usr/bin/env bash
# The main job on the embedded default target. Installs missing Debian
# packages, builds, then runs. For now (until `trench demo` exists) it
# evaluates the bundled sample module with the reference oracle on seeded
# random inputs and prints the outputs.
#   scripts/demo.sh [MODULE.hlo] [SEED]
set -euo pipefail
source "$(dirname "$0")/deps.sh"
trench_install_deps

cd "$TRENCH_ROOT"
trench_configure build
cmake --build build -j "$TRENCH_JOBS" --target hlo-eval hlo-fmt

module="${1:-config/demo/mlp.hlo}"
seed="${2:-1}"
out="$(mktemp -d)"
echo "== module ($module), as parsed and verified by hlo-fmt"
build/hlo-fmt "$module"
echo
echo "== hlo-eval --random-inputs --seed $seed --output-dir $out"
build/hlo-eval "$module" --random-inputs --seed "$seed" --output-dir "$out"
echo
echo "== outputs (read back with numpy, as a user would)"
/usr/bin/python3 - "$out" <<'PY'
import json, os, sys
import numpy as np
out = sys.argv[1]
np.set_printoptions(precision=4, suppress=True, linewidth=100)
for name in sorted(f for f in os.listdir(out) if f.endswith(".npy")):
    a = np.load(os.path.join(out, name))
    print(f"{name}: {a.dtype}{list(a.shape)}")
    print(a)
PY
