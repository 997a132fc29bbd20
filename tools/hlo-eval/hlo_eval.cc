#include "tools/hlo-eval/hlo_eval.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/json.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/npy.h"
#include "compiler/ir/random_inputs.h"
#include "compiler/ir/verifier.h"
#include "oracle/evaluator.h"
#include "oracle/spmd.h"
#include "tools/hlo-eval/hlo_eval_flags.h"

namespace trench {
namespace {

namespace fs = std::filesystem;
using hlo_eval::Flags;

// An error with the exit code it maps to.
struct Failure {
  int code;
  std::string message;
};

StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(path + ": cannot open for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return IoError(path + ": read failed");
  return ss.str();
}

Json LeafEntry(const Shape& shape, const std::string& file) {
  Json j = Json::MakeObject();
  j["file"] = file.empty() ? Json() : Json(file);
  j["dtype"] = Json(std::string(PrimitiveTypeName(shape.element_type())));
  Json::Array dims;
  for (int64_t d : shape.dims()) dims.emplace_back(d);
  j["shape"] = Json(std::move(dims));
  if (shape.IsArray()) j["npy_descr"] = Json(NpyDescr(shape.element_type()));
  return j;
}

// Moves the next file literals into the array leaves of `lit` (whose
// shape is a parameter's), checking types and dimensions.
Status FillLeaves(Literal& lit, std::vector<Literal>& files, size_t& next,
                  const std::vector<std::string>& paths) {
  if (lit.shape().IsTuple()) {
    for (Literal& e : lit.mutable_tuple_elements()) {
      RETURN_IF_ERROR(FillLeaves(e, files, next, paths));
    }
    return Status();
  }
  if (!lit.shape().IsArray()) return Status();  // Token: no file.
  Literal& file = files[next];
  const std::string& path = paths[next++];
  if (file.element_type() != lit.element_type() ||
      file.shape().dims() != lit.shape().dims()) {
    return InvalidArgument(path + ": " + file.shape().ToString(false) +
                           " does not match the parameter leaf " +
                           lit.shape().ToString(false));
  }
  std::optional<Layout> layout = lit.shape().layout();
  lit = std::move(file);
  lit.set_layout(layout);
  return Status();
}

std::vector<const Shape*> ArrayLeaves(const Shape& shape) {
  std::vector<const Shape*> out;
  ForEachLeafShape(shape, [&](const Shape& s) {
    if (s.IsArray()) out.push_back(&s);
  });
  return out;
}

StatusOr<std::vector<Literal>> ArgsFromFiles(
    const HloComputation& entry, const std::vector<std::string>& paths) {
  std::vector<const Shape*> leaves;
  for (const HloInstruction* p : entry.parameters()) {
    for (const Shape* s : ArrayLeaves(p->shape())) leaves.push_back(s);
  }
  if (leaves.size() != paths.size()) {
    return InvalidArgument("the entry computation takes " +
                           std::to_string(leaves.size()) +
                           " array inputs, got " +
                           std::to_string(paths.size()) + " --input files");
  }
  std::vector<Literal> files;
  for (size_t i = 0; i < leaves.size(); ++i) {
    ASSIGN_OR_RETURN(Literal lit,
                     ReadNpyFile(paths[i], leaves[i]->element_type()));
    files.push_back(std::move(lit));
  }
  std::vector<Literal> args;
  size_t next = 0;
  for (const HloInstruction* p : entry.parameters()) {
    Literal arg(p->shape());
    RETURN_IF_ERROR(FillLeaves(arg, files, next, paths));
    args.push_back(std::move(arg));
  }
  return args;
}

// Writes the array leaves of `lits` (flattened, in order) to dir/k.npy and
// returns their manifest entries.
StatusOr<Json::Array> WriteLeaves(const std::vector<const Literal*>& leaves,
                                  const fs::path& dir,
                                  const std::string& rel_prefix) {
  Json::Array entries;
  for (size_t k = 0; k < leaves.size(); ++k) {
    const Literal& leaf = *leaves[k];
    std::string file;
    if (leaf.shape().IsArray()) {
      file = std::to_string(k) + ".npy";
      RETURN_IF_ERROR(WriteNpyFile((dir / file).string(), leaf));
    }
    Json e = LeafEntry(leaf.shape(), file.empty() ? "" : rel_prefix + file);
    e["index"] = Json(k);
    entries.push_back(std::move(e));
  }
  return entries;
}

std::vector<const Literal*> FlatLeaves(const std::vector<Literal>& lits) {
  std::vector<const Literal*> out;
  for (const Literal& l : lits) {
    for (const Literal* leaf : l.Leaves()) out.push_back(leaf);
  }
  return out;
}

Status WriteText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return IoError(path.string() + ": write failed");
  return Status();
}

int Run(const Flags& flags, std::ostream& out, std::ostream& err) {
  const auto fail = [&](int code, const std::string& msg) {
    err << "hlo-eval: " << msg << "\n";
    return code;
  };
  auto text = ReadFile(flags.module_path);
  if (!text.ok()) return fail(kHloEvalBadInput, text.status().message());
  auto module = ParseHloModule(*text);
  if (!module.ok()) {
    return fail(kHloEvalBadInput,
                flags.module_path + ":" + module.status().message());
  }
  if (Status s = VerifyModule(**module); !s.ok()) {
    return fail(kHloEvalBadInput,
                flags.module_path + ": verifier: " + s.message());
  }
  const HloComputation& entry = *(*module)->entry_computation();
  std::error_code ec;
  fs::create_directories(flags.output_dir, ec);
  if (ec) {
    return fail(kHloEvalBadInput,
                flags.output_dir + ": cannot create: " + ec.message());
  }
  Json manifest = Json::MakeObject();
  manifest["module"] = Json(flags.module_path);
  const int64_t n = flags.mesh.size();
  const bool spmd = n > 1;
  if (spmd) {
    Json mesh = Json::MakeObject();
    mesh["replicas"] = flags.mesh.replicas;
    mesh["partitions"] = flags.mesh.partitions;
    manifest["mesh"] = std::move(mesh);
  }
  // Device d's files and outputs go to D/<d>/ on a mesh, else to D/.
  auto device_dir = [&](const fs::path& base, int64_t d) {
    return spmd ? base / std::to_string(d) : base;
  };
  auto device_prefix = [&](const std::string& base, int64_t d) {
    return spmd ? base + std::to_string(d) + "/" : base;
  };
  Json inputs = Json::MakeObject();
  std::vector<std::vector<Literal>> args(n);
  Json::Array input_files;
  if (flags.random_inputs) {
    for (int64_t d = 0; d < n; ++d) {
      args[d] = RandomArguments(entry, flags.seed + d);
      const fs::path dir = device_dir(fs::path(flags.output_dir) / "inputs", d);
      fs::create_directories(dir, ec);
      if (ec) return fail(kHloEvalBadInput, dir.string() + ": " + ec.message());
      auto files =
          WriteLeaves(FlatLeaves(args[d]), dir, device_prefix("inputs/", d));
      if (!files.ok()) return fail(kHloEvalBadInput, files.status().message());
      for (Json& f : *files) input_files.push_back(std::move(f));
    }
    inputs["mode"] = Json("random");
    inputs["seed"] = Json(flags.seed);
  } else {
    if (flags.inputs.empty() && entry.num_parameters() > 0) {
      return fail(kHloEvalUsage,
                  "the module has " + std::to_string(entry.num_parameters()) +
                      " parameters: give --input files or --random-inputs");
    }
    if (flags.inputs.size() % n != 0) {
      return fail(kHloEvalBadInput, std::to_string(flags.inputs.size()) +
                                        " --input files do not split among " +
                                        std::to_string(n) + " devices");
    }
    const size_t per = flags.inputs.size() / n;
    for (int64_t d = 0; d < n; ++d) {
      const std::vector<std::string> paths(
          flags.inputs.begin() + d * per, flags.inputs.begin() + (d + 1) * per);
      auto from_files = ArgsFromFiles(entry, paths);
      if (!from_files.ok()) {
        return fail(kHloEvalBadInput,
                    (spmd ? "device " + std::to_string(d) + ": " : "") +
                        from_files.status().message());
      }
      args[d] = std::move(*from_files);
      size_t next = 0;
      for (const Literal* leaf : FlatLeaves(args[d])) {
        if (leaf->shape().IsArray()) {
          input_files.push_back(LeafEntry(leaf->shape(), paths[next++]));
        }
      }
    }
    inputs["mode"] = Json("files");
  }
  inputs["files"] = Json(std::move(input_files));
  manifest["inputs"] = std::move(inputs);
  std::vector<Literal> results;
  if (spmd) {
    SpmdOptions options;
    options.mesh = flags.mesh;
    options.evaluator.threads = flags.threads;
    auto r = EvaluateSpmd(**module, args, options);
    if (!r.ok()) {
      return fail(kHloEvalEvalError,
                  "evaluation failed: " + r.status().ToString());
    }
    results = std::move(*r);
  } else {
    EvaluatorOptions options;
    options.threads = flags.threads;
    auto r = Evaluate(**module, args[0], options);
    if (!r.ok()) {
      return fail(kHloEvalEvalError,
                  "evaluation failed: " + r.status().ToString());
    }
    results.push_back(std::move(*r));
  }
  Json::Array devices;
  for (int64_t d = 0; d < n; ++d) {
    const fs::path dir = device_dir(fs::path(flags.output_dir), d);
    fs::create_directories(dir, ec);
    if (ec) return fail(kHloEvalBadInput, dir.string() + ": " + ec.message());
    const std::vector<const Literal*> leaves = results[d].Leaves();
    auto outputs = WriteLeaves(leaves, dir, device_prefix("", d));
    if (!outputs.ok()) {
      return fail(kHloEvalBadInput, outputs.status().message());
    }
    if (!spmd) {
      manifest["outputs"] = Json(std::move(*outputs));
    } else {
      Json one = Json::MakeObject();
      one["device"] = d;
      one["outputs"] = Json(std::move(*outputs));
      devices.push_back(std::move(one));
    }
    for (size_t k = 0; k < leaves.size(); ++k) {
      if (spmd) out << "device " << d << " ";
      out << "output " << k << ": " << leaves[k]->Summary(8);
      if (leaves[k]->shape().IsArray()) {
        out << " -> " << (dir / (std::to_string(k) + ".npy")).string();
      }
      out << "\n";
    }
  }
  if (spmd) manifest["devices"] = Json(std::move(devices));
  Status s = WriteText(fs::path(flags.output_dir) / "outputs.json",
                       manifest.DumpPretty() + "\n");
  if (!s.ok()) return fail(kHloEvalBadInput, s.message());
  return kHloEvalOk;
}

}  // namespace

int RunHloEval(int argc, char** argv, std::ostream& out, std::ostream& err) {
  Flags flags;
  FlagParser p("hlo-eval",
               "MODULE.hlo (--input F.npy ... | --random-inputs [--seed N]) "
               "--output-dir D [--threads N] [--mesh RxP]");
  hlo_eval::RegisterFlags(&p, &flags);
  if (std::optional<int> exit = p.ParseOrExit(argc, argv, out, err)) {
    return *exit;
  }
  if (Status s = hlo_eval::CheckFlags(p, &flags); !s.ok()) {
    return p.UsageError(err, s.message());
  }
  try {
    return Run(flags, out, err);
  } catch (const std::exception& e) {  // e.g. std::bad_alloc
    err << "hlo-eval: internal error: " << e.what() << "\n";
    return kHloEvalEvalError;
  }
}

}  // namespace trench
