// hlo-run: compile and run in one process.
//
//   hlo-run MODULE.hlo (--input F.npy ... | --input-dir I |
//           --random-inputs [--seed N]) --output-dir D [hloc's compile flags]
//   hlo-run --serve [hloc's compile flags as defaults]
//   hlo-run --coverage-pcs
//   hlo-run --help
//
// One-shot: writes D/<i>.npy, D/taps/<label>.npy, D/report.json (and
// D/inputs/<i>.npy for random inputs, identical to hlo-eval's). Exit codes:
// 0 ok; 1 bad input; 2 usage; 3 compile error; 4 run crash (trap); 5
// memory error; 6 timeout; the message on `err` names the class.
// SPMD: with --mesh RxP (R*P > 1) the program runs on a slice of R*P
// chips, device d (chip d) reading I/<d>/<i>.npy and writing D/<d>/<i>.npy
// (random inputs: seed + d, in D/inputs/<d>/); D/report.json is the
// slice's (compiler/driver/run_request.h). One device keeps the layout
// above.
//
// --serve: reads JSON-lines requests on `in`, answers one JSON line each on
// `out`, until end of input:
//   {"module": PATH-or-HLO-TEXT, "inputs": [F.npy, ...] | "seed": N |
//    "input_dir": I, "mesh": "RxP",
//    "output_dir": D, "taps": "all"|"a,b"|[...], "disable_passes": "a,b"|
//    [...], "pass_limit": N, "rewrite_limit": N, "dump_dir": D, "id": any}
//   -> {"id"?, "ok": bool, "status": "ok"|"bad_input"|"compile_error"|
//       "run_crash"|"memory_error"|"timeout", "exit_code": N, "message",
//       "report": {...}|null}
// A malformed request gets status "bad_input"; the server keeps going.
// In the coverage build flavour (compiler/driver/coverage.h) every answer
// also has "coverage": {"size": N, "hit": HEX}, the coverage points that
// request alone hit (counters are reset before each request).
//
// hlo-run --coverage-pcs prints {"size": N, "pcs": [offset, ...]}: each
// coverage point's address (minus the load bias) for symbolizing; size 0
// without the flavour.
#pragma once

#include <istream>
#include <ostream>

namespace trench {

// Runs hlo-run with argv[1..argc-1]; `in` is read only by --serve.
// Returns the exit code (0 for --serve at end of input). Never throws.
int RunHloRun(int argc, char** argv, std::istream& in, std::ostream& out,
              std::ostream& err);

}  // namespace trench
