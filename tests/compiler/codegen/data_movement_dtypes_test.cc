// broadcast, transpose, slice, concatenate, reverse, iota, reshape, copy
// and bitcast for every element type, on ragged shapes, through both the
// strided-DMA path (whole rows) and the vgather/vscatter path, against the
// oracle (exact).
#include <string>
#include <vector>

#include "tests/compiler/codegen/codegen_test_util.h"

namespace trench::codegen {
namespace {

using testing::EntryModule;
using testing::ExpectMatchesOracle;
using testing::kAllTypes;
using testing::kExact;

std::string Param(const std::string& name, int i, const std::string& shape) {
  return "  " + name + " = " + shape + " parameter(" + std::to_string(i) +
         ")\n";
}

TEST(DataMovementDtypesTest, Broadcast) {
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    // Scalar (gather path), row broadcast (DMA with a zero stride),
    // column broadcast (gather path).
    ExpectMatchesOracle(EntryModule(Param("a", 0, t + "[]") + "  ROOT r = " +
                                    t + "[3,5] broadcast(a), dimensions={}\n"),
                        1, kExact);
    ExpectMatchesOracle(
        EntryModule(Param("a", 0, t + "[70]") + "  ROOT r = " + t +
                    "[3,70] broadcast(a), dimensions={1}\n"),
        2, kExact);
    ExpectMatchesOracle(
        EntryModule(Param("a", 0, t + "[9]") + "  ROOT r = " + t +
                    "[9,2,13] broadcast(a), dimensions={0}\n"),
        3, kExact);
  }
}

TEST(DataMovementDtypesTest, Transpose) {
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    ExpectMatchesOracle(
        EntryModule(Param("a", 0, t + "[7,9]") + "  ROOT r = " + t +
                    "[9,7] transpose(a), dimensions={1,0}\n"),
        4, kExact);
    // Keeps the minor dim: rows move by DMA.
    ExpectMatchesOracle(
        EntryModule(Param("a", 0, t + "[3,2,65]") + "  ROOT r = " + t +
                    "[2,3,65] transpose(a), dimensions={1,0,2}\n"),
        5, kExact);
  }
}

TEST(DataMovementDtypesTest, Slice) {
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    ExpectMatchesOracle(
        EntryModule(Param("a", 0, t + "[5,130]") + "  ROOT r = " + t +
                    "[3,100] slice(a), slice={[1:4], [7:107]}\n"),
        6, kExact);
    ExpectMatchesOracle(
        EntryModule(Param("a", 0, t + "[3,7,29]") + "  ROOT r = " + t +
                    "[1,3,10] slice(a), slice={[2:3], [0:7:3], [1:29:3]}\n"),
        7, kExact);
  }
}

TEST(DataMovementDtypesTest, Concatenate) {
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    // Narrow pieces (scatter path) next to wide ones (DMA path).
    ExpectMatchesOracle(
        EntryModule(Param("a", 0, t + "[3,2]") + Param("b", 1, t + "[3,130]") +
                    Param("c", 2, t + "[3,1]") + "  ROOT r = " + t +
                    "[3,133] concatenate(a, b, c), dimensions={1}\n"),
        8, kExact);
    // Along the major dim: all DMA.
    ExpectMatchesOracle(
        EntryModule(Param("a", 0, t + "[2,5]") + Param("b", 1, t + "[0,5]") +
                    Param("c", 2, t + "[3,5]") + "  ROOT r = " + t +
                    "[5,5] concatenate(a, b, c), dimensions={0}\n"),
        9, kExact);
  }
}

TEST(DataMovementDtypesTest, Reverse) {
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    ExpectMatchesOracle(EntryModule(Param("a", 0, t + "[4,9]") + "  ROOT r = " +
                                    t + "[4,9] reverse(a), dimensions={1}\n"),
                        10, kExact);
    // Major dims only: rows stay contiguous (DMA with negative strides).
    ExpectMatchesOracle(
        EntryModule(Param("a", 0, t + "[3,2,70]") + "  ROOT r = " + t +
                    "[3,2,70] reverse(a), dimensions={0,1}\n"),
        11, kExact);
    ExpectMatchesOracle(
        EntryModule(Param("a", 0, t + "[2,3,5]") + "  ROOT r = " + t +
                    "[2,3,5] reverse(a), dimensions={0,2}\n"),
        12, kExact);
  }
}

TEST(DataMovementDtypesTest, Iota) {
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    ExpectMatchesOracle(
        EntryModule("  ROOT r = " + t + "[3,300] iota(), iota_dimension=1\n"),
        0, kExact);
    ExpectMatchesOracle(
        EntryModule("  ROOT r = " + t + "[5,2,3] iota(), iota_dimension=0\n"),
        0, kExact);
  }
}

TEST(DataMovementDtypesTest, ReshapeCopyBitcast) {
  for (const std::string& t : kAllTypes) {
    SCOPED_TRACE(t);
    ExpectMatchesOracle(
        EntryModule(Param("a", 0, t + "[3,10]") + "  r = " + t +
                    "[5,6] reshape(a)\n  b = " + t +
                    "[30] bitcast(r)\n  ROOT c = " + t + "[30] copy(b)\n"),
        13, kExact);
    // A bitcast between layouts reinterprets the physical order.
    ExpectMatchesOracle(
        EntryModule(Param("a", 0, t + "[3,5]{0,1}") + "  ROOT b = " + t +
                    "[5,3]{1,0} bitcast(a)\n"),
        14, kExact);
    ExpectMatchesOracle(
        EntryModule(Param("a", 0, t + "[2,3,4]{2,1,0}") + "  ROOT b = " + t +
                    "[4,6]{0,1} bitcast(a)\n"),
        15, kExact);
  }
}

TEST(DataMovementDtypesTest, CopyBetweenLayoutsKeepsLogicalValues) {
  ExpectMatchesOracle(EntryModule(Param("a", 0, "f32[3,5]{0,1}") +
                                  "  ROOT c = f32[3,5]{1,0} copy(a)\n"),
                      23, kExact);
  // A copy whose operand dies there may be planned in place.
  ExpectMatchesOracle(EntryModule(Param("a", 0, "u8[3,5]") +
                                  "  r = u8[3,5] reverse(a), dimensions={1}\n"
                                  "  c = u8[3,5]{0,1} copy(r)\n"
                                  "  ROOT n = u8[5,3] transpose(c), "
                                  "dimensions={1,0}\n"),
                      24, kExact);
}

TEST(DataMovementDtypesTest, BitcastChangesElementType) {
  ExpectMatchesOracle(EntryModule(Param("a", 0, "f32[2,3]") +
                                  "  ROOT b = u32[2,3] bitcast(a)\n"),
                      16, kExact);
  ExpectMatchesOracle(
      EntryModule(Param("a", 0, "s64[3]") + "  ROOT b = f64[3] bitcast(a)\n"),
      17, kExact);
  ExpectMatchesOracle(EntryModule(Param("a", 0, "f32[2,3]{0,1}") +
                                  "  ROOT b = u32[3,2]{0,1} bitcast(a)\n"),
                      25, kExact);
}

TEST(DataMovementDtypesTest, ZeroSizedOperands) {
  for (std::string t : {"f32", "s64", "pred"}) {
    ExpectMatchesOracle(EntryModule(Param("a", 0, std::string(t) + "[0,3]") +
                                    "  ROOT r = " + t +
                                    "[3,0] transpose(a), dimensions={1,0}\n"),
                        18, kExact);
    ExpectMatchesOracle(EntryModule(Param("a", 0, std::string(t) + "[4,3]") +
                                    "  ROOT r = " + t +
                                    "[0,3] slice(a), slice={[2:2], [0:3]}\n"),
                        19, kExact);
    ExpectMatchesOracle(
        EntryModule(Param("a", 0, std::string(t) + "[0]") + "  ROOT r = " + t +
                    "[0] reverse(a), "
                    "dimensions={0}\n"),
        20, kExact);
  }
}

TEST(DataMovementDtypesTest, HighRankBoxesLoopOverOuterDims) {
  // Five non-mergeable strided dims: the outer two become scalar loops
  // around the dmastart.
  ExpectMatchesOracle(
      EntryModule(
          Param("a", 0, "f32[3,3,3,3,3,40]") +
          "  ROOT r = f32[2,2,2,2,2,20] slice(a), slice={[0:3:2], [1:3], "
          "[0:3:2], [1:3], [0:3:2], [3:23]}\n"),
      21, kExact);
  ExpectMatchesOracle(
      EntryModule(Param("a", 0, "s8[3,3,3,3,70]") +
                  "  ROOT r = s8[3,3,3,3,70] reverse(a), dimensions={0,2}\n"),
      22, kExact);
}

}  // namespace
}  // namespace trench::codegen
