#include "triage/case/target_runner.h"

#include <signal.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/subprocess.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/npy.h"
#include "triage/case/crash_site.h"
#include "triage/case/target_description.h"

namespace trench::hlo_diff {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr char kPassTraceEnv[] = "TRENCH_PASS_TRACE";
// Exit codes of the target tools (compiler/driver/target_driver.h). Repeated
// here on purpose: the contract is the command line, not our headers.
constexpr int kExitOk = 0, kExitBadInput = 1, kExitUsage = 2,
              kExitCompileError = 3, kExitRunCrash = 4, kExitMemoryError = 5,
              kExitTimeout = 6;

std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

Json ReadJsonFile(const fs::path& p) {
  std::error_code ec;
  if (!fs::exists(p, ec)) return Json();
  StatusOr<Json> j = ParseJson(ReadText(p));
  return j.ok() ? *j : Json();
}

// The last JSON object line of a tool's stdout, or null.
Json LastJsonLine(const std::string& out) {
  std::istringstream s(out);
  std::string line;
  Json last;
  while (std::getline(s, line)) {
    StatusOr<Json> j = ParseJson(line);
    if (j.ok() && j->is_object()) last = *j;
  }
  return last;
}

struct PassTrace {
  std::string last_pass;  // From the last "enter" line.
  bool compile_done = false;
};

PassTrace ReadPassTrace(const fs::path& p) {
  PassTrace t;
  std::istringstream s(ReadText(p));
  std::string line;
  while (std::getline(s, line)) {
    if (line == "exit compile") {
      t.compile_done = true;
    } else if (line.rfind("enter ", 0) == 0) {
      t.compile_done = false;
      std::string rest = line.substr(6);
      t.last_pass = rest.substr(0, rest.find(' '));
    }
  }
  return t;
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// Fresh work directory with module.hlo and inputs/<i>.npy.
Status PrepareWork(const Case& c, const fs::path& work) {
  std::error_code ec;
  for (const char* sub : {"out", "inputs", "prog.tpux", "pass_trace.txt"}) {
    fs::remove_all(work / sub, ec);
  }
  fs::create_directories(work / "inputs", ec);
  if (ec) return IoError(work.string() + ": cannot create: " + ec.message());
  {
    std::ofstream m(work / "module.hlo", std::ios::binary | std::ios::trunc);
    m << c.module_text;
    if (!m) return IoError((work / "module.hlo").string() + ": cannot write");
  }
  // An SPMD case's inputs are device-major: device d's in inputs/<d>/.
  const int64_t devices = c.mesh.size();
  const size_t per_device = c.inputs.size() / std::max<int64_t>(devices, 1);
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    fs::path dir = work / "inputs";
    size_t index = i;
    if (devices > 1) {
      dir /= std::to_string(i / per_device);
      index = i % per_device;
      fs::create_directories(dir, ec);
    }
    RETURN_IF_ERROR(WriteNpyFile(
        (dir / (std::to_string(index) + ".npy")).string(), c.inputs[i]));
  }
  if (devices > 1 && c.inputs.empty()) {
    for (int64_t d = 0; d < devices; ++d) {
      fs::create_directories(work / "inputs" / std::to_string(d), ec);
    }
  }
  return Status();
}

// The case's compile flags, with the mesh of an SPMD case.
std::vector<std::string> CaseFlags(const Case& c) {
  std::vector<std::string> flags = c.options.ToFlags();
  if (c.mesh.size() > 1) flags.push_back("--mesh=" + MeshText(c.mesh));
  return flags;
}

// Reads out/<i>.npy for the array leaves of the root's shape; for an
// SPMD case out/<d>/<i>.npy, device-major.
void ReadOutputs(const Shape& root, const fs::path& out, int64_t devices,
                 TargetResult* r) {
  std::vector<Shape> leaves;
  ForEachLeafShape(root, [&](const Shape& s) {
    if (s.IsArray()) leaves.push_back(s);
  });
  for (size_t k = 0; k < leaves.size() * devices; ++k) {
    const size_t i = k % leaves.size();
    const fs::path p =
        (devices > 1 ? out / std::to_string(k / leaves.size()) : out) /
        (std::to_string(i) + ".npy");
    StatusOr<Literal> lit = ReadNpyFile(p.string());
    if (!lit.ok()) {
      r->output_error = lit.status().message();
      return;
    }
    if (leaves[i].element_type() == PrimitiveType::BF16 &&
        lit->element_type() == PrimitiveType::U16) {
      Literal bf(Shape(PrimitiveType::BF16, lit->shape().dims()));
      std::memcpy(bf.mutable_bytes().data(), lit->bytes().data(),
                  lit->bytes().size());
      *lit = std::move(bf);
    }
    r->outputs.push_back(std::move(*lit));
  }
}

// Sets status/message for a step from a finished process.
void Classify(const ProcessResult& p, bool compile_step, TargetResult* r) {
  r->exit_code = p.timed_out || p.signal ? -1 : p.exit_code;
  r->signal = p.timed_out ? 0 : p.signal;
  r->stderr_text = p.err;
  // The crash site (the failing check, the top frames) when stderr has
  // one, else its last line.
  const std::string line = CrashSiteLine(p.err, p.err_last_line);
  r->message = line;
  const TargetStatus crash =
      compile_step ? TargetStatus::kCompileCrash : TargetStatus::kRunCrash;
  if (p.timed_out) {
    r->status = TargetStatus::kTimeout;
    r->message = "killed after the wall-clock limit";
  } else if (p.signal != 0) {
    r->status = crash;
    r->message =
        "killed by " + SignalName(p.signal) + (line.empty() ? "" : ": " + line);
  } else if (p.exit_code == kExitOk) {
    r->status = TargetStatus::kOk;
  } else if (p.exit_code == kExitCompileError) {
    r->status = IsCleanCompileRefusal(p.err_last_line)
                    ? TargetStatus::kCompileError
                    : TargetStatus::kCompileCrash;
  } else if (p.exit_code == kExitBadInput || p.exit_code == kExitUsage) {
    // A program or inputs that tpusim rejects came from the compiler.
    r->status = compile_step ? TargetStatus::kBadInput : crash;
  } else if (p.exit_code == kExitRunCrash) {
    r->status = TargetStatus::kRunCrash;
  } else if (p.exit_code == kExitMemoryError) {
    r->status = TargetStatus::kMemoryError;
  } else if (p.exit_code == kExitTimeout) {
    r->status = TargetStatus::kTimeout;
  } else {
    r->status = crash;
    r->message = "undocumented exit code " + std::to_string(p.exit_code) +
                 (line.empty() ? "" : ": " + line);
  }
}

constexpr char kExecFailure[] = "hlo-diff: cannot execute the target program";

// A child that could not exec (subprocess.cc exits 127 with kExecFailure).
Status CheckExecuted(const ProcessResult& p) {
  if (p.exit_code == 127 && p.err.find(kExecFailure) != std::string::npos) {
    return FailedPrecondition(p.err_last_line);
  }
  return Status();
}

// A run killed at its deadline while it mostly waited for a CPU (see
// kMaxTimeoutStretch): the machine was busy, which says nothing about the
// program. kResourceExhausted: the caller runs it again later, never
// records a timeout verdict from it.
Status CheckNotStarved(const ProcessResult& p) {
  if (!p.starved) return Status();
  return Status(StatusCode::kResourceExhausted,
                "the target was starved of CPU for " +
                    std::to_string(static_cast<int>(p.seconds)) +
                    " s (the machine is busy): no verdict, run it again");
}

double Remaining(const TargetSpec& spec, Clock::time_point start) {
  if (spec.timeout_seconds <= 0) return 0;
  double left = spec.timeout_seconds -
                std::chrono::duration<double>(Clock::now() - start).count();
  return left > 0.001 ? left : 0.001;
}

// SignalName's inverse (0 when `name` names no signal).
int SignalNumber(const std::string& name) {
  for (int sig = 1; sig < NSIG; ++sig) {
    if (SignalName(sig) == name) return sig;
  }
  return 0;
}

}  // namespace

const char* TargetStatusName(TargetStatus s) {
  switch (s) {
    case TargetStatus::kOk:
      return "ok";
    case TargetStatus::kCompileError:
      return "compile_error";
    case TargetStatus::kCompileCrash:
      return "compile_crash";
    case TargetStatus::kRunCrash:
      return "run_crash";
    case TargetStatus::kMemoryError:
      return "memory_error";
    case TargetStatus::kTimeout:
      return "timeout";
    case TargetStatus::kBadInput:
      return "bad_input";
  }
  return "unknown";
}

StatusOr<TargetStatus> ParseTargetStatus(std::string_view name) {
  for (TargetStatus s : {TargetStatus::kOk, TargetStatus::kCompileError,
                         TargetStatus::kCompileCrash, TargetStatus::kRunCrash,
                         TargetStatus::kMemoryError, TargetStatus::kTimeout,
                         TargetStatus::kBadInput}) {
    if (name == TargetStatusName(s)) return s;
  }
  return InvalidArgument("unknown target status '" + std::string(name) + "'");
}

bool IsCleanCompileRefusal(const std::string& m) {
  for (const char* clean :
       {"cannot compile", "UNIMPLEMENTED", "RESOURCE_EXHAUSTED", "NOT_FOUND",
        "INVALID_ARGUMENT"}) {
    if (m.find(clean) != std::string::npos) return true;
  }
  return false;
}

Json TargetResult::ToJson() const {
  Json j = Json::MakeObject();
  j["status"] = TargetStatusName(status);
  j["stage"] = stage;
  j["exit_code"] = exit_code;
  j["signal"] = signal ? Json(SignalName(signal)) : Json();
  j["message"] = message;
  j["last_pass"] = last_pass.empty() ? Json() : Json(last_pass);
  if (!output_error.empty()) j["output_error"] = output_error;
  j["seconds"] = seconds;
  j["report"] = report;
  return j;
}

StatusOr<TargetResult> TargetResult::FromJson(const Json& j) {
  if (!j.is_object()) return InvalidArgument("target: expected an object");
  auto member = [&](const char* key) -> StatusOr<const Json*> {
    const Json* v = j.Find(key);
    if (v == nullptr) {
      return InvalidArgument(std::string("target.") + key + ": missing");
    }
    return v;
  };
  auto text = [&](const char* key, bool nullable) -> StatusOr<std::string> {
    ASSIGN_OR_RETURN(const Json* v, member(key));
    if (nullable && v->is_null()) return std::string();
    StatusOr<std::string> s = v->GetString();
    if (!s.ok()) {
      return InvalidArgument(std::string("target.") + key + ": " +
                             s.status().message());
    }
    return s;
  };
  TargetResult r;
  ASSIGN_OR_RETURN(std::string status, text("status", false));
  ASSIGN_OR_RETURN(r.status, ParseTargetStatus(status));
  ASSIGN_OR_RETURN(r.stage, text("stage", false));
  ASSIGN_OR_RETURN(const Json* exit_code, member("exit_code"));
  StatusOr<int64_t> code = exit_code->GetInt64();
  if (!code.ok()) return InvalidArgument("target.exit_code: expected integer");
  r.exit_code = static_cast<int>(*code);
  ASSIGN_OR_RETURN(std::string signal, text("signal", true));
  r.signal = signal.empty() ? 0 : SignalNumber(signal);
  ASSIGN_OR_RETURN(r.message, text("message", false));
  ASSIGN_OR_RETURN(r.last_pass, text("last_pass", true));
  if (j.Find("output_error") != nullptr) {
    ASSIGN_OR_RETURN(r.output_error, text("output_error", false));
  }
  ASSIGN_OR_RETURN(const Json* seconds, member("seconds"));
  StatusOr<double> sec = seconds->GetDouble();
  if (!sec.ok()) return InvalidArgument("target.seconds: expected a number");
  r.seconds = *sec;
  ASSIGN_OR_RETURN(const Json* report, member("report"));
  r.report = *report;
  return r;
}

TargetSpec TargetSpec::FromBinaryDir(const std::string& dir, TargetMode mode) {
  TargetSpec s;
  s.mode = mode;
  s.hloc = (fs::path(dir) / "hloc").string();
  s.tpusim = (fs::path(dir) / "tpusim").string();
  s.hlo_run = (fs::path(dir) / "hlo-run").string();
  return s;
}

struct TargetRunner::Worker {
  LineProcess process;
  std::string trace_dir;  // Holds the worker's pass_trace.txt.
  ~Worker() {
    process.Kill();
    std::error_code ec;
    if (!trace_dir.empty()) fs::remove_all(trace_dir, ec);
  }
};

TargetRunner::TargetRunner(TargetSpec spec) : spec_(std::move(spec)) {}
TargetRunner::~TargetRunner() = default;

std::string MeshText(const DeviceMesh& mesh) {
  return std::to_string(mesh.replicas) + "x" + std::to_string(mesh.partitions);
}

const TargetDescription::Slice& TargetRunner::TargetSlice() {
  if (slice_) return *slice_;
  slice_ = TargetDescription::Slice();
  if (spec_.hloc.empty()) return *slice_;
  ProcessSpec p;
  p.argv = {spec_.hloc, "--capabilities"};
  p.timeout_seconds = spec_.timeout_seconds;
  p.capture_bytes = kMaxDescriptionBytes;
  StatusOr<ProcessResult> r = RunProcess(p);
  if (!r.ok() || r->signal != 0 || r->timed_out || r->exit_code != 0) {
    return *slice_;
  }
  StatusOr<TargetDescription> d =
      ParseTargetDescriptionText(r->out, "hloc --capabilities");
  if (d.ok()) slice_ = d->slice;
  return *slice_;
}

StatusOr<TargetResult> TargetRunner::Run(const Case& c,
                                         const std::string& work_dir) {
  // A module that does not parse still goes to the target (which judges
  // it); no outputs are read then.
  auto m = ParseCaseModule(c.module_text, "module.hlo");
  return RunWithRoot(
      c,
      m.ok() ? (*m)->entry_computation()->root_instruction()->shape()
             : Shape::Tuple({}),
      work_dir);
}

StatusOr<TargetResult> TargetRunner::Run(const Case& c, const HloModule& module,
                                         const std::string& work_dir) {
  return RunWithRoot(c, module.entry_computation()->root_instruction()->shape(),
                     work_dir);
}

StatusOr<TargetResult> TargetRunner::RunWithRoot(const Case& c,
                                                 const Shape& root,
                                                 const std::string& work_dir) {
  const auto start = Clock::now();
  RETURN_IF_ERROR(PrepareWork(c, work_dir));
  StatusOr<TargetResult> r =
      spec_.mode == TargetMode::kHlocTpusim ? RunTwoStep(c, work_dir)
      : spec_.mode == TargetMode::kHloRun   ? RunOneShot(c, work_dir)
                                            : RunServe(c, work_dir);
  if (r.ok()) {
    r->seconds = std::chrono::duration<double>(Clock::now() - start).count();
    if (r->status == TargetStatus::kOk) {
      ReadOutputs(root, fs::path(work_dir) / "out", c.mesh.size(), &*r);
    }
  }
  return r;
}

StatusOr<TargetResult> TargetRunner::RunTwoStep(const Case& c,
                                                const std::string& work_dir) {
  const auto start = Clock::now();
  const fs::path work(work_dir);
  const std::string trace = (work / "pass_trace.txt").string();
  TargetResult r;
  r.report = Json::MakeObject();
  ProcessSpec compile;
  compile.argv = {spec_.hloc, "compile", (work / "module.hlo").string(), "-o",
                  (work / "prog.tpux").string()};
  for (const std::string& f : CaseFlags(c)) compile.argv.push_back(f);
  for (const std::string& f : spec_.extra_compile_flags) {
    compile.argv.push_back(f);
  }
  compile.env = {{kPassTraceEnv, trace}};
  compile.timeout_seconds = Remaining(spec_, start);
  compile.capture_bytes = spec_.capture_bytes;
  ASSIGN_OR_RETURN(ProcessResult p, RunProcess(compile));
  RETURN_IF_ERROR(CheckExecuted(p));
  RETURN_IF_ERROR(CheckNotStarved(p));
  r.stage = "compile";
  Classify(p, /*compile_step=*/true, &r);
  r.report["compile"] = LastJsonLine(p.out);
  r.last_pass = ReadPassTrace(trace).last_pass;
  if (r.status != TargetStatus::kOk) return r;

  ProcessSpec run;
  run.argv = {spec_.tpusim,
              "run",
              (work / "prog.tpux").string(),
              "--inputs",
              (work / "inputs").string(),
              "--outputs",
              (work / "out").string()};
  if (c.mesh.size() > 1) {
    run.argv.push_back("--chips");
    run.argv.push_back(std::to_string(c.mesh.size()));
  }
  run.timeout_seconds = Remaining(spec_, start);
  run.capture_bytes = spec_.capture_bytes;
  ASSIGN_OR_RETURN(p, RunProcess(run));
  RETURN_IF_ERROR(CheckExecuted(p));
  RETURN_IF_ERROR(CheckNotStarved(p));
  r.stage = "run";
  Classify(p, /*compile_step=*/false, &r);
  r.report["run"] = ReadJsonFile(work / "out" / "report.json");
  const Json* msg = r.report["run"].Find("message");
  if (r.status != TargetStatus::kOk && msg && msg->is_string() &&
      !msg->string_value().empty() && p.signal == 0 && !p.timed_out) {
    r.message = msg->string_value();
  }
  return r;
}

StatusOr<TargetResult> TargetRunner::RunOneShot(const Case& c,
                                                const std::string& work_dir) {
  const fs::path work(work_dir);
  const std::string trace = (work / "pass_trace.txt").string();
  ProcessSpec spec;
  spec.argv = {spec_.hlo_run, (work / "module.hlo").string()};
  if (c.mesh.size() > 1) {
    spec.argv.push_back("--input-dir");
    spec.argv.push_back((work / "inputs").string());
  }
  for (size_t i = 0; i < c.inputs.size() && c.mesh.size() == 1; ++i) {
    spec.argv.push_back("--input");
    spec.argv.push_back(
        (work / "inputs" / (std::to_string(i) + ".npy")).string());
  }
  spec.argv.push_back("--output-dir");
  spec.argv.push_back((work / "out").string());
  for (const std::string& f : CaseFlags(c)) spec.argv.push_back(f);
  for (const std::string& f : spec_.extra_compile_flags) {
    spec.argv.push_back(f);
  }
  spec.env = {{kPassTraceEnv, trace}};
  spec.timeout_seconds = spec_.timeout_seconds;
  spec.capture_bytes = spec_.capture_bytes;
  ASSIGN_OR_RETURN(ProcessResult p, RunProcess(spec));
  RETURN_IF_ERROR(CheckExecuted(p));
  RETURN_IF_ERROR(CheckNotStarved(p));
  const PassTrace t = ReadPassTrace(trace);
  TargetResult r;
  r.report = ReadJsonFile(work / "out" / "report.json");
  const Json* stage = r.report.Find("stage");
  const bool compile_step =
      stage ? (stage->is_string() && stage->string_value() != "run")
            : !t.compile_done;
  r.stage = compile_step ? "compile" : "run";
  Classify(p, compile_step, &r);
  if (p.exit_code == kExitBadInput && !compile_step) {
    r.status = TargetStatus::kRunCrash;
  }
  r.last_pass = t.last_pass;
  return r;
}

StatusOr<TargetResult> TargetRunner::RunServe(const Case& c,
                                              const std::string& work_dir) {
  const fs::path work(work_dir);
  if (worker_ == nullptr || !worker_->process.Alive()) {
    if (worker_ != nullptr) ++restarts_;
    worker_ = std::make_unique<Worker>();
    char tmpl[] = "/tmp/hlo-diff-worker.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) return IoError("mkdtemp failed");
    worker_->trace_dir = tmpl;
    ProcessSpec spec;
    spec.argv = {spec_.hlo_run, "--serve"};
    for (const std::string& f : spec_.extra_compile_flags) {
      spec.argv.push_back(f);
    }
    spec.env = {{kPassTraceEnv, worker_->trace_dir + "/pass_trace.txt"}};
    spec.capture_bytes = spec_.capture_bytes;
    RETURN_IF_ERROR(worker_->process.Start(spec));
  }
  const fs::path trace = fs::path(worker_->trace_dir) / "pass_trace.txt";
  { std::ofstream truncate(trace, std::ios::trunc); }
  Json req = Json::MakeObject();
  req["id"] = ++requests_;
  req["module"] = c.module_text;
  if (c.mesh.size() > 1) {
    req["input_dir"] = (work / "inputs").string();
    req["mesh"] = MeshText(c.mesh);
  } else {
    Json::Array inputs;
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      inputs.emplace_back(
          (work / "inputs" / (std::to_string(i) + ".npy")).string());
    }
    req["inputs"] = Json(std::move(inputs));
  }
  req["output_dir"] = (work / "out").string();
  if (!c.options.disable_passes.empty()) {
    Json::Array passes;
    for (const std::string& p : c.options.disable_passes)
      passes.emplace_back(p);
    req["disable_passes"] = Json(std::move(passes));
  }
  if (c.options.pass_limit) req["pass_limit"] = *c.options.pass_limit;
  if (c.options.rewrite_limit) req["rewrite_limit"] = *c.options.rewrite_limit;
  if (!c.options.taps.empty()) req["taps"] = c.options.taps;

  TargetResult r;
  StatusOr<std::string> answer =
      worker_->process.Request(req.Dump(), spec_.timeout_seconds);
  const PassTrace t = ReadPassTrace(trace);
  r.last_pass = t.last_pass;
  r.stage = t.compile_done ? "run" : "compile";
  if (!answer.ok()) {
    // The worker died or hung; it is gone and restarts on the next case.
    ProcessResult p = worker_->process.last_exit();
    RETURN_IF_ERROR(CheckExecuted(p));
    RETURN_IF_ERROR(CheckNotStarved(p));
    if (p.signal == 0 && !p.timed_out && p.exit_code == kExitOk) {
      p.exit_code = 255;  // Ended without answering: not a clean exit.
    }
    Classify(p, !t.compile_done, &r);
    return r;
  }
  StatusOr<Json> a = ParseJson(*answer);
  if (!a.ok() || !a->is_object()) {
    r.status =
        t.compile_done ? TargetStatus::kRunCrash : TargetStatus::kCompileCrash;
    r.message = "unparseable answer from the worker: " + answer->substr(0, 200);
    worker_->process.Kill();
    return r;
  }
  auto str = [&](const char* key) {
    const Json* v = a->Find(key);
    return v && v->is_string() ? v->string_value() : std::string();
  };
  const std::string status = str("status");
  r.message = str("message");
  if (const Json* e = a->Find("exit_code"); e && e->is_integer()) {
    r.exit_code = static_cast<int>(e->int64_value());
  }
  if (const Json* rep = a->Find("report")) r.report = *rep;
  if (const Json* cov = a->Find("coverage"); cov && cov->is_object()) {
    if (const Json* hit = cov->Find("hit"); hit && hit->is_string()) {
      r.coverage_hits = hit->string_value();
    }
  }
  const Json* stage = r.report.Find("stage");
  if (stage && stage->is_string()) r.stage = stage->string_value();
  if (status == "ok") {
    r.status = TargetStatus::kOk;
  } else if (status == "compile_error") {
    r.status = IsCleanCompileRefusal(r.message) ? TargetStatus::kCompileError
                                                : TargetStatus::kCompileCrash;
  } else if (status == "run_crash") {
    r.status = TargetStatus::kRunCrash;
  } else if (status == "memory_error") {
    r.status = TargetStatus::kMemoryError;
  } else if (status == "timeout") {
    r.status = TargetStatus::kTimeout;
  } else if (status == "bad_input") {
    r.status =
        r.stage == "run" ? TargetStatus::kRunCrash : TargetStatus::kBadInput;
  } else {
    r.status = TargetStatus::kCompileCrash;
    r.message = "unknown worker status '" + status + "': " + r.message;
  }
  return r;
}

}  // namespace trench::hlo_diff
