// Special values in the inputs of programs about non-finite values
// (GeneratorOptions::special_values): +-inf, NaN, -0 and subnormals.
#include <cmath>
#include <limits>

#include "triage/fuzz/generator_internal.h"

namespace trench::fuzz::internal {
namespace {

using P = PrimitiveType;

// The exponent of the smallest normal number of a real float type.
int MinNormalExponent(P t) {
  switch (t) {
    case P::F16:
      return -14;
    case P::BF16:
    case P::F32:
      return -126;
    default:
      return -1022;
  }
}

// One special value of type t: +-inf, NaN, -0, the smallest or largest
// subnormal (either sign), the smallest normal.
double SpecialValue(Rng& rng, P t) {
  const int e = MinNormalExponent(t);
  const int m = MantissaBits(t);
  const double tiny = std::ldexp(1.0, e - m);        // Smallest subnormal.
  const double big_sub = std::ldexp(1.0, e) - tiny;  // Largest subnormal.
  const double sign = rng.Chance(0.5) ? -1 : 1;
  switch (rng.Uniform(0, 7)) {
    case 0:
    case 1:
      return sign * std::numeric_limits<double>::infinity();
    case 2:
    case 3:
      return std::numeric_limits<double>::quiet_NaN();
    case 4:
      return -0.0;
    case 5:
      return sign * tiny;
    case 6:
      return sign * big_sub;
    default:
      return sign * std::ldexp(1.0, e);
  }
}

}  // namespace

std::vector<int64_t> SprinkleSpecialValues(uint64_t seed,
                                           std::vector<Literal>& inputs) {
  Rng rng(seed ^ 0xbb67ae8584caa73bull);
  std::vector<int64_t> floats;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Literal& l = inputs[i];
    if (l.shape().IsArray() && IsFloat(l.element_type()) &&
        l.element_count() > 0) {
      floats.push_back(static_cast<int64_t>(i));
    }
  }
  std::vector<int64_t> chosen;
  for (int64_t i : floats) {
    if (rng.Chance(0.7)) chosen.push_back(i);
  }
  if (chosen.empty() && !floats.empty()) chosen.push_back(rng.Pick(floats));
  static const std::vector<double> kDensity = {0.01, 0.05, 0.2};
  for (int64_t i : chosen) {
    Literal& l = inputs[i];
    const int64_t n = l.element_count();
    const double density = rng.Pick(kDensity);
    // At least one special element; more by density.
    l.SetFromDouble(rng.Uniform(0, n - 1), SpecialValue(rng, l.element_type()));
    for (int64_t k = 0; k < n; ++k) {
      if (rng.Chance(density)) {
        l.SetFromDouble(k, SpecialValue(rng, l.element_type()));
      }
    }
  }
  return chosen;
}

}  // namespace trench::fuzz::internal
