// Building HLO module text for the fuzzer: a deterministic random source,
// values with their shapes and magnitude bounds, and builders that append
// instructions to computations and assemble a module in XLA's text format.
//
// The builders emit text only; they do not check what they are given. The
// generator (generator.h) parses and verifies the whole module before it
// hands it out, so a malformed line is a generator bug caught there.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/ir/dtype.h"
#include "compiler/ir/shape.h"

namespace trench::fuzz {

// SplitMix64 (compiler/ir/random_inputs.h): the same stream on every
// machine and standard library (no std::uniform_*_distribution).
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t Next();
  // Uniform integer in [lo, hi]. REQUIRES: lo <= hi.
  int64_t Uniform(int64_t lo, int64_t hi);
  // Uniform double in [0, 1).
  double Real();
  bool Chance(double p) { return Real() < p; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Uniform(0, static_cast<int64_t>(v.size()) - 1)];
  }
  // Index drawn with probability proportional to weights[i] (>= 0); -1 if
  // every weight is 0.
  int64_t PickWeighted(const std::vector<double>& weights);

 private:
  uint64_t state_;
};

// A value of a computation: an array instruction, its shape (layout set
// only when non-default) and a bound on the magnitude of its elements
// (real and imaginary parts for complex; +inf when unknown).
struct Value {
  std::string name;
  Shape shape;
  double bound = 0;
};

// "f32[2,3]" or "f32[2,3]{0,1}" (the layout only when set).
std::string ShapeText(const Shape& shape);
// The text of a scalar constant of type `t` with value v: "1.5", "true",
// "-inf", "(2, 0)". Integers are truncated toward zero.
std::string ScalarText(PrimitiveType t, double v);
// "{1,2,3}" for a list of integers.
std::string ListText(const std::vector<int64_t>& v);

// One computation being built. Instruction names are unique in the module
// (a counter shared through the owning ProgramBuilder).
class ComputationBuilder {
 public:
  ComputationBuilder(std::string name, int64_t* counter);

  const std::string& name() const { return name_; }
  int64_t num_parameters() const { return params_; }

  // Appends `parameter(k)` of `shape` (k = next parameter number).
  Value AddParameter(const Shape& shape, double bound);
  // Appends `<fresh> = <shape> <opcode>(<operands>)[, <attrs>]` and
  // returns it with `bound`. `shape` may be a tuple (the Value then only
  // names it).
  Value Add(const Shape& shape, std::string_view opcode,
            const std::vector<std::string>& operands, std::string_view attrs,
            double bound);
  // A scalar constant of type t.
  Value Constant(PrimitiveType t, double v);
  // Marks `name` as the root. REQUIRES: it was returned by this builder.
  void SetRoot(const std::string& name) { root_ = name; }
  // The computation's text; ENTRY prefix when `entry`.
  std::string Text(bool entry) const;

 private:
  std::string name_;
  int64_t* counter_;
  int64_t params_ = 0;
  std::vector<std::string> lines_;
  std::vector<std::string> names_;
  std::string root_;
};

// A module being built: the entry computation plus called computations,
// which are printed before the entry (the parser accepts any order; XLA
// prints callees first).
class ProgramBuilder {
 public:
  explicit ProgramBuilder(std::string module_name);

  ComputationBuilder& entry() { return *entry_; }
  // A new computation named `<prefix>.<n>`; Finish() it when done.
  std::unique_ptr<ComputationBuilder> NewComputation(std::string_view prefix);
  // Adds a finished computation (root set) to the module.
  void Finish(const ComputationBuilder& c);
  // The cached scalar computation (x, y) -> op(x, y) on type t, e.g. the
  // reducer "add" for f32. `op` is any binary elementwise opcode text.
  std::string ScalarBinary(PrimitiveType t, std::string_view op);
  // The module text.
  std::string Text() const;

 private:
  std::string name_;
  int64_t counter_ = 0;
  std::unique_ptr<ComputationBuilder> entry_;
  std::vector<std::string> computations_;
  std::map<std::string, std::string> scalar_cache_;
};

}  // namespace trench::fuzz
