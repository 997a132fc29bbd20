#include "triage/fuzz/program_builder.h"

#include <cmath>
#include <cstdio>
#include <limits>

#include "compiler/ir/random_inputs.h"

namespace trench::fuzz {

uint64_t Rng::Next() { return SplitMix64Next(state_); }

int64_t Rng::Uniform(int64_t lo, int64_t hi) {
  const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
  if (span == 0) return static_cast<int64_t>(Next());
  return lo + static_cast<int64_t>(Next() % span);
}

double Rng::Real() {
  return std::ldexp(static_cast<double>(Next() >> 11), -53);
}

int64_t Rng::PickWeighted(const std::vector<double>& weights) {
  double total = 0;
  for (double w : weights) total += w > 0 ? w : 0;
  if (total <= 0) return -1;
  double r = Real() * total;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] <= 0) continue;
    if (r < weights[i]) return static_cast<int64_t>(i);
    r -= weights[i];
  }
  for (size_t i = weights.size(); i-- > 0;) {
    if (weights[i] > 0) return static_cast<int64_t>(i);
  }
  return -1;
}

std::string ShapeText(const Shape& shape) { return shape.ToString(true); }

std::string ScalarText(PrimitiveType t, double v) {
  if (t == PrimitiveType::PRED) return v != 0 ? "true" : "false";
  if (IsInteger(t)) {
    char buf[32];
    if (IsUnsigned(t)) {
      std::snprintf(buf, sizeof buf, "%llu",
                    static_cast<unsigned long long>(v < 0 ? 0 : v));
    } else {
      std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
    }
    return buf;
  }
  auto real = [](double x) -> std::string {
    if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
    if (std::isnan(x)) return "nan";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", x);
    return buf;
  };
  if (IsComplex(t)) return "(" + real(v) + ", 0)";
  return real(v);
}

std::string ListText(const std::vector<int64_t>& v) {
  std::string s = "{";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(v[i]);
  }
  return s + "}";
}

ComputationBuilder::ComputationBuilder(std::string name, int64_t* counter)
    : name_(std::move(name)), counter_(counter) {}

Value ComputationBuilder::AddParameter(const Shape& shape, double bound) {
  return Add(shape, "parameter", {}, "", bound);
}

Value ComputationBuilder::Add(const Shape& shape, std::string_view opcode,
                              const std::vector<std::string>& operands,
                              std::string_view attrs, double bound) {
  std::string name = "v" + std::to_string((*counter_)++);
  std::string line = "  " + name + " = " + ShapeText(shape) + " ";
  line += opcode;
  line += "(";
  if (opcode == "parameter") {
    line += std::to_string(params_++);
  } else {
    for (size_t i = 0; i < operands.size(); ++i) {
      if (i) line += ", ";
      line += operands[i];
    }
  }
  line += ")";
  if (!attrs.empty()) {
    line += ", ";
    line += attrs;
  }
  lines_.push_back(std::move(line));
  names_.push_back(name);
  return Value{name, shape, bound};
}

Value ComputationBuilder::Constant(PrimitiveType t, double v) {
  return Add(Shape(t, {}), "constant", {ScalarText(t, v)}, "", std::fabs(v));
}

std::string ComputationBuilder::Text(bool entry) const {
  std::string s = (entry ? "ENTRY " : "") + name_ + " {\n";
  for (size_t i = 0; i < lines_.size(); ++i) {
    if (names_[i] == root_)
      s += "  ROOT" + lines_[i].substr(1);
    else
      s += lines_[i];
    s += "\n";
  }
  return s + "}\n";
}

ProgramBuilder::ProgramBuilder(std::string module_name)
    : name_(std::move(module_name)),
      entry_(std::make_unique<ComputationBuilder>("main", &counter_)) {}

std::unique_ptr<ComputationBuilder> ProgramBuilder::NewComputation(
    std::string_view prefix) {
  const int64_t id = counter_++;
  return std::make_unique<ComputationBuilder>(
      std::string(prefix) + "." + std::to_string(id), &counter_);
}

void ProgramBuilder::Finish(const ComputationBuilder& c) {
  computations_.push_back(c.Text(false));
}

std::string ProgramBuilder::ScalarBinary(PrimitiveType t, std::string_view op) {
  const std::string key =
      std::string(PrimitiveTypeName(t)) + "." + std::string(op);
  auto it = scalar_cache_.find(key);
  if (it != scalar_cache_.end()) return it->second;
  auto c =
      NewComputation(std::string(op) + "_" + std::string(PrimitiveTypeName(t)));
  Value x = c->AddParameter(Shape(t, {}), 0);
  Value y = c->AddParameter(Shape(t, {}), 0);
  Value z = c->Add(Shape(t, {}), op, {x.name, y.name}, "", 0);
  c->SetRoot(z.name);
  Finish(*c);
  scalar_cache_[key] = c->name();
  return c->name();
}

std::string ProgramBuilder::Text() const {
  std::string s = "HloModule " + name_ + "\n\n";
  for (const std::string& c : computations_) s += c + "\n";
  return s + entry_->Text(true);
}

}  // namespace trench::fuzz
