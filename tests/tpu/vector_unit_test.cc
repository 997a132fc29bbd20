// Vector unit instructions on hand-computed values.
#include <cmath>
#include <limits>

#include "tests/tpu/tpu_test_util.h"
#include "tpu/numerics.h"

namespace trench::tpu {
namespace {

using testing::RunBody;
using testing::ToBytes;

std::vector<float> Ramp(float start, float step) {
  std::vector<float> v(kVregElems);
  for (int i = 0; i < kVregElems; ++i) v[i] = start + step * i;
  return v;
}

TEST(VectorUnitTest, F32Arithmetic) {
  std::vector<float> a = Ramp(-100, 0.25f), b = Ramp(3, -0.5f);
  b[7] = NAN;
  auto run = [&](const std::string& op) {
    return RunBody<float>(
        "  vld.f32 v1, vmem[0]\n  vld.f32 v2, vmem[8192]\n  " + op +
            " v0, v1, v2\n  vst.f32 vmem[65536], v0",
        {ToBytes(a), ToBytes(b)}, kVregElems);
  };
  std::vector<float> add = run("vadd.f32"), sub = run("vsub.f32"),
                     mul = run("vmul.f32"), mn = run("vmin.f32"),
                     mx = run("vmax.f32");
  ASSERT_EQ(add.size(), static_cast<size_t>(kVregElems));
  for (int i = 0; i < kVregElems; ++i) {
    if (i == 7) {
      EXPECT_TRUE(std::isnan(mn[i]) && std::isnan(mx[i]) && std::isnan(add[i]));
      continue;
    }
    EXPECT_EQ(add[i], a[i] + b[i]);
    EXPECT_EQ(sub[i], a[i] - b[i]);
    EXPECT_EQ(mul[i], a[i] * b[i]);
    EXPECT_EQ(mn[i], std::min(a[i], b[i]));
    EXPECT_EQ(mx[i], std::max(a[i], b[i]));
  }
}

TEST(VectorUnitTest, RoundingAndSign) {
  std::vector<float> a = {2.5f, -2.5f, 0.5f, -0.5f, 1.49f, -0.0f, NAN, 3.0f};
  a.resize(kVregElems, 7.75f);
  auto run = [&](const std::string& op) {
    return RunBody<float>(
        "  vld.f32 v1, vmem[0]\n  " + op + " v0, v1\n  vst.f32 vmem[65536], v0",
        {ToBytes(a)}, kVregElems);
  };
  std::vector<float> fl = run("vfloor.f32"), ce = run("vceil.f32"),
                     rd = run("vround.f32"), re = run("vroundeven.f32"),
                     tr = run("vtrunc.f32"), sg = run("vsign.f32"),
                     ab = run("vabs.f32"), ng = run("vneg.f32");
  EXPECT_EQ(rd[0], 3.0f);
  EXPECT_EQ(rd[1], -3.0f);
  EXPECT_EQ(re[0], 2.0f);
  EXPECT_EQ(re[1], -2.0f);
  EXPECT_EQ(re[2], 0.0f);
  EXPECT_EQ(rd[2], 1.0f);
  EXPECT_EQ(fl[3], -1.0f);
  EXPECT_EQ(ce[3], -0.0f);
  EXPECT_TRUE(std::signbit(ce[3]));
  EXPECT_EQ(tr[1], -2.0f);
  EXPECT_EQ(sg[1], -1.0f);
  EXPECT_TRUE(std::signbit(sg[5]) && sg[5] == 0);
  EXPECT_TRUE(std::isnan(sg[6]));
  EXPECT_EQ(ab[1], 2.5f);
  EXPECT_EQ(ng[7], -3.0f);
  EXPECT_EQ(fl[100], 7.0f);
}

TEST(VectorUnitTest, IntegerSemantics) {
  std::vector<int32_t> a(kVregElems, 100), b(kVregElems, 7);
  a[0] = INT32_MIN;
  b[0] = -1;  // Overflowing division.
  b[1] = 0;   // Division by zero.
  a[2] = -7;
  b[2] = 2;  // Truncating division.
  a[3] = 1;
  b[3] = 40;  // Oversized shifts.
  a[4] = -16;
  b[4] = 2;
  auto run = [&](const std::string& op) {
    return RunBody<int32_t>(
        "  vld.s32 v1, vmem[0]\n  vld.s32 v2, vmem[8192]\n  " + op +
            " v0, v1, v2\n  vst.s32 vmem[65536], v0",
        {ToBytes(a), ToBytes(b)}, kVregElems);
  };
  std::vector<int32_t> div = run("vdiv.s32"), rem = run("vrem.s32"),
                       shl = run("vshl.s32"), shra = run("vshra.s32"),
                       shrl = run("vshrl.s32"), add = run("vadd.s32");
  EXPECT_EQ(div[0], INT32_MIN);
  EXPECT_EQ(rem[0], 0);
  EXPECT_EQ(div[1], -1);
  EXPECT_EQ(rem[1], 100);
  EXPECT_EQ(div[2], -3);
  EXPECT_EQ(rem[2], -1);
  EXPECT_EQ(shl[3], 0);
  EXPECT_EQ(shra[4], -4);
  EXPECT_EQ(shrl[4], static_cast<int32_t>(0xfffffff0u >> 2));
  EXPECT_EQ(add[0], INT32_MAX);  // Wraps.
  EXPECT_EQ(div[10], 14);
  std::vector<uint32_t> u = {0, 1, 0x80000000u, 0xffffffffu};
  u.resize(kVregElems, 0x00f0f000u);
  std::vector<uint32_t> clz = RunBody<uint32_t>(
      "  vld.u32 v1, vmem[0]\n  vclz.u32 v0, v1\n  vst.u32 vmem[65536], v0",
      {ToBytes(u)}, kVregElems);
  std::vector<uint32_t> pop = RunBody<uint32_t>(
      "  vld.u32 v1, vmem[0]\n  vpopcnt.u32 v0, v1\n  vst.u32 vmem[65536], v0",
      {ToBytes(u)}, kVregElems);
  EXPECT_EQ(clz[0], 32u);
  EXPECT_EQ(clz[1], 31u);
  EXPECT_EQ(clz[2], 0u);
  EXPECT_EQ(pop[3], 32u);
  EXPECT_EQ(pop[10], 8u);
}

TEST(VectorUnitTest, CompareSelectAndMasks) {
  std::vector<float> a = Ramp(0, 1), b(kVregElems, 500.0f);
  // v0 = a < b ? a : -1, then lanes outside a 3x100 box are left as 9.
  std::vector<float> r = RunBody<float>(R"(
  vld.f32 v1, vmem[0]
  vld.f32 v2, vmem[8192]
  vimm.f32 v3, -1
  vcmplt.f32 m0, v1, v2
  vsel.f32 v4, m0, v1, v3
  vimm.f32 v0, 9
  simm s1, 3
  simm s2, 100
  mbox m1, s1, s2
  vmov v0, v4 @m1
  vst.f32 vmem[65536], v0)",
                                        {ToBytes(a), ToBytes(b)}, kVregElems);
  for (int i = 0; i < kVregElems; ++i) {
    int s = i / kLanes, l = i % kLanes;
    float want = (s < 3 && l < 100) ? (a[i] < 500 ? a[i] : -1.0f) : 9.0f;
    EXPECT_EQ(r[i], want) << i;
  }
  // Mask algebra and mask <-> vector moves.
  std::vector<uint32_t> m = RunBody<uint32_t>(R"(
  viota v1, 1
  vimm.u32 v2, 64
  vcmplt.u32 m0, v1, v2
  viota v3, 0
  vimm.u32 v4, 2
  vcmpge.u32 m1, v3, v4
  mxor m2, m0, m1
  mnot m3, m2
  mor m4, m3, m0
  vmtov v0, m4
  vst.u32 vmem[65536], v0)",
                                              {}, kVregElems);
  for (int i = 0; i < kVregElems; ++i) {
    bool m0 = i % kLanes < 64, m1 = i / kLanes >= 2;
    EXPECT_EQ(m[i], static_cast<uint32_t>(!(m0 != m1) || m0)) << i;
  }
}

TEST(VectorUnitTest, ConvertsSaturateAndRound) {
  std::vector<float> a = {1e10f, -1e10f, NAN, -1.9f, 2.9f, 16777217.0f};
  a.resize(kVregElems, 0.5f);
  std::vector<int32_t> s = RunBody<int32_t>(
      "  vld.f32 v1, vmem[0]\n  vcvt.s32.f32 v0, v1\n  vst.s32 vmem[65536], v0",
      {ToBytes(a)}, kVregElems);
  EXPECT_EQ(s[0], INT32_MAX);
  EXPECT_EQ(s[1], INT32_MIN);
  EXPECT_EQ(s[2], 0);
  EXPECT_EQ(s[3], -1);
  EXPECT_EQ(s[4], 2);
  std::vector<uint32_t> u = RunBody<uint32_t>(
      "  vld.f32 v1, vmem[0]\n  vcvt.u32.f32 v0, v1\n  vst.u32 vmem[65536], v0",
      {ToBytes(a)}, kVregElems);
  EXPECT_EQ(u[1], 0u);
  EXPECT_EQ(u[0], 4294967295u);
  // s32 -> f32 rounds to nearest even.
  std::vector<int32_t> i = {16777217, 16777219, -3};
  i.resize(kVregElems, 0);
  std::vector<float> f = RunBody<float>(
      "  vld.s32 v1, vmem[0]\n  vcvt.f32.s32 v0, v1\n  vst.f32 vmem[65536], v0",
      {ToBytes(i)}, kVregElems);
  EXPECT_EQ(f[0], 16777216.0f);
  EXPECT_EQ(f[1], 16777220.0f);
  EXPECT_EQ(f[2], -3.0f);
}

TEST(VectorUnitTest, SixtyFourBitPairs) {
  std::vector<int64_t> a(kVregElems), b(kVregElems);
  for (int i = 0; i < kVregElems; ++i) {
    a[i] = (int64_t{1} << 32) * i - 1;
    b[i] = 0xffffffffll + i;
  }
  std::vector<int64_t> sum =
      RunBody<int64_t>(R"(
  vld.s64 v2, vmem[0]
  vld.s64 v4, vmem[8192]
  vadd.s64 v0, v2, v4
  vmul.s64 v6, v0, v4
  vsub.s64 v0, v6, v2
  vst.s64 vmem[65536], v0)",
                       {ToBytes(a), ToBytes(b)}, kVregElems);
  for (int i = 0; i < kVregElems; ++i) {
    uint64_t s = static_cast<uint64_t>(a[i]) + static_cast<uint64_t>(b[i]);
    uint64_t want =
        s * static_cast<uint64_t>(b[i]) - static_cast<uint64_t>(a[i]);
    EXPECT_EQ(static_cast<uint64_t>(sum[i]), want) << i;
  }
  // f64 arithmetic is IEEE double; f32 <-> f64 converts.
  std::vector<double> d(kVregElems);
  for (int i = 0; i < kVregElems; ++i) d[i] = 1.0 / (i + 3);
  std::vector<double> r = RunBody<double>(R"(
  vld.f64 v2, vmem[0]
  vmul.f64 v4, v2, v2
  vdiv.f64 v4, v4, v2
  vcvt.f32.f64 v8, v4
  vcvt.f64.f32 v10, v8
  vsub.f64 v0, v4, v10
  vst.f64 vmem[65536], v0)",
                                          {ToBytes(d)}, kVregElems);
  for (int i = 0; i < kVregElems; ++i) {
    double x = d[i] * d[i] / d[i];
    EXPECT_EQ(r[i], x - static_cast<double>(static_cast<float>(x))) << i;
  }
}

TEST(VectorUnitTest, PackUnpackAndNarrowMemoryTypes) {
  // 1 + 2^-8 ties to even (1.0); 1 + 3*2^-9 rounds up; f16 overflow -> inf.
  std::vector<float> a = {
      1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-9f, 70000.0f, 0x1p-20f, -2.0f, 300.0f};
  a.resize(kVregElems, 0.0f);
  std::vector<uint32_t> r = RunBody<uint32_t>(R"(
  vld.f32 v1, vmem[0]
  vpack.bf16 v0, v1
  vpack.f16 v2, v1
  vunpack.f16 v3, v2
  vcvt.s32.f32 v4, v1
  vpack.s8 v5, v4
  vunpack.s8 v5, v5
  vst.u32 vmem[65536], v0
  vst.u32 vmem[69632], v3
  vst.u32 vmem[73728], v5)",
                                              {ToBytes(a)}, 3 * kVregElems);
  EXPECT_EQ(r[0], 0x3f80u);
  EXPECT_EQ(r[1], 0x3f81u);
  EXPECT_EQ(BitsF32(r[kVregElems + 2]), INFINITY);
  EXPECT_EQ(BitsF32(r[kVregElems + 3]), 0x1p-20f);  // f16 subnormal, exact.
  EXPECT_EQ(BitsF32(r[kVregElems + 4]), -2.0f);
  EXPECT_EQ(static_cast<int32_t>(r[2 * kVregElems + 5]), 44);  // 300 wraps.
  EXPECT_EQ(static_cast<int32_t>(r[2 * kVregElems + 4]), -2);
  // Stores convert: bf16 rounds, pred stores 0/1; loads extend back.
  std::vector<uint8_t> bytes = RunBody<uint8_t>(R"(
  vld.f32 v1, vmem[0]
  vst.bf16 vmem[65536], v1
  vst.pred vmem[67584], v1)",
                                                {ToBytes(a)}, 3 * kVregElems);
  EXPECT_EQ(bytes[0] | (bytes[1] << 8), 0x3f80);
  EXPECT_EQ(bytes[2] | (bytes[3] << 8), 0x3f81);
  EXPECT_EQ(bytes[2048], 1);
  EXPECT_EQ(bytes[2048 + 10], 0);
}

TEST(VectorUnitTest, NarrowLoadsExtend) {
  std::vector<uint8_t> bytes(2048);
  for (int i = 0; i < 2048; ++i) bytes[i] = static_cast<uint8_t>(i * 37);
  std::vector<uint32_t> r = RunBody<uint32_t>(R"(
  vld.s8 v0, vmem[0]
  vld.u8 v1, vmem[0]
  vld.bf16 v2, vmem[0]
  vld.u16 v3, vmem[0]
  vld.pred v4, vmem[0]
  vst.u32 vmem[65536], v0
  vst.u32 vmem[69632], v1
  vst.u32 vmem[73728], v2
  vst.u32 vmem[77824], v3
  vst.u32 vmem[81920], v4)",
                                              {bytes}, 5 * kVregElems);
  for (int i = 0; i < kVregElems; ++i) {
    uint16_t h = static_cast<uint16_t>(bytes[2 * i] | (bytes[2 * i + 1] << 8));
    EXPECT_EQ(r[i], static_cast<uint32_t>(static_cast<int8_t>(bytes[i])));
    EXPECT_EQ(r[kVregElems + i], bytes[i]);
    EXPECT_EQ(r[2 * kVregElems + i], uint32_t{h} << 16);
    EXPECT_EQ(r[3 * kVregElems + i], h);
    EXPECT_EQ(r[4 * kVregElems + i], bytes[i] != 0 ? 1u : 0u);
  }
}

TEST(VectorUnitTest, CrossLaneReductionsAndShuffles) {
  std::vector<float> a(kVregElems);
  for (int i = 0; i < kVregElems; ++i)
    a[i] = static_cast<float>(i % 37) - (i / kLanes);
  std::vector<float> r = RunBody<float>(R"(
  vld.f32 v1, vmem[0]
  vlredsum.f32 v0, v1
  vsredmax.f32 v2, v1
  vlredmin.f32 v3, v1
  vst.f32 vmem[65536], v0
  vst.f32 vmem[69632], v2
  vst.f32 vmem[73728], v3)",
                                        {ToBytes(a)}, 3 * kVregElems);
  for (int s = 0; s < kSublanes; ++s) {
    float sum = 0, mn = INFINITY;
    for (int l = 0; l < kLanes; ++l) {
      sum += a[s * kLanes + l];
      mn = std::min(mn, a[s * kLanes + l]);
    }
    for (int l = 0; l < kLanes; ++l) {
      EXPECT_EQ(r[s * kLanes + l], sum);  // Small integers: order-free.
      EXPECT_EQ(r[2 * kVregElems + s * kLanes + l], mn);
    }
  }
  for (int l = 0; l < kLanes; ++l) {
    float mx = -INFINITY;
    for (int s = 0; s < kSublanes; ++s) mx = std::max(mx, a[s * kLanes + l]);
    EXPECT_EQ(r[kVregElems + 5 * kLanes + l], mx);
  }
  std::vector<uint32_t> sh = RunBody<uint32_t>(R"(
  viota v1, 2
  simm s1, -3
  vlrot v0, v1, s1
  vsrot v2, v1, 1
  vxpose8 v3, v1
  vimm.u32 v5, 127
  viota v6, 1
  vsub.u32 v5, v5, v6
  vlperm v4, v1, v5
  vst.u32 vmem[65536], v0
  vst.u32 vmem[69632], v2
  vst.u32 vmem[73728], v3
  vst.u32 vmem[77824], v4)",
                                               {}, 4 * kVregElems);
  for (int i = 0; i < kVregElems; ++i) {
    int s = i / kLanes, l = i % kLanes;
    EXPECT_EQ(sh[i], static_cast<uint32_t>(s * kLanes + (l + 3) % kLanes));
    EXPECT_EQ(sh[kVregElems + i],
              static_cast<uint32_t>(((s + 7) % 8) * kLanes + l));
    int b = l / 8, j = l % 8;
    EXPECT_EQ(sh[2 * kVregElems + i],
              static_cast<uint32_t>(j * kLanes + 8 * b + s));
    EXPECT_EQ(sh[3 * kVregElems + i],
              static_cast<uint32_t>(s * kLanes + 127 - l));
  }
}

TEST(VectorUnitTest, Transpose128AcrossSixteenRegisters) {
  std::vector<uint32_t> m(128 * 128);
  for (int i = 0; i < 128 * 128; ++i) m[i] = i;
  std::string body;
  for (int r = 0; r < 16; ++r) {
    body += "  vld.u32 v" + std::to_string(r) + ", vmem[" +
            std::to_string(r * 4096) + "]\n";
  }
  body += "  vxpose128 v16, v0\n";
  for (int r = 0; r < 16; ++r) {
    body += "  vst.u32 vmem[" + std::to_string(65536 + r * 4096) + "], v" +
            std::to_string(16 + r) + "\n";
  }
  // Inputs are staged in 8 KiB slots, so stage the matrix as 8 inputs.
  std::vector<std::vector<uint8_t>> ins;
  for (int k = 0; k < 8; ++k) {
    ins.push_back(ToBytes(std::vector<uint32_t>(m.begin() + k * 2048,
                                                m.begin() + (k + 1) * 2048)));
  }
  std::vector<uint32_t> t = RunBody<uint32_t>(body, ins, 128 * 128);
  ASSERT_EQ(t.size(), 128u * 128u);
  for (int r = 0; r < 128; ++r) {
    for (int c = 0; c < 128; ++c) {
      ASSERT_EQ(t[r * 128 + c], static_cast<uint32_t>(c * 128 + r))
          << r << "," << c;
    }
  }
}

TEST(VectorUnitTest, GatherScatter) {
  std::vector<float> table = Ramp(0, 1);
  std::vector<int32_t> idx(kVregElems);
  for (int i = 0; i < kVregElems; ++i) idx[i] = (i * 7) % 1000;
  std::vector<float> r =
      RunBody<float>(R"(
  vld.s32 v1, vmem[8192]
  vgather.f32 v0, vmem[0], v1
  vimm.f32 v2, 0
  vst.f32 vmem[65536], v2
  vscatter.f32 vmem[65536], v1, v0
  vst.f32 vmem[69632], v0)",
                     {ToBytes(table), ToBytes(idx)}, 2 * kVregElems);
  for (int i = 0; i < kVregElems; ++i) {
    EXPECT_EQ(r[kVregElems + i], table[idx[i]]);
  }
  for (int i = 0; i < 1000; ++i) {
    bool hit = false;
    for (int j = 0; j < kVregElems; ++j) hit |= idx[j] == i;
    EXPECT_EQ(r[i], hit ? table[i] : 0.0f) << i;
  }
}

}  // namespace
}  // namespace trench::tpu
