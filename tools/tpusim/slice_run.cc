#include "tools/tpusim/slice_run.h"

#include "compiler/driver/run_io.h"
#include "tpu/slice.h"

namespace trench::tpusim {

int RunSlice(const tpu::Executable& exe, int chips, const std::string& in,
             const std::string& out_dir, std::ostream& out, std::ostream& err) {
  tpu::SliceOptions opts;
  opts.chips = chips;
  auto slice = tpu::SliceSimulator::Create(exe, opts);
  if (!slice.ok()) {
    err << "tpusim: " << slice.status().message() << "\n";
    return 1;
  }
  for (int c = 0; c < chips && (*slice)->num_inputs() > 0; ++c) {
    auto bytes = ReadChipInputs(exe, in, c);
    Status bound =
        bytes.ok() ? (*slice)->BindInputs(c, *bytes) : bytes.status();
    if (!bound.ok()) {
      err << "tpusim: " << bound.message() << "\n";
      return 1;
    }
  }
  auto run = (*slice)->Run();
  Status written =
      run.ok() ? WriteSliceResults(out_dir, (*slice)->topology(), *run).status()
               : run.status();
  if (!written.ok()) {
    err << "tpusim: " << written.message() << "\n";
    return 1;
  }
  return PrintStatus(run->report,
                     " (" + std::to_string(chips) + " chips, " +
                         (*slice)->topology().ToString() + ")",
                     out, err);
}

int PrintStatus(const tpu::RunReport& rep, const std::string& detail,
                std::ostream& out, std::ostream& err) {
  out << "status " << StatusName(rep.status) << ", " << rep.cost.total.cycles
      << " cycles" << detail << "\n";
  if (rep.status != tpu::RunStatus::kOk) {
    err << "tpusim: " << StatusName(rep.status) << ": " << rep.message << "\n";
  }
  return ExitCode(rep.status);
}

}  // namespace trench::tpusim
