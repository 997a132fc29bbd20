#!/usr/bin/env python3
"""A fusion that keeps more values alive than the 28 vector registers.

XLA's fusions (as traces carry them) may hold more live values than the
registers; codegen then spills the least recently used ones to VMEM
(compiler/codegen/emit_fusion_internal.h). This runs, side by side on the
simulator, the fused kernel (the module as written, hlo-run
--pass-limit=0) and the same ops unfused (one kernel per op), and prints
the simulated cycles, DMA transfers, spill stores and the ratio; the
outputs must be equal.

Usage: python3 bench/fusion_spill.py --build build [--values 40] [--type f32]
"""
import argparse
import json
import os
import subprocess
import tempfile


def fused_body(t, n):
    shape = "%s[16,256]" % t
    lines = ["  p = %s parameter(0)" % shape, "  x0 = %s negate(p)" % shape]
    lines += ["  x%d = %s add(x%d, p)" % (i, shape, i - 1) for i in range(1, n)]
    y = "x0"
    for i in range(1, n):
        lines.append("  y%d = %s multiply(%s, x%d)" % (i, shape, y, i))
        y = "y%d" % i
    z = "x%d" % (n - 1)
    for i in range(n - 2, -1, -1):
        lines.append("  z%d = %s subtract(%s, x%d)" % (i, shape, z, i))
        z = "z%d" % i
    lines.append("  ROOT r = %s add(%s, %s)" % (shape, y, z))
    return shape, "\n".join(lines) + "\n"


def run(build, module, out):
    subprocess.run([os.path.join(build, "hlo-run"), module, "--random-inputs",
                    "--seed", "1", "--output-dir", out, "--pass-limit=0",
                    "--dump-dir", out + "/dump"],
                   check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "report.json")) as f:
        report = json.load(f)
    spills = 0
    kdir = os.path.join(out, "dump", "kernels")
    for k in os.listdir(kdir):
        with open(os.path.join(kdir, k)) as f:
            spills += sum(1 for line in f
                          if line.strip().startswith("vst.u")
                          and "vmem[" in line and line.split("vmem[")[1][0].isdigit())
    with open(os.path.join(out, "0.npy"), "rb") as f:
        data = f.read()
    return report, spills, data


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--values", type=int, default=40)
    p.add_argument("--type", default="f32")
    a = p.parse_args()
    shape, body = fused_body(a.type, a.values)
    with tempfile.TemporaryDirectory() as d:
        fused = os.path.join(d, "fused.hlo")
        with open(fused, "w") as f:
            f.write("HloModule m\nfused {\n" + body + "}\nENTRY e {\n  a = " +
                    shape + " parameter(0)\n  ROOT f = " + shape +
                    " fusion(a), kind=kLoop, calls=fused\n}\n")
        unfused = os.path.join(d, "unfused.hlo")
        with open(unfused, "w") as f:
            f.write("HloModule m\nENTRY e {\n" + body + "}\n")
        rows = []
        for name, module in (("fused kernel (spilling)", fused),
                             ("unfused, one kernel per op", unfused)):
            report, spills, data = run(a.build, module, os.path.join(d, name[:5]))
            rows.append((name, report, spills, data))
    print("%d live %s values in one fusion (%s)" % (a.values, a.type, shape))
    print("| program | cycles | DMA transfers | spill stores |")
    print("| --- | ---: | ---: | ---: |")
    for name, report, spills, _ in rows:
        print("| %s | %d | %d | %d |" % (name, report["cycles"],
                                          report["dma_transfers"], spills))
    print("unfused / fused cycles: %.1fx; outputs equal: %s" %
          (rows[1][1]["cycles"] / rows[0][1]["cycles"],
           rows[0][3] == rows[1][3]))


if __name__ == "__main__":
    main()
