// Complete hand-assembled kernels: a ragged elementwise add, a row
// reduction, and tiled f32 matmuls on the bf16 matrix unit at DEFAULT, HIGH
// and HIGHEST precision compared with a double reference.
#include <cmath>
#include <cstdio>
#include <random>

#include "tests/tpu/tpu_test_util.h"

namespace trench::tpu {
namespace {

using testing::FromBytes;
using testing::RunTpux;
using testing::ToBytes;

std::vector<float> Random(size_t n, uint32_t seed, float lo = -1,
                          float hi = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

// f32[10,200] + f32[10,200]: rows are staged in VMEM with a 1024-byte pitch;
// tiles of 8x128 walk the array and mbox masks the ragged edges (2 rows,
// 72 columns). `cols_mask` replaces the column count to inject a mask bug.
std::string AddProgram(const std::string& cols_mask) {
  return R"(tpux 1
module add
buffer x input 0 f32[10,200]{1,0} bytes=8000
buffer y input 1 f32[10,200]{1,0} bytes=8000
buffer out output 0 f32[10,200]{1,0} bytes=8000
kernel add {
  .vmem 32768
  saddr s1, x
  saddr s2, y
  dmastart vmem[0], hbm[s1], 800, 0, 10, 800, 1024
  dmastart vmem[10240], hbm[s2], 800, 0, 10, 800, 1024
  dmawait 0
  simm s10, 10
  simm s11, 200
  simm s3, 0
rows:
  ssub s5, s10, s3
  smin s5, s5, 8
  simm s4, 0
cols:
  ssub s6, s11, s4
  )" + cols_mask +
         R"(
  mbox m0, s5, s6
  smul s7, s3, 1024
  sshl s8, s4, 2
  sadd s7, s7, s8
  vld.f32 v0, vmem[s7], 1024 @m0
  vld.f32 v1, vmem[s7+10240], 1024 @m0
  vadd.f32 v2, v0, v1 @m0
  vst.f32 vmem[s7+20480], v2, 1024 @m0
  sadd s4, s4, 128
  scmplt s9, s4, 200
  brnz s9, cols
  sadd s3, s3, 8
  scmplt s9, s3, 10
  brnz s9, rows
  saddr s12, out
  dmastart hbm[s12], vmem[20480], 800, 1, 10, 1024, 800
  dmawait 1
}
launch add
)";
}

TEST(KernelsTest, RaggedElementwiseAdd) {
  std::vector<float> x = Random(2000, 1), y = Random(2000, 2);
  RunResult r =
      RunTpux(AddProgram("smin s6, s6, 128"), {ToBytes(x), ToBytes(y)});
  ASSERT_EQ(r.report.status, RunStatus::kOk) << r.report.message;
  std::vector<float> out = FromBytes<float>(r.outputs[0].bytes);
  ASSERT_EQ(out.size(), 2000u);
  for (int i = 0; i < 2000; ++i) EXPECT_EQ(out[i], x[i] + y[i]) << i;
  EXPECT_EQ(r.report.cost.total.bytes_hbm_to_vmem, 16000);
  EXPECT_EQ(r.report.cost.total.bytes_vmem_to_hbm, 8000);
}

TEST(KernelsTest, WrongRaggedMaskIsVisible) {
  // Always masking 128 columns reads the unstaged pitch padding.
  std::vector<float> x = Random(2000, 1), y = Random(2000, 2);
  RunResult r = RunTpux(AddProgram("simm s6, 128"), {ToBytes(x), ToBytes(y)});
  EXPECT_EQ(r.report.status, RunStatus::kMemoryError);
  EXPECT_EQ(r.report.memory_error, MemoryErrorKind::kUninitializedRead);
  EXPECT_EQ(r.report.kernel, "add");
  EXPECT_EQ(r.report.instruction, "vld.f32 v0, vmem[s7], 1024 @m0");
  EXPECT_EQ(r.report.address, 800);  // Row 0, column 200.
}

TEST(KernelsTest, RowReduction) {
  // out[r] = sum_c x[r][c] for f32[10,200]: masked tiles, vsel to the
  // identity, lane reduction, then a lane-0 store with a 4-byte stride.
  std::vector<float> x = Random(2000, 3, 0, 1);
  std::string text = R"(tpux 1
buffer x input 0 f32[10,200]{1,0} bytes=8000
buffer out output 0 f32[10]{0} bytes=40
kernel rowsum {
  .vmem 16384
  saddr s1, x
  dmastart vmem[0], hbm[s1], 800, 0, 10, 800, 1024
  dmawait 0
  simm s10, 10
  simm s11, 200
  simm s12, 1
  vimm.f32 v9, 0
  simm s3, 0
rows:
  ssub s5, s10, s3
  smin s5, s5, 8
  vimm.f32 v3, 0
  simm s4, 0
cols:
  ssub s6, s11, s4
  smin s6, s6, 128
  mbox m0, s5, s6
  smul s7, s3, 1024
  sshl s8, s4, 2
  sadd s7, s7, s8
  vld.f32 v0, vmem[s7], 1024 @m0
  vsel.f32 v1, m0, v0, v9
  vadd.f32 v3, v3, v1
  sadd s4, s4, 128
  scmplt s9, s4, 200
  brnz s9, cols
  vlredsum.f32 v4, v3
  mbox m1, s5, s12
  sshl s13, s3, 2
  vst.f32 vmem[s13+12288], v4, 4 @m1
  sadd s3, s3, 8
  scmplt s9, s3, 10
  brnz s9, rows
  saddr s14, out
  dmastart hbm[s14], vmem[12288], 40, 0
  dmawait 0
}
launch rowsum
)";
  RunResult r = RunTpux(text, {ToBytes(x)});
  ASSERT_EQ(r.report.status, RunStatus::kOk) << r.report.message;
  std::vector<float> out = FromBytes<float>(r.outputs[0].bytes);
  for (int i = 0; i < 10; ++i) {
    double ref = 0;
    for (int c = 0; c < 200; ++c) ref += x[i * 200 + c];
    EXPECT_NEAR(out[i], ref, 1e-5 * std::fabs(ref)) << i;
  }
}

// Splits vS into bf16 parts: hi -> vH, then (optionally) mid -> vH+1 and
// lo -> vH+2. Uses v30, v31 as scratch.
std::string Split(int s, int h, int parts) {
  auto v = [](int r) { return "v" + std::to_string(r); };
  std::string t =
      "  vpack.bf16 v30, " + v(s) + "\n  vunpack.bf16 " + v(h) + ", v30\n";
  if (parts > 1) {
    t += "  vsub.f32 v31, " + v(s) + ", " + v(h) +
         "\n  vpack.bf16 v30, v31\n"
         "  vunpack.bf16 " +
         v(h + 1) + ", v30\n";
  }
  if (parts > 2) {
    t += "  vsub.f32 v31, v31, " + v(h + 1) +
         "\n  vpack.bf16 v30, v31\n"
         "  vunpack.bf16 " +
         v(h + 2) + ", v30\n";
  }
  return t;
}

// C = A.B for f32[n,n] on the 128x128 bf16 matrix unit. passes: 1 (DEFAULT:
// operands rounded to bf16 by the unit), 3 (HIGH, bf16x3), 6 (HIGHEST,
// bf16x6). The bf16 splitting is emitted as vector instructions.
std::string MatmulProgram(int n, int passes) {
  const int pitch = n * 4, bytes = n * n * 4, A = 0, B = bytes, C = 2 * bytes;
  // (a_part, w_part); -1 = the raw f32 value. Smallest terms first.
  std::vector<std::pair<int, int>> prods;
  if (passes == 1) prods = {{-1, -1}};
  if (passes == 3) prods = {{1, 0}, {0, 1}, {0, 0}};
  if (passes == 6) prods = {{2, 0}, {1, 1}, {0, 2}, {1, 0}, {0, 1}, {0, 0}};
  const int parts = passes == 1 ? 0 : passes == 3 ? 2 : 3;
  std::string t = "tpux 1\nbuffer a input 0 f32[" + std::to_string(n) + "," +
                  std::to_string(n) + "] bytes=" + std::to_string(bytes) +
                  "\nbuffer b input 1 f32[" + std::to_string(n) + "," +
                  std::to_string(n) + "] bytes=" + std::to_string(bytes) +
                  "\nbuffer c output 0 f32[" + std::to_string(n) + "," +
                  std::to_string(n) + "] bytes=" + std::to_string(bytes) +
                  "\nkernel matmul {\n  .vmem " + std::to_string(3 * bytes) +
                  "\n  saddr s1, a\n  saddr s2, b\n"
                  "  dmastart vmem[0], hbm[s1], " +
                  std::to_string(bytes) + ", 0\n  dmastart vmem[" +
                  std::to_string(B) + "], hbm[s2], " + std::to_string(bytes) +
                  ", 0\n  dmawait 0\n"
                  "  vimm.f32 v0, 0\n  simm s3, " +
                  std::to_string(C) + "\n  simm s4, " +
                  std::to_string(bytes / 4096) +
                  "\nzero:\n  vst.f32 vmem[s3], v0\n  sadd s3, s3, 4096\n"
                  "  sloop s4, zero\n";
  const int tiles = n / 128;
  for (int nt = 0; nt < tiles; ++nt) {
    for (int kt = 0; kt < tiles; ++kt) {
      for (int wp = -1; wp <= 2; ++wp) {
        bool used = false;
        for (auto [ap, p] : prods) used |= p == wp;
        if (!used) continue;
        for (int g = 0; g < 16; ++g) {
          t += "  vld.f32 v0, vmem[" +
               std::to_string(B + (kt * 128 + 8 * g) * pitch + nt * 512) +
               "], " + std::to_string(pitch) + "\n";
          if (wp >= 0) t += Split(0, 1, parts);
          t += "  mxwpush v" + std::to_string(wp < 0 ? 0 : 1 + wp) + ", " +
               std::to_string(g) + "\n";
        }
        std::string loop = "rows_" + std::to_string(nt) + "_" +
                           std::to_string(kt) + "_" + std::to_string(wp + 1);
        t += "  simm s10, 0\n  simm s11, " + std::to_string(n / 8) + "\n" +
             loop + ":\n";
        t += "  vld.f32 v12, vmem[s10+" + std::to_string(C + nt * 512) + "], " +
             std::to_string(pitch) + "\n";
        t += "  vld.f32 v8, vmem[s10+" + std::to_string(A + kt * 512) + "], " +
             std::to_string(pitch) + "\n";
        if (parts > 0) t += Split(8, 9, parts);
        for (auto [ap, p] : prods) {
          if (p != wp) continue;
          t += "  mxmatmulacc v12, v" + std::to_string(ap < 0 ? 8 : 9 + ap) +
               "\n";
        }
        t += "  vst.f32 vmem[s10+" + std::to_string(C + nt * 512) + "], v12, " +
             std::to_string(pitch) + "\n";
        t += "  sadd s10, s10, " + std::to_string(8 * pitch) +
             "\n  sloop s11, " + loop + "\n";
      }
    }
  }
  t += "  saddr s5, c\n  dmastart hbm[s5], vmem[" + std::to_string(C) + "], " +
       std::to_string(bytes) + ", 1\n  dmawait 1\n}\nlaunch matmul\n";
  return t;
}

// Max over elements of |c - ref| / sum_k |a_ik b_kj|.
double MatmulError(int n, int passes, RunReport* report = nullptr) {
  std::vector<float> a = Random(n * n, 11), b = Random(n * n, 12);
  RunResult r = RunTpux(MatmulProgram(n, passes), {ToBytes(a), ToBytes(b)});
  EXPECT_EQ(r.report.status, RunStatus::kOk) << r.report.message;
  if (report) *report = r.report;
  if (r.outputs.empty()) return INFINITY;
  std::vector<float> c = FromBytes<float>(r.outputs[0].bytes);
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      double ref = 0, mag = 0;
      for (int k = 0; k < n; ++k) {
        ref += static_cast<double>(a[i * n + k]) * b[k * n + j];
        mag += std::fabs(static_cast<double>(a[i * n + k]) * b[k * n + j]);
      }
      worst = std::max(worst, std::fabs(c[i * n + j] - ref) / mag);
    }
  }
  return worst;
}

TEST(KernelsTest, Matmul256AtHighestMatchesDoubleReference) {
  RunReport report;
  double err = MatmulError(256, 6, &report);
  EXPECT_LT(err, 2e-6);  // f32-level (f32 accumulation of 256 terms).
  // 6 passes x 2 N tiles x 2 K tiles x 32 row groups.
  EXPECT_EQ(report.cost.total.matmul_passes, 6 * 2 * 2 * 32);
  EXPECT_GT(report.cost.mxu_utilization, 0.0);
  EXPECT_LT(report.cost.mxu_utilization, 1.0);
}

TEST(KernelsTest, MatmulPrecisionModes) {
  double def = MatmulError(256, 1), high = MatmulError(256, 3),
         highest = MatmulError(256, 6);
  std::printf(
      "[ matmul   ] normwise error DEFAULT %.3g HIGH %.3g HIGHEST %.3g\n", def,
      high, highest);
  // DEFAULT: operands rounded to bf16 (8 significant bits).
  EXPECT_GT(def, 1e-4);
  EXPECT_LT(def, 1e-2);
  // HIGH (bf16x3) drops lo*lo terms (~2^-16 relative).
  EXPECT_LT(high, 1e-4);
  EXPECT_GT(high, highest);
  EXPECT_LT(highest, 2e-6);
  EXPECT_LT(high * 10, def);
}

}  // namespace
}  // namespace trench::tpu
