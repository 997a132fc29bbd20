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
  p->String("mesh", "RxP", &f->mesh_text,
            "run SPMD on R replicas x P partitions (\"P\" alone:\n"
            "1 x P); --input files are then device-major,\nrandom inputs "
            "use seed+d on device d, and\noutputs go to D/<device>/");
}

namespace {

StatusOr<int64_t> MeshSize(const std::string& text, const std::string& all) {
  if (text.empty() || text.size() > 4 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidArgument("--mesh: expected RxP or P, got '" + all + "'");
  }
  return std::stoll(text);
}

}  // namespace

Status CheckFlags(const FlagParser& p, Flags* flags) {
  const Flags& f = *flags;
  if (!f.mesh_text.empty()) {
    const size_t x = f.mesh_text.find('x');
    DeviceMesh m;
    if (x == std::string::npos) {
      ASSIGN_OR_RETURN(m.partitions, MeshSize(f.mesh_text, f.mesh_text));
    } else {
      ASSIGN_OR_RETURN(m.replicas,
                       MeshSize(f.mesh_text.substr(0, x), f.mesh_text));
      ASSIGN_OR_RETURN(m.partitions,
                       MeshSize(f.mesh_text.substr(x + 1), f.mesh_text));
    }
    if (Status st = CheckMesh(m); !st.ok()) {
      return InvalidArgument("--mesh " + f.mesh_text + ": " + st.message());
    }
    flags->mesh = m;
  }
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
