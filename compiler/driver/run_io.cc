#include "compiler/driver/run_io.h"

#include <cctype>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "compiler/ir/dtype.h"
#include "compiler/ir/npy.h"

namespace trench::tpusim {
namespace {

namespace fs = std::filesystem;

StatusOr<Shape> DeclShape(const std::string& dtype,
                          const std::vector<int64_t>& dims) {
  std::optional<PrimitiveType> t = PrimitiveTypeFromName(dtype);
  if (!t || !IsArrayType(*t)) {
    return InvalidArgument("buffer dtype '" + dtype + "' is not an HLO type");
  }
  return Shape(*t, dims);
}

Json DimsJson(const std::vector<int64_t>& dims) {
  Json a = Json::MakeArray();
  for (int64_t d : dims) a.push_back(d);
  return a;
}

std::string SafeName(const std::string& label) {
  std::string s;
  for (char c : label) {
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
          c == '-' || c == '#')
             ? c
             : '_';
  }
  return s.empty() || s[0] == '.' ? "_" + s : s;
}

StatusOr<Json> WriteBuffer(const fs::path& dir, const std::string& file,
                           const tpu::OutputBuffer& b) {
  ASSIGN_OR_RETURN(Shape shape, DeclShape(b.dtype, b.dims));
  Literal l(shape);
  if (b.bytes.size() != l.bytes().size()) {
    return Internal("buffer " + b.name + " has the wrong size");
  }
  if (!b.bytes.empty()) {
    std::memcpy(l.mutable_bytes().data(), b.bytes.data(), b.bytes.size());
  }
  RETURN_IF_ERROR(WriteNpyFile((dir / file).string(), l));
  Json j = Json::MakeObject();
  j["index"] = b.index;
  if (b.role == tpu::BufferRole::kTap) j["label"] = b.label;
  j["file"] = file;
  j["dtype"] = b.dtype;
  j["shape"] = DimsJson(b.dims);
  return j;
}

}  // namespace

std::vector<Shape> InputShapes(const tpu::Executable& exe) {
  std::vector<Shape> out;
  for (const tpu::BufferDecl* d :
       exe.BuffersWithRole(tpu::BufferRole::kInput)) {
    StatusOr<Shape> s = DeclShape(d->dtype, d->dims);
    out.push_back(s.ok() ? *s : Shape(PrimitiveType::U8, {d->bytes}));
  }
  return out;
}

StatusOr<std::vector<Literal>> ReadInputDir(const tpu::Executable& exe,
                                            const std::string& dir) {
  std::vector<Literal> out;
  std::vector<Shape> shapes = InputShapes(exe);
  for (size_t i = 0; i < shapes.size(); ++i) {
    std::string path = (fs::path(dir) / (std::to_string(i) + ".npy")).string();
    ASSIGN_OR_RETURN(Literal l, ReadNpyFile(path, shapes[i].element_type()));
    out.push_back(std::move(l));
  }
  return out;
}

StatusOr<tpu::RunResult> RunWithInputs(const tpu::Executable& exe,
                                       const std::vector<Literal>& inputs) {
  std::vector<Shape> shapes = InputShapes(exe);
  if (inputs.size() != shapes.size()) {
    return InvalidArgument("the program takes " +
                           std::to_string(shapes.size()) + " inputs, got " +
                           std::to_string(inputs.size()));
  }
  std::vector<std::vector<uint8_t>> bytes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Shape& got = inputs[i].shape();
    if (!got.IsArray() || got.element_type() != shapes[i].element_type() ||
        got.dims() != shapes[i].dims()) {
      return InvalidArgument("input " + std::to_string(i) + ": expected " +
                             shapes[i].ToString(false) + ", got " +
                             got.ToString(false));
    }
    bytes.emplace_back(inputs[i].bytes().begin(), inputs[i].bytes().end());
  }
  return tpu::RunExecutable(exe, bytes);
}

std::string StatusName(tpu::RunStatus s) {
  return s == tpu::RunStatus::kTrap ? "run_crash"
                                    : std::string(tpu::RunStatusName(s));
}

int ExitCode(tpu::RunStatus s) {
  switch (s) {
    case tpu::RunStatus::kOk:
      return 0;
    case tpu::RunStatus::kTrap:
      return 4;
    case tpu::RunStatus::kMemoryError:
      return 5;
    case tpu::RunStatus::kTimeout:
      return 6;
  }
  return 4;
}

StatusOr<Json> WriteResults(const std::string& dir, const tpu::RunResult& r,
                            const Json& compile) {
  const tpu::RunReport& rep = r.report;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return IoError(dir + ": cannot create: " + ec.message());
  Json j = Json::MakeObject();
  j["status"] = StatusName(rep.status);
  j["message"] = rep.message;
  j["cycles"] = rep.cost.total.cycles;
  j["steps"] = rep.steps;
  Json moved = Json::MakeObject();
  moved["hbm_to_vmem"] = rep.cost.total.bytes_hbm_to_vmem;
  moved["vmem_to_hbm"] = rep.cost.total.bytes_vmem_to_hbm;
  moved["other"] = rep.cost.total.bytes_other;
  j["bytes_moved"] = std::move(moved);
  j["dma_transfers"] = rep.cost.total.dma_transfers;
  j["matmul_passes"] = rep.cost.total.matmul_passes;
  Json errors = Json::MakeArray();
  if (rep.status == tpu::RunStatus::kMemoryError) {
    Json e = Json::MakeObject();
    e["kind"] = std::string(tpu::MemoryErrorKindName(rep.memory_error));
    e["kernel"] = rep.kernel;
    e["launch"] = rep.launch;
    e["instruction_index"] = rep.instruction_index;
    e["instruction"] = rep.instruction;
    e["space"] = rep.memory_space;
    e["address"] = rep.address;
    e["message"] = rep.message;
    errors.push_back(std::move(e));
  } else if (rep.status != tpu::RunStatus::kOk) {
    j["kernel"] = rep.kernel;
    j["instruction_index"] = rep.instruction_index;
    j["instruction"] = rep.instruction;
  }
  j["memory_errors"] = std::move(errors);
  Json outputs = Json::MakeArray(), taps = Json::MakeArray();
  if (rep.status == tpu::RunStatus::kOk) {
    for (const tpu::OutputBuffer& b : r.outputs) {
      ASSIGN_OR_RETURN(Json o,
                       WriteBuffer(dir, std::to_string(b.index) + ".npy", b));
      outputs.push_back(std::move(o));
    }
    if (!r.taps.empty()) {
      fs::create_directories(fs::path(dir) / "taps", ec);
      if (ec) return IoError(dir + "/taps: cannot create: " + ec.message());
    }
    for (const tpu::OutputBuffer& b : r.taps) {
      ASSIGN_OR_RETURN(
          Json t, WriteBuffer(dir, "taps/" + SafeName(b.label) + ".npy", b));
      taps.push_back(std::move(t));
    }
  }
  j["outputs"] = std::move(outputs);
  j["taps"] = std::move(taps);
  if (!compile.is_null()) j["compile"] = compile;
  std::string text = j.DumpPretty() + "\n";
  std::FILE* f = std::fopen((fs::path(dir) / "report.json").c_str(), "wb");
  if (f == nullptr) return IoError(dir + "/report.json: cannot write");
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok &= std::fclose(f) == 0;
  if (!ok) return IoError(dir + "/report.json: write failed");
  return j;
}

namespace {

Status WriteJsonFile(const fs::path& path, const Json& j) {
  std::ofstream f(path, std::ios::binary);
  f << j.DumpPretty() << "\n";
  f.close();
  if (!f) return IoError(path.string() + ": write failed");
  return Status::Ok();
}

}  // namespace

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

StatusOr<Json> WriteSliceResults(const std::string& dir,
                                 const tpu::Topology& topology,
                                 const tpu::SliceRunResult& r,
                                 const Json& compile) {
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
  ASSIGN_OR_RETURN(
      Json j, WriteResults(dir, tpu::RunResult{r.report, {}, {}}, compile));
  const tpu::KernelStats& total = r.report.cost.total;
  j["chip"] = r.report.chip;
  j["chips"] = static_cast<int64_t>(r.chips.size());
  j["topology"] = topology.ToString();
  j["chip_cycles"] = std::move(chip_cycles);
  j["link_bytes_sent"] = total.link_bytes_sent;
  j["link_transfers"] = total.link_transfers;
  j["flag_stall_cycles"] = total.flag_stall_cycles;
  for (Json& e : j["memory_errors"].mutable_array()) e["chip"] = r.report.chip;
  RETURN_IF_ERROR(WriteJsonFile(fs::path(dir) / "report.json", j));
  return j;
}

}  // namespace trench::tpusim
