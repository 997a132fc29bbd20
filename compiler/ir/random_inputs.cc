#include "compiler/ir/random_inputs.h"

#include <bit>
#include <cmath>

namespace trench {
namespace {

double UniformFloat(uint64_t r) {
  // 53 random bits scaled to [0, 8), exact in a double.
  return -4.0 + std::ldexp(static_cast<double>(r >> 11), -50);
}

void FillLeaf(Literal& leaf, uint64_t& state) {
  const int64_t n = leaf.element_count();
  DispatchArrayType(leaf.element_type(), [&]<PrimitiveType T>() {
    using N = NativeT<T>;
    auto data = leaf.mutable_data<N>();
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (T == PrimitiveType::PRED) {
        data[i] = (SplitMix64Next(state) >> 63) != 0;
      } else if constexpr (std::is_integral_v<N> && std::is_signed_v<N>) {
        data[i] =
            static_cast<N>(static_cast<int>(SplitMix64Next(state) >> 60) - 8);
      } else if constexpr (std::is_integral_v<N>) {
        data[i] = static_cast<N>(SplitMix64Next(state) >> 60);
      } else if constexpr (T == PrimitiveType::C64 ||
                           T == PrimitiveType::C128) {
        using C = typename N::value_type;
        const double re = UniformFloat(SplitMix64Next(state));
        const double im = UniformFloat(SplitMix64Next(state));
        data[i] = N(static_cast<C>(re), static_cast<C>(im));
      } else if constexpr (T == PrimitiveType::F16) {
        data[i] =
            f16::FromBits(F64ToF16Bits(UniformFloat(SplitMix64Next(state))));
      } else if constexpr (T == PrimitiveType::BF16) {
        data[i] =
            bf16::FromBits(F64ToBf16Bits(UniformFloat(SplitMix64Next(state))));
      } else {
        // double -> float conversion rounds to nearest even.
        data[i] = static_cast<N>(UniformFloat(SplitMix64Next(state)));
      }
    }
  });
}

void Fill(Literal& lit, uint64_t& state) {
  if (lit.shape().IsTuple()) {
    for (Literal& e : lit.mutable_tuple_elements()) Fill(e, state);
  } else if (lit.shape().IsArray()) {
    FillLeaf(lit, state);
  }
}

}  // namespace

uint64_t SplitMix64Next(uint64_t& state) {
  state += 0x9E3779B97F4A7C15ull;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t ArgumentSeed(uint64_t seed, int64_t index) {
  uint64_t state =
      seed ^ (static_cast<uint64_t>(index) * 0xD1B54A32D192ED03ull);
  return SplitMix64Next(state);
}

Literal RandomLiteral(const Shape& shape, uint64_t seed) {
  Literal lit(shape);
  uint64_t state = seed;
  Fill(lit, state);
  return lit;
}

std::vector<Literal> RandomArguments(const HloComputation& entry,
                                     uint64_t seed) {
  std::vector<Literal> args;
  for (int64_t i = 0; i < entry.num_parameters(); ++i) {
    args.push_back(RandomLiteral(entry.parameter_instruction(i)->shape(),
                                 ArgumentSeed(seed, i)));
  }
  return args;
}

}  // namespace trench
