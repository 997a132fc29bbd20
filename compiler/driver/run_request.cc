#include "compiler/driver/run_request.h"

#include <filesystem>
#include <fstream>

#include "compiler/driver/run_io.h"
#include "compiler/ir/npy.h"
#include "compiler/ir/random_inputs.h"

namespace trench::hlo_run {
namespace {

namespace fs = std::filesystem;

Outcome Fail(int code, std::string status, std::string message) {
  return Outcome{code, std::move(status), std::move(message), Json()};
}

// The outcome of a program that ran, from its run report and the written
// report.json (or why it could not be written).
Outcome Ran(const tpu::RunReport& run, StatusOr<Json> written) {
  if (!written.ok()) {
    return Fail(hloc::kExitBadInput, "bad_input", written.status().message());
  }
  Outcome o;
  o.exit_code = tpusim::ExitCode(run.status);
  o.status = tpusim::StatusName(run.status);
  o.message = run.message;
  o.report = std::move(written).value();
  return o;
}

// Writes a report for a job that stopped before running.
void WriteStopReport(const std::string& dir, Outcome* o,
                     const std::string& stage) {
  if (dir.empty()) return;
  std::error_code ec;
  fs::create_directories(dir, ec);
  Json j = Json::MakeObject();
  j["status"] = o->status;
  j["message"] = o->message;
  j["stage"] = stage;
  std::ofstream out(fs::path(dir) / "report.json", std::ios::binary);
  out << j.DumpPretty() << "\n";
  if (out) o->report = std::move(j);
}

std::vector<Shape> LeafShapes(const HloComputation& entry) {
  std::vector<Shape> shapes;
  for (const HloInstruction* p : entry.parameters()) {
    ForEachLeafShape(p->shape(), [&](const Shape& s) {
      if (s.IsArray()) shapes.push_back(s);
    });
  }
  return shapes;
}

std::vector<Literal> RandomLeaves(const HloComputation& entry, uint64_t seed) {
  std::vector<Literal> leaves;
  for (Literal& arg : RandomArguments(entry, seed)) {
    for (const Literal* leaf : arg.Leaves()) {
      if (leaf->shape().IsArray()) leaves.push_back(*leaf);
    }
  }
  return leaves;
}

// Writes DIR/<i>.npy for each leaf.
Status WriteLeaves(const fs::path& dir, const std::vector<Literal>& leaves) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return IoError(dir.string() + ": cannot create: " + ec.message());
  for (size_t i = 0; i < leaves.size(); ++i) {
    RETURN_IF_ERROR(
        WriteNpyFile((dir / (std::to_string(i) + ".npy")).string(), leaves[i]));
  }
  return Status::Ok();
}

StatusOr<std::vector<Literal>> ReadLeaves(const std::vector<std::string>& files,
                                          const std::vector<Shape>& shapes) {
  if (shapes.size() != files.size()) {
    return InvalidArgument("the module takes " + std::to_string(shapes.size()) +
                           " input arrays, got " +
                           std::to_string(files.size()) + " files");
  }
  std::vector<Literal> leaves;
  for (size_t i = 0; i < shapes.size(); ++i) {
    ASSIGN_OR_RETURN(Literal l,
                     ReadNpyFile(files[i], shapes[i].element_type()));
    if (l.shape().dims() != shapes[i].dims()) {
      return InvalidArgument(files[i] + ": " + l.shape().ToString(false) +
                             " does not match the parameter leaf " +
                             shapes[i].ToString(false));
    }
    leaves.push_back(std::move(l));
  }
  return leaves;
}

// DIR/0.npy .. DIR/(n-1).npy for the n leaves.
std::vector<std::string> DirFiles(const fs::path& dir, size_t n) {
  std::vector<std::string> files;
  for (size_t i = 0; i < n; ++i) {
    files.push_back((dir / (std::to_string(i) + ".npy")).string());
  }
  return files;
}

// Every device's input leaves (one list for a single device): random
// (device d: seed + d, as hlo-eval's, also written to D/inputs/[<d>/]),
// from input_dir (DIR/[<d>/]<i>.npy) or from the files.
StatusOr<std::vector<std::vector<Literal>>> Inputs(
    const Request& r, const HloComputation& entry) {
  const int64_t devices = r.compile.options.mesh.size();
  const std::vector<Shape> shapes = LeafShapes(entry);
  std::vector<std::vector<Literal>> out;
  for (int64_t d = 0; d < devices; ++d) {
    const fs::path sub = devices > 1 ? fs::path(std::to_string(d)) : "";
    if (r.seed) {
      out.push_back(RandomLeaves(entry, *r.seed + d));
      RETURN_IF_ERROR(
          WriteLeaves(fs::path(r.output_dir) / "inputs" / sub, out.back()));
    } else if (!r.input_dir.empty()) {
      ASSIGN_OR_RETURN(
          out.emplace_back(),
          ReadLeaves(DirFiles(fs::path(r.input_dir) / sub, shapes.size()),
                     shapes));
    } else if (devices > 1 && !shapes.empty()) {
      return InvalidArgument("a mesh of " + std::to_string(devices) +
                             " devices takes its inputs from --input-dir "
                             "(DIR/<device>/<i>.npy) or --random-inputs");
    } else {
      ASSIGN_OR_RETURN(out.emplace_back(), ReadLeaves(r.input_files, shapes));
    }
  }
  return out;
}

// Runs `exe` on a slice of one chip per device and writes its results.
Outcome RunSlice(const Request& r, const codegen::Compilation& compiled,
                 const std::vector<std::vector<Literal>>& inputs) {
  auto fail = [&](const Status& s) {
    Outcome o = Fail(hloc::kExitBadInput, "bad_input", s.message());
    WriteStopReport(r.output_dir, &o, "run");
    return o;
  };
  tpu::SliceOptions opts;
  opts.chips = static_cast<int>(inputs.size());
  auto slice = tpu::SliceSimulator::Create(compiled.executable, opts);
  if (!slice.ok()) return fail(slice.status());
  for (size_t d = 0; d < inputs.size(); ++d) {
    std::vector<std::vector<uint8_t>> bytes;
    for (const Literal& l : inputs[d]) {
      bytes.emplace_back(l.bytes().begin(), l.bytes().end());
    }
    Status bound = (*slice)->BindInputs(static_cast<int>(d), bytes);
    if (!bound.ok()) return fail(bound);
  }
  auto run = (*slice)->Run();
  if (!run.ok()) return fail(run.status());
  auto report = tpusim::WriteSliceResults(r.output_dir, (*slice)->topology(),
                                          *run, hloc::CompileReport(compiled));
  return Ran(run->report, std::move(report));
}

}  // namespace

Outcome Execute(const Request& r) {
  if (r.output_dir.empty()) {
    return Fail(hloc::kExitUsage, "bad_input", "missing output directory");
  }
  auto module = hloc::LoadModuleText(r.module_text, r.module_origin);
  if (!module.ok()) {
    Outcome o =
        Fail(hloc::kExitBadInput, "bad_input", module.status().message());
    WriteStopReport(r.output_dir, &o, "load");
    return o;
  }
  auto inputs = Inputs(r, *(*module)->entry_computation());
  if (!inputs.ok()) {
    Outcome o =
        Fail(hloc::kExitBadInput, "bad_input", inputs.status().message());
    WriteStopReport(r.output_dir, &o, "load");
    return o;
  }
  auto compiled = hloc::CompileWithFlags(**module, r.compile);
  if (!compiled.ok()) {
    const bool io = compiled.status().code() == StatusCode::kIoError;
    Outcome o =
        Fail(io ? hloc::kExitBadInput : hloc::kExitCompileError,
             io ? "bad_input" : "compile_error", compiled.status().ToString());
    WriteStopReport(r.output_dir, &o, "compile");
    return o;
  }
  if (inputs->size() > 1) return RunSlice(r, *compiled, *inputs);
  const tpu::Executable* exe = &compiled->executable;
  auto run = tpusim::RunWithInputs(*exe, inputs->front());
  if (!run.ok()) {
    Outcome o = Fail(hloc::kExitBadInput, "bad_input", run.status().message());
    WriteStopReport(r.output_dir, &o, "run");
    return o;
  }
  auto report =
      tpusim::WriteResults(r.output_dir, *run, hloc::CompileReport(*compiled));
  return Ran(run->report, std::move(report));
}

}  // namespace trench::hlo_run
