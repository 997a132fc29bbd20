// Production traces through the target: every module of shared/traces/
// (see its README) is cut into subgraphs the code generator can compile
// (triage/fuzz/subgraph.h), and each subgraph is compiled, run on the
// simulator on random inputs and compared with the oracle. Shared by
// tests/compiler/codegen/traces_compile_test.cc (fails on any crash or
// disagreement) and bench/trace_compile.cc (prints the table).
//
// The predicate "can the target run this instruction": not a parameter;
// its opcode is in codegen::SupportedOps(); the instruction alone
// (IsolateInstruction), scaled by ScaleShapes (triage/fuzz/subgraph.h) when
// an array has more than kMaxElements elements, verifies; and a trial
// compile of it succeeds (reasons name the category, then the opcode:
// "unsupported opcode: rng"); verdicts are cached by the isolated
// module's name-free text. Subgraphs are cut with max_elements =
// kMaxElements, so production-size subgraphs are scaled down (a new
// program of the same structure) rather than simulated for minutes. Every
// subgraph is compiled (its instructions count as covered if it
// compiles); all or a sample of the compiled ones are run. Each
// instruction not covered is counted by reason (TraceResult::reasons).
//
// Agreement: the target's outputs must lie within the numerics contract's
// per-element bounds around the oracle's values (oracle/numerics_contract.h:
// matrix-unit precision, accumulation order, approximate transcendentals,
// rounding inside fusions), the rule hlo-diff applies to fuzzed programs.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "compiler/codegen/compile.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer.h"
#include "compiler/ir/hlo_text_file.h"
#include "compiler/ir/random_inputs.h"
#include "compiler/ir/verifier.h"
#include "oracle/comparator.h"
#include "oracle/evaluator.h"
#include "oracle/numerics_contract.h"
#include "tests/traces_dir.h"
#include "tpu/simulator.h"
#include "triage/fuzz/subgraph.h"

namespace trench::traces {

inline constexpr int64_t kMaxElements = int64_t{1} << 16;
inline constexpr int64_t kMaxSubgraphInstructions = 200;

// One module of a trace file and what became of it.
struct TraceResult {
  std::string where;    // "<path under traces>:<first line>".
  std::string skipped;  // Non-empty: why the module was not cut at all.
  // Instructions judged (parameters and scalar constants of the cut
  // computations excepted), accepted by the predicate, and covered: in a
  // cut subgraph (scaled where needed) that compiles.
  int64_t instructions = 0, accepted = 0, covered = 0;
  int64_t subgraphs = 0, subgraphs_compiled = 0, subgraphs_run = 0,
          subgraphs_agree = 0;
  int64_t subgraphs_sampled = 0;  // Compiled subgraphs run and compared.
  int64_t oracle_skipped = 0;     // Oracle could not evaluate (unsupported).
  // Failures: compile errors other than "cannot compile", run errors
  // (memory error, trap, timeout) and disagreements, one line each.
  std::vector<std::string> failures;
  // Subgraph compile refusals (Unimplemented/ResourceExhausted), counted
  // but not failures: each instruction compiled alone.
  std::vector<std::string> refusals;
  // Why judged instructions are not covered: reason -> instructions (see
  // RejectReason; "subgraph cannot be scaled" for CutResult::unscalable;
  // "subgraph compile refused: <op>" for the instructions of a subgraph
  // whose compile was refused).
  std::map<std::string, int64_t> reasons;
  int64_t subgraphs_scaled = 0;  // Subgraphs with scale_factor > 1.
  // Seconds spent judging instructions (the predicate), cutting and
  // scaling (the rest of CutSubgraphs), compiling subgraphs, running them
  // on the simulator and evaluating them with the oracle.
  double judge_s = 0, cut_s = 0, compile_s = 0, run_s = 0, oracle_s = 0;
};

inline double SecondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
      .count();
}

inline std::filesystem::path TracesDir() {
  return std::filesystem::path(TRENCH_TRACES_DIR);
}

inline std::vector<std::filesystem::path> TraceFiles() {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  if (!std::filesystem::exists(TracesDir(), ec)) return files;
  for (const auto& e :
       std::filesystem::recursive_directory_iterator(TracesDir(), ec)) {
    if (e.is_regular_file() && e.path().extension() == ".hlo") {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

inline std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A text that identifies `m` up to names: a copy with every computation
// and instruction renamed by position, printed (module name line
// dropped). Two modules with the same key compile alike.
inline std::string CanonicalText(const HloModule& m) {
  std::unique_ptr<HloModule> c = m.Clone();
  int64_t k = 0;
  for (HloComputation* comp : c->MakeComputationPostOrder()) {
    comp->set_name("c" + std::to_string(k++));
    for (HloInstruction* i : comp->MakeInstructionPostOrder()) {
      i->set_name("i" + std::to_string(k++));
    }
  }
  const std::string text = PrintHloModule(*c);
  const size_t eol = text.find('\n');
  return eol == std::string::npos ? text : text.substr(eol + 1);
}

// The predicate described in the file comment: "" if the target can run
// `instr`, else the reason. The verdict is a function of the isolated
// module alone, so it is cached by its CanonicalText: repeated
// instructions (a 16,000-instruction module has few distinct ones) are
// compiled once.
inline std::string RejectReason(const HloInstruction& instr) {
  static const std::set<std::string>* ops = [] {
    auto v = codegen::SupportedOps();
    return new std::set<std::string>(v.begin(), v.end());
  }();
  static auto* cache = new std::unordered_map<std::string, std::string>();
  if (instr.opcode() == HloOpcode::kParameter) return "parameter";
  const std::string op(OpcodeName(instr.opcode()));
  if (!ops->count(op)) return "unsupported opcode: " + op;
  std::unique_ptr<HloModule> alone = IsolateInstruction(instr);
  std::string key = CanonicalText(*alone);
  if (auto it = cache->find(key); it != cache->end()) return it->second;
  std::string why;
  if (!VerifyModule(*alone).ok()) {
    why = "isolated instruction does not verify: " + op;
  } else {
    if (!MaxElementsWithin(instr, kMaxElements)) {
      auto scaled = ScaleShapes(*alone, kMaxElements);
      if (scaled.ok()) {
        alone = std::move(scaled->module);
      } else {
        why = "too large, cannot be scaled: " + op;
      }
    }
    if (why.empty()) {
      auto exe = codegen::CompileModule(*alone, codegen::CompileOptions());
      if (!exe.ok()) {
        why = std::string(exe.status().code() == StatusCode::kUnimplemented
                              ? "trial compile refused: "
                              : "trial compile error: ") +
              op;
      }
    }
  }
  cache->emplace(std::move(key), why);
  return why;
}

inline bool CodegenCanRun(const HloInstruction& instr) {
  return RejectReason(instr).empty();
}

// The op a "cannot compile" message names ("hloc: cannot compile sort
// for ..." -> "sort"), or "?".
inline std::string RefusedOp(const std::string& message) {
  const std::string marker = "cannot compile ";
  const size_t at = message.find(marker);
  if (at == std::string::npos) return "?";
  const size_t from = at + marker.size();
  return message.substr(from, message.find(' ', from) - from);
}

// Compiles one subgraph; updates `r` (covered instructions, refusals and
// failures). Returns the executable, or nothing.
inline std::optional<tpu::Executable> CompileSubgraph(const Subgraph& sg,
                                                      const std::string& id,
                                                      TraceResult& r) {
  if (!sg.verified.ok()) {
    r.failures.push_back(id +
                         " subgraph does not verify: " + sg.verified.message());
    return std::nullopt;
  }
  const auto t = std::chrono::steady_clock::now();
  auto exe = codegen::CompileModule(*sg.module, codegen::CompileOptions());
  r.compile_s += SecondsSince(t);
  const int64_t n = static_cast<int64_t>(sg.instructions.size());
  if (!exe.ok()) {
    const StatusCode code = exe.status().code();
    const bool refused = code == StatusCode::kUnimplemented ||
                         code == StatusCode::kResourceExhausted;
    (refused ? r.refusals : r.failures)
        .push_back(id + " compile: " + exe.status().message());
    r.reasons[std::string(refused ? "subgraph compile refused: "
                                  : "subgraph compile error: ") +
              RefusedOp(exe.status().message())] += n;
    return std::nullopt;
  }
  ++r.subgraphs_compiled;
  r.covered += n;
  return std::move(*exe);
}

// Runs a compiled subgraph on random inputs and compares with the oracle;
// updates `r`.
inline void RunSubgraph(const Subgraph& sg, const tpu::Executable& exe,
                        const std::string& id, uint64_t seed, TraceResult& r) {
  const HloModule& m = *sg.module;
  ++r.subgraphs_sampled;
  std::vector<Literal> args = RandomArguments(*m.entry_computation(), seed);
  EvaluatorOptions eo;
  eo.max_while_iterations = 100000;
  eo.threads = 1;
  auto t = std::chrono::steady_clock::now();
  NumericsOptions no;
  no.evaluator = eo;
  auto expected = EvaluateWithBounds(m, args, no);
  r.oracle_s += SecondsSince(t);
  std::vector<std::vector<uint8_t>> bytes;
  for (const Literal& a : args) {
    for (const Literal* leaf : a.Leaves()) {
      bytes.emplace_back(leaf->bytes().begin(), leaf->bytes().end());
    }
  }
  t = std::chrono::steady_clock::now();
  auto run = tpu::RunExecutable(exe, bytes);
  r.run_s += SecondsSince(t);
  if (!run.ok()) {
    r.failures.push_back(id + " run: " + run.status().ToString());
    return;
  }
  if (run->report.status != tpu::RunStatus::kOk) {
    r.failures.push_back(
        id + " run: " + std::string(tpu::RunStatusName(run->report.status)) +
        ": " + run->report.message + " at " + run->report.kernel + ": " +
        run->report.instruction);
    return;
  }
  ++r.subgraphs_run;
  if (!expected.ok()) {
    ++r.oracle_skipped;
    return;
  }
  std::vector<Literal> leaves;
  for (const tpu::OutputBuffer& b : run->outputs) {
    Literal l(Shape(*PrimitiveTypeFromName(b.dtype), b.dims));
    if (!b.bytes.empty() && b.bytes.size() == l.mutable_bytes().size()) {
      std::copy(b.bytes.begin(), b.bytes.end(), l.mutable_bytes().begin());
    }
    leaves.push_back(std::move(l));
  }
  Literal actual = expected->nominal.shape().IsTuple()
                       ? Literal::Tuple(std::move(leaves))
                       : (leaves.empty() ? Literal() : std::move(leaves[0]));
  ComparisonResult c = CompareWithBounds(actual, *expected);
  if (c.ok()) {
    ++r.subgraphs_agree;
  } else {
    r.failures.push_back(id + " disagrees: " + c.ToText());
  }
}

// Cuts one parsed, verified module, compiles every subgraph and runs
// those sampled: all of them if max_run <= 0, else an evenly spaced
// sample of at most max_run of the compiled ones.
inline void RunModule(const HloModule& m, TraceResult& r, int64_t max_run) {
  auto judge = [&r](const HloInstruction& instr) {
    const auto t = std::chrono::steady_clock::now();
    std::string why = RejectReason(instr);
    r.judge_s += SecondsSince(t);
    if (!why.empty()) ++r.reasons[why];
    return why.empty();
  };
  SubgraphOptions options;
  options.max_instructions = kMaxSubgraphInstructions;
  options.max_elements = kMaxElements;
  const auto t = std::chrono::steady_clock::now();
  auto cut = CutSubgraphs(m, judge, options);
  r.cut_s += SecondsSince(t) - r.judge_s;
  if (!cut.ok()) {
    r.skipped = "cut: " + cut.status().message();
    return;
  }
  r.instructions = cut->instructions;
  r.accepted = cut->accepted;
  if (cut->unscalable > 0) {
    r.reasons["subgraph cannot be scaled"] += cut->unscalable;
  }
  const int64_t n = cut->subgraphs.size();
  r.subgraphs = n;
  std::vector<std::pair<const Subgraph*, tpu::Executable>> compiled;
  std::vector<uint64_t> seeds;
  for (int64_t k = 0; k < n; ++k) {
    const Subgraph& sg = cut->subgraphs[k];
    if (sg.scale_factor > 1) ++r.subgraphs_scaled;
    const std::string id = r.where + " [" + sg.computation + ": " +
                           (sg.instructions.empty() ? "" : sg.instructions[0]) +
                           "...]";
    auto exe = CompileSubgraph(sg, id, r);
    if (!exe) continue;
    compiled.emplace_back(&sg, std::move(*exe));
    seeds.push_back(static_cast<uint64_t>(k + 1));
  }
  const int64_t c = static_cast<int64_t>(compiled.size());
  int64_t next_pick = 0;
  for (int64_t k = 0; k < c; ++k) {
    if (max_run > 0 && c > max_run) {
      if (k != next_pick * c / max_run) continue;
      ++next_pick;
    }
    const Subgraph& sg = *compiled[k].first;
    const std::string id = r.where + " [" + sg.computation + ": " +
                           (sg.instructions.empty() ? "" : sg.instructions[0]) +
                           "...]";
    RunSubgraph(sg, compiled[k].second, id, seeds[k], r);
  }
}

// Every module of every trace file, in file order (max_run: see
// RunModule); `progress` (if set) is called with each module's result as
// soon as it is done.
inline std::vector<TraceResult> RunAllTraces(
    int64_t max_run = 0,
    const std::function<void(const TraceResult&)>& progress = nullptr) {
  std::vector<TraceResult> out;
  for (const std::filesystem::path& file : TraceFiles()) {
    const std::string rel =
        std::filesystem::relative(file, TracesDir()).string();
    for (const HloTextPiece& piece : SplitHloTextFile(ReadFile(file))) {
      TraceResult r;
      r.where = rel + ":" + std::to_string(piece.first_line);
      auto m = ParseHloModule(piece.text, piece.first_line);
      if (!m.ok()) {
        r.skipped = "parser refuses: " + m.status().message();
      } else if (Status v = VerifyModule(**m); !v.ok()) {
        r.skipped = "verifier rejects: " + v.message();
      } else {
        RunModule(**m, r, max_run);
      }
      if (progress) progress(r);
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace trench::traces
