// --mesh RxP: the compile flag that makes hloc and hlo-run compile for a
// slice of R*P chips.
#include <gtest/gtest.h>

#include "compiler/driver/target_driver.h"

namespace trench::hloc {
namespace {

TEST(MeshFlagTest, ParsesReplicasByPartitions) {
  StatusOr<DeviceMesh> m = ParseMesh("2x4");
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->replicas, 2);
  EXPECT_EQ(m->partitions, 4);
  CompileFlags flags;
  StatusOr<bool> known = ApplyCompileFlag("mesh", "1x2", &flags);
  ASSERT_TRUE(known.ok() && *known);
  EXPECT_EQ(flags.options.mesh.size(), 2);
}

TEST(MeshFlagTest, RefusesMalformedAndOversizedMeshes) {
  for (const char* bad : {"", "2", "x2", "2x", "0x2", "2x-1", "2x2x2", "ax2"}) {
    EXPECT_FALSE(ParseMesh(bad).ok()) << bad;
  }
  StatusOr<DeviceMesh> big = ParseMesh("4x4");
  ASSERT_FALSE(big.ok());
  EXPECT_NE(big.status().message().find("1..8 chips"), std::string::npos)
      << big.status().message();
}

}  // namespace
}  // namespace trench::hloc
