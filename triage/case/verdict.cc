#include "triage/case/verdict.h"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <optional>
#include <regex>
#include <set>
#include <vector>

#include "base/sha256.h"
#include "compiler/ir/collective_groups.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "compiler/ir/opcode.h"
#include "oracle/comparator.h"
#include "oracle/numerics_contract.h"
#include "oracle/spmd.h"

namespace trench::hlo_diff {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

int64_t ArrayLeafCount(const Shape& s) {
  int64_t n = 0;
  ForEachLeafShape(s, [&](const Shape& l) { n += l.IsArray(); });
  return n;
}

// The instruction producing array leaf `leaf` of `root`'s value: descends
// through tuple instructions; stops at any other instruction.
const HloInstruction* LeafProducer(const HloInstruction* instr, int64_t leaf) {
  while (instr->opcode() == HloOpcode::kTuple) {
    const HloInstruction* next = nullptr;
    for (const HloInstruction* op : instr->operands()) {
      const int64_t n = ArrayLeafCount(op->shape());
      if (leaf < n) {
        next = op;
        break;
      }
      leaf -= n;
    }
    if (next == nullptr) return instr;
    instr = next;
  }
  return instr;
}

bool IsCrashClass(TargetStatus s) {
  return s == TargetStatus::kCompileCrash || s == TargetStatus::kRunCrash ||
         s == TargetStatus::kTimeout || s == TargetStatus::kMemoryError;
}

// The verdict status of a crash class (IsCrashClass).
VerdictStatus CrashStatus(TargetStatus s) {
  switch (s) {
    case TargetStatus::kCompileCrash:
      return VerdictStatus::kCompileCrash;
    case TargetStatus::kRunCrash:
      return VerdictStatus::kRunCrash;
    case TargetStatus::kTimeout:
      return VerdictStatus::kTimeout;
    default:
      return VerdictStatus::kMemoryError;
  }
}

// The first memory error's kind from a report (tpusim's "memory_errors"),
// searched in the report and its "run" part.
std::string MemoryErrorKind(const Json& report) {
  for (const Json* r : {&report, report.Find("run")}) {
    if (r == nullptr) continue;
    const Json* errs = r->Find("memory_errors");
    if (errs && errs->is_array() && errs->size() > 0) {
      const Json* kind = errs->array()[0].Find("kind");
      if (kind && kind->is_string()) return kind->string_value();
    }
  }
  return "";
}

// Why the target cannot run an SPMD program on `mesh` ("" when it can):
// a mesh larger than its slice, or device ops (collectives, partition-id,
// replica-id) its slice does not list.
std::string SpmdUnsupported(const HloModule& module, const DeviceMesh& mesh,
                            const TargetDescription::Slice& slice) {
  const std::string shape = "the case runs on a mesh of " +
                            std::to_string(mesh.replicas) + " x " +
                            std::to_string(mesh.partitions) + " devices";
  if (mesh.size() > slice.chips) {
    return shape + "; the target runs " +
           (slice.chips == 1 ? std::string("one device")
                             : std::to_string(slice.chips) + " devices");
  }
  std::set<std::string> missing;
  for (const HloComputation* comp : module.computations()) {
    for (const HloInstruction* i : comp->instructions()) {
      const std::string op(OpcodeName(i->opcode()));
      if (IsDeviceOp(i->opcode()) &&
          std::find(slice.collectives.begin(), slice.collectives.end(), op) ==
              slice.collectives.end()) {
        missing.insert(op);
      }
    }
  }
  if (missing.empty()) return "";
  std::string list;
  for (const std::string& op : missing) list += (list.empty() ? "" : ", ") + op;
  return shape + "; the target's slice does not list " + list;
}

}  // namespace

std::string NormalizeMessage(std::string_view message) {
  static const std::regex* const kRules[] = {
      new std::regex(R"([^\s'"`]*/[^\s'"`]*)"),
      new std::regex(R"(0[xX][0-9a-fA-F]+)"),
      new std::regex(R"('[^'\s]*[0-9%][^'\s]*')"),
      new std::regex(R"(%[A-Za-z0-9_.\-]+)"),
      new std::regex(R"(\b[A-Za-z_][A-Za-z0-9_\-]*(\.[0-9]+)+\b)"),
      // Array shapes (bf16[2,3]{1,0}): one bug shows them per program.
      new std::regex(R"(\b(pred|[a-z]{1,2}[0-9]+)\[[0-9,]*\](\{[0-9,]*\})?)"),
      // A line:column before a message (the verifier's, the parser's).
      new std::regex(R"(\b[0-9]+:[0-9]+:\s*)"),
      new std::regex(R"([0-9]+)"),
      new std::regex(R"(\s+)"),
  };
  static const char* const kReplacements[] = {
      "<path>",  "<hex>", "'<name>'", "%<name>", "<name>",
      "<shape>", "",      "N",        " ",
  };
  std::string s(message);
  for (size_t i = 0; i < std::size(kRules); ++i) {
    s = std::regex_replace(s, *kRules[i], kReplacements[i]);
  }
  const size_t b = s.find_first_not_of(' ');
  const size_t e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<std::string> OpMixNear(const HloModule& module, int64_t leaf,
                                   int depth) {
  const HloInstruction* producer =
      LeafProducer(module.entry_computation()->root_instruction(), leaf);
  std::set<std::string> ops;
  std::vector<const HloInstruction*> level = {producer};
  std::set<const HloInstruction*> seen = {producer};
  for (int d = 0; d <= depth && !level.empty(); ++d) {
    std::vector<const HloInstruction*> next;
    for (const HloInstruction* i : level) {
      if (i->opcode() != HloOpcode::kParameter &&
          i->opcode() != HloOpcode::kConstant) {
        ops.insert(std::string(OpcodeName(i->opcode())));
      }
      for (const HloInstruction* op : i->operands()) {
        if (seen.insert(op).second) next.push_back(op);
      }
    }
    level = std::move(next);
  }
  return std::vector<std::string>(ops.begin(), ops.end());
}

Json WithSignatureHash(Json signature) {
  if (!signature.is_object()) signature = Json::MakeObject();
  Json copy = Json::MakeObject();
  for (const auto& [k, v] : signature.object()) {
    if (k != "sig") copy[k] = v;
  }
  copy["sig"] = Sha256Hex(copy.Dump()).substr(0, 16);
  return copy;
}

Verdict InvalidInputVerdict(const std::string& message) {
  Verdict v;
  v.status = VerdictStatus::kInvalidInput;
  v.message = message;
  v.signature.status = v.status;
  v.signature.sig = SignatureHash(v.signature);
  return v;
}

StatusOr<Verdict> ComputeVerdict(const Case& c, TargetRunner& runner,
                                 const std::string& work_dir,
                                 const VerdictOptions& options) {
  auto module = ParseCaseModule(c.module_text, "module.hlo");
  if (!module.ok()) return InvalidInputVerdict(module.status().message());
  return ComputeVerdict(c, **module, runner, work_dir, options);
}

StatusOr<Verdict> ComputeVerdict(const Case& c, const HloModule& module,
                                 TargetRunner& runner,
                                 const std::string& work_dir,
                                 const VerdictOptions& options) {
  const int64_t devices = c.mesh.size();
  std::vector<std::vector<Literal>> args;  // By device.
  if (devices > 1) {
    StatusOr<std::vector<std::vector<Literal>>> a = DeviceArguments(module, c);
    if (!a.ok()) return InvalidInputVerdict(a.status().message());
    args = std::move(a).value();
  } else {
    if (Status st = CheckInputs(module, c.inputs); !st.ok()) {
      return InvalidInputVerdict(st.message());
    }
    // The oracle takes one argument per parameter (tuples assembled).
    args.push_back(ParameterArguments(module, c.inputs));
  }
  Verdict v;
  v.case_sha = CaseSha256(c);
  v.compare = c.options.compare;
  if (devices > 1) {
    if (std::string why = SpmdUnsupported(module, c.mesh, runner.TargetSlice());
        !why.empty()) {
      v.status = VerdictStatus::kTargetUnsupported;
      v.message = why;
      v.signature.status = v.status;
      v.signature.sig = SignatureHash(v.signature);
      return v;
    }
  }

  // The oracle: nominal values, with bounds under the numerics contract;
  // one per device.
  auto start = Clock::now();
  std::vector<BoundedResult> bounded;
  std::vector<Literal> nominal;
  Status oracle_status;
  if (c.options.compare == CompareKind::kContract) {
    NumericsOptions no;
    no.evaluator = options.evaluator;
    StatusOr<std::vector<BoundedResult>> b =
        devices > 1 ? EvaluateSpmdWithBounds(module, args, c.mesh, no)
                    : [&]() -> StatusOr<std::vector<BoundedResult>> {
      ASSIGN_OR_RETURN(BoundedResult one,
                       EvaluateWithBounds(module, args[0], no));
      std::vector<BoundedResult> all;
      all.push_back(std::move(one));
      return all;
    }();
    if (b.ok()) {
      bounded = std::move(b).value();
      int64_t undetermined = 0;
      for (const BoundedResult& r : bounded) {
        for (const BoundedOutput& o : r.outputs) undetermined += o.undetermined;
      }
      v.oracle.undetermined = undetermined;
    } else {
      oracle_status = b.status();
    }
  } else if (devices > 1) {
    SpmdOptions so;
    so.mesh = c.mesh;
    so.evaluator = options.evaluator;
    StatusOr<std::vector<Literal>> l = EvaluateSpmd(module, args, so);
    if (l.ok())
      nominal = std::move(l).value();
    else
      oracle_status = l.status();
  } else {
    StatusOr<Literal> l = Evaluate(module, args[0], options.evaluator);
    if (l.ok())
      nominal.push_back(std::move(l).value());
    else
      oracle_status = l.status();
  }
  v.oracle.status = oracle_status.ok() ? "ok"
                    : oracle_status.code() == StatusCode::kInvalidArgument
                        ? "invalid_input"
                        : "unsupported";
  v.oracle.message = oracle_status.ok() ? "" : oracle_status.ToString();
  v.oracle.seconds = SecondsSince(start);

  Signature& sig = v.signature;
  auto finish = [&](VerdictStatus status, const std::string& message) {
    v.status = status;
    v.message = message;
    sig.status = status;
    sig.sig = SignatureHash(sig);
    return v;
  };
  // A program that runs away in the oracle (its while-loop limit) has no
  // expected result; the target would only burn its timeout on it.
  if (oracle_status.code() == StatusCode::kResourceExhausted) {
    return finish(VerdictStatus::kOracleUnsupported,
                  "not run on the target: " + oracle_status.ToString());
  }
  ASSIGN_OR_RETURN(TargetResult t, runner.Run(c, module, work_dir));
  std::vector<Literal> leaves = std::move(t.outputs);
  t.outputs.clear();
  t.stderr_text.clear();
  v.target = t;

  if (!oracle_status.ok() &&
      oracle_status.code() == StatusCode::kInvalidArgument) {
    return finish(VerdictStatus::kInvalidInput,
                  "oracle: " + oracle_status.message());
  }
  if (t.status == TargetStatus::kBadInput) {
    return finish(VerdictStatus::kInvalidInput,
                  "target rejected the case: " + t.message);
  }
  if (IsCrashClass(t.status)) {
    sig.stage = t.stage;
    std::string msg = t.message;
    if (t.status == TargetStatus::kMemoryError) {
      const std::string kind = MemoryErrorKind(t.report);
      if (!kind.empty()) msg = kind;
    }
    sig.message = NormalizeMessage(msg);
    if (!t.last_pass.empty()) sig.pass = t.last_pass;
    return finish(CrashStatus(t.status), t.message);
  }
  if (!oracle_status.ok()) {
    return finish(VerdictStatus::kOracleUnsupported, oracle_status.ToString());
  }
  if (t.status == TargetStatus::kCompileError) {
    return finish(VerdictStatus::kTargetUnsupported, t.message);
  }

  // Both ran: compare the target's outputs with the oracle's, device by
  // device (device-major leaves); the first device that diverges decides.
  const int64_t want = ArrayLeafCount(
      bounded.empty() ? nominal[0].shape() : bounded[0].nominal.shape());
  std::string structure_error = t.output_error;
  if (structure_error.empty() && int64_t(leaves.size()) != want * devices) {
    structure_error =
        "the target wrote " + std::to_string(leaves.size()) +
        " outputs, the module has " + std::to_string(want) +
        (devices > 1 ? " per device on " + std::to_string(devices) + " devices"
                     : "");
  }
  int64_t bad_leaf = -1, bad_device = -1;
  bool value_mismatch = false;
  if (!structure_error.empty()) {
    v.structure_error = structure_error;
    bad_leaf = devices > 1 ? int64_t(leaves.size()) % std::max<int64_t>(want, 1)
                           : int64_t(leaves.size());
    value_mismatch = true;
  }
  for (int64_t d = 0; d < devices && structure_error.empty(); ++d) {
    const Literal& expected = bounded.empty() ? nominal[d] : bounded[d].nominal;
    std::vector<Literal> mine(
        std::make_move_iterator(leaves.begin() + d * want),
        std::make_move_iterator(leaves.begin() + (d + 1) * want));
    size_t next = 0;
    Literal actual = AssembleLeaves(expected.shape(), mine, next);
    ComparisonResult cmp =
        c.options.compare == CompareKind::kContract
            ? CompareWithBounds(actual, bounded[d])
        : c.options.compare == CompareKind::kNear
            ? CompareLiterals(actual, expected)
            : CompareLiterals(actual, expected, ComparisonOptions::Exact());
    const bool first_bad = bad_device < 0;
    if (!cmp.structure_error.empty() && first_bad) {
      v.structure_error = cmp.structure_error;
      value_mismatch = true;
    }
    // Indexed as CompareWithBounds indexes its outputs.
    const std::vector<const Literal*> actual_leaves = actual.Leaves();
    for (const OutputComparison& o : cmp.outputs) {
      if (o.ok() || !first_bad) continue;
      if (bad_leaf < 0) bad_leaf = o.index;
      if (!o.shape_error.empty() || o.mismatch_count > 0) value_mismatch = true;
      // Where it differs, for whoever shows the verdict (error_map.h).
      if (!bounded.empty() && o.shape_error.empty() &&
          static_cast<int>(v.error_maps.size()) < kMaxErrorMaps &&
          o.index >= 0 && o.index < int64_t(actual_leaves.size()) &&
          o.index < int64_t(bounded[d].outputs.size())) {
        const BoundedOutput& b = bounded[d].outputs[o.index];
        if (std::optional<ErrorMap> m = ErrorMapOf(
                o.index, *actual_leaves[o.index], b.nominal, b.allowed)) {
          v.error_maps.push_back(std::move(*m));
        }
      }
    }
    if (first_bad && (bad_leaf >= 0 || value_mismatch)) {
      bad_device = d;
      v.outputs = std::move(cmp.outputs);
    } else if (d == 0) {
      v.outputs = std::move(cmp.outputs);
    }
  }
  const Literal& expected =
      bounded.empty() ? nominal[std::max<int64_t>(bad_device, 0)]
                      : bounded[std::max<int64_t>(bad_device, 0)].nominal;
  if (bad_leaf < 0 && !value_mismatch) return finish(VerdictStatus::kPass, "");
  std::vector<const Literal*> exp_leaves;
  for (const Literal* l : expected.Leaves()) {
    if (l->shape().IsArray()) exp_leaves.push_back(l);
  }
  const int64_t leaf = std::clamp<int64_t>(bad_leaf, 0, want - 1);
  if (want > 0) {
    sig.dtype =
        std::string(PrimitiveTypeName(exp_leaves[leaf]->element_type()));
    sig.ops = OpMixNear(module, leaf);
  }
  const VerdictStatus status =
      value_mismatch ? VerdictStatus::kMismatch : VerdictStatus::kNanMismatch;
  std::string message = "output " + std::to_string(leaf) + " differs";
  if (!structure_error.empty()) message = structure_error;
  if (devices > 1 && bad_device >= 0) {
    message = "device " + std::to_string(bad_device) + ": " + message;
  }
  return finish(status, message);
}

StatusOr<Verdict> Diff(const Case& c, const HloModule& module,
                       const TargetSpec& spec, const std::string& work_dir,
                       const VerdictOptions& options) {
  std::string work = work_dir;
  if (work.empty()) {
    char tmpl[] = "/tmp/hlo-diff.XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      return IoError("cannot create a temporary directory");
    }
    work = tmpl;
  }
  StatusOr<Verdict> v = [&] {
    TargetRunner runner(spec);
    return ComputeVerdict(c, module, runner, work, options);
  }();
  if (work_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(work, ec);
  }
  return v;
}

}  // namespace trench::hlo_diff
