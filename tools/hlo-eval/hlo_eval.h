// hlo-eval: runs an HLO module on the reference evaluator (the oracle) and
// writes the result as .npy files.
//
//   hlo-eval MODULE.hlo (--input F.npy ... | --random-inputs [--seed N])
//            --output-dir D [--threads N] [--mesh RxP]
//
// Inputs: --input files are matched, in order, with the array leaves of
// the entry parameters in flattened order (a tuple parameter takes one
// file per leaf; token leaves take none). A <u2 file feeds a bf16 leaf
// (bf16 bits). --random-inputs uses RandomArguments (random_inputs.h) with
// --seed (default 0) and also writes the inputs to D/inputs/0.npy, ... (same
// flattened order), so `--input D/inputs/0.npy ...` reproduces the run.
//
// Outputs: the root's array leaves in flattened tuple order as D/0.npy,
// D/1.npy, ... (file k is leaf k; token leaves get no file); bf16 is
// written as <u2 bits. D/outputs.json records every output and input with
// its dtype and shape, so bf16 files are recognizable:
//   {"module": ..., "inputs": {"mode": "files"|"random", "seed"?: N,
//    "files": [{"file", "dtype", "shape", "npy_descr"}...]},
//    "outputs": [{"index", "file" (null for tokens), "dtype", "shape",
//    "npy_descr"}...]}
// One summary line per output goes to `out`.
//
// --mesh RxP (or P: 1 x P) runs the module SPMD on every device of R
// replicas x P partitions (oracle/spmd.h): --input files are device-major
// (device 0's leaves, then device 1's, ...), --random-inputs uses seed + d
// on device d and writes D/inputs/<d>/k.npy, outputs go to D/<d>/k.npy,
// and outputs.json gains "mesh" and, instead of "outputs", "devices":
// [{"device", "outputs": [...]}...]. A collective no group can complete
// is an evaluation error naming the devices.
//
// Exit codes: 0 ok; 1 bad input (unreadable module, parse or verifier
// error — messages carry MODULE:line:col —, unreadable or mismatched .npy,
// or outputs that cannot be written); 2 usage; 3 evaluation error
// (unsupported op, runaway loop, ...).
#pragma once

#include <ostream>

namespace trench {

inline constexpr int kHloEvalOk = 0;
inline constexpr int kHloEvalBadInput = 1;
inline constexpr int kHloEvalUsage = 2;
inline constexpr int kHloEvalEvalError = 3;

// Runs the tool with argv[1..argc-1] as its arguments; writes the summary
// (or --help text) to `out` and diagnostics to `err`. Returns the exit
// code above. Never throws.
int RunHloEval(int argc, char** argv, std::ostream& out, std::ostream& err);

}  // namespace trench
