// Tiled dots (compiler/codegen/emit_dot_tiled.cc): batch, M, N and K
// tiling forced by a small VMEM capacity, on the simulator against the
// oracle, with the tolerances documented in dot_test.cc (relative to
// 16 K for inputs in [-4, 4)). K tiles accumulate in f32 on the matrix unit
// (every precision mode) and in the lane type on the vector unit (f64 and
// integers stay exact: products are still added in k order).
#include <string>

#include "compiler/codegen/emit_dot_internal.h"
#include "tests/compiler/codegen/streaming_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracleWithVmem;

ComparisonOptions Scaled(double rel, int64_t k) {
  const double abs = rel * 16 * static_cast<double>(std::max<int64_t>(k, 1));
  ComparisonOptions o;
  o.f32 = {abs, 0};
  o.bf16 = {abs + 2e-2, 1e-2};
  o.f16 = {abs + 4e-3, 1e-3};
  o.f64 = {1e-12, 1e-12};
  return o;
}

std::string Module(const std::string& lhs, const std::string& rhs,
                   const std::string& out, const std::string& attrs) {
  return "HloModule m\nENTRY e {\n  a = " + lhs +
         " parameter(0)\n  b = " + rhs + " parameter(1)\n  ROOT r = " + out +
         " dot(a, b), " + attrs + "\n}\n";
}

std::string Precision(const std::string& p) {
  return ", operand_precision={" + p + "," + p + "}";
}

// The smallest matrix-unit tile (8 x 128 x 128 f32) needs 144 KiB.
constexpr int64_t kSmallVmem = 256 << 10;

TEST(DotTilingTest, RankTwoTilesKAtEveryPrecision) {
  // 64x1000x256 f32 needs ~2.5 MiB untiled; K is cut into several tiles.
  const std::pair<const char*, double> modes[] = {
      {"DEFAULT", 1e-2}, {"HIGH", 1e-4}, {"HIGHEST", 2e-6}};
  for (const auto& [mode, rel] : modes) {
    SCOPED_TRACE(mode);
    ExpectMatchesOracleWithVmem(
        Module("f32[64,1000]", "f32[1000,256]", "f32[64,256]",
               "lhs_contracting_dims={1}, rhs_contracting_dims={0}" +
                   Precision(mode)),
        21, Scaled(rel, 1000), kSmallVmem);
  }
}

TEST(DotTilingTest, TransposedOperandsAndRaggedTiles) {
  // lhs [k, m], rhs [n, k]: strided boxes on both sides.
  ExpectMatchesOracleWithVmem(
      Module("f32[700,45]", "f32[300,700]", "f32[45,300]",
             "lhs_contracting_dims={0}, rhs_contracting_dims={1}" +
                 Precision("HIGHEST")),
      22, Scaled(2e-6, 700), kSmallVmem);
}

TEST(DotTilingTest, BatchDotTilesBatchAndK) {
  ExpectMatchesOracleWithVmem(
      Module("f32[4,40,600]", "f32[4,600,200]", "f32[4,40,200]",
             "lhs_batch_dims={0}, lhs_contracting_dims={2}, "
             "rhs_batch_dims={0}, rhs_contracting_dims={1}" +
                 Precision("HIGH")),
      23, Scaled(1e-4, 600), kSmallVmem);
  // Batch dims not leading, two of them, contracting dim first in rhs.
  ExpectMatchesOracleWithVmem(
      Module("f32[30,2,3,500]", "f32[500,3,2,140]", "f32[2,3,30,140]",
             "lhs_batch_dims={1,2}, lhs_contracting_dims={3}, "
             "rhs_batch_dims={2,1}, rhs_contracting_dims={0}" +
                 Precision("HIGHEST")),
      24, Scaled(2e-6, 500), kSmallVmem);
}

TEST(DotTilingTest, VectorUnitTypesStayExact) {
  ExpectMatchesOracleWithVmem(
      Module("f64[16,900]", "f64[900,130]", "f64[16,130]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
      25, Scaled(0, 900), kSmallVmem);
  ExpectMatchesOracleWithVmem(
      Module("s32[3,20,800]", "s32[3,800,130]", "s32[3,20,130]",
             "lhs_batch_dims={0}, lhs_contracting_dims={2}, "
             "rhs_batch_dims={0}, rhs_contracting_dims={1}"),
      26, ComparisonOptions::Exact(), kSmallVmem);
}

TEST(DotTilingTest, NarrowTypesAndVectorResults) {
  ExpectMatchesOracleWithVmem(
      Module("bf16[50,1200]", "bf16[1200,140]", "bf16[50,140]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
      27, Scaled(1e-6, 1200), kSmallVmem);
  // No lhs free dim (a vector-matrix product) and no rhs free dim.
  ExpectMatchesOracleWithVmem(
      Module("f32[3000]", "f32[3000,200]", "f32[200]",
             "lhs_contracting_dims={0}, rhs_contracting_dims={0}" +
                 Precision("HIGHEST")),
      28, Scaled(2e-6, 3000), kSmallVmem);
  ExpectMatchesOracleWithVmem(
      Module("f32[100,3000]", "f32[3000]", "f32[100]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}" +
                 Precision("HIGHEST")),
      29, Scaled(2e-6, 3000), kSmallVmem);
}

TEST(DotTilingTest, LargeDotsCompileWithinDefaultVmem) {
  // The sizes: compiled (not run, for test speed) within 16 MiB.
  const std::string texts[] = {
      Module("f32[4,256,2048]", "f32[4,2048,512]", "f32[4,256,512]",
             "lhs_batch_dims={0}, lhs_contracting_dims={2}, "
             "rhs_batch_dims={0}, rhs_contracting_dims={1}"),
      Module("f32[2048,2048]", "f32[2048,2048]", "f32[2048,2048]",
             "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
  };
  for (const std::string& text : texts) {
    auto m = testing::Parse(text);
    ASSERT_NE(m, nullptr);
    auto exe = CompileModule(*m, CompileOptions());
    ASSERT_TRUE(exe.ok()) << exe.status().ToString();
    EXPECT_LE(testing::MaxKernelVmem(*exe), 16 << 20);
  }
}

TEST(DotTilingTest, UntileableDotReportsResourceExhausted) {
  // Two contracting dims in one operand: not tiled.
  auto m = testing::Parse(
      Module("f32[40,30,30]", "f32[30,30,200]", "f32[40,200]",
             "lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}"));
  ASSERT_NE(m, nullptr);
  CompileOptions o;
  o.vmem_bytes = 64 << 10;
  auto exe = CompileModule(*m, o);
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace trench::codegen
