// Unfused reduces whose operands exceed VMEM stream through it in double
// buffered slabs (compiler/codegen/stream_reduce.h). With 64 KiB of VMEM
// (compiler and simulator alike) every operand here (a few hundred KiB)
// used to fail with ResourceExhausted; now it must compile, stream (many
// DMAs) and match the oracle: every reduced-dims combination, ragged slab
// edges, the split inside a row, every dtype, computed reducers, bf16 sums
// accumulated in f32, variadic argmax, and results larger than VMEM
// (kept-dim tiling).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "tests/compiler/codegen/streaming_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracleWithVmem;
using testing::IsFloatType;
using testing::kAllTypes;
using testing::ReducerRoot;
using testing::SumOfSquaresRoot;

constexpr int64_t kVmem = 64 << 10;

// A reduce of t`in` over `dims` with reducer body `body` (on scalars x, y,
// root named z) and init `init`.
std::string Reduce(const std::string& t, const std::string& in,
                   const std::string& out, const std::string& dims,
                   const std::string& body, const std::string& init) {
  return "HloModule m\nr {\n  x = " + t + "[] parameter(0)\n  y = " + t +
         "[] parameter(1)\n" + body + "}\nENTRY e {\n  a = " + t + in +
         " parameter(0)\n  i = " + t + "[] constant(" + init +
         ")\n  ROOT r = " + t + out + " reduce(a, i), dimensions={" + dims +
         "}, to_apply=r\n}\n";
}

// f32 sums of `terms` values in [-4, 4): the oracle adds in f64 and rounds
// once; the kernel adds in f32 (the numerics contract allows it). A lost
// or doubled term is off by about one input value, far beyond this.
ComparisonOptions SumTolerance(int64_t terms) {
  ComparisonOptions o;
  o.f32 = {2e-6 * static_cast<double>(terms) + 1e-5, 1e-5};
  return o;
}

// Expects the oracle's values with kVmem of VMEM where the root's operand
// or result alone exceeds it: no kernel staging them whole fits, so
// success means they streamed (slab after slab: several DMAs).
void ExpectStreams(const std::string& text, uint64_t seed,
                   const ComparisonOptions& options) {
  std::unique_ptr<HloModule> m = testing::Parse(text);
  ASSERT_NE(m, nullptr);
  const HloInstruction* root = m->entry_computation()->root_instruction();
  int64_t biggest = 0;
  for (const HloInstruction* o : root->operands()) {
    biggest = std::max(biggest, o->shape().byte_size());
  }
  if (root->shape().IsArray()) {
    biggest = std::max(biggest, root->shape().byte_size());
  }
  EXPECT_GT(biggest, kVmem) << "not a streaming case";
  tpu::KernelStats s = ExpectMatchesOracleWithVmem(text, seed, options, kVmem);
  EXPECT_GE(s.dma_transfers, 4) << text;
}

struct Case {
  std::string in, out, dims;
  int64_t terms;  // Reduced elements per result.
};

TEST(StreamReduceTest, RowColumnAndTotalSums) {
  // 384 KB of f32: rows of 4000 bytes, slabs of a few rows, the last one
  // ragged; columns accumulate across slabs.
  const std::vector<Case> cases = {{"[96,1000]", "[96]", "1", 1000},
                                   {"[1000,96]", "[96]", "0", 1000},
                                   {"[300,333]", "[]", "0,1", 99900},
                                   {"[97,1001]", "[97]", "1", 1001}};
  for (const Case& c : cases) {
    ExpectStreams(
        Reduce("f32", c.in, c.out, c.dims, ReducerRoot("f32", "add"), "0.5"), 1,
        SumTolerance(c.terms));
    ExpectStreams(Reduce("f32", c.in, c.out, c.dims,
                         ReducerRoot("f32", "maximum"), "-inf"),
                  2, ComparisonOptions::Exact());
  }
}

TEST(StreamReduceTest, EveryDimsCombinationOfRank3) {
  // 360 KB; one index of dim 0 (60 KB) does not fit twice, so some plans
  // split dim 1 and keep the accumulators resident.
  const std::vector<Case> cases = {
      {"[6,50,300]", "[50,300]", "0", 6},   {"[6,50,300]", "[6,300]", "1", 50},
      {"[6,50,300]", "[6,50]", "2", 300},   {"[6,50,300]", "[300]", "0,1", 300},
      {"[6,50,300]", "[50]", "0,2", 1800},  {"[6,50,300]", "[6]", "1,2", 15000},
      {"[6,50,300]", "[]", "0,1,2", 90000}, {"[6,50,300]", "[6,50,300]", "", 1},
      {"[7,13,1003]", "[7,1003]", "1", 13},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.dims);
    ExpectStreams(
        Reduce("f32", c.in, c.out, c.dims, ReducerRoot("f32", "add"), "0"), 3,
        SumTolerance(c.terms));
    ExpectStreams(
        Reduce("s32", c.in, c.out, c.dims, ReducerRoot("s32", "minimum"), "7"),
        4, ComparisonOptions::Exact());
  }
}

TEST(StreamReduceTest, SplitsARowThatDoesNotFit) {
  // One row is 48 KB: slabs are blocks of one row, ragged at its end.
  ExpectStreams(
      Reduce("f32", "[3,12000]", "[3]", "1", ReducerRoot("f32", "add"), "0"), 5,
      SumTolerance(12000));
  ExpectStreams(Reduce("f32", "[3,12000]", "[12000]", "0",
                       ReducerRoot("f32", "add"), "0"),
                6, SumTolerance(3));
  ExpectStreams(
      Reduce("s32", "[3,12001]", "[3]", "1", ReducerRoot("s32", "add"), "0"), 7,
      ComparisonOptions::Exact());
}

TEST(StreamReduceTest, EveryType) {
  // 70400 elements: > 64 KiB for every type, 1-byte ones included.
  const std::vector<Case> cases = {{"[64,1100]", "[64]", "1", 1100},
                                   {"[1100,64]", "[64]", "0", 1100}};
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    const bool pred = t == "pred";
    for (const Case& c : cases) {
      ExpectStreams(
          Reduce(t, c.in, c.out, c.dims, ReducerRoot(t, pred ? "or" : "add"),
                 pred ? "false" : "1"),
          8, SumTolerance(c.terms));
      ExpectStreams(
          Reduce(t, c.in, c.out, c.dims,
                 ReducerRoot(t, pred ? "and" : "maximum"), pred ? "true" : "3"),
          9, ComparisonOptions::Exact());
    }
  }
}

TEST(StreamReduceTest, ComplexSums) {
  ExpectStreams(Reduce("c64", "[64,600]", "[64]", "1",
                       ReducerRoot("c64", "add"), "(0, 0)"),
                10, SumTolerance(600));
  ExpectStreams(Reduce("c64", "[600,64]", "[64]", "0",
                       ReducerRoot("c64", "add"), "(0, 0)"),
                11, SumTolerance(600));
}

TEST(StreamReduceTest, ComputedReducersFoldInTheOraclesOrder) {
  // x + y*y rounded after every op, folded per result in row-major order
  // of the reduced dims (slab after slab): the oracle's value exactly.
  for (const std::string t : {"f32", "bf16", "s32", "f64"}) {
    SCOPED_TRACE(t);
    ExpectStreams(Reduce(t, "[64,1100]", "[64]", "1", SumOfSquaresRoot(t), "0"),
                  12, ComparisonOptions::Exact());
    ExpectStreams(Reduce(t, "[1100,64]", "[64]", "0", SumOfSquaresRoot(t), "0"),
                  13, ComparisonOptions::Exact());
    ExpectStreams(Reduce(t, "[200,200]", "[]", "0,1", SumOfSquaresRoot(t), "0"),
                  14, ComparisonOptions::Exact());
  }
}

TEST(StreamReduceTest, Bf16AndF16SumsAccumulateInF32) {
  // 40000 terms each, accumulated across slabs: rounding to bf16 after
  // every add (or every slab) would drift far beyond one bf16 ulp.
  for (const std::string t : {"bf16", "f16"}) {
    ExpectStreams(
        Reduce(t, "[4,40000]", "[4]", "1", ReducerRoot(t, "add"), "0"), 15,
        ComparisonOptions());
    ExpectStreams(
        Reduce(t, "[40000,4]", "[4]", "0", ReducerRoot(t, "add"), "0"), 16,
        ComparisonOptions());
  }
}

// argmax over `dim` of x: (value, index) pairs, first index on ties.
std::string ArgMax(const std::string& t, const std::string& in,
                   const std::string& out, int dim) {
  const std::string d = std::to_string(dim);
  return "HloModule m\nargmax {\n  a = " + t + "[] parameter(0)\n" +
         "  b = s32[] parameter(1)\n  c = " + t + "[] parameter(2)\n" +
         "  d = s32[] parameter(3)\n" +
         "  gt = pred[] compare(a, c), direction=GT\n" +
         "  eq = pred[] compare(a, c), direction=EQ\n" +
         "  lt = pred[] compare(b, d), direction=LT\n" +
         "  tie = pred[] and(eq, lt)\n  keep = pred[] or(gt, tie)\n" +
         "  v = " + t + "[] select(keep, a, c)\n" +
         "  i = s32[] select(keep, b, d)\n" + "  ROOT r = (" + t +
         "[], s32[]) tuple(v, i)\n}\n" + "ENTRY e {\n  x = " + t + in +
         " parameter(0)\n  n = s32" + in + " iota(), iota_dimension=" + d +
         "\n  lo = " + t + "[] constant(" + (IsFloatType(t) ? "-inf" : "-100") +
         ")\n  z = s32[] constant(-1)\n  ROOT r = (" + t + out + ", s32" + out +
         ") reduce(x, n, lo, z), dimensions={" + d + "}, to_apply=argmax\n}\n";
}

TEST(StreamReduceTest, VariadicArgMax) {
  for (const std::string t : {"f32", "bf16", "s8", "s64"}) {
    SCOPED_TRACE(t);
    ExpectStreams(ArgMax(t, "[24,1100]", "[24]", 1), 17,
                  ComparisonOptions::Exact());
    ExpectStreams(ArgMax(t, "[1100,24]", "[24]", 0), 18,
                  ComparisonOptions::Exact());
  }
}

TEST(StreamReduceTest, KeptAccumulatorsLargerThanVmemAreTiled) {
  // The results (80-200 KB of accumulators) exceed VMEM: blocks of the
  // outermost kept dim, each reduced with resident accumulators; ragged
  // last blocks; strided slab DMAs of several reduced rows.
  const std::vector<Case> cases = {{"[8,20000]", "[20000]", "0", 8},
                                   {"[6,5003,3]", "[5003]", "0,2", 18},
                                   {"[4,3,9001]", "[3,9001]", "0", 4},
                                   {"[2,3,50,170]", "[50,170]", "0,1", 6},
                                   {"[5,20001]", "[20001]", "0", 5}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in);
    ExpectStreams(
        Reduce("f32", c.in, c.out, c.dims, ReducerRoot("f32", "add"), "0.5"),
        30, SumTolerance(c.terms));
    ExpectStreams(
        Reduce("s32", c.in, c.out, c.dims, SumOfSquaresRoot("s32"), "1"), 31,
        ComparisonOptions::Exact());
  }
  for (const std::string t : {"bf16", "f64", "s8", "u16", "pred"}) {
    SCOPED_TRACE(t);
    const bool pred = t == "pred";
    ExpectStreams(
        Reduce(t, "[8,40000]", "[40000]", "0",
               ReducerRoot(t, pred ? "or" : "add"), pred ? "false" : "1"),
        32, SumTolerance(8));
  }
  ExpectStreams(ArgMax("f32", "[6,20000]", "[20000]", 0), 33,
                ComparisonOptions::Exact());
}

}  // namespace
}  // namespace trench::codegen
