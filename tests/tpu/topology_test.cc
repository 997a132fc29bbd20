// Slice topologies: shapes, hop counts with wraparound, neighbours.
#include "tpu/topology.h"

#include <gtest/gtest.h>

namespace trench::tpu {
namespace {

Topology For(int chips) {
  StatusOr<Topology> t = Topology::ForChips(chips);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

TEST(TopologyTest, Shapes) {
  EXPECT_EQ(For(1).ToString(), "single chip");
  EXPECT_EQ(For(2).ToString(), "ring of 2");
  EXPECT_EQ(For(3).ToString(), "ring of 3");
  EXPECT_EQ(For(4).ToString(), "2x2 torus");
  EXPECT_EQ(For(6).ToString(), "ring of 6");
  EXPECT_EQ(For(8).ToString(), "2x4 torus");
  EXPECT_EQ(For(8).rows(), 2);
  EXPECT_EQ(For(8).cols(), 4);
  for (int bad : {0, -1, 9}) {
    StatusOr<Topology> t = Topology::ForChips(bad);
    ASSERT_FALSE(t.ok());
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(t.status().message(),
              "a slice has 1..8 chips, got " + std::to_string(bad));
  }
}

TEST(TopologyTest, HopsOn2x2Torus) {
  // 0 1
  // 2 3
  const Topology t = For(4);
  const int want[4][4] = {
      {0, 1, 1, 2}, {1, 0, 2, 1}, {1, 2, 0, 1}, {2, 1, 1, 0}};
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      EXPECT_EQ(t.Hops(a, b), want[a][b]) << a << " -> " << b;
    }
  }
  EXPECT_EQ(t.Neighbors(0), (std::vector<int>{1, 2}));
  EXPECT_EQ(t.Neighbors(3), (std::vector<int>{1, 2}));
}

TEST(TopologyTest, HopsOn2x4Torus) {
  // 0 1 2 3
  // 4 5 6 7   (rows and columns wrap around)
  const Topology t = For(8);
  const int want[8][8] = {{0, 1, 2, 1, 1, 2, 3, 2}, {1, 0, 1, 2, 2, 1, 2, 3},
                          {2, 1, 0, 1, 3, 2, 1, 2}, {1, 2, 1, 0, 2, 3, 2, 1},
                          {1, 2, 3, 2, 0, 1, 2, 1}, {2, 1, 2, 3, 1, 0, 1, 2},
                          {3, 2, 1, 2, 2, 1, 0, 1}, {2, 3, 2, 1, 1, 2, 1, 0}};
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      EXPECT_EQ(t.Hops(a, b), want[a][b]) << a << " -> " << b;
      EXPECT_EQ(t.Hops(a, b), t.Hops(b, a));
    }
  }
  EXPECT_EQ(t.Neighbors(0), (std::vector<int>{1, 3, 4}));
  EXPECT_EQ(t.Neighbors(6), (std::vector<int>{2, 5, 7}));
}

TEST(TopologyTest, Rings) {
  const Topology five = For(5);
  EXPECT_EQ(five.Hops(0, 1), 1);
  EXPECT_EQ(five.Hops(0, 2), 2);
  EXPECT_EQ(five.Hops(0, 3), 2);  // Around the other way.
  EXPECT_EQ(five.Hops(0, 4), 1);
  EXPECT_EQ(five.Neighbors(0), (std::vector<int>{1, 4}));
  EXPECT_EQ(For(2).Neighbors(0), (std::vector<int>{1}));
  EXPECT_EQ(For(2).Hops(1, 0), 1);
  EXPECT_TRUE(For(1).Neighbors(0).empty());
  EXPECT_EQ(For(1).Hops(0, 0), 0);
}

}  // namespace
}  // namespace trench::tpu
