// agents/patch_strategies.h: pass -> files, ddmin, line mutations and fix
// templates.
#include "agents/patch_strategies.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/triage/case/embedded_target.h"

namespace trench::agents {
namespace {

using Strings = std::vector<std::string>;

// The culprit's files come from the target's own globs (here the embedded
// compiler's description); a target without them is read by file names.
TEST(PatchStrategiesTest, FilesOfPass) {
  const Strings files = {"compiler/passes/cse.cc",
                         "compiler/passes/algsimp_arith.cc",
                         "compiler/passes/literal_folder_elementwise.cc",
                         "compiler/passes/dot_decomposer.cc",
                         "compiler/codegen/emit_pad.cc",
                         "compiler/codegen/emit_reduce.cc",
                         "README.md"};
  const hlo_diff::TargetDescription target =
      hlo_diff::testing::EmbeddedTarget();
  auto of = [&](std::string_view pass) {
    return FilesOfPass(pass, files, target.SourcesOf(pass));
  };
  EXPECT_EQ(of("cse"), Strings{"compiler/passes/cse.cc"});
  EXPECT_EQ(of("algsimp"), Strings{"compiler/passes/algsimp_arith.cc"});
  EXPECT_EQ(of("constant-folding"),
            Strings{"compiler/passes/literal_folder_elementwise.cc"});
  EXPECT_EQ(of("dot-decomposer"), Strings{"compiler/passes/dot_decomposer.cc"});
  EXPECT_EQ(of("codegen"), (Strings{"compiler/codegen/emit_pad.cc",
                                    "compiler/codegen/emit_reduce.cc"}));
  EXPECT_TRUE(of("fusion").empty());
  EXPECT_TRUE(of("").empty());

  // Another target's layout: its globs, not this compiler's file names.
  EXPECT_EQ(FilesOfPass("cse", {"src/opt/redundancy.cpp", "src/cse.cpp"},
                        {"src/opt/*"}),
            Strings{"src/opt/redundancy.cpp"});
  // No description: files named after the pass, nothing else.
  EXPECT_EQ(FilesOfPass("dot-decomposer", files),
            Strings{"compiler/passes/dot_decomposer.cc"});
  EXPECT_TRUE(FilesOfPass("constant-folding", files).empty());
  EXPECT_TRUE(FilesOfPass("codegen", files).empty());
}

TEST(PatchStrategiesTest, MinimizeSubsetFindsTheNeededItems) {
  std::vector<int> all(16);
  for (int i = 0; i < 16; ++i) all[i] = i;
  std::set<std::vector<int>> asked;
  auto needs = [&](std::set<int> needed) {
    return [&asked, needed](const std::vector<int>& s) {
      EXPECT_TRUE(asked.insert(s).second) << "asked twice";
      for (int n : needed) {
        if (std::find(s.begin(), s.end(), n) == s.end()) return false;
      }
      return true;
    };
  };
  EXPECT_EQ(MinimizeSubset(all, needs({11})), std::vector<int>{11});
  EXPECT_LE(asked.size(), 8u);  // log2(16) halvings, two tests each.
  asked.clear();
  EXPECT_EQ(MinimizeSubset(all, needs({2, 13})), (std::vector<int>{2, 13}));
  asked.clear();
  EXPECT_EQ(MinimizeSubset({5}, needs({5})), std::vector<int>{5});
  EXPECT_TRUE(asked.empty());
  // A test that stops answering (budget spent) keeps the best so far.
  int budget = 1;
  EXPECT_EQ(MinimizeSubset(all,
                           [&](const std::vector<int>& s) {
                             return budget-- > 0 && s.front() == 0;
                           }),
            (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
}

Strings Lines(const std::vector<LineMutation>& m) {
  Strings out;
  for (const LineMutation& x : m) out.push_back(x.line);
  return out;
}

TEST(PatchStrategiesTest, MutateLine) {
  EXPECT_EQ(Lines(MutateLine("  if (a < b) {")),
            (Strings{"  if (a <= b) {", "  if (a > b) {"}));
  EXPECT_EQ(Lines(MutateLine("  return x >= 0 && y != z;")),
            (Strings{"  return x > 0 && y != z;", "  return x <= 0 && y != z;",
                     "  return x >= 0 && y == z;", "  return x >= 1 && y != z;",
                     "  return x >= 0 || y != z;"}));
  // Templates, shifts, arrows, strings and comments are left alone.
  EXPECT_TRUE(
      MutateLine("  std::vector<int> v = p->f(s << \"a < b\");  // x < 1")
          .size() == 0);
  EXPECT_EQ(Lines(MutateLine("  n = std::min(n + 1, k2);")),
            (Strings{"  n = std::min(n + 2, k2);", "  n = std::min(n + 0, k2);",
                     "  n = std::min(n, k2);", "  n = std::max(n + 1, k2);"}));
  const std::vector<LineMutation> guard = MutateLine("    if (done) continue;");
  ASSERT_FALSE(guard.empty());
  EXPECT_EQ(guard.back().name, "drop_line");
}

TEST(PatchStrategiesTest, FixTemplatesStartNearTheSite) {
  Strings head;
  for (int i = 0; i < 40; ++i)
    head.push_back("  f" + std::to_string(i) + "();");
  head[5] = "  if (i > 1) return;";
  head[30] = "  if (ctx->ShouldRewrite(\"cse\", \"merge\", name)) {";
  head[31] = "  int k = n - 1;";
  // The culprit added line 5 and changed line 31 (from "n").
  FileDiff culprit;
  culprit.old_path = culprit.new_path = "p.cc";
  Hunk a;
  a.old_start = 5;
  a.new_start = 5;
  a.lines = {{' ', head[4]}, {'+', head[5]}, {' ', head[6]}};
  Hunk b;
  b.old_start = 30;
  b.lines = {
      {' ', head[30]}, {'-', "  int k = n;"}, {'+', head[31]}, {' ', head[32]}};
  culprit.hunks = {a, b};
  RenumberNewSide(&culprit);
  const std::vector<TemplateFix> fixes = FixTemplates(culprit, head, "merge");
  ASSERT_GE(fixes.size(), 6u);
  // The block at the rewrite site comes first: undo it, then mutate it.
  EXPECT_EQ(fixes[0].name, "revert_block");
  EXPECT_NE(fixes[0].detail.find("p.cc:32"), std::string::npos);
  EXPECT_NE(RenderUnifiedDiff(fixes[0].diff).find("+  int k = n;"),
            std::string::npos);
  std::set<std::string> names;
  for (const TemplateFix& f : fixes) {
    names.insert(f.name);
    // Every template applies to the head.
    EXPECT_TRUE(ApplyHunks(f.diff.files[0], head).ok()) << f.detail;
  }
  for (const char* n : {"restore_removed", "off_by_one", "flip_comparison"}) {
    EXPECT_TRUE(names.count(n)) << n;
  }
  // Dropping the added guard is its revert_block: left out as a duplicate.
  EXPECT_FALSE(names.count("drop_line"));
}

}  // namespace
}  // namespace trench::agents
