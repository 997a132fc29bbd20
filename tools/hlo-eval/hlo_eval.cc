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

StatusOr<std::vector<Literal>> ArgsFromFiles(const HloComputation& entry,
                                             const Flags& flags) {
  std::vector<const Shape*> leaves;
  for (const HloInstruction* p : entry.parameters()) {
    for (const Shape* s : ArrayLeaves(p->shape())) leaves.push_back(s);
  }
  if (leaves.size() != flags.inputs.size()) {
    return InvalidArgument(
        "the entry computation takes " + std::to_string(leaves.size()) +
        " array inputs, got " + std::to_string(flags.inputs.size()) +
        " --input files");
  }
  std::vector<Literal> files;
  for (size_t i = 0; i < leaves.size(); ++i) {
    ASSIGN_OR_RETURN(Literal lit,
                     ReadNpyFile(flags.inputs[i], leaves[i]->element_type()));
    files.push_back(std::move(lit));
  }
  std::vector<Literal> args;
  size_t next = 0;
  for (const HloInstruction* p : entry.parameters()) {
    Literal arg(p->shape());
    RETURN_IF_ERROR(FillLeaves(arg, files, next, flags.inputs));
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
  Json inputs = Json::MakeObject();
  std::vector<Literal> args;
  if (flags.random_inputs) {
    args = RandomArguments(entry, flags.seed);
    const fs::path dir = fs::path(flags.output_dir) / "inputs";
    fs::create_directories(dir, ec);
    if (ec) return fail(kHloEvalBadInput, dir.string() + ": " + ec.message());
    auto files = WriteLeaves(FlatLeaves(args), dir, "inputs/");
    if (!files.ok()) return fail(kHloEvalBadInput, files.status().message());
    inputs["mode"] = Json("random");
    inputs["seed"] = Json(flags.seed);
    inputs["files"] = Json(std::move(*files));
  } else {
    if (flags.inputs.empty() && entry.num_parameters() > 0) {
      return fail(kHloEvalUsage,
                  "the module has " + std::to_string(entry.num_parameters()) +
                      " parameters: give --input files or --random-inputs");
    }
    auto from_files = ArgsFromFiles(entry, flags);
    if (!from_files.ok()) {
      return fail(kHloEvalBadInput, from_files.status().message());
    }
    args = std::move(*from_files);
    inputs["mode"] = Json("files");
    Json::Array files;
    size_t next = 0;
    for (const Literal* leaf : FlatLeaves(args)) {
      if (leaf->shape().IsArray()) {
        files.push_back(LeafEntry(leaf->shape(), flags.inputs[next++]));
      }
    }
    inputs["files"] = Json(std::move(files));
  }
  manifest["inputs"] = std::move(inputs);
  EvaluatorOptions options;
  options.threads = flags.threads;
  auto result = Evaluate(**module, args, options);
  if (!result.ok()) {
    return fail(kHloEvalEvalError,
                "evaluation failed: " + result.status().ToString());
  }
  const std::vector<const Literal*> leaves = result->Leaves();
  auto outputs = WriteLeaves(leaves, flags.output_dir, "");
  if (!outputs.ok()) return fail(kHloEvalBadInput, outputs.status().message());
  manifest["outputs"] = Json(std::move(*outputs));
  Status s = WriteText(fs::path(flags.output_dir) / "outputs.json",
                       manifest.DumpPretty() + "\n");
  if (!s.ok()) return fail(kHloEvalBadInput, s.message());
  for (size_t k = 0; k < leaves.size(); ++k) {
    out << "output " << k << ": " << leaves[k]->Summary(8);
    if (leaves[k]->shape().IsArray()) {
      out << " -> "
          << (fs::path(flags.output_dir) / (std::to_string(k) + ".npy"))
                 .string();
    }
    out << "\n";
  }
  return kHloEvalOk;
}

}  // namespace

int RunHloEval(int argc, char** argv, std::ostream& out, std::ostream& err) {
  Flags flags;
  FlagParser p("hlo-eval",
               "MODULE.hlo (--input F.npy ... | --random-inputs [--seed N]) "
               "--output-dir D [--threads N]");
  hlo_eval::RegisterFlags(&p, &flags);
  if (std::optional<int> exit = p.ParseOrExit(argc, argv, out, err)) {
    return *exit;
  }
  if (Status s = hlo_eval::CheckFlags(p, flags); !s.ok()) {
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
