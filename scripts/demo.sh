#!/usr/bin/env bash
# The main job on the embedded default target. Installs missing Debian
# packages, builds, then runs. For now (until `trench demo` exists) it
# evaluates the bundled sample module with the reference oracle on seeded
# random inputs, compiles and runs it on the simulated TPU with the same
# inputs, prints both results and their difference, gives the verdict of
# hlo-diff on that case, and runs a short differential fuzzing campaign
# (synthetic programs and programs cut from ../shared/traces when present).
#   scripts/demo.sh [MODULE.hlo] [SEED]
set -euo pipefail
source "$(dirname "$0")/deps.sh"
trench_install_deps

cd "$TRENCH_ROOT"
trench_configure build
cmake --build build -j "$TRENCH_JOBS" --target hlo-eval hlo-fmt hlo-run hlo-diff \
  hlo-fuzz

module="${1:-config/demo/mlp.hlo}"
seed="${2:-1}"
out="$(mktemp -d)"
tpu="$(mktemp -d)"
fuzz="$(mktemp -d)"
trap 'rm -rf "$out" "$tpu" "$fuzz"' EXIT
echo "== module ($module), as parsed and verified by hlo-fmt"
build/hlo-fmt "$module"
echo
echo "== hlo-eval --random-inputs --seed $seed --output-dir $out"
build/hlo-eval "$module" --random-inputs --seed "$seed" --output-dir "$out"
echo
echo "== hlo-run (hloc's pass pipeline + codegen, then the TPU simulator)"
build/hlo-run "$module" --random-inputs --seed "$seed" --output-dir "$tpu" \
  --dump-dir "$tpu/dump"
echo
echo "== outputs (read back with numpy, as a user would)"
/usr/bin/python3 - "$out" "$tpu" <<'PY'
import json, os, sys
import numpy as np
oracle, tpu = sys.argv[1], sys.argv[2]
np.set_printoptions(precision=4, suppress=True, linewidth=100)
report = json.load(open(os.path.join(tpu, "report.json")))
comp = report["compile"]
ran = [p["pass"] for p in comp["passes"] if not p["skipped"] and p["changed"]]
print(f"compile: {comp['kernels']} kernels, {comp['rewrites_allowed']} rewrites,"
      f" passes that changed the module: {', '.join(ran)}")
print(f"run: {report['status']}, {report['cycles']} cycles,"
      f" {report['matmul_passes']} matrix-unit passes")
for name in sorted(f for f in os.listdir(oracle) if f.endswith(".npy")):
    want = np.load(os.path.join(oracle, name))
    got = np.load(os.path.join(tpu, name))
    print(f"{name}: {want.dtype}{list(want.shape)}")
    print("oracle:")
    print(want)
    print("tpu:")
    print(got)
    err = np.max(np.abs(want.astype(np.float64) - got.astype(np.float64)))
    print(f"max |oracle - tpu| = {err:.3g}")
PY
echo
echo "== hlo-diff: the same case, target vs oracle under the numerics contract"
build/hlo-diff "$module" --random-inputs --seed "$seed" \
  --write-case "$fuzz/case" > "$fuzz/verdict.json" || true
/usr/bin/python3 - "$fuzz/verdict.json" <<'PY'
import json, sys
v = json.load(open(sys.argv[1]))
print("verdict:", v["status"], v.get("message") or "")
for o in v.get("outputs") or []:
    print(f"output {o['index']}: max abs error {o['max_abs_error']:.3g}, "
          f"allowed up to {o.get('max_allowed', 0):.3g}")
PY
echo
budget="${TRENCH_DEMO_FUZZ_BUDGET:-20s}"
corpus=()
[ -d ../shared/traces ] && corpus=(--corpus ../shared/traces)
echo "== hlo-fuzz --budget $budget --jobs $TRENCH_JOBS ${corpus[*]}"
build/hlo-fuzz --budget "$budget" --jobs "$TRENCH_JOBS" "${corpus[@]}" \
  --out "$fuzz/findings" --progress > "$fuzz/summary.json"
/usr/bin/python3 - "$fuzz/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"{s['programs']} programs ({s['synthetic']} synthetic, {s['traces']} "
      f"from traces) in {s['seconds']:.0f} s, {s['programs_per_second']:.1f}/s")
print("verdicts:", ", ".join(f"{k} {v}" for k, v in sorted(s["statuses"].items())))
print(f"distinct findings: {s['distinct_findings']}")
for f in s["findings"]:
    print(f"  {f['sig']} {f['status']} x{f['count']}: {f['signature']}")
PY
