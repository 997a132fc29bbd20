// Features of generated programs that issue 21's "values and shapes at the
// edges" asks for, read from a program's text and inputs (not from the
// generator's intentions), and their histogram over many programs.
//
// ProgramFeatures(module, inputs) returns the set of feature keys present
// in one program:
//   value.const.<kind>, value.const.<dtype>.<kind>
//       a constant (any computation) holds an interesting value of that
//       kind (interesting_values.h);
//   value.input.<kind>, value.input.<dtype>.<kind>
//       an entry parameter's input holds one;
//   edge_op.<op>, edge_op.<op>.<source>
//       an op with edge semantics (shift-left, shift-right-logical,
//       shift-right-arithmetic, divide, remainder, power, maximum, minimum,
//       clamp, compare.<DIR>, convert.<from>.<to>) reads an edge operand: a
//       value holding an interesting value other than 0, 1, -1, 2 (but 0
//       counts as a divisor and as an exponent); source: "constant"
//       (reached through ops the constant folder folds), "opaque" (a
//       constant behind an opt-barrier: out of the folder's and the
//       simplifier's reach) or "param" (an entry parameter's input);
//   convert_chain, convert_chain.<sign_flip|narrowing|widening>
//       a convert of a convert (the chains the simplifier merges when the
//       inner one is lossless), by what the inner one does;
//   fold.in_reach / fold.out_of_reach
//       such an op whose operands all are foldable constants / not;
//   dim.<label>
//       an array of the module has an extent next to a tiling or VMEM
//       boundary (size_boundaries.h NearBoundary labels: "lanes-1",
//       "2*sublanes+1", ...);
//   program.edge_op, program.dim_boundary: any edge op / boundary extent.
//
// FeatureHistogram counts, per key, the programs that have it.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <span>
#include <string>

#include "base/json.h"
#include "compiler/ir/hlo_module.h"
#include "compiler/ir/literal.h"
#include "triage/fuzz/generator.h"
#include "triage/fuzz/size_boundaries.h"
#include "triage/fuzz/trace_corpus.h"

namespace trench::fuzz {

// The feature keys of one program (see the file comment). `inputs` are the
// entry parameters' values in order (array parameters; others ignored).
std::set<std::string> ProgramFeatures(
    const HloModule& module, std::span<const Literal> inputs,
    const std::vector<ElementBoundary>& boundaries = DefaultBoundaries());

class FeatureHistogram {
 public:
  void Add(const std::set<std::string>& features);
  int64_t programs() const { return programs_; }
  // Programs with `key` (0 if none).
  int64_t count(const std::string& key) const;
  const std::map<std::string, int64_t>& counts() const { return counts_; }
  // {"programs": N, "features": {key: count, ...}}.
  Json ToJson() const;
  // A Markdown table per group (value, edge_op, fold, dim, program): key,
  // programs, share. Per-dtype value rows and per-source edge rows are
  // summarized into columns to keep it readable.
  std::string Markdown() const;

 private:
  int64_t programs_ = 0;
  std::map<std::string, int64_t> counts_;
};

// The features of n programs: program i is synthetic, GenerateSynthetic(
// seed + i, generator), or, when `corpus` is non-empty, with probability
// trace_share a trace sample, corpus->Sample(seed + i, mutation); each
// source has its own histogram. A program that fails to generate is
// counted in `errors` (the first message kept), not in a histogram.
struct FeatureRun {
  FeatureHistogram synthetic, trace;
  int64_t errors = 0;
  std::string first_error;
  Json ToJson() const;
};
FeatureRun MeasureFeatures(uint64_t seed, int64_t n,
                           const GeneratorOptions& generator,
                           const TraceCorpus* corpus, double trace_share,
                           const MutationOptions& mutation);

}  // namespace trench::fuzz
