// Changed lines of a diff, the map from coverage points to changed lines
// (over a hand-written llvm-dwarfdump line table), reach counting, steering
// seeds, and a campaign over a target without the coverage flavour.
#include "triage/fuzz/line_reach.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "triage/fuzz/campaign.h"
#include "triage/fuzz/fuzz_flags.h"
#include "triage/fuzz/reach_steering.h"

namespace trench::fuzz {
namespace {

namespace fs = std::filesystem;

constexpr char kDiff[] =
    R"(diff --git a/compiler/passes/p.cc b/compiler/passes/p.cc
--- a/compiler/passes/p.cc
+++ b/compiler/passes/p.cc
@@ -10,5 +10,6 @@
 ctx
-old
+new1
+new2
 ctx
 ctx
 ctx
@@ -40,4 +41,3 @@
 a
-gone
 b
 c
diff --git a/old.cc b/old.cc
deleted file mode 100644
--- a/old.cc
+++ /dev/null
@@ -1,1 +0,0 @@
-x
)";

TEST(ChangedLinesTest, AddedLinesAndTheSitesOfRemovals) {
  StatusOr<ChangedLines> c = ChangedLinesOfDiff(kDiff);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  ASSERT_EQ(c->size(), 1u);  // The deleted file adds nothing.
  // new1, new2 at 11 and 12; the removal of "gone" stands for the line
  // after it, "b" at 42.
  EXPECT_EQ(c->at("compiler/passes/p.cc"), (std::set<int64_t>{11, 12, 42}));
}

TEST(ChangedLinesTest, RemovalAtTheEndOfAHunkMarksTheLineBefore) {
  StatusOr<ChangedLines> c = ChangedLinesOfDiff(
      "--- a/x.cc\n+++ b/x.cc\n@@ -5,3 +5,2 @@\n a\n b\n-c\n");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->at("x.cc"), (std::set<int64_t>{6}));
}

TEST(ChangedLinesTest, MalformedDiffIsAnError) {
  EXPECT_FALSE(ChangedLinesOfDiff("not a diff").ok());
}

// llvm-dwarfdump --debug-line's text for two tables: p.cc's code in one
// sequence at 0x1000..0x1100, and q.cc (not instrumented) at 0x5000.
constexpr char kLineTable[] = R"(
debug_line[0x00000000]
Line table prologue:
include_directories[  0] = "/build"
include_directories[  1] = "/src/repo/compiler/passes"
file_names[  0]:
           name: "p.cc"
      dir_index: 1
   md5_checksum: 00
file_names[  1]:
           name: "/usr/include/c++/12/vector"
      dir_index: 0

Address            Line   Column File   ISA Discriminator Flags
------------------ ------ ------ ------ --- ------------- -------------
0x0000000000001000     10      0      0   0             0  is_stmt
0x0000000000001010     11      3      0   0             0  is_stmt
0x0000000000001020     99      3      1   0             0  is_stmt
0x0000000000001030     12      3      0   0             0  is_stmt
0x0000000000001048     11      7      0   0             0
0x0000000000001100     12      0      0   0             0  is_stmt end_sequence
debug_line[0x00000100]
include_directories[  0] = "/src/repo"
file_names[  0]:
           name: "q.cc"
      dir_index: 0

Address            Line   Column File   ISA Discriminator Flags
------------------ ------ ------ ------ --- ------------- -------------
0x0000000000005000      3      0      0   0             0  is_stmt
0x0000000000005010      3      0      0   0             0  is_stmt end_sequence
)";

TEST(LineCoverageMapTest, LinesMapToTheBlocksHoldingTheirCode) {
  // Points (in PC table order): 0x1040, 0x1000, 0x1030.
  const std::vector<uint64_t> pcs = {0x1040, 0x1000, 0x1030};
  ChangedLines changed;
  changed["compiler/passes/p.cc"] = {11, 12, 13};
  changed["q.cc"] = {3};
  const LineCoverageMap m =
      LineCoverageMap::FromLineTable(pcs, kLineTable, changed);
  EXPECT_EQ(m.points(), 3u);
  // Line 11: code at 0x1010 (block of point 1) and 0x1048 (point 0);
  // line 12: 0x1030 (point 2); 13: no code; q.cc:3: before any point of
  // its sequence.
  ASSERT_EQ(m.lines().size(), 2u);
  EXPECT_EQ(m.lines()[0].ToString(), "compiler/passes/p.cc:11");
  EXPECT_EQ(m.lines()[1].ToString(), "compiler/passes/p.cc:12");
  ASSERT_EQ(m.no_code().size(), 1u);
  EXPECT_EQ(m.no_code()[0].ToString(), "compiler/passes/p.cc:13");
  ASSERT_EQ(m.uninstrumented().size(), 1u);
  EXPECT_EQ(m.uninstrumented()[0].ToString(), "q.cc:3");
  // Hex bitmap: point i is bit i % 4 of digit i / 4.
  EXPECT_EQ(m.Reached("0"), std::vector<int>{});
  EXPECT_EQ(m.Reached("1"), std::vector<int>{0});  // Point 0.
  EXPECT_EQ(m.Reached("2"), std::vector<int>{0});  // Point 1.
  EXPECT_EQ(m.Reached("4"), std::vector<int>{1});  // Point 2.
  EXPECT_EQ(m.Reached("7"), (std::vector<int>{0, 1}));
  EXPECT_EQ(m.Reached(""), std::vector<int>{});
}

TEST(LineReachTest, CountsProgramsPerLine) {
  const std::vector<uint64_t> pcs = {0x1040, 0x1000, 0x1030};
  ChangedLines changed;
  changed["compiler/passes/p.cc"] = {11, 12};
  LineReach reach(std::make_shared<const LineCoverageMap>(
      LineCoverageMap::FromLineTable(pcs, kLineTable, changed)));
  EXPECT_EQ(reach.lines(), 2u);
  EXPECT_EQ(reach.Add({0}), 1);
  EXPECT_EQ(reach.Add({0}), 0);
  EXPECT_EQ(reach.reached(), 1);
  EXPECT_FALSE(reach.AllReachedAtLeast(1));
  ASSERT_EQ(reach.Unreached().size(), 1u);
  EXPECT_EQ(reach.Unreached()[0].line, 12);
  EXPECT_EQ(reach.Add({0, 1}), 1);
  EXPECT_TRUE(reach.AllReachedAtLeast(1));
  EXPECT_FALSE(reach.AllReachedAtLeast(2));
  Json j = reach.ToJson();
  Json first = j["per_line"].array()[0];
  EXPECT_EQ(j["lines"].int64_value(), 2);
  EXPECT_EQ(j["reached"].int64_value(), 2);
  EXPECT_EQ(first["programs"].int64_value(), 3);
}

constexpr char kSeedModule[] = R"(HloModule m

ENTRY e {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  a = f32[4] add(p, c)
  ROOT m = f32[4] multiply(a, p)
}
)";

TEST(ReachSteeringTest, KeepsSeedsOfNewLinesAndMutatesThem) {
  const std::vector<uint64_t> pcs = {0x1040, 0x1000, 0x1030};
  ChangedLines changed;
  changed["compiler/passes/p.cc"] = {11, 12};
  LineReach reach(std::make_shared<const LineCoverageMap>(
      LineCoverageMap::FromLineTable(pcs, kLineTable, changed)));
  ReachSteering steering(&reach, 1);
  EXPECT_FALSE(steering.has_seeds());
  EXPECT_FALSE(steering.Mutant(1).ok());
  // A program that reached nothing is no seed.
  steering.Offer(kSeedModule, {}, Json::MakeObject(), {}, 0);
  EXPECT_FALSE(steering.has_seeds());
  const int fresh = reach.Add({0});
  Json origin = Json::MakeObject();
  origin["kind"] = "synthetic";
  steering.Offer(kSeedModule, {}, origin, {0}, fresh);
  ASSERT_TRUE(steering.has_seeds());
  int made = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    StatusOr<GeneratedCase> g = steering.Mutant(seed);
    if (!g.ok()) continue;
    ++made;
    EXPECT_EQ(g->origin["kind"].string_value(), "reach_mutant");
    EXPECT_EQ(g->origin["parent"]["kind"].string_value(), "synthetic");
    EXPECT_FALSE(g->origin["mutations"].array().empty());
    EXPECT_NE(g->hlo_text, kSeedModule);
  }
  EXPECT_GT(made, 0);
  EXPECT_EQ(steering.ToJson()["mutants"].int64_value(), made);
}

TEST(LineReachTest, TargetWithoutCoverageFlavourStillFuzzes) {
  const fs::path dir = fs::path(::testing::TempDir()) / "reach_plain";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream((dir / "commit.diff").string()) << kDiff;
  FuzzFlags f = DefaultFuzzFlags(TRENCH_BINARY_DIR);
  f.changed_lines = (dir / "commit.diff").string();
  f.campaign.out_dir = (dir / "out").string();
  f.campaign.max_programs = 4;
  f.campaign.budget_seconds = 600;
  f.campaign.generator.instructions = 6;
  f.campaign.reach_stop_programs = 1;
  std::string note;
  ASSERT_TRUE(PrepareReach(&f, &note).ok());
  EXPECT_NE(note.find("not a coverage build"), std::string::npos) << note;
  EXPECT_EQ(f.campaign.changed_lines, nullptr);
  StatusOr<CampaignSummary> s = RunCampaign(f.campaign);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->programs, 4);
  EXPECT_TRUE(s->reach.is_null());
  EXPECT_EQ(s->ToJson().Find("reach"), nullptr);
}

TEST(LineReachTest, UnreadableDiffIsAnError) {
  FuzzFlags f = DefaultFuzzFlags(TRENCH_BINARY_DIR);
  f.changed_lines = "/nonexistent/commit.diff";
  std::string note;
  EXPECT_FALSE(PrepareReach(&f, &note).ok());
}

}  // namespace
}  // namespace trench::fuzz
