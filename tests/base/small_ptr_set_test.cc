// SmallPtrSet: the same answers as std::unordered_set below, at and past
// the size where it moves its elements into the hash set.
#include "base/small_ptr_set.h"

#include <gtest/gtest.h>

#include <random>
#include <unordered_set>
#include <vector>

namespace trench {
namespace {

TEST(SmallPtrSetTest, AgreesWithAHashSetAcrossTheSwitch) {
  std::vector<int> storage(200);
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    SmallPtrSet<const int*, 8> small;
    std::unordered_set<const int*> want;
    const int inserts = static_cast<int>(rng() % 60);
    for (int k = 0; k < inserts; ++k) {
      const int* p = &storage[rng() % storage.size()];
      ASSERT_EQ(small.insert(p), want.insert(p).second);
      ASSERT_EQ(small.size(), want.size());
    }
    for (const int& x : storage) {
      ASSERT_EQ(small.contains(&x), want.count(&x) > 0);
      ASSERT_EQ(small.count(&x), want.count(&x));
    }
    std::unordered_set<const int*> seen;
    small.ForEach([&](const int* p) { EXPECT_TRUE(seen.insert(p).second); });
    EXPECT_EQ(seen, want);
    EXPECT_EQ(small.empty(), want.empty());
  }
}

TEST(SmallPtrSetTest, BuildsFromARangeWithDuplicates) {
  int a = 0, b = 0;
  const std::vector<const int*> v = {&a, &b, &a};
  const SmallPtrSet<const int*> s(v.begin(), v.end());
  EXPECT_EQ(s.size(), 2u);
  EXPECT_TRUE(s.contains(&a));
  EXPECT_TRUE(s.contains(&b));
  EXPECT_FALSE(s.contains(nullptr));
}

}  // namespace
}  // namespace trench
