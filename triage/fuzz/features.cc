// Feature keys of generated programs and their histogram (features.h).
#include "triage/fuzz/features.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <unordered_map>

#include "compiler/ir/dtype.h"
#include "compiler/ir/hlo_computation.h"
#include "compiler/ir/hlo_instruction.h"
#include "triage/fuzz/interesting_values.h"
#include "triage/fuzz/program_builder.h"

namespace trench::fuzz {
namespace {

using K = InterestingKind;
using O = HloOpcode;

using Kinds = std::set<K>;

Kinds LiteralKinds(const Literal& l) {
  Kinds out;
  if (!l.shape().IsArray()) return out;
  const int64_t n = l.element_count();
  for (int64_t i = 0; i < n; ++i) {
    if (auto k = ClassifyInteresting(l, i)) out.insert(*k);
  }
  return out;
}

bool Trivial(K k) {
  return k == K::kZero || k == K::kOne || k == K::kMinusOne || k == K::kTwo;
}

// Where an operand's values come from, looking through ops that move
// values without changing them.
struct Origin {
  Kinds kinds;
  std::string source;  // "constant", "opaque", "param".
  bool foldable = false;
};

class Tracer {
 public:
  Tracer(const HloModule& m, std::span<const Literal> inputs)
      : entry_(m.entry_computation()), inputs_(inputs) {}

  const Kinds& ConstKinds(const HloInstruction* c) {
    auto it = const_kinds_.find(c);
    if (it != const_kinds_.end()) return it->second;
    return const_kinds_[c] = LiteralKinds(c->literal());
  }

  const Kinds& ParamKinds(const HloInstruction* p) {
    auto it = param_kinds_.find(p);
    if (it != param_kinds_.end()) return it->second;
    Kinds k;
    const int64_t n = p->attrs().parameter_number;
    if (n >= 0 && n < static_cast<int64_t>(inputs_.size())) {
      k = LiteralKinds(inputs_[n]);
    }
    return param_kinds_[p] = std::move(k);
  }

  std::optional<Origin> Trace(const HloInstruction* i, int depth = 0) {
    if (depth > 16) return std::nullopt;
    switch (i->opcode()) {
      case O::kConstant:
        if (!i->has_literal()) return std::nullopt;
        return Origin{ConstKinds(i), "constant", true};
      case O::kParameter:
        if (i->parent() != entry_) return std::nullopt;
        return Origin{ParamKinds(i), "param", false};
      case O::kBroadcast:
      case O::kReshape:
      case O::kCopy:
      case O::kBitcast:
      case O::kTranspose:
      case O::kSlice:
      case O::kReverse:
        return Trace(i->operand(0), depth + 1);
      case O::kGetTupleElement: {
        const HloInstruction* t = i->operand(0);
        if (t->opcode() != O::kOptimizationBarrier) return std::nullopt;
        const HloInstruction* tu = t->operand(0);
        const int64_t k = i->attrs().tuple_index;
        if (tu->opcode() != O::kTuple || k < 0 || k >= tu->operand_count()) {
          return std::nullopt;
        }
        auto o = Trace(tu->operand(k), depth + 1);
        if (o) {
          o->source = o->source == "param" ? "param" : "opaque";
          o->foldable = false;
        }
        return o;
      }
      default:
        return std::nullopt;
    }
  }

 private:
  const HloComputation* entry_;
  std::span<const Literal> inputs_;
  std::unordered_map<const HloInstruction*, Kinds> const_kinds_, param_kinds_;
};

// The label of an op with edge semantics, or "".
std::string EdgeLabel(const HloInstruction& i) {
  if (!HasEdgeSemantics(i.opcode())) return "";
  if (i.opcode() == O::kCompare) {
    return "compare." +
           std::string(ComparisonDirectionName(i.attrs().comparison_direction));
  }
  if (i.opcode() == O::kConvert) {
    if (!i.shape().IsArray() || !i.operand(0)->shape().IsArray()) return "";
    return "convert." +
           std::string(
               PrimitiveTypeName(i.operand(0)->shape().element_type())) +
           "." + std::string(PrimitiveTypeName(i.shape().element_type()));
  }
  return std::string(OpcodeName(i.opcode()));
}

bool IsEdge(const HloInstruction& op, int64_t operand, const Kinds& kinds) {
  for (K k : kinds) {
    if (!Trivial(k)) return true;
  }
  const bool zero_matters = operand == 1 && (op.opcode() == O::kDivide ||
                                             op.opcode() == O::kRemainder ||
                                             op.opcode() == O::kPower);
  return zero_matters && kinds.count(K::kZero);
}

void AddKinds(std::set<std::string>& out, const std::string& where,
              PrimitiveType t, const Kinds& kinds) {
  const std::string type(PrimitiveTypeName(t));
  for (K k : kinds) {
    const std::string name(InterestingKindName(k));
    out.insert("value." + where + "." + name);
    out.insert("value." + where + "." + type + "." + name);
    out.insert("value.any." + type + "." + name);
  }
}

}  // namespace

namespace {

// For a convert of a convert: "sign_flip" when the inner one goes between
// integers of one width and other signedness, "narrowing" when it loses
// bits or exponent range, else "widening"; "" for other instructions.
std::string ChainLabel(const HloInstruction& i) {
  if (i.opcode() != O::kConvert || i.operand(0)->opcode() != O::kConvert) {
    return "";
  }
  const Shape& mid = i.operand(0)->shape();
  const Shape& from = i.operand(0)->operand(0)->shape();
  if (!mid.IsArray() || !from.IsArray()) return "";
  const PrimitiveType f = from.element_type(), m = mid.element_type();
  if (IsInteger(f) && IsInteger(m) && BitWidth(f) == BitWidth(m) &&
      IsSigned(f) != IsSigned(m)) {
    return "sign_flip";
  }
  return BitWidth(m) < BitWidth(f) || (IsFloat(f) && IsInteger(m)) ? "narrowing"
                                                                   : "widening";
}

}  // namespace

std::set<std::string> ProgramFeatures(
    const HloModule& module, std::span<const Literal> inputs,
    const std::vector<ElementBoundary>& boundaries) {
  std::set<std::string> out;
  Tracer tracer(module, inputs);
  std::map<int64_t, std::vector<std::string>> near;  // Extent -> labels.
  auto dims = [&](const Shape& s) {
    ForEachLeafShape(s, [&](const Shape& leaf) {
      if (!leaf.IsArray()) return;
      for (int64_t d : leaf.dims()) {
        auto it = near.find(d);
        if (it == near.end())
          it = near.emplace(d, NearBoundary(d, boundaries)).first;
        for (const std::string& l : it->second) {
          out.insert("dim." + l);
          out.insert("program.dim_boundary");
        }
      }
    });
  };
  for (const HloComputation* c : module.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      dims(i->shape());
      if (i->opcode() == O::kConstant && i->has_literal() &&
          i->shape().IsArray()) {
        AddKinds(out, "const", i->shape().element_type(), tracer.ConstKinds(i));
      }
      if (i->opcode() == O::kParameter && c == module.entry_computation() &&
          i->shape().IsArray()) {
        AddKinds(out, "input", i->shape().element_type(), tracer.ParamKinds(i));
      }
      if (const std::string chain = ChainLabel(*i); !chain.empty()) {
        out.insert("convert_chain");
        out.insert("convert_chain." + chain);
      }
      const std::string label = EdgeLabel(*i);
      if (label.empty()) continue;
      bool edge = false, all_foldable = true;
      std::set<std::string> sources;
      for (int64_t k = 0; k < i->operand_count(); ++k) {
        auto o = tracer.Trace(i->operand(k));
        if (!o || !o->foldable) all_foldable = false;
        if (o && IsEdge(*i, k, o->kinds)) {
          edge = true;
          sources.insert(o->source);
        }
      }
      if (!edge) continue;
      out.insert("program.edge_op");
      out.insert("edge_op." + label);
      for (const std::string& s : sources) {
        out.insert("edge_op." + label + "." + s);
      }
      if (i->opcode() == O::kConvert) {
        out.insert("edge_op.convert");
        for (const std::string& s : sources) {
          out.insert("edge_op.convert." + s);
        }
      }
      out.insert(all_foldable ? "fold.in_reach" : "fold.out_of_reach");
    }
  }
  return out;
}

void FeatureHistogram::Add(const std::set<std::string>& features) {
  ++programs_;
  for (const std::string& f : features) ++counts_[f];
}

int64_t FeatureHistogram::count(const std::string& key) const {
  auto it = counts_.find(key);
  return it == counts_.end() ? 0 : it->second;
}

Json FeatureHistogram::ToJson() const {
  Json j = Json::MakeObject();
  j["programs"] = programs_;
  Json f = Json::MakeObject();
  for (const auto& [k, v] : counts_) f[k] = v;
  j["features"] = std::move(f);
  return j;
}

namespace {

std::string Cell(int64_t n, int64_t total) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%lld (%.1f%%)", static_cast<long long>(n),
                total ? 100.0 * n / total : 0.0);
  return buf;
}

bool StartsWith(const std::string& s, const std::string& p) {
  return s.compare(0, p.size(), p) == 0;
}

}  // namespace

std::string FeatureHistogram::Markdown() const {
  const int64_t n = programs_;
  std::string s = "programs: " + std::to_string(n) + "\n\n";
  s += "| value kind | in a constant | in an input | dtypes (const or input) "
       "|\n| --- | ---: | ---: | --- |\n";
  for (K k : AllInterestingKinds()) {
    const std::string name(InterestingKindName(k));
    std::string types;
    for (const auto& [key, v] : counts_) {
      const std::string pre = "value.any.";
      if (!StartsWith(key, pre)) continue;
      const std::string rest = key.substr(pre.size());
      const size_t dot = rest.find('.');
      if (dot == std::string::npos || rest.substr(dot + 1) != name) continue;
      if (!types.empty()) types += ", ";
      types += rest.substr(0, dot) + " " + std::to_string(v);
    }
    s += "| " + name + " | " + Cell(count("value.const." + name), n) + " | " +
         Cell(count("value.input." + name), n) + " | " + types + " |\n";
  }
  s += "\n| op with an edge operand | programs | from a constant (folded) "
       "| behind opt-barrier | from a parameter |\n"
       "| --- | ---: | ---: | ---: | ---: |\n";
  std::set<std::string> pairs;
  std::set<std::string> labels;
  for (const auto& [key, v] : counts_) {
    if (!StartsWith(key, "edge_op.")) continue;
    std::string rest = key.substr(8);
    for (const char* src : {".constant", ".opaque", ".param"}) {
      const std::string suf(src);
      if (rest.size() > suf.size() &&
          rest.compare(rest.size() - suf.size(), suf.size(), suf) == 0) {
        rest.clear();
      }
    }
    if (rest.empty()) continue;
    if (StartsWith(rest, "convert.") &&
        rest.find('.', 8) != std::string::npos) {
      pairs.insert(rest);
      continue;
    }
    labels.insert(rest);
  }
  for (const std::string& l : labels) {
    s += "| " + l + " | " + Cell(count("edge_op." + l), n) + " | " +
         Cell(count("edge_op." + l + ".constant"), n) + " | " +
         Cell(count("edge_op." + l + ".opaque"), n) + " | " +
         Cell(count("edge_op." + l + ".param"), n) + " |\n";
  }
  s += "\nconvert (any types) with an edge operand: " +
       Cell(count("edge_op.convert"), n) + " of programs, over " +
       std::to_string(pairs.size()) + " distinct (from, to) type pairs\n";
  s += "\nconvert of a convert: " + Cell(count("convert_chain"), n) +
       " of programs; through the other signedness at one width: " +
       Cell(count("convert_chain.sign_flip"), n) +
       ", narrowing: " + Cell(count("convert_chain.narrowing"), n) +
       ", widening: " + Cell(count("convert_chain.widening"), n) + "\n";
  s += "\n| constant folding | programs |\n| --- | ---: |\n";
  s += "| edge op with all operands foldable constants | " +
       Cell(count("fold.in_reach"), n) + " |\n";
  s += "| edge op with an operand out of the folder's reach | " +
       Cell(count("fold.out_of_reach"), n) + " |\n";
  s += "\n| extent next to a boundary | programs |\n| --- | ---: |\n";
  for (const auto& [key, v] : counts_) {
    if (StartsWith(key, "dim.")) {
      s += "| " + key.substr(4) + " | " + Cell(v, n) + " |\n";
    }
  }
  s += "| any | " + Cell(count("program.dim_boundary"), n) + " |\n";
  return s;
}

}  // namespace trench::fuzz

namespace trench::fuzz {

Json FeatureRun::ToJson() const {
  Json j = Json::MakeObject();
  j["synthetic"] = synthetic.ToJson();
  j["trace"] = trace.ToJson();
  j["errors"] = errors;
  if (!first_error.empty()) j["first_error"] = first_error;
  return j;
}

FeatureRun MeasureFeatures(uint64_t seed, int64_t n,
                           const GeneratorOptions& generator,
                           const TraceCorpus* corpus, double trace_share,
                           const MutationOptions& mutation) {
  FeatureRun run;
  Rng pick(seed ^ 0xa54ff53a5f1d36f1ull);
  const bool traces = corpus && !corpus->subgraphs().empty();
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t s = seed + static_cast<uint64_t>(i);
    const bool from_trace = traces && pick.Chance(trace_share);
    StatusOr<GeneratedCase> c = from_trace ? corpus->Sample(s, mutation)
                                           : GenerateSynthetic(s, generator);
    StatusOr<std::unique_ptr<HloModule>> m =
        c.ok() ? ParseGenerated(c->hlo_text, "feature count", s)
               : StatusOr<std::unique_ptr<HloModule>>(c.status());
    if (!m.ok()) {
      if (run.errors++ == 0) run.first_error = m.status().ToString();
      continue;
    }
    (from_trace ? run.trace : run.synthetic)
        .Add(ProgramFeatures(**m, c->inputs));
  }
  return run;
}

}  // namespace trench::fuzz
