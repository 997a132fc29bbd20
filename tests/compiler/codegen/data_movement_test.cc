// broadcast, transpose, slice, concatenate, reshape, iota, constants and
// tuples on the simulator against the oracle.
#include <string>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

using testing::ExpectMatchesOracle;

std::string Module(const std::string& body) {
  return "HloModule m\nENTRY e {\n" + body + "}\n";
}

const ComparisonOptions kExact = ComparisonOptions::Exact();

TEST(DataMovementTest, Broadcast) {
  for (std::string t : {"f32", "s32", "bf16", "pred"}) {
    ExpectMatchesOracle(Module("  a = " + t + "[] parameter(0)\n  ROOT r = " +
                               t + "[9,129] broadcast(a), dimensions={}\n"),
                        1, kExact);
    ExpectMatchesOracle(
        Module("  a = " + t + "[300] parameter(0)\n  ROOT r = " + t +
               "[7,300] broadcast(a), dimensions={1}\n"),
        2, kExact);
    ExpectMatchesOracle(Module("  a = " + t + "[9] parameter(0)\n  ROOT r = " +
                               t + "[9,2,129] broadcast(a), dimensions={0}\n"),
                        3, kExact);
  }
}

TEST(DataMovementTest, Transpose) {
  for (std::string t : {"f32", "u32", "f16"}) {
    for (std::string d : {"[1,1]", "[7,9]", "[129,8]", "[127,300]"}) {
      std::string out = "[" +
                        d.substr(d.find(',') + 1, d.size() - d.find(',') - 2) +
                        "," + d.substr(1, d.find(',') - 1) + "]";
      ExpectMatchesOracle(
          Module("  a = " + t + d + " parameter(0)\n  ROOT r = " + t + out +
                 " transpose(a), dimensions={1,0}\n"),
          4, kExact);
    }
    ExpectMatchesOracle(
        Module("  a = " + t + "[2,7,129] parameter(0)\n  ROOT r = " + t +
               "[129,2,7] transpose(a), dimensions={2,0,1}\n"),
        5, kExact);
  }
}

TEST(DataMovementTest, Slice) {
  ExpectMatchesOracle(Module("  a = f32[300] parameter(0)\n  ROOT r = f32[129] "
                             "slice(a), slice={[1:259:2]}\n"),
                      6, kExact);
  ExpectMatchesOracle(
      Module("  a = s32[9,300] parameter(0)\n  ROOT r = s32[8,128] "
             "slice(a), slice={[1:9], [100:228]}\n"),
      7, kExact);
  ExpectMatchesOracle(Module("  a = bf16[3,7,129] parameter(0)\n  ROOT r = "
                             "bf16[1,3,43] slice(a), slice={[2:3], [0:7:3], "
                             "[0:129:3]}\n"),
                      8, kExact);
}

TEST(DataMovementTest, Concatenate) {
  ExpectMatchesOracle(
      Module("  a = f32[7] parameter(0)\n  b = f32[129] parameter(1)\n"
             "  c = f32[1] parameter(2)\n  ROOT r = f32[137] "
             "concatenate(a, b, c), dimensions={0}\n"),
      9, kExact);
  ExpectMatchesOracle(Module("  a = pred[9,7] parameter(0)\n  b = pred[9,300] "
                             "parameter(1)\n  ROOT r = pred[9,307] "
                             "concatenate(a, b), dimensions={1}\n"),
                      10, kExact);
  ExpectMatchesOracle(Module("  a = s32[1,128] parameter(0)\n  b = s32[8,128] "
                             "parameter(1)\n  ROOT r = s32[9,128] "
                             "concatenate(a, b), dimensions={0}\n"),
                      11, kExact);
}

TEST(DataMovementTest, ReshapeBitcastCopy) {
  ExpectMatchesOracle(
      Module("  a = f32[9,129] parameter(0)\n  r1 = f32[3,3,129] "
             "reshape(a)\n  r2 = f32[1161] bitcast(r1)\n  ROOT r = "
             "f32[1161] copy(r2)\n"),
      12, kExact);
}

TEST(DataMovementTest, IotaAndConstants) {
  for (std::string t : {"f32", "s32", "u32", "bf16"}) {
    ExpectMatchesOracle(
        Module("  ROOT r = " + t + "[9,300] iota(), iota_dimension=1\n"), 0,
        kExact);
    ExpectMatchesOracle(
        Module("  ROOT r = " + t + "[129,2,3] iota(), iota_dimension=0\n"), 0,
        kExact);
  }
  ExpectMatchesOracle(
      Module("  c = f32[3] constant({1.5, -2, 7})\n  a = f32[3] "
             "parameter(0)\n  ROOT r = f32[3] add(a, c)\n"),
      1, kExact);
  ExpectMatchesOracle(Module("  ROOT c = pred[2,2] constant({{true, false}, "
                             "{false, true}})\n"),
                      1, kExact);
}

TEST(DataMovementTest, TuplesFlattenToLeaves) {
  ExpectMatchesOracle(
      Module("  p = (f32[9], (s32[2,3], pred[])) parameter(0)\n"
             "  a = f32[9] get-tuple-element(p), index=0\n"
             "  i = (s32[2,3], pred[]) get-tuple-element(p), index=1\n"
             "  b = s32[2,3] get-tuple-element(i), index=0\n"
             "  n = f32[9] negate(a)\n"
             "  ROOT t = (f32[9], s32[2,3], f32[9], (s32[2,3], pred[])) "
             "tuple(n, b, a, i)\n"),
      14, kExact);
}

TEST(DataMovementTest, ZeroSizedArrays) {
  ExpectMatchesOracle(Module("  a = f32[0,3] parameter(0)\n  n = f32[0,3] "
                             "negate(a)\n  b = f32[2] parameter(1)\n  ROOT t = "
                             "(f32[0,3], f32[2]) tuple(n, b)\n"),
                      1, kExact);
}

// A transpose that moves single elements and does not fit in VMEM streams
// through it in result blocks (stream_data_movement.h; checked against the
// oracle in stream_data_movement_test.cc).
TEST(DataMovementTest, OperandsBeyondVmemStream) {
  auto m = testing::Parse(
      Module("  a = f32[3000,3000] parameter(0)\n  ROOT n = f32[3000,3000] "
             "transpose(a), dimensions={1,0}\n"));
  ASSERT_NE(m, nullptr);
  auto exe = CompileModule(*m, CompileOptions());
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  for (const tpu::Kernel& k : exe->kernels) EXPECT_LE(k.vmem_bytes, 16 << 20);
}

}  // namespace
}  // namespace trench::codegen
