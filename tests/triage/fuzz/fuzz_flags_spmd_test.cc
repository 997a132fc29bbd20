// PrepareSpmd (fuzz_flags.h): the target's `hloc --capabilities` slice
// turns SPMD programs and collective-keeping cuts on, --spmd keeps its
// share, and a target without collectives changes nothing.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "triage/fuzz/fuzz_flags.h"

namespace trench::fuzz {
namespace {

// A fake hloc in a fresh directory that prints `capabilities`.
std::string FakeHloc(const std::string& name, const std::string& capabilities) {
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("trench-spmd-flags-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "hloc").string();
  std::ofstream(path) << "#!/bin/sh\ncat <<'EOF'\n"
                      << capabilities << "\nEOF\n";
  ::chmod(path.c_str(), 0755);
  return path;
}

FuzzFlags Flags(const std::string& hloc) {
  FuzzFlags f;
  f.campaign.target.hloc = hloc;
  return f;
}

constexpr char kSlice[] =
    R"({"ops": ["add"], "slice": {"chips": 4, "topology": "2x2",
        "collectives": ["all-reduce", "all-gather", "partition-id"]}})";

TEST(FuzzFlagsSpmdTest, TargetWithCollectivesGetsSpmdPrograms) {
  FuzzFlags f = Flags(FakeHloc("with", kSlice));
  std::string note;
  ASSERT_TRUE(PrepareSpmd(&f, &note).ok());
  EXPECT_EQ(f.campaign.generator.spmd_share, kDefaultSpmdShare);
  EXPECT_TRUE(f.campaign.trace_collectives);
  EXPECT_NE(note.find("all-gather"), std::string::npos) << note;
}

TEST(FuzzFlagsSpmdTest, GivenShareIsKept) {
  const std::string hloc = FakeHloc("given", kSlice);
  std::vector<std::string> args = {"hlo-fuzz", "--spmd", "0.5", "--hloc", hloc};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  auto f = ParseFuzzFlags(static_cast<int>(argv.size()), argv.data());
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_TRUE(f->spmd_set);
  std::string note;
  ASSERT_TRUE(PrepareSpmd(&*f, &note).ok());
  EXPECT_EQ(f->campaign.generator.spmd_share, 0.5);
  EXPECT_FALSE(
      ParseFuzzFlags(3, std::vector<char*>{argv[0], argv[1], (char*)"2"}.data())
          .ok());
}

TEST(FuzzFlagsSpmdTest, TargetWithoutCollectivesChangesNothing) {
  for (const char* caps :
       {R"({"ops": ["add"]})",
        R"({"slice": {"chips": 1, "topology": "1", "collectives": []}})",
        R"({"slice": {"chips": 2, "collectives": ["all-reduce"]}})"}) {
    FuzzFlags f = Flags(FakeHloc("without", caps));
    std::string note;
    ASSERT_TRUE(PrepareSpmd(&f, &note).ok()) << caps;
    EXPECT_EQ(f.campaign.generator.spmd_share, 0) << caps;
    EXPECT_FALSE(f.campaign.trace_collectives) << caps;
  }
  FuzzFlags none = Flags("/nonexistent/hloc");
  std::string note;
  EXPECT_TRUE(PrepareSpmd(&none, &note).ok());
  EXPECT_EQ(none.campaign.generator.spmd_share, 0);
}

TEST(FuzzFlagsSpmdTest, MalformedSliceIsAnError) {
  FuzzFlags f = Flags(
      FakeHloc("bad", R"({"slice": {"chips": 4, "collectives": "all"}})"));
  std::string note;
  Status s = PrepareSpmd(&f, &note);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("slice"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace trench::fuzz
