#include "tools/tpusim/slice_run.h"

#include <filesystem>
#include <fstream>
#include <vector>

#include "compiler/driver/run_io.h"
#include "tpu/slice.h"

namespace trench::tpusim {
namespace {

namespace fs = std::filesystem;

// Chip `chip`'s inputs from DIR/<chip>/, checked against the signature.
StatusOr<std::vector<std::vector<uint8_t>>> ReadChipInputs(
    const tpu::Executable& exe, const std::string& dir, int chip) {
  const std::string chip_dir = (fs::path(dir) / std::to_string(chip)).string();
  ASSIGN_OR_RETURN(std::vector<Literal> literals, ReadInputDir(exe, chip_dir));
  const std::vector<Shape> want = InputShapes(exe);
  std::vector<std::vector<uint8_t>> bytes;
  for (size_t i = 0; i < literals.size(); ++i) {
    const std::string got = literals[i].shape().ToString(false);
    if (got != want[i].ToString(false)) {
      return InvalidArgument(chip_dir + "/" + std::to_string(i) +
                             ".npy: input " + std::to_string(i) + " of chip " +
                             std::to_string(chip) + " must be " +
                             want[i].ToString(false) + ", got " + got);
    }
    bytes.emplace_back(literals[i].bytes().begin(), literals[i].bytes().end());
  }
  return bytes;
}

Status WriteJsonFile(const fs::path& path, const Json& j) {
  std::ofstream f(path, std::ios::binary);
  f << j.DumpPretty() << "\n";
  f.close();
  if (!f) return IoError(path.string() + ": write failed");
  return Status::Ok();
}

// Writes every chip's directory, then the slice's report.json.
Status WriteSliceResults(const std::string& dir, const tpu::Topology& topology,
                         const tpu::SliceRunResult& r) {
  Json chip_cycles = Json::MakeArray();
  for (size_t c = 0; c < r.chips.size(); ++c) {
    tpu::RunResult chip{r.report, r.chips[c].outputs, r.chips[c].taps};
    chip.report.cost = r.chips[c].cost;
    chip.report.steps = r.chips[c].steps;
    RETURN_IF_ERROR(
        WriteResults((fs::path(dir) / std::to_string(c)).string(), chip)
            .status());
    chip_cycles.push_back(r.chips[c].cost.total.cycles);
  }
  ASSIGN_OR_RETURN(Json j, WriteResults(dir, tpu::RunResult{r.report, {}, {}}));
  const tpu::KernelStats& total = r.report.cost.total;
  j["chip"] = r.report.chip;
  j["chips"] = static_cast<int64_t>(r.chips.size());
  j["topology"] = topology.ToString();
  j["chip_cycles"] = std::move(chip_cycles);
  j["link_bytes_sent"] = total.link_bytes_sent;
  j["link_transfers"] = total.link_transfers;
  j["flag_stall_cycles"] = total.flag_stall_cycles;
  for (Json& e : j["memory_errors"].mutable_array()) e["chip"] = r.report.chip;
  return WriteJsonFile(fs::path(dir) / "report.json", j);
}

}  // namespace

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
  Status written = run.ok()
                       ? WriteSliceResults(out_dir, (*slice)->topology(), *run)
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
