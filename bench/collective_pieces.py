#!/usr/bin/python3
"""Collectives in pieces: what splitting a ring into pieces costs.

An all-reduce or reduce-scatter whose operand does not fit a quarter of
the kernel's VMEM runs as several rings, one after the other, each on a
piece of at most min(4 MiB, VMEM / 4) (compiler/codegen: PieceBytes). The
peer is the same collective on the same data in one piece: the module
asks for a smaller VMEM (frontend_attributes={trench_vmem_bytes=...}) to
get more pieces, everything else equal. Also printed: the ring's ideal
time on the links (each chip sends 2 (n-1)/n of the operand for an
all-reduce, (n-1)/n for a reduce-scatter, at the link's 64 bytes/cycle,
tpu/ISA.md "Cost"), and an operand larger than the default VMEM.

Simulated cycles are deterministic (tpusim's cost model), so one run per
point is enough; the wall time is not measured.

Usage (after a build in build/):
    /usr/bin/python3 bench/collective_pieces.py [--build build]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

CHIPS = 4
LINK_BYTES_PER_CYCLE = 64
MIB = 1 << 20

MODULE = """HloModule pieces{attrs}
add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}
ENTRY e {{
  p = f32[{rows},{cols}] parameter(0)
  ROOT r = f32[{out_rows},{cols}] {op}(p), channel_id=1,
      replica_groups=[1,{n}]<=[{n}], use_global_device_ids=true,
      to_apply=add{dims}
}}
"""


def module_text(op, rows, cols, vmem):
    attrs = (', frontend_attributes={trench_vmem_bytes="%d"}' % vmem
             if vmem else "")
    scatter = op == "reduce-scatter"
    return MODULE.format(attrs=attrs, rows=rows, cols=cols, op=op, n=CHIPS,
                         out_rows=rows // CHIPS if scatter else rows,
                         dims=", dimensions={0}" if scatter else "")


def run(build, work, op, rows, cols, vmem):
    """Compiles and runs one point; returns tpusim's report."""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    hlo = os.path.join(work, "m.hlo")
    with open(hlo, "w") as f:
        f.write(module_text(op, rows, cols, vmem))
    prog = os.path.join(work, "p.tpux")
    subprocess.run([os.path.join(build, "hloc"), "compile", hlo, "-o", prog,
                    "--mesh", "1x%d" % CHIPS], check=True,
                   stdout=subprocess.DEVNULL)
    rng = np.random.default_rng(7)
    for c in range(CHIPS):
        d = os.path.join(work, "in", str(c))
        os.makedirs(d)
        np.save(os.path.join(d, "0.npy"),
                rng.standard_normal((rows, cols), dtype=np.float32))
    out = os.path.join(work, "out")
    subprocess.run([os.path.join(build, "tpusim"), "run", prog, "--inputs",
                    os.path.join(work, "in"), "--outputs", out], check=True,
                   stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "report.json")) as f:
        return json.load(f)


def ideal_cycles(op, nbytes):
    share = 2 if op == "all-reduce" else 1
    return share * (CHIPS - 1) / CHIPS * nbytes / LINK_BYTES_PER_CYCLE


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="collective_pieces_")
    cols = 1024
    print("| op | operand per chip | VMEM | pieces | cycles | vs one piece "
          "| ideal ring cycles | ideal / cycles |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    try:
        for op in ("all-reduce", "reduce-scatter"):
            rows = 2 * MIB // (4 * cols)  # 2 MiB per chip.
            nbytes = rows * cols * 4
            base = None
            for vmem in (0, 2 * MIB, 512 << 10, 128 << 10):
                piece = min(4 * MIB, (vmem or 16 * MIB) // 4)
                pieces = -(-nbytes // piece)
                rep = run(args.build, work, op, rows, cols, vmem)
                cycles = rep["cycles"]
                base = base or cycles
                ideal = ideal_cycles(op, nbytes)
                print("| %s | %.0f MiB | %s | %d | %d | %.2fx | %.0f | %.2f |"
                      % (op, nbytes / MIB,
                         "%d KiB" % (vmem >> 10) if vmem else "16 MiB",
                         pieces, cycles, cycles / base, ideal,
                         ideal / cycles))
            # Larger than the default VMEM: 24 MiB per chip, 6 pieces.
            rows = 24 * MIB // (4 * cols)
            nbytes = rows * cols * 4
            rep = run(args.build, work, op, rows, cols, 0)
            ideal = ideal_cycles(op, nbytes)
            print("| %s | %.0f MiB | 16 MiB | %d | %d | (%.2fx per byte) "
                  "| %.0f | %.2f |"
                  % (op, nbytes / MIB, -(-nbytes // (4 * MIB)),
                     rep["cycles"], rep["cycles"] / nbytes * 2 * MIB / base,
                     ideal, ideal / rep["cycles"]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
