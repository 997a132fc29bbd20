// The coverage runtime's bookkeeping, fed by hand the way SanitizerCoverage's
// module constructors feed it (this test binary is not instrumented).
#include "compiler/driver/coverage.h"

#include <gtest/gtest.h>

extern "C" void __sanitizer_cov_8bit_counters_init(uint8_t* start,
                                                   uint8_t* stop);
extern "C" void __sanitizer_cov_pcs_init(const uintptr_t* beg,
                                         const uintptr_t* end);

namespace trench::coverage {
namespace {

uint8_t counters[6];
uintptr_t pcs[12];

TEST(CoverageRuntimeTest, AttributesHitsBetweenResets) {
  EXPECT_FALSE(Available());
  EXPECT_EQ(HitsHex(), "");
  for (int i = 0; i < 6; ++i) {
    pcs[2 * i] = reinterpret_cast<uintptr_t>(&counters[i]);
  }
  __sanitizer_cov_8bit_counters_init(counters, counters + 6);
  __sanitizer_cov_8bit_counters_init(counters, counters + 6);  // Again.
  __sanitizer_cov_pcs_init(pcs, pcs + 12);
  ASSERT_TRUE(Available());
  EXPECT_EQ(Size(), 6u);
  // Request 1 hits points 0 and 5.
  Reset();
  counters[0] = 3;
  counters[5] = 1;
  EXPECT_EQ(HitsHex(), "12");
  EXPECT_EQ(HitsOfHex(HitsHex()), (std::vector<size_t>{0, 5}));
  // Request 2 hits point 2 only: nothing of request 1 remains.
  Reset();
  counters[2] = 255;
  EXPECT_EQ(HitsHex(), "40");
  EXPECT_EQ(HitsOfHex("40"), std::vector<size_t>{2});
  // Offsets are the addresses minus the load bias, in table order.
  const std::vector<uint64_t> off = PcOffsets();
  ASSERT_EQ(off.size(), 6u);
  EXPECT_EQ(off[1] - off[0], 1u);
}

}  // namespace
}  // namespace trench::coverage
