#include "triage/fuzz/trace_corpus.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer.h"
#include "compiler/ir/hlo_text_file.h"
#include "compiler/ir/random_inputs.h"
#include "compiler/ir/verifier.h"
#include "triage/case/case_bundle.h"
#include "triage/fuzz/collective_scale.h"
#include "triage/fuzz/mutate.h"

namespace trench::fuzz {
namespace {

namespace fs = std::filesystem;
using O = HloOpcode;

bool HasToken(const Shape& s) {
  bool token = false;
  if (s.IsToken()) return true;
  for (const Shape& e : s.tuple_shapes()) token |= HasToken(e);
  return token;
}

bool ComputationEvaluates(const HloComputation& c, int depth) {
  if (depth > 16) return false;
  for (const HloInstruction* i : c.instructions()) {
    if (!OracleEvaluates(i->opcode()) || HasToken(i->shape())) return false;
    for (const HloComputation* callee : i->called_computations()) {
      if (!callee || !ComputationEvaluates(*callee, depth + 1)) return false;
    }
  }
  return true;
}

bool DefaultSupported(const HloInstruction& i, bool collectives) {
  const O op = i.opcode();
  if (op == O::kAfterAll || op == O::kAddDependency || op == O::kParameter) {
    return false;
  }
  const bool evaluates = OracleEvaluates(op) || (collectives && IsDeviceOp(op));
  if (!evaluates || HasToken(i.shape())) return false;
  for (const HloInstruction* o : i.operands()) {
    if (HasToken(o->shape())) return false;
  }
  for (const HloComputation* c : i.called_computations()) {
    if (!c || !ComputationEvaluates(*c, 0)) return false;
  }
  return true;
}

// The module's text up to names (dedup key).
std::string Canonical(const HloModule& m) {
  std::unique_ptr<HloModule> c = m.Clone();
  int64_t k = 0;
  for (HloComputation* comp : c->MakeComputationPostOrder()) {
    comp->set_name("c" + std::to_string(k++));
    for (HloInstruction* i : comp->MakeInstructionPostOrder()) {
      i->set_name("i" + std::to_string(k++));
      i->mutable_attrs().raw.clear();
    }
  }
  const std::string text = PrintHloModule(*c);
  const size_t eol = text.find('\n');
  return eol == std::string::npos ? text : text.substr(eol + 1);
}

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The mesh and the groups and pairs of the device ops (Canonical drops
// attributes kept verbatim); "" for a single-device module.
std::string MeshKey(const HloModule& m, const DeviceMesh& mesh) {
  if (mesh.size() <= 1) return "";
  std::string key = "\nmesh " + std::to_string(mesh.replicas) + "x" +
                    std::to_string(mesh.partitions);
  for (const HloComputation* c : m.MakeComputationPostOrder()) {
    for (const HloInstruction* i : c->MakeInstructionPostOrder()) {
      for (const char* k : {"replica_groups", "source_target_pairs"}) {
        if (const std::string* v = i->attrs().FindRaw(k)) key += " " + *v;
      }
    }
  }
  return key;
}

// The value of key="..." inside a metadata={...} text, or "".
std::string MetadataField(const std::string& meta, const std::string& key) {
  const std::string k = key + "=\"";
  const size_t at = meta.find(k);
  if (at == std::string::npos) return "";
  const size_t start = at + k.size();
  const size_t end = meta.find('"', start);
  return end == std::string::npos ? "" : meta.substr(start, end - start);
}

Json Metadata(const HloModule& m) {
  Json out = Json::MakeArray();
  for (const HloComputation* c : m.computations()) {
    for (const HloInstruction* i : c->MakeInstructionPostOrder()) {
      const std::string* meta = i->attrs().FindRaw("metadata");
      if (!meta || out.array().size() >= 8) continue;
      Json e = Json::MakeObject();
      e["instruction"] = i->name();
      const std::string op = MetadataField(*meta, "op_name");
      const std::string file = MetadataField(*meta, "source_file");
      if (op.empty() && file.empty()) continue;
      if (!op.empty()) e["op_name"] = op;
      if (!file.empty()) e["source_file"] = file;
      out.push_back(std::move(e));
    }
  }
  return out;
}

}  // namespace

Json MutationOptions::ToJson() const {
  Json j = Json::MakeObject();
  j["max_mutations"] = max_mutations;
  j["swap_op"] = swap_op;
  j["change_dtype"] = change_dtype;
  j["change_layout"] = change_layout;
  j["perturb_constant"] = perturb_constant;
  j["splice"] = splice;
  j["edge_operand"] = edge_operand;
  j["allow_nonfinite"] = allow_nonfinite;
  return j;
}

namespace {

// True if `v` reaches the argument of log/sqrt/rsqrt/log1p, the base of
// power or a divisor through value-preserving ops only.
bool NeedsPositive(const HloInstruction& v, int depth) {
  if (depth > 8) return false;
  for (const HloInstruction* u : v.users()) {
    const O op = u->opcode();
    const bool first = u->operand_count() > 0 && u->operand(0) == &v;
    const bool second = u->operand_count() > 1 && u->operand(1) == &v;
    if (first && (op == O::kLog || op == O::kSqrt || op == O::kRsqrt ||
                  op == O::kLog1p || op == O::kPower)) {
      return true;
    }
    if (second && (op == O::kDivide || op == O::kRemainder)) return true;
    switch (op) {
      case O::kConvert:
      case O::kBroadcast:
      case O::kReshape:
      case O::kBitcast:
      case O::kCopy:
      case O::kTranspose:
      case O::kSlice:
      case O::kReverse:
      case O::kConcatenate:
      case O::kDynamicSlice:
        if (NeedsPositive(*u, depth + 1)) return true;
        break;
      default:
        break;
    }
  }
  return false;
}

}  // namespace

std::vector<Literal> TraceInputs(const HloModule& module, uint64_t seed) {
  const HloComputation& entry = *module.entry_computation();
  std::vector<Literal> args = RandomArguments(entry, seed);
  for (int64_t k = 0; k < entry.num_parameters(); ++k) {
    const HloInstruction* p = entry.parameter_instruction(k);
    if (!p->shape().IsArray() || !IsFloat(p->shape().element_type())) continue;
    if (!NeedsPositive(*p, 0)) continue;
    Literal& a = args[k];
    for (int64_t i = 0; i < a.element_count(); ++i) {
      a.SetFromDouble(i, std::fabs(a.GetAsDouble(i)) + 0.5);
    }
  }
  return hlo_diff::ArgumentLeaves(args);
}

TraceCorpus::TraceCorpus(TraceCorpusOptions options)
    : options_(std::move(options)) {
  if (!options_.supported) {
    options_.supported = [collectives =
                              options_.collectives](const HloInstruction& i) {
      return DefaultSupported(i, collectives);
    };
  }
}

Status TraceCorpus::Load(const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    std::error_code ec;
    if (!fs::exists(path, ec)) return NotFound("no such trace path: " + path);
    std::vector<fs::path> files;
    if (fs::is_directory(path, ec)) {
      for (const auto& e : fs::recursive_directory_iterator(path, ec)) {
        if (e.is_regular_file() && e.path().extension() == ".hlo") {
          files.push_back(e.path());
        }
      }
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(path);
    }
    for (const fs::path& f : files) {
      const std::string name = fs::is_directory(path, ec)
                                   ? fs::relative(f, path, ec).string()
                                   : f.string();
      RETURN_IF_ERROR(LoadText(ReadFile(f), name));
    }
  }
  return Status::Ok();
}

Status TraceCorpus::LoadText(std::string_view text, const std::string& file) {
  ++stats_.files;
  std::vector<size_t> indices;
  for (const HloTextPiece& piece : SplitHloTextFile(text)) {
    auto m = ParseHloModule(piece.text, piece.first_line);
    if (!m.ok()) {
      ++stats_.parse_failures;
      stats_.failures.push_back(file + ": " + m.status().message());
      continue;
    }
    ++stats_.modules;
    SubgraphOptions so;
    so.max_instructions = options_.max_instructions;
    so.max_elements = options_.max_elements;
    so.max_devices = options_.max_devices;
    auto cut = CutSubgraphs(**m, options_.supported, so);
    if (!cut.ok()) {
      stats_.failures.push_back(file + ": " + cut.status().message());
      continue;
    }
    stats_.unscalable += cut->unscalable;
    for (Subgraph& sg : cut->subgraphs) {
      if (!sg.verified.ok() || sg.instructions.empty()) continue;
      // Up to names, but with the mesh and the device ops' groups.
      std::string key = Canonical(*sg.module) + MeshKey(*sg.module, sg.mesh);
      auto it = std::lower_bound(seen_.begin(), seen_.end(), key);
      if (it != seen_.end() && *it == key) {
        ++stats_.duplicates;
        continue;
      }
      seen_.insert(it, std::move(key));
      TraceSubgraph t;
      t.file = file;
      t.computation = sg.computation;
      t.root = sg.instructions.back();
      t.scale = sg.scale_factor;
      t.mesh = sg.mesh;
      t.module = std::move(sg.module);
      indices.push_back(subgraphs_.size());
      subgraphs_.push_back(std::move(t));
      ++stats_.subgraphs;
    }
  }
  if (!indices.empty()) by_file_.push_back(std::move(indices));
  return Status::Ok();
}

StatusOr<GeneratedCase> TraceCorpus::Sample(
    uint64_t seed, const MutationOptions& options) const {
  if (subgraphs_.empty()) return FailedPrecondition("trace corpus is empty");
  Rng rng(seed ^ 0xbb67ae8584caa73bull);
  const size_t index = rng.Pick(rng.Pick(by_file_));
  const TraceSubgraph& sg = subgraphs_[index];
  std::unique_ptr<HloModule> m = sg.module->Clone();
  Json mutations = Json::MakeArray();
  const int n =
      static_cast<int>(rng.Uniform(0, std::max(0, options.max_mutations)));
  const std::vector<double> weights = {
      options.swap_op,          options.change_dtype, options.change_layout,
      options.perturb_constant, options.splice,       options.edge_operand};
  for (int k = 0; k < n; ++k) {
    const int64_t kind = rng.PickWeighted(weights);
    if (kind < 0) break;
    std::unique_ptr<HloModule> backup = m->Clone();
    std::string what;
    switch (kind) {
      case 0:
        what = SwapOp(*m, rng, options.allow_nonfinite);
        break;
      case 1:
        what = ChangeDtype(*m, rng);
        break;
      case 2:
        what = ChangeLayout(*m, rng);
        break;
      case 3:
        what = PerturbConstant(*m, rng);
        break;
      case 5:
        what = EdgeOperand(*m, rng, options.allow_nonfinite);
        break;
      default: {
        const TraceSubgraph& donor =
            subgraphs_[rng.Uniform(0, subgraphs_.size() - 1)];
        what = Splice(*m, *donor.module, rng);
        if (!what.empty()) what += " (from " + donor.file + ")";
      }
    }
    if (what.empty()) {
      m = std::move(backup);
      continue;
    }
    if (!VerifyModule(*m).ok() ||
        (sg.mesh.size() > 1 && !CheckCollectives(*m, sg.mesh).ok())) {
      m = std::move(backup);
      continue;
    }
    mutations.push_back(what);
  }
  GeneratedCase c;
  c.hlo_text = PrintHloModule(*m);
  ASSIGN_OR_RETURN(std::unique_ptr<HloModule> parsed,
                   ParseGenerated(c.hlo_text, "trace sample", seed));
  c.inputs = TraceInputs(*parsed, seed);
  c.mesh = sg.mesh;
  for (int64_t d = 1; d < sg.mesh.size(); ++d) {
    for (Literal& l : TraceInputs(*parsed, DeviceSeed(seed, d))) {
      c.inputs.push_back(std::move(l));
    }
  }
  c.origin = Json::MakeObject();
  c.origin["kind"] = "trace";
  c.origin["file"] = sg.file;
  c.origin["computation"] = sg.computation;
  c.origin["root"] = sg.root;
  c.origin["scale"] = sg.scale;
  c.origin["mutations"] = std::move(mutations);
  c.origin["seed"] = seed;
  c.origin["options"] = options.ToJson();
  c.origin["metadata"] = Metadata(*m);
  if (sg.mesh.size() > 1) {
    c.origin["mesh"] = Json::MakeObject();
    c.origin["mesh"]["replicas"] = sg.mesh.replicas;
    c.origin["mesh"]["partitions"] = sg.mesh.partitions;
  }
  return c;
}

}  // namespace trench::fuzz
