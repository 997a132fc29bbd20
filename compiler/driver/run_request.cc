#include "compiler/driver/run_request.h"

#include <filesystem>
#include <fstream>

#include "compiler/ir/npy.h"
#include "compiler/ir/random_inputs.h"
#include "compiler/driver/run_io.h"

namespace trench::hlo_run {
namespace {

namespace fs = std::filesystem;

Outcome Fail(int code, std::string status, std::string message) {
  return Outcome{code, std::move(status), std::move(message), Json()};
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

StatusOr<std::vector<Literal>> Inputs(const Request& r,
                                      const HloComputation& entry) {
  std::vector<Literal> leaves;
  if (r.seed) {
    for (Literal& arg : RandomArguments(entry, *r.seed)) {
      for (const Literal* leaf : arg.Leaves()) {
        if (leaf->shape().IsArray()) leaves.push_back(*leaf);
      }
    }
    fs::path dir = fs::path(r.output_dir) / "inputs";
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return IoError(dir.string() + ": cannot create: " + ec.message());
    for (size_t i = 0; i < leaves.size(); ++i) {
      RETURN_IF_ERROR(WriteNpyFile(
          (dir / (std::to_string(i) + ".npy")).string(), leaves[i]));
    }
    return leaves;
  }
  std::vector<Shape> shapes;
  for (const HloInstruction* p : entry.parameters()) {
    ForEachLeafShape(p->shape(), [&](const Shape& s) {
      if (s.IsArray()) shapes.push_back(s);
    });
  }
  if (shapes.size() != r.input_files.size()) {
    return InvalidArgument("the module takes " + std::to_string(shapes.size()) +
                           " input arrays, got " +
                           std::to_string(r.input_files.size()) + " files");
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    ASSIGN_OR_RETURN(Literal l,
                     ReadNpyFile(r.input_files[i], shapes[i].element_type()));
    if (l.shape().dims() != shapes[i].dims()) {
      return InvalidArgument(
          r.input_files[i] + ": " + l.shape().ToString(false) +
          " does not match the parameter leaf " + shapes[i].ToString(false));
    }
    leaves.push_back(std::move(l));
  }
  return leaves;
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
    Outcome o = Fail(io ? hloc::kExitBadInput : hloc::kExitCompileError,
                     io ? "bad_input" : "compile_error",
                     compiled.status().ToString());
    WriteStopReport(r.output_dir, &o, "compile");
    return o;
  }
  const tpu::Executable* exe = &compiled->executable;
  auto run = tpusim::RunWithInputs(*exe, *inputs);
  if (!run.ok()) {
    Outcome o = Fail(hloc::kExitBadInput, "bad_input", run.status().message());
    WriteStopReport(r.output_dir, &o, "run");
    return o;
  }
  auto report = tpusim::WriteResults(r.output_dir, *run, hloc::CompileReport(*compiled));
  if (!report.ok()) {
    return Fail(hloc::kExitBadInput, "bad_input", report.status().message());
  }
  Outcome o;
  o.exit_code = tpusim::ExitCode(run->report.status);
  o.status = tpusim::StatusName(run->report.status);
  o.message = run->report.message;
  o.report = std::move(report).value();
  return o;
}

}  // namespace trench::hlo_run
