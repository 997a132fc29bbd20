#include "compiler/driver/target_driver.h"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/codegen/emitters.h"
#include "compiler/codegen/streaming.h"
#include "compiler/driver/coverage.h"
#include "compiler/driver/module_options.h"
#include "compiler/ir/collective_groups.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer.h"
#include "compiler/ir/verifier.h"
#include "compiler/passes/pass_registry.h"
#include "tpu/assembler.h"
#include "tpu/topology.h"

namespace trench::hloc {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

Status WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) return IoError(path.string() + ": cannot write");
  return Status::Ok();
}

}  // namespace

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(path + ": cannot open for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return IoError(path + ": read failed");
  return ss.str();
}

StatusOr<std::unique_ptr<HloModule>> LoadModuleText(std::string_view text,
                                                    const std::string& origin) {
  auto m = ParseHloModule(text);
  if (!m.ok()) return InvalidArgument(origin + ":" + m.status().message());
  Status v = VerifyModule(**m);
  if (!v.ok()) return InvalidArgument(origin + ": " + v.message());
  return m;
}

StatusOr<DeviceMesh> ParseMesh(const std::string& value) {
  DeviceMesh mesh;
  const size_t x = value.find('x');
  auto part = [&](std::string_view text, int64_t* n) {
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), *n);
    return ec == std::errc() && p == text.data() + text.size() && *n > 0;
  };
  const std::string_view v = value;
  if (x == std::string::npos || !part(v.substr(0, x), &mesh.replicas) ||
      !part(v.substr(x + 1), &mesh.partitions)) {
    return InvalidArgument("--mesh: expected RxP (e.g. 2x2), got '" + value +
                           "'");
  }
  if (mesh.size() > tpu::kMaxSliceChips) {
    return InvalidArgument("--mesh: " + value + " has " +
                           std::to_string(mesh.size()) +
                           " devices; the slice holds 1.." +
                           std::to_string(tpu::kMaxSliceChips) + " chips");
  }
  return mesh;
}

StatusOr<bool> ApplyCompileFlag(const std::string& name,
                                const std::string& value, CompileFlags* flags) {
  auto number = [&]() -> StatusOr<int64_t> {
    int64_t n = 0;
    auto [p, ec] =
        std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || p != value.data() + value.size() || n < 0) {
      return InvalidArgument("--" + name +
                             ": expected a non-negative integer, got '" +
                             value + "'");
    }
    return n;
  };
  codegen::CompileOptions& o = flags->options;
  if (name == "disable-passes") {
    o.disabled_passes = SplitList(value);
    for (const std::string& p : o.disabled_passes) {
      if (FindPass(p) == nullptr && p != "buffer-assignment") {
        RETURN_IF_ERROR(ParsePassList(p).status());
      }
    }
  } else if (name == "pass-limit") {
    ASSIGN_OR_RETURN(o.pass_limit, number());
  } else if (name == "rewrite-limit") {
    ASSIGN_OR_RETURN(o.rewrite_limit, number());
  } else if (name == "taps") {
    o.taps_all = value == "all";
    o.taps = o.taps_all ? std::vector<std::string>{} : SplitList(value);
    if (!o.taps_all && o.taps.empty()) {
      return InvalidArgument("--taps: expected 'all' or instruction names");
    }
  } else if (name == "mesh") {
    ASSIGN_OR_RETURN(o.mesh, ParseMesh(value));
  } else if (name == "dump-dir") {
    if (value.empty()) return InvalidArgument("--dump-dir: empty path");
    flags->dump_dir = value;
  } else {
    return false;
  }
  return true;
}

namespace {

// THE list of compile flags: --help and --capabilities come from it.
constexpr struct {
  const char* name;
  const char* value_name;
  const char* help;
} kCompileFlags[] = {
    {"disable-passes", "a,b",
     "passes not to run (names as in --capabilities \"passes\")"},
    {"pass-limit", "N", "run only the first N pass executions"},
    {"rewrite-limit", "N", "allow only the first N rewrites"},
    {"taps", "all|name,...", "expose instruction values as tap outputs"},
    {"mesh", "RxP",
     "compile for an SPMD mesh of R replicas x P partitions: a slice of\n"
     "R*P chips (1..8), chip c being device c (default 1x1)"},
    {"dump-dir", "D",
     "write module.hlo, passes/NN.<pass>.hlo, optimized.hlo,\nprog.tpux, "
     "kernels/*.s, rewrites.log, compile.json to D"},
};

}  // namespace

void RegisterCompileFlags(FlagParser* p, CompileFlags* flags) {
  p->Group("compile flags");
  for (const auto& f : kCompileFlags) {
    p->Custom(f.name, f.value_name, f.help,
              [flags, name = std::string(f.name)](const std::string& v) {
                return ApplyCompileFlag(name, v, flags).status();
              });
  }
  p->Group("");
}

namespace {

// The globs of a registry's "sources" column (space-separated) as a JSON
// array.
Json SourceGlobs(std::string_view sources) {
  Json out = Json::MakeArray();
  std::istringstream words{std::string(sources)};
  for (std::string glob; words >> glob;) out.push_back(glob);
  return out;
}

}  // namespace

Json CoverageFlavour() {
  Json c = Json::MakeObject();
  c["kind"] = "sancov-inline-8bit-counters-pc-table";
  // How to build the flavour: the same CMake build with this option and
  // clang (SanitizerCoverage is clang's).
  c["cmake_flags"] = Json::MakeStringArray(
      {"-DTRENCH_TARGET_COVERAGE=ON", "-DCMAKE_CXX_COMPILER=clang++"});
  c["instrumented"] = coverage::Available();
  c["points"] = static_cast<int64_t>(coverage::Size());
  c["pcs_command"] = Json::MakeStringArray({"hlo-run", "--coverage-pcs"});
  c["serve_answer_key"] = "coverage";
  return c;
}

Json Capabilities() {
  Json j = Json::MakeObject();
  j["tool"] = "hloc";
  j["version"] = kVersion;
  j["tpux_version"] = tpu::kTpuxVersion;
  j["ops"] = Json::MakeStringArray(codegen::SupportedOps());
  // The slice the code runs on (tpu/slice.h): up to kMaxSliceChips chips,
  // a program compiled with --mesh RxP running on R*P of them; the
  // collectives among the supported ops are what a program may exchange
  // between chips.
  Json slice = Json::MakeObject();
  slice["chips"] = tpu::kMaxSliceChips;
  slice["topology"] =
      "ring of N chips; 2x2 torus for 4, 2x4 torus for 8 (tpu/topology.h)";
  slice["mesh_flag"] = "--mesh";
  std::vector<std::string> collectives;
  for (const std::string& op : codegen::SupportedOps()) {
    std::optional<HloOpcode> code = OpcodeFromName(op);
    if (code && IsDeviceOp(*code)) collectives.push_back(op);
  }
  slice["collectives"] = Json::MakeStringArray(collectives);
  j["slice"] = std::move(slice);
  j["dtypes"] = Json::MakeStringArray(codegen::SupportedDtypes());
  Json flags = Json::MakeArray();
  for (const auto& f : kCompileFlags) {
    flags.push_back(std::string("--") + f.name);
  }
  j["flags"] = std::move(flags);
  Json passes = Json::MakeArray();
  for (const PassInfo& p : RegisteredPasses()) {
    Json e = Json::MakeObject();
    e["name"] = std::string(p.name);
    e["description"] = std::string(p.description);
    e["required"] = p.stage == PassStage::kRequired;
    e["sources"] = SourceGlobs(p.sources);
    passes.push_back(std::move(e));
  }
  j["passes"] = std::move(passes);
  Json emitters = Json::MakeArray();
  for (const codegen::EmitterInfo& info : codegen::RegisteredEmitters()) {
    Json e = Json::MakeObject();
    e["name"] = std::string(info.name);
    e["ops"] = Json::MakeStringArray(info.ops);
    e["sources"] = SourceGlobs(info.sources);
    emitters.push_back(std::move(e));
  }
  j["emitters"] = std::move(emitters);
  j["taps"] = true;
  j["serve"] = true;
  j["coverage"] = CoverageFlavour();
  // Code that runs only on large arrays (streaming.h).
  Json large = Json::MakeArray();
  auto group = [&](int64_t from, const auto& globs, Json attributes) {
    Json g = Json::MakeObject();
    g["from_elements"] = from;
    if (!attributes.is_null()) g["frontend_attributes"] = std::move(attributes);
    Json list = Json::MakeArray();
    for (const char* glob : globs) list.push_back(glob);
    g["sources"] = std::move(list);
    large.push_back(std::move(g));
  };
  group(codegen::kStreamedFromElements, codegen::kStreamLoopSources, Json());
  // The streamed emitters run when the operands outgrow VMEM: with the
  // smallest VMEM a module may ask for (module_options.h), from an f32
  // array of that size, which the simulator runs in seconds rather than
  // the minutes of a 16 MiB one.
  Json small = Json::MakeObject();
  small[kVmemBytesAttribute] = std::to_string(kMinVmemBytes);
  group(kMinVmemBytes / 4, codegen::kVmemOverflowSources, std::move(small));
  j["large_arrays"] = std::move(large);
  Json codes = Json::MakeObject();
  codes["ok"] = kExitOk;
  codes["bad_input"] = kExitBadInput;
  codes["usage"] = kExitUsage;
  codes["compile_error"] = kExitCompileError;
  codes["run_crash"] = kExitRunCrash;
  codes["memory_error"] = kExitMemoryError;
  codes["timeout"] = kExitTimeout;
  j["exit_codes"] = std::move(codes);
  return j;
}

namespace {

int pass_trace_fd = -1;

// Appends "enter <pass> <execution>\n" (or "exit compile\n" for execution
// -1) with one write(2), so the line is in the file even if the pass then
// crashes the process.
void TracePassEnter(std::string_view pass, int64_t execution) {
  if (pass_trace_fd < 0) return;
  std::string line = execution < 0 ? std::string("exit compile\n")
                                   : "enter " + std::string(pass) + " " +
                                         std::to_string(execution) + "\n";
  ssize_t n = ::write(pass_trace_fd, line.data(), line.size());
  (void)n;  // Best effort: tracing never fails a compile.
}

}  // namespace

void InstallPassTraceFromEnv() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  const char* path = std::getenv(kPassTraceEnv);
  if (path == nullptr || *path == '\0') return;
  pass_trace_fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (pass_trace_fd >= 0) SetPassEnterHook(&TracePassEnter);
}

StatusOr<codegen::Compilation> CompileWithFlags(const HloModule& module,
                                                const CompileFlags& flags) {
  InstallPassTraceFromEnv();
  codegen::CompileOptions options = flags.options;
  RETURN_IF_ERROR(ApplyModuleOptions(module, &options));
  if (!flags.dump_dir.empty()) {
    options.pass_dump_dir = (fs::path(flags.dump_dir) / "passes").string();
  }
  ASSIGN_OR_RETURN(codegen::Compilation c, codegen::Compile(module, options));
  TracePassEnter("", -1);  // "exit compile": the compiler finished.
  if (!flags.dump_dir.empty()) {
    RETURN_IF_ERROR(DumpArtifacts(flags.dump_dir, module, c, flags.options));
  }
  return c;
}

Json CompileReport(const codegen::Compilation& c) {
  Json j = Json::MakeObject();
  j["status"] = "ok";
  Json passes = Json::MakeArray();
  for (const PassRunStats& st : c.passes) {
    Json p = Json::MakeObject();
    p["pass"] = st.pass;
    p["execution"] = st.execution;
    p["skipped"] = st.skipped;
    p["required"] = st.required;
    p["changed"] = st.changed;
    p["rewrites"] = st.rewrites;
    p["seconds"] = st.seconds;
    passes.push_back(std::move(p));
  }
  j["passes"] = std::move(passes);
  j["pass_executions"] = c.pass_executions;
  j["rewrites_allowed"] = c.rewrites_allowed;
  j["rewrite_decisions"] = static_cast<int64_t>(c.decisions.size());
  const RewriteDecision* last = nullptr;
  for (const RewriteDecision& d : c.decisions) {
    if (d.allowed) last = &d;
  }
  if (last != nullptr) {
    Json l = Json::MakeObject();
    l["pass"] = last->pass;
    l["site"] = last->site;
    l["instruction"] = last->instruction;
    l["index"] = last->index;
    j["last_rewrite"] = std::move(l);
  } else {
    j["last_rewrite"] = Json();
  }
  j["buffer_assignment"] = c.buffer_assignment;
  j["kernels"] = static_cast<int64_t>(c.executable.kernels.size());
  j["buffers"] = static_cast<int64_t>(c.executable.buffers.size());
  int64_t hbm = 0;
  for (const tpu::BufferDecl& b : c.executable.buffers) hbm += b.bytes;
  j["hbm_bytes"] = hbm;
  Json gone = Json::MakeArray();
  for (const std::string& t : c.taps_unavailable) gone.push_back(t);
  j["taps_unavailable"] = std::move(gone);
  return j;
}

Json CompileErrorReport(const std::string& message) {
  Json j = Json::MakeObject();
  j["status"] = "compile_error";
  j["message"] = message;
  return j;
}

Status DumpArtifacts(const std::string& dir, const HloModule& module,
                     const codegen::Compilation& c,
                     const codegen::CompileOptions& options) {
  std::error_code ec;
  fs::create_directories(fs::path(dir) / "kernels", ec);
  if (ec) return IoError(dir + ": cannot create: " + ec.message());
  RETURN_IF_ERROR(
      WriteText(fs::path(dir) / "module.hlo", PrintHloModule(module)));
  RETURN_IF_ERROR(
      WriteText(fs::path(dir) / "optimized.hlo", PrintHloModule(*c.optimized)));
  RETURN_IF_ERROR(WriteText(fs::path(dir) / "prog.tpux",
                            tpu::WriteExecutable(c.executable)));
  for (const tpu::Kernel& k : c.executable.kernels) {
    RETURN_IF_ERROR(WriteText(fs::path(dir) / "kernels" / (k.name + ".s"),
                              tpu::PrintKernel(k)));
  }
  std::string log;
  for (const RewriteDecision& d : c.decisions) {
    log += std::to_string(d.index) + (d.allowed ? " allowed " : " denied ") +
           d.pass + " " + d.site + " " + d.instruction + "\n";
  }
  RETURN_IF_ERROR(WriteText(fs::path(dir) / "rewrites.log", log));
  RETURN_IF_ERROR(WriteText(fs::path(dir) / "compile.json",
                            CompileReport(c).DumpPretty() + "\n"));
  Json o = Json::MakeObject();
  Json disabled = Json::MakeArray();
  for (const std::string& p : options.disabled_passes) disabled.push_back(p);
  o["disable_passes"] = std::move(disabled);
  o["pass_limit"] = options.pass_limit ? Json(*options.pass_limit) : Json();
  o["rewrite_limit"] =
      options.rewrite_limit ? Json(*options.rewrite_limit) : Json();
  o["taps_all"] = options.taps_all;
  Json taps = Json::MakeArray();
  for (const std::string& t : options.taps) taps.push_back(t);
  o["taps"] = std::move(taps);
  if (options.mesh.size() > 1) {
    o["mesh"] = std::to_string(options.mesh.replicas) + "x" +
                std::to_string(options.mesh.partitions);
  }
  return WriteText(fs::path(dir) / "options.json", o.DumpPretty() + "\n");
}

}  // namespace trench::hloc
