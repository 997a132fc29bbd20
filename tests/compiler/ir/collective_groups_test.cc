// Collective groups (collective_groups.h): replica_groups in the list and
// iota forms, source_target_pairs, the group mode XLA derives from
// channel_id and use_global_device_ids, and the devices of each group on
// a mesh of replicas x partitions, with errors naming the problem.
#include "compiler/ir/collective_groups.h"

#include <gtest/gtest.h>

#include "compiler/ir/hlo_parser.h"

namespace trench {
namespace {

using Groups = std::vector<std::vector<int64_t>>;

Groups Parsed(const std::string& text) {
  StatusOr<Groups> g = ParseReplicaGroups(text);
  EXPECT_TRUE(g.ok()) << text << ": " << g.status().ToString();
  return g.ok() ? *g : Groups();
}

std::string Error(const std::string& text) {
  StatusOr<Groups> g = ParseReplicaGroups(text);
  EXPECT_FALSE(g.ok()) << text;
  return g.ok() ? "" : g.status().message();
}

TEST(ReplicaGroupsTest, ListForm) {
  EXPECT_EQ(Parsed("{}"), Groups());
  EXPECT_EQ(Parsed("{{0,1},{2,3}}"), (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(Parsed(" { {3, 1} , {0,2} } "), (Groups{{3, 1}, {0, 2}}));
}

TEST(ReplicaGroupsTest, IotaFormReshapesTransposesAndSplits) {
  EXPECT_EQ(Parsed("[2,2]<=[4]"), (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(Parsed("[1,4]<=[4]"), (Groups{{0, 1, 2, 3}}));
  // Transposed: devices 0 and 2 together.
  EXPECT_EQ(Parsed("[2,2]<=[2,2]T(1,0)"), (Groups{{0, 2}, {1, 3}}));
  EXPECT_EQ(Parsed("[4,2]<=[2,2,2]T(2,1,0)"),
            (Groups{{0, 4}, {2, 6}, {1, 5}, {3, 7}}));
  // The traces' form: 2 groups of 64 consecutive ids.
  const Groups big = Parsed("[2,64]<=[128]");
  ASSERT_EQ(big.size(), 2u);
  EXPECT_EQ(big[1].front(), 64);
  EXPECT_EQ(big[1].back(), 127);
  // 64 groups of 2 strided by 64.
  const Groups strided = Parsed("[64,2]<=[2,64]T(1,0)");
  ASSERT_EQ(strided.size(), 64u);
  EXPECT_EQ(strided[5], (std::vector<int64_t>{5, 69}));
}

TEST(ReplicaGroupsTest, MalformedTextIsNamedWithItsColumn) {
  EXPECT_NE(Error("{{0,1},{2}").find("column 11: expected '}'"),
            std::string::npos)
      << Error("{{0,1},{2}");
  EXPECT_NE(Error("{{0,-1}}").find("column 5"), std::string::npos);
  EXPECT_NE(Error("[2,3]<=[4]").find("2 groups of 3 do not hold the 4 ids"),
            std::string::npos);
  EXPECT_NE(Error("[2,2]<=[2,2]T(0,0)").find("not a permutation"),
            std::string::npos);
  // Found by collective_groups_fuzz: an empty permutation.
  EXPECT_NE(Error("[4,1]<=[2,2]T()").find("not a permutation"),
            std::string::npos);
  EXPECT_NE(Error("[2,2]<=[2,2]T(1)").find("not a permutation"),
            std::string::npos);
  // Found by collective_groups_fuzz: groups times size overflowed.
  EXPECT_NE(Error("[1111111111112111122,0640]<=[182]")
                .find("do not hold the 182 ids"),
            std::string::npos);
  EXPECT_NE(Error("[4611686018427387904,4]<=[16]").find("do not hold"),
            std::string::npos);
  EXPECT_NE(Error("{{0}} x").find("unexpected text"), std::string::npos);
  EXPECT_NE(Error("[2,2]<[4]").find("expected '<='"), std::string::npos);
  EXPECT_NE(Error("{{99999999999999999999}}").find("too large"),
            std::string::npos);
  EXPECT_FALSE(ParseSourceTargetPairs("{{0,1,2}}").ok());
  StatusOr<std::vector<std::pair<int64_t, int64_t>>> pairs =
      ParseSourceTargetPairs("{{0,1},{1,0}}");
  ASSERT_TRUE(pairs.ok());
  EXPECT_EQ(pairs->size(), 2u);
}

// The root of a module whose entry is one collective of f32[4] with
// `attrs`.
class CollectiveGroupsTest : public ::testing::Test {
 protected:
  const HloInstruction& Op(const std::string& attrs,
                           const std::string& op = "all-reduce") {
    const std::string text =
        "HloModule m\n\nsum {\n  a = f32[] parameter(0)\n  b = f32[] "
        "parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n\nENTRY e {\n  p = "
        "f32[4] parameter(0)\n  ROOT c = f32[4] " +
        op + "(p)" + (op == "all-reduce" ? ", to_apply=sum" : "") + attrs +
        "\n}\n";
    auto m = ParseHloModule(text);
    EXPECT_TRUE(m.ok()) << m.status().ToString() << "\n" << text;
    module_ = std::move(m).value();
    return *module_->entry_computation()->root_instruction();
  }
  std::unique_ptr<HloModule> module_;
};

TEST_F(CollectiveGroupsTest, ModesFollowChannelIdAndGlobalIds) {
  EXPECT_EQ(*GroupModeOf(Op("")), CollectiveGroupMode::kCrossReplica);
  EXPECT_EQ(*GroupModeOf(Op(", channel_id=1")),
            CollectiveGroupMode::kCrossReplicaAndPartition);
  EXPECT_EQ(*GroupModeOf(Op(", channel_id=1, use_global_device_ids=true")),
            CollectiveGroupMode::kFlattenedId);
  EXPECT_EQ(*GroupModeOf(Op(", channel_id=1", "collective-permute")),
            CollectiveGroupMode::kCrossPartition);
  StatusOr<CollectiveGroupMode> bad =
      GroupModeOf(Op(", use_global_device_ids=true"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("needs a channel_id"),
            std::string::npos);
}

TEST_F(CollectiveGroupsTest, DevicesOfEachGroupOnAMesh) {
  const DeviceMesh mesh{2, 2};  // Device r * 2 + p.
  // Cross-replica: the listed replicas, once per partition.
  EXPECT_EQ(*DeviceGroups(Op(", replica_groups={{0,1}}"), mesh),
            (Groups{{0, 2}, {1, 3}}));
  // Empty groups: every replica.
  EXPECT_EQ(*DeviceGroups(Op(""), mesh), (Groups{{0, 2}, {1, 3}}));
  // Cross-replica-and-partition: every partition of the listed replicas.
  EXPECT_EQ(*DeviceGroups(Op(", channel_id=1, replica_groups={{0},{1}}"), mesh),
            (Groups{{0, 1}, {2, 3}}));
  // Flattened ids: as written.
  EXPECT_EQ(*DeviceGroups(Op(", channel_id=1, use_global_device_ids=true, "
                             "replica_groups=[2,2]<=[2,2]T(1,0)"),
                          mesh),
            (Groups{{0, 2}, {1, 3}}));
  // Cross-partition (all-to-all with a channel): partitions per replica.
  EXPECT_EQ(
      *DeviceGroups(Op(", channel_id=1, dimensions={0}", "all-to-all"), mesh),
      (Groups{{0, 1}, {2, 3}}));
}

TEST_F(CollectiveGroupsTest, GroupsThatDoNotCoverTheMeshAreErrors) {
  const DeviceMesh mesh{1, 4};
  auto message = [&](const std::string& attrs) {
    StatusOr<Groups> g = DeviceGroups(Op(attrs), mesh);
    EXPECT_FALSE(g.ok()) << attrs;
    return g.ok() ? std::string() : g.status().message();
  };
  const std::string global = ", channel_id=1, use_global_device_ids=true";
  EXPECT_NE(message(global + ", replica_groups={{0,1},{2}}")
                .find("device 3 is in no group"),
            std::string::npos);
  EXPECT_NE(message(global + ", replica_groups={{0,1},{1,2,3}}")
                .find("device 1 is in two groups"),
            std::string::npos);
  EXPECT_NE(message(global + ", replica_groups={{0,1,2,3,4}}")
                .find("device id 4 is outside the mesh"),
            std::string::npos);
  EXPECT_NE(message(global).find("needs replica_groups"), std::string::npos);
}

TEST_F(CollectiveGroupsTest, PermutePairsPerReplicaOrPartition) {
  const DeviceMesh mesh{2, 2};
  const HloInstruction& cross_partition =
      Op(", channel_id=1, source_target_pairs={{0,1},{1,0}}",
         "collective-permute");
  EXPECT_EQ(*PermutePairs(cross_partition, mesh),
            (std::vector<std::pair<int64_t, int64_t>>{
                {0, 1}, {2, 3}, {1, 0}, {3, 2}}));
  const HloInstruction& cross_replica =
      Op(", source_target_pairs={{0,1}}", "collective-permute");
  EXPECT_EQ(*PermutePairs(cross_replica, mesh),
            (std::vector<std::pair<int64_t, int64_t>>{{0, 2}, {1, 3}}));
  StatusOr<std::vector<std::pair<int64_t, int64_t>>> twice = PermutePairs(
      Op(", source_target_pairs={{0,1},{0,0}}", "collective-permute"), mesh);
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("source of two pairs"),
            std::string::npos);
}

}  // namespace
}  // namespace trench
