// The trace corpus: real HLO dumps cut into runnable subgraphs, sampled
// with mutations.
//
// Load() reads HLO text files (lit-style files with `// -----` are split,
// compiler/ir/hlo_text_file.h) or directories (every *.hlo below, sorted),
// parses each module, and cuts it with CutSubgraphs (compiler/ir/
// subgraph.h): instructions the `supported` predicate rejects become
// parameters; subgraphs over max_elements per array are scaled down with
// ScaleShapes, keeping the structure. Subgraphs are deduplicated by their
// text up to names (a 100-layer model gives its layer once). Metadata
// (op_name, source_file) stays on the instructions and is summarized in
// the origin.
//
// Sample(seed, options) picks a file, then one of its subgraphs, applies
// 0..max_mutations mutations (mutate.h) that each must verify, and returns
// the program with inputs and origin {"kind":"trace","file":..,
// "computation":..,"root":..,"scale":..,"mutations":[..],"seed":..,
// "metadata":[{"op_name":..,"source_file":..},..]}. Deterministic per
// (seed, options) for a corpus loaded from the same files.
//
// Inputs: RandomArguments(entry, seed) (random_inputs.h), except that a
// float parameter that reaches the argument of log, sqrt, rsqrt, log1p,
// the divisor of divide/remainder or the base of power (directly or through
// convert, broadcast, reshape, bitcast, copy, transpose, slice, reverse,
// concatenate, dynamic-slice) gets |x| + 0.5 (values in [0.5, 4.5)), so
// that real formulas see their domain.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "triage/fuzz/generator.h"
#include "triage/fuzz/subgraph.h"

namespace trench::fuzz {

struct TraceCorpusOptions {
  // Which instructions a subgraph may contain (judged at trace size).
  // Default (empty): OracleEvaluates(opcode), no token in the shape.
  CanRunPredicate supported;
  int64_t max_elements = 1 << 14;  // Per array after scaling.
  int64_t max_instructions = 64;   // Per subgraph.
  // The default predicate also accepts collectives, partition-id and
  // replica-id: subgraphs holding them are SPMD programs on the trace's
  // mesh scaled to at most max_devices devices (SubgraphOptions), sampled
  // with inputs per device (TraceInputs with DeviceSeed(seed, d)) and
  // origin["mesh"]; mutations must keep CheckCollectives.
  bool collectives = false;
  int64_t max_devices = 4;
};

struct MutationOptions {
  int max_mutations = 3;  // Uniform in [0, max_mutations].
  // Relative weights of the mutation kinds.
  double swap_op = 3, change_dtype = 1, change_layout = 1, perturb_constant = 1,
         splice = 1;
  // EdgeOperand (mutate.h): an operand of an op with edge semantics made of
  // interesting values.
  double edge_operand = 2;
  bool allow_nonfinite = false;  // Lets SwapOp introduce unbounded ops.
  Json ToJson() const;
};

struct TraceSubgraph {
  std::string file;         // As given to Load (directory-relative path).
  std::string computation;  // The cut computation.
  std::string root;         // Last original instruction of the subgraph.
  int64_t scale = 1;        // ScaleShapes factor.
  DeviceMesh mesh;          // 1 x 1 unless it holds device ops.
  std::unique_ptr<HloModule> module;
};

struct TraceLoadStats {
  int64_t files = 0, modules = 0, parse_failures = 0, subgraphs = 0,
          duplicates = 0, unscalable = 0;
  std::vector<std::string> failures;  // "<file>:<line>: <message>".
};

class TraceCorpus {
 public:
  explicit TraceCorpus(TraceCorpusOptions options = {});

  // Loads files or directories. Errors: NotFound for a path that does not
  // exist; a file that does not parse is counted (stats().failures), not an
  // error.
  Status Load(const std::vector<std::string>& paths);
  // Loads one module text (all of its pieces) under the name `file`.
  Status LoadText(std::string_view text, const std::string& file);

  const std::vector<TraceSubgraph>& subgraphs() const { return subgraphs_; }
  const TraceLoadStats& stats() const { return stats_; }

  // See the file comment. Errors: FailedPrecondition on an empty corpus.
  StatusOr<GeneratedCase> Sample(uint64_t seed,
                                 const MutationOptions& options) const;

 private:
  TraceCorpusOptions options_;
  std::vector<TraceSubgraph> subgraphs_;
  std::vector<std::vector<size_t>> by_file_;  // Subgraph indices per file.
  std::vector<std::string> seen_;             // Canonical texts (sorted).
  TraceLoadStats stats_;
};

// Domain-aware random inputs described in the file comment, one per array
// leaf of the entry parameters (the form of hlo_diff::Case::inputs: a
// tuple-shaped parameter takes one per leaf).
std::vector<Literal> TraceInputs(const HloModule& module, uint64_t seed);

}  // namespace trench::fuzz
