#include "triage/case/case_bundle.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "base/sha256.h"
#include "compiler/ir/dtype.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/npy.h"
#include "compiler/ir/verifier.h"

namespace trench::hlo_diff {
namespace {

namespace fs = std::filesystem;

constexpr char kBf16Note[] =
    "bf16 stored as its bit patterns (numpy uint16); view as bfloat16, e.g. "
    "numpy.load(f).view(ml_dtypes.bfloat16)";

StatusOr<std::string> ReadWholeFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(path.string() + ": cannot read");
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return IoError(path.string() + ": read error");
  return s.str();
}

Status WriteWholeFile(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
  out.close();
  if (!out) return IoError(path.string() + ": cannot write");
  return Status();
}

std::string UniqueSuffix() {
  static std::atomic<uint64_t> counter{0};
  return std::to_string(::getpid()) + "." + std::to_string(counter++);
}

Json ShapeDims(const Shape& s) {
  Json::Array dims;
  for (int64_t d : s.dims()) dims.emplace_back(d);
  return Json(std::move(dims));
}

// Reads one entry of case.json's "inputs" and its .npy file.
// case.json's "mesh" object.
StatusOr<DeviceMesh> ParseMesh(const Json& j) {
  if (!j.is_object()) return InvalidArgument("mesh: expected an object");
  DeviceMesh mesh;
  for (const auto& [key, v] : j.object()) {
    int64_t* field = key == "replicas"     ? &mesh.replicas
                     : key == "partitions" ? &mesh.partitions
                                           : nullptr;
    if (field == nullptr) {
      return InvalidArgument("mesh: unknown key '" + key +
                             "' (replicas, partitions)");
    }
    StatusOr<int64_t> n = v.GetInt64();
    if (!n.ok()) {
      return InvalidArgument("mesh." + key + ": expected an integer in 1.." +
                             std::to_string(kMaxMeshDevices));
    }
    *field = *n;
  }
  RETURN_IF_ERROR(CheckMesh(mesh));
  return mesh;
}

// Inputs per device: all of them for a single-device case.
size_t LeavesPerDevice(const Case& c) {
  const int64_t n = std::max<int64_t>(1, c.mesh.size());
  return c.inputs.size() / static_cast<size_t>(n);
}

// Input i's file name: inputs/<i>.npy, or inputs/<device>/<k>.npy in an
// SPMD case with `leaves` inputs per device.
std::string InputFile(const Case& c, size_t i, size_t leaves) {
  if (c.mesh.size() <= 1 || leaves == 0) {
    return "inputs/" + std::to_string(i) + ".npy";
  }
  return "inputs/" + std::to_string(i / leaves) + "/" +
         std::to_string(i % leaves) + ".npy";
}

StatusOr<Literal> ReadInput(const fs::path& dir, const Json& entry, size_t i,
                            const Shape& expected) {
  const std::string where =
      (dir / "case.json").string() + ": inputs[" + std::to_string(i) + "]";
  if (!entry.is_object()) return InvalidArgument(where + ": expected object");
  const Json* file = entry.Find("file");
  if (file == nullptr || !file->is_string()) {
    return InvalidArgument(where + ".file: expected a string");
  }
  fs::path rel(file->string_value());
  if (rel.empty() || rel.is_absolute() ||
      rel.lexically_normal().string().rfind("..", 0) == 0) {
    return InvalidArgument(where + ".file: '" + rel.string() +
                           "' is not a relative path inside the case");
  }
  const Json* dtype = entry.Find("dtype");
  if (dtype == nullptr || !dtype->is_string()) {
    return InvalidArgument(where + ".dtype: expected a string");
  }
  std::optional<PrimitiveType> type =
      PrimitiveTypeFromName(dtype->string_value());
  if (!type || !IsArrayType(*type)) {
    return InvalidArgument(where + ".dtype: unknown element type '" +
                           dtype->string_value() + "'");
  }
  const Json* shape = entry.Find("shape");
  std::vector<int64_t> dims;
  bool dims_ok = shape != nullptr && shape->is_array();
  if (dims_ok) {
    for (const Json& d : shape->array()) {
      StatusOr<int64_t> v = d.GetInt64();
      if (!v.ok() || *v < 0) {
        dims_ok = false;
        break;
      }
      dims.push_back(*v);
    }
  }
  if (!dims_ok) {
    return InvalidArgument(
        where + ".shape: expected an array of non-negative integers");
  }
  const std::string declared = Shape(*type, dims).ToString(false);
  if (*type != expected.element_type() || dims != expected.dims()) {
    return InvalidArgument(where + ": " + declared +
                           " does not match the parameter leaf " +
                           expected.ToString(false));
  }
  const fs::path path = dir / rel;
  ASSIGN_OR_RETURN(Literal lit, ReadNpyFile(path.string(), *type));
  if (lit.shape().dims() != dims) {
    return InvalidArgument(path.string() + ": " + lit.shape().ToString(false) +
                           " does not match case.json's " + declared);
  }
  lit.set_layout(expected.layout());
  return lit;
}

}  // namespace

Json CaseOptions::ToJson() const {
  Json j = Json::MakeObject();
  Json::Array passes;
  for (const std::string& p : disable_passes) passes.emplace_back(p);
  j["disable_passes"] = Json(std::move(passes));
  j["pass_limit"] = pass_limit ? Json(*pass_limit) : Json();
  j["rewrite_limit"] = rewrite_limit ? Json(*rewrite_limit) : Json();
  j["taps"] = taps;
  j["compare"] = CompareKindName(compare);
  return j;
}

StatusOr<CaseOptions> CaseOptions::FromJson(const Json& j) {
  CaseOptions o;
  if (j.is_null()) return o;
  if (!j.is_object()) return InvalidArgument("options: expected an object");
  for (const auto& [key, v] : j.object()) {
    const std::string where = "options." + key;
    if (key == "disable_passes") {
      if (!v.is_array()) return InvalidArgument(where + ": expected an array");
      for (const Json& p : v.array()) {
        if (!p.is_string()) {
          return InvalidArgument(where + ": expected pass names (strings)");
        }
        o.disable_passes.push_back(p.string_value());
      }
    } else if (key == "pass_limit" || key == "rewrite_limit") {
      if (v.is_null()) continue;
      StatusOr<int64_t> n = v.GetInt64();
      if (!n.ok() || *n < 0) {
        return InvalidArgument(where + ": expected a non-negative integer");
      }
      (key == "pass_limit" ? o.pass_limit : o.rewrite_limit) = *n;
    } else if (key == "taps") {
      if (!v.is_string()) return InvalidArgument(where + ": expected a string");
      o.taps = v.string_value();
    } else if (key == "compare") {
      const std::string s = v.is_string() ? v.string_value() : "";
      if (s == "contract") {
        o.compare = CompareKind::kContract;
      } else if (s == "near") {
        o.compare = CompareKind::kNear;
      } else if (s == "exact") {
        o.compare = CompareKind::kExact;
      } else {
        return InvalidArgument(
            where + ": expected \"contract\", \"near\" or \"exact\"");
      }
    } else {
      return InvalidArgument(where + ": unknown option");
    }
  }
  return o;
}

std::vector<std::string> CaseOptions::ToFlags() const {
  std::vector<std::string> flags;
  if (!disable_passes.empty()) {
    std::string list;
    for (const std::string& p : disable_passes) {
      list += (list.empty() ? "" : ",") + p;
    }
    flags.push_back("--disable-passes=" + list);
  }
  if (pass_limit)
    flags.push_back("--pass-limit=" + std::to_string(*pass_limit));
  if (rewrite_limit) {
    flags.push_back("--rewrite-limit=" + std::to_string(*rewrite_limit));
  }
  if (!taps.empty()) flags.push_back("--taps=" + taps);
  return flags;
}

namespace {
std::atomic<int64_t> case_module_parses{0};
}  // namespace

int64_t CaseModuleParseCount() { return case_module_parses.load(); }

const char* CompareKindName(CompareKind k) {
  switch (k) {
    case CompareKind::kContract:
      return "contract";
    case CompareKind::kNear:
      return "near";
    case CompareKind::kExact:
      return "exact";
  }
  return "contract";
}

StatusOr<std::unique_ptr<HloModule>> ParseCaseModule(
    const std::string& text, const std::string& origin) {
  ++case_module_parses;
  auto m = ParseHloModule(text);
  if (!m.ok()) return InvalidArgument(origin + ":" + m.status().message());
  Status v = VerifyModule(**m);
  if (!v.ok()) return InvalidArgument(origin + ": " + v.message());
  return m;
}

std::vector<Shape> InputLeafShapes(const HloModule& module) {
  std::vector<Shape> shapes;
  for (const HloInstruction* p : module.entry_computation()->parameters()) {
    ForEachLeafShape(p->shape(), [&](const Shape& s) {
      if (s.IsArray()) shapes.push_back(s);
    });
  }
  return shapes;
}

std::vector<Literal> ArgumentLeaves(const std::vector<Literal>& args) {
  std::vector<Literal> leaves;
  for (const Literal& arg : args) {
    for (const Literal* leaf : arg.Leaves()) {
      if (leaf->shape().IsArray()) leaves.push_back(*leaf);
    }
  }
  return leaves;
}

Literal AssembleLeaves(const Shape& shape, std::vector<Literal>& leaves,
                       size_t& next) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (const Shape& s : shape.tuple_shapes()) {
      elements.push_back(AssembleLeaves(s, leaves, next));
    }
    return Literal::Tuple(std::move(elements));
  }
  if (!shape.IsArray()) return Literal(shape);
  if (next >= leaves.size()) return Literal(shape);  // Zeros, never UB.
  return std::move(leaves[next++]);
}

std::vector<Literal> ParameterArguments(const HloModule& module,
                                        std::vector<Literal> inputs) {
  const HloComputation& entry = *module.entry_computation();
  std::vector<Literal> args;
  size_t next = 0;
  for (int64_t k = 0; k < entry.num_parameters(); ++k) {
    args.push_back(
        AssembleLeaves(entry.parameter_instruction(k)->shape(), inputs, next));
  }
  return args;
}

Status CheckInputs(const HloModule& module,
                   const std::vector<Literal>& inputs) {
  const std::vector<Shape> shapes = InputLeafShapes(module);
  if (shapes.size() != inputs.size()) {
    return InvalidArgument("the module takes " + std::to_string(shapes.size()) +
                           " input arrays, got " +
                           std::to_string(inputs.size()));
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = inputs[i].shape();
    if (!s.IsArray() || s.element_type() != shapes[i].element_type() ||
        s.dims() != shapes[i].dims()) {
      return InvalidArgument(
          "input " + std::to_string(i) + ": " + s.ToString(false) +
          " does not match the parameter leaf " + shapes[i].ToString(false));
    }
  }
  return Status();
}

StatusOr<std::vector<std::vector<Literal>>> DeviceArguments(
    const HloModule& module, const Case& c) {
  const int64_t n = std::max<int64_t>(1, c.mesh.size());
  const size_t leaves = InputLeafShapes(module).size();
  if (c.inputs.size() != leaves * n) {
    return InvalidArgument("the module takes " + std::to_string(leaves) +
                           " input arrays per device, the case has " +
                           std::to_string(c.inputs.size()) + " for " +
                           std::to_string(n) + " devices");
  }
  std::vector<std::vector<Literal>> out;
  for (int64_t d = 0; d < n; ++d) {
    std::vector<Literal> mine(c.inputs.begin() + d * leaves,
                              c.inputs.begin() + (d + 1) * leaves);
    if (Status st = CheckInputs(module, mine); !st.ok()) {
      return InvalidArgument("device " + std::to_string(d) + ": " +
                             st.message());
    }
    out.push_back(ParameterArguments(module, std::move(mine)));
  }
  return out;
}

StatusOr<Case> MakeSpmdCase(std::string module_text, const DeviceMesh& mesh,
                            std::vector<std::vector<Literal>> device_inputs,
                            CaseOptions options, Json origin) {
  RETURN_IF_ERROR(CheckMesh(mesh));
  if (static_cast<int64_t>(device_inputs.size()) != mesh.size()) {
    return InvalidArgument("a mesh of " + std::to_string(mesh.size()) +
                           " devices needs as many input lists, got " +
                           std::to_string(device_inputs.size()));
  }
  ASSIGN_OR_RETURN(auto module, ParseCaseModule(module_text, "module.hlo"));
  Case c;
  for (size_t d = 0; d < device_inputs.size(); ++d) {
    if (Status st = CheckInputs(*module, device_inputs[d]); !st.ok()) {
      return InvalidArgument("device " + std::to_string(d) + ": " +
                             st.message());
    }
    for (Literal& l : device_inputs[d]) c.inputs.push_back(std::move(l));
  }
  c.module_text = std::move(module_text);
  c.mesh = mesh;
  c.options = std::move(options);
  c.origin = origin.is_null() ? Json::MakeObject() : std::move(origin);
  return c;
}

StatusOr<Case> MakeCase(std::string module_text, std::vector<Literal> inputs,
                        CaseOptions options, Json origin,
                        std::unique_ptr<HloModule>* module_out) {
  ASSIGN_OR_RETURN(auto module, ParseCaseModule(module_text, "module.hlo"));
  RETURN_IF_ERROR(CheckInputs(*module, inputs));
  Case c;
  c.module_text = std::move(module_text);
  c.inputs = std::move(inputs);
  c.options = std::move(options);
  c.origin = origin.is_null() ? Json::MakeObject() : std::move(origin);
  if (module_out != nullptr) *module_out = std::move(module);
  return c;
}

StatusOr<Case> ReadCase(const std::string& dir_name,
                        std::unique_ptr<HloModule>* module_out) {
  const fs::path dir(dir_name);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return NotFound(dir_name + ": not a case directory");
  }
  const fs::path json_path = dir / "case.json";
  ASSIGN_OR_RETURN(std::string json_text, ReadWholeFile(json_path));
  StatusOr<Json> doc = ParseJson(json_text);
  if (!doc.ok()) {
    return InvalidArgument(json_path.string() + ":" + doc.status().message());
  }
  const std::string jp = json_path.string();
  if (!doc->is_object()) return InvalidArgument(jp + ": expected an object");
  const Json* format = doc->Find("format");
  if (format == nullptr || !format->is_integer() ||
      format->int64_value() != 1) {
    return InvalidArgument(jp + ": format: expected 1");
  }
  Case c;
  for (const auto& [key, v] : doc->object()) {
    if (key == "format" || key == "inputs") continue;
    if (key == "mesh") {
      StatusOr<DeviceMesh> mesh = ParseMesh(v);
      if (!mesh.ok())
        return InvalidArgument(jp + ": " + mesh.status().message());
      c.mesh = *mesh;
    } else if (key == "origin") {
      c.origin = v;
    } else if (key == "signature") {
      c.signature = v;
    } else if (key == "verdict") {
      if (v.is_null()) continue;
      StatusOr<Verdict> verdict = Verdict::FromJson(v);
      if (!verdict.ok()) {
        return InvalidArgument(jp + ": " + verdict.status().message());
      }
      c.verdict = std::move(verdict).value();
    } else if (key == "options") {
      StatusOr<CaseOptions> o = CaseOptions::FromJson(v);
      if (!o.ok()) return InvalidArgument(jp + ": " + o.status().message());
      c.options = *o;
    } else {
      c.extra[key] = v;
    }
  }
  const fs::path module_path = dir / "module.hlo";
  ASSIGN_OR_RETURN(c.module_text, ReadWholeFile(module_path));
  ASSIGN_OR_RETURN(auto module,
                   ParseCaseModule(c.module_text, module_path.string()));
  const Json* inputs = doc->Find("inputs");
  if (inputs == nullptr || !inputs->is_array()) {
    return InvalidArgument(jp + ": inputs: expected an array");
  }
  const std::vector<Shape> shapes = InputLeafShapes(*module);
  const size_t devices = static_cast<size_t>(c.mesh.size());
  if (shapes.size() * devices != inputs->size()) {
    return InvalidArgument(
        dir_name + ": the module takes " + std::to_string(shapes.size()) +
        " input arrays" +
        (devices > 1 ? " per device (" + std::to_string(devices) + ")" : "") +
        ", case.json lists " + std::to_string(inputs->size()));
  }
  // An SPMD case names one file per input: one small case.json must not
  // make thousands of devices read one large file.
  std::map<std::string, size_t> files;
  for (size_t i = 0; i < inputs->size(); ++i) {
    const Json& entry = inputs->array()[i];
    const Json* file = entry.is_object() ? entry.Find("file") : nullptr;
    if (devices > 1 && file != nullptr && file->is_string()) {
      const std::string key =
          fs::path(file->string_value()).lexically_normal().string();
      auto [it, fresh] = files.emplace(key, i);
      if (!fresh) {
        return InvalidArgument(jp + ": inputs[" + std::to_string(i) +
                               "].file: '" + key + "' is inputs[" +
                               std::to_string(it->second) +
                               "]'s too (each device reads files of its own)");
      }
    }
    if (devices > 1) {
      const Json* d = entry.is_object() ? entry.Find("device") : nullptr;
      StatusOr<int64_t> dv = d ? d->GetInt64() : StatusOr<int64_t>(-1);
      if (!dv.ok() || *dv != static_cast<int64_t>(i / shapes.size())) {
        return InvalidArgument(
            jp + ": inputs[" + std::to_string(i) + "].device: expected " +
            std::to_string(i / shapes.size()) + " (inputs are device-major)");
      }
    }
    ASSIGN_OR_RETURN(Literal lit,
                     ReadInput(dir, entry, i,
                               shapes[i % std::max<size_t>(1, shapes.size())]));
    c.inputs.push_back(std::move(lit));
  }
  if (module_out != nullptr) *module_out = std::move(module);
  return c;
}

std::string CaseSha256(const Case& c) {
  Sha256 h;
  auto piece = [&h](std::string_view bytes) {
    const std::string len = std::to_string(bytes.size()) + ":";
    h.Update(len);
    h.Update(bytes);
  };
  piece("trench-case-1");
  piece(c.module_text);
  // Single-device cases keep the addresses they always had.
  if (c.mesh.size() > 1) {
    piece("mesh:" + std::to_string(c.mesh.replicas) + "x" +
          std::to_string(c.mesh.partitions));
  }
  for (const Literal& in : c.inputs) piece(WriteNpy(in));
  piece(c.options.ToJson().Dump());
  return h.HexDigest();
}

Json CaseJson(const Case& c) {
  Json j = Json::MakeObject();
  j["format"] = 1;
  const size_t leaves = LeavesPerDevice(c);
  if (c.mesh.size() > 1) {
    Json mesh = Json::MakeObject();
    mesh["replicas"] = c.mesh.replicas;
    mesh["partitions"] = c.mesh.partitions;
    j["mesh"] = std::move(mesh);
  }
  j["origin"] = c.origin;
  Json::Array inputs;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const Shape& s = c.inputs[i].shape();
    Json e = Json::MakeObject();
    e["file"] = InputFile(c, i, leaves);
    if (c.mesh.size() > 1) e["device"] = static_cast<int64_t>(i / leaves);
    e["dtype"] = std::string(PrimitiveTypeName(s.element_type()));
    e["shape"] = ShapeDims(s);
    e["npy_dtype"] = NpyDescr(s.element_type());
    if (s.element_type() == PrimitiveType::BF16) e["note"] = kBf16Note;
    inputs.push_back(std::move(e));
  }
  j["inputs"] = Json(std::move(inputs));
  j["options"] = c.options.ToJson();
  j["signature"] = c.signature;
  j["verdict"] = c.verdict ? c.verdict->ToJson() : Json();
  if (c.extra.is_object()) {
    for (const auto& [key, v] : c.extra.object()) j[key] = v;
  }
  return j;
}

Status UpdateCaseJson(const std::string& dir, const Case& c) {
  StatusOr<std::string> text =
      PrintJson(CaseJson(c), {.indent = 2, .non_finite_as_null = true});
  if (!text.ok()) return text.status();
  const fs::path final_path = fs::path(dir) / "case.json";
  const fs::path tmp = fs::path(dir) / (".case.json.tmp." + UniqueSuffix());
  RETURN_IF_ERROR(WriteWholeFile(tmp, *text + "\n"));
  std::error_code ec;
  fs::rename(tmp, final_path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return IoError(final_path.string() + ": cannot replace: " + ec.message());
  }
  return Status();
}

Status WriteCase(const std::string& dir_name, const Case& c) {
  const fs::path dir = fs::path(dir_name).lexically_normal();
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    return FailedPrecondition(dir_name + ": already exists");
  }
  fs::path parent = dir.parent_path();
  if (parent.empty()) parent = ".";
  fs::create_directories(parent, ec);
  if (ec) return IoError(parent.string() + ": cannot create: " + ec.message());
  const fs::path tmp =
      parent / ("." + dir.filename().string() + ".tmp." + UniqueSuffix());
  Status st = [&]() -> Status {
    fs::create_directories(tmp / "inputs", ec);
    if (ec) return IoError(tmp.string() + ": cannot create: " + ec.message());
    RETURN_IF_ERROR(WriteWholeFile(tmp / "module.hlo", c.module_text));
    const size_t leaves = LeavesPerDevice(c);
    for (size_t i = 0; i < c.inputs.size(); ++i) {
      const fs::path file = tmp / InputFile(c, i, leaves);
      fs::create_directories(file.parent_path(), ec);
      if (ec) {
        return IoError(file.parent_path().string() +
                       ": cannot create: " + ec.message());
      }
      RETURN_IF_ERROR(WriteNpyFile(file.string(), c.inputs[i]));
    }
    return UpdateCaseJson(tmp.string(), c);
  }();
  if (st.ok()) {
    fs::rename(tmp, dir, ec);
    if (ec) {
      st = fs::exists(dir) ? FailedPrecondition(dir_name + ": already exists")
                           : IoError(dir_name + ": cannot rename " +
                                     tmp.string() + ": " + ec.message());
    }
  }
  if (!st.ok()) fs::remove_all(tmp, ec);
  return st;
}

StatusOr<std::string> StoreCase(const std::string& root, const Case& c) {
  const fs::path dir = fs::path(root) / "cases" / CaseSha256(c);
  std::error_code ec;
  if (fs::is_directory(dir, ec)) return dir.string();
  Status st = WriteCase(dir.string(), c);
  // Another process may have stored the same case meanwhile: same content.
  if (!st.ok() && !(st.code() == StatusCode::kFailedPrecondition &&
                    fs::is_directory(dir, ec))) {
    return st;
  }
  return dir.string();
}

}  // namespace trench::hlo_diff
