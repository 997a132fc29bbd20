#include "tools/hlo-eval/hlo_eval_flags.h"

namespace trench::hlo_eval {

void RegisterFlags(FlagParser* p, Flags* f) {
  p->set_description(
      "Evaluates MODULE with the reference evaluator and writes the result\n"
      "leaves (flattened tuple order) to D/0.npy, D/1.npy, ... with a\n"
      "manifest D/outputs.json (bf16 is stored as <u2 bits).");
  p->set_epilog("exit: 0 ok, 1 bad input, 2 usage, 3 evaluation error");
  p->Positional("MODULE", &f->module_path, "the HLO module (text)");
  p->Strings("input", "F.npy", &f->inputs,
             "one file per array leaf of the entry parameters,\nin order");
  p->Bool("random-inputs", &f->random_inputs,
          "deterministic random inputs, also written to\nD/inputs/ so the "
          "run can be repeated");
  p->Number("seed", "N", &f->seed, "seed for --random-inputs (default 0)");
  p->String("output-dir", "D", &f->output_dir,
            "where results go (created if missing)");
  p->Number("threads", "N", &f->threads,
            "evaluator threads (default: all cores)");
}

Status CheckFlags(const FlagParser& p, const Flags& f) {
  if (f.module_path.empty()) return InvalidArgument("missing MODULE");
  if (f.output_dir.empty()) return InvalidArgument("missing --output-dir");
  if (f.random_inputs && !f.inputs.empty()) {
    return InvalidArgument("--input and --random-inputs exclude each other");
  }
  if (p.Given("seed") && !f.random_inputs) {
    return InvalidArgument("--seed needs --random-inputs");
  }
  if (f.threads < 0) return InvalidArgument("--threads: must be >= 0");
  return Status::Ok();
}

}  // namespace trench::hlo_eval
