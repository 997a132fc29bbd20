// The numerics contract over the rest of the op list: the nominal value is
// bit for bit the oracle's Evaluate, bounds are well formed, and the
// inexact elements get (finite) nonzero bounds.
#include <gtest/gtest.h>

#include <cmath>

#include "tests/oracle/numerics_test_util.h"

namespace trench {
namespace {

constexpr char kHeader[] = R"(HloModule cov

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GE
}
argmax {
  a = f32[] parameter(0)
  i = s32[] parameter(1)
  b = f32[] parameter(2)
  j = s32[] parameter(3)
  c = pred[] compare(a, b), direction=GE
  v = f32[] select(c, a, b)
  k = s32[] select(c, i, j)
  ROOT t = (f32[], s32[]) tuple(v, k)
}
double {
  x = f32[8] parameter(0)
  ROOT y = f32[8] add(x, x)
}
square {
  x = f32[8] parameter(0)
  ROOT y = f32[8] multiply(x, x)
}
)";

struct Case {
  const char* name;
  const char* entry;
};

const Case kCases[] = {
    {"scatter-add", R"(ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  i = s32[3] constant({1, 1, 6})
  u = f32[3] slice(y), slice={[0:3]}
  ROOT r = f32[8] scatter(x, i, u), update_window_dims={},
      inserted_window_dims={0}, scatter_dims_to_operand_dims={0},
      index_vector_dim=1, to_apply=add
})"},
    {"gather", R"(ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  m = f32[8] multiply(x, y)
  o = f32[4,2] reshape(m)
  i = s32[2] constant({3, 1})
  ROOT g = f32[2,2] gather(o, i), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}
})"},
    {"reduce-window", R"(ENTRY e {
  x = f32[8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[6] reduce-window(x, z), window={size=3}, to_apply=add
})"},
    {"select-and-scatter", R"(ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  s = f32[4] slice(y), slice={[0:8:2]}
  z = f32[] constant(0)
  ROOT r = f32[8] select-and-scatter(x, s, z), window={size=2 stride=2},
      select=ge, scatter=add
})"},
    {"conditional", R"(ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  a = f32[] constant(1)
  b = f32[] constant(2)
  p = pred[] compare(a, b), direction=LT
  ROOT c = f32[8] conditional(p, x, y), true_computation=square,
      false_computation=double
})"},
    {"convolution", R"(ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  l = f32[1,1,8] reshape(x)
  k3 = f32[3] slice(y), slice={[0:3]}
  k = f32[1,1,3] reshape(k3)
  ROOT c = f32[1,1,6] convolution(l, k), window={size=3},
      dim_labels=bf0_oi0->bf0
})"},
    {"map-call-pad-iota", R"(ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  m = f32[8] map(x, y), dimensions={0}, to_apply=add
  c = f32[8] call(m), to_apply=square
  s = f32[4] slice(c), slice={[0:4]}
  z = f32[] constant(0.5)
  p = f32[8] pad(s, z), padding=2_2
  i = s32[8] iota(), iota_dimension=0
  f = f32[8] convert(i)
  ROOT r = f32[8] add(p, f)
})"},
    {"argmax", R"(ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  i = s32[8] iota(), iota_dimension=0
  lo = f32[] constant(-inf)
  z = s32[] constant(0)
  ROOT r = (f32[], s32[]) reduce(x, i, lo, z), dimensions={0},
      to_apply=argmax
})"},
};

TEST(NumericsCoverageTest, NominalIsTheOraclesValueAndBoundsAreWellFormed) {
  const Literal x =
      testing::R1(PrimitiveType::F32, testing::Uniform(8, -2, 2, 1));
  const Literal y =
      testing::R1(PrimitiveType::F32, testing::Uniform(8, 0.1f, 2, 2));
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const std::string hlo = std::string(kHeader) + c.entry + "\n";
    auto module = ParseHloModule(hlo);
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    std::vector<Literal> args = {x, y};
    args.resize((*module)->entry_computation()->num_parameters());
    auto plain = Evaluate(**module, args);
    ASSERT_TRUE(plain.ok()) << plain.status().ToString();
    auto bounded = EvaluateWithBounds(**module, args);
    ASSERT_TRUE(bounded.ok()) << bounded.status().ToString();
    EXPECT_TRUE(bounded->nominal == *plain);
    bool any_positive = false;
    for (const BoundedOutput& o : bounded->outputs) {
      for (double b : o.allowed.data<double>()) {
        EXPECT_FALSE(std::isnan(b));
        EXPECT_GE(b, 0);
        any_positive = any_positive || (b > 1e-30 && std::isfinite(b));
      }
    }
    EXPECT_TRUE(CompareWithBounds(bounded->nominal, *bounded).ok());
    // Every case rounds somewhere (the argmax index is exact instead).
    if (std::string(c.name) != "argmax") {
      EXPECT_TRUE(any_positive);
    }
    EXPECT_TRUE(bounded->undetermined_reasons.empty())
        << bounded->undetermined_reasons.begin()->first;
  }
}

}  // namespace
}  // namespace trench
