// The coverage judgement (agents/patch_coverage.h) on a real culprit
// commit: one rule changed in a pass and in the code generator's copy.
#include "agents/patch_coverage.h"

#include <gtest/gtest.h>

#include "tests/agents/coverage_fixture.h"
#include "tests/agents/fake_toolbox.h"

namespace trench::agents {
namespace {

using testing::CulpritRepo;
using testing::kCodegenFile;
using testing::kNotes;
using testing::kPassFile;
using testing::Obj;

class PatchCoverageTest : public ::testing::Test {
 protected:
  PatchCoverage Judge(const std::string& candidate) {
    return JudgeCoverageText(repo_.Culprit(), candidate, {kPassFile},
                             "algsimp");
  }
  CulpritRepo repo_;
};

TEST_F(PatchCoverageTest, TheCodegenOnlyRevertIsFlagged) {
  const PatchCoverage c = Judge(repo_.RevertOnHead(kCodegenFile));
  ASSERT_TRUE(c.parsed) << c.error;
  ASSERT_EQ(c.blocks.size(), 3u);
  EXPECT_EQ(c.Count(BlockFate::kReverted), 1);
  EXPECT_EQ(c.Count(BlockFate::kLeft), 2);
  EXPECT_FALSE(c.touches_localized);
  EXPECT_TRUE(c.partial());
  EXPECT_EQ(c.rank(), 1);
  EXPECT_EQ(c.left_localized,
            std::vector<std::string>{std::string(kPassFile) + ":7"});
  // The pass's change is the same rule as the one reverted; the note is
  // not.
  EXPECT_EQ(c.left_copies, c.left_localized);
  EXPECT_NE(c.Reason().find("the localized pass 'algsimp'"), std::string::npos)
      << c.Reason();
  EXPECT_NE(c.Summary().find("does not change " + std::string(kPassFile)),
            std::string::npos)
      << c.Summary();
  // What completes it: the two hunks of the rule, not the note's.
  const UnifiedDiff culprit = repo_.Culprit();
  std::vector<std::string> files;
  for (int h : c.CompletingHunks()) {
    files.push_back(SelectHunks(culprit, {h}).files.at(0).path());
  }
  EXPECT_EQ(files, (std::vector<std::string>{kCodegenFile, kPassFile}));
  const Json j = c.ToJson();
  EXPECT_TRUE(j.Find("partial")->bool_value());
  EXPECT_EQ(j.Find("left_localized")->size(), 1u);
  EXPECT_NE(j.Find("reason"), nullptr);
}

TEST_F(PatchCoverageTest, TheWholeRevertIsNotFlagged) {
  const PatchCoverage c = Judge(RenderUnifiedDiff(InvertDiff(repo_.Culprit())));
  EXPECT_EQ(c.Count(BlockFate::kReverted), 3);
  EXPECT_TRUE(c.touches_localized);
  EXPECT_FALSE(c.partial()) << c.Reason();
  EXPECT_EQ(c.rank(), 0);
  EXPECT_EQ(c.Reason(), "");
  EXPECT_EQ(c.ToJson().Find("reason"), nullptr);
}

TEST_F(PatchCoverageTest, TheRuleRevertedInBothPlacesIsNotFlagged) {
  // The note left in place is no part of the rule.
  const std::string both =
      repo_.RevertOnHead(kPassFile) + repo_.RevertOnHead(kCodegenFile);
  const PatchCoverage c = Judge(both);
  EXPECT_EQ(c.Count(BlockFate::kReverted), 2);
  EXPECT_EQ(c.Count(BlockFate::kLeft), 1);
  EXPECT_FALSE(c.partial()) << c.Reason();
}

TEST_F(PatchCoverageTest, ThePassOnlyRevertLeavesTheCopy) {
  const PatchCoverage c = Judge(repo_.RevertOnHead(kPassFile));
  EXPECT_TRUE(c.touches_localized);
  EXPECT_TRUE(c.left_localized.empty());
  EXPECT_EQ(c.left_copies,
            std::vector<std::string>{std::string(kCodegenFile) + ":7"});
  EXPECT_TRUE(c.partial());
  EXPECT_NE(
      c.Reason().find("same rule changed at " + std::string(kCodegenFile)),
      std::string::npos)
      << c.Reason();
}

// A model writes its own diff: no "diff --git", one line of context,
// stale line numbers, its own fix instead of a revert.
TEST_F(PatchCoverageTest, AnLlmShapedDiffIsJudgedTheSameWay) {
  const std::string codegen_only =
      "Here is my fix.\n"
      "--- a/compiler/codegen/emit_add.cc\n"
      "+++ b/compiler/codegen/emit_add.cc\n"
      "@@ -40,3 +40,3 @@\n"
      " void EmitAdd(Builder* b, Instr* add, int64_t c) {\n"
      "-  if (c >= 0) return EmitFolded(b, add, \"fold_add_const\");\n"
      "+  if (c > 0)  return EmitFolded(b, add, \"fold_add_const\");\n"
      "   b->Add(add->operand(0), add->operand(1));\n";
  const PatchCoverage c = Judge(codegen_only);
  ASSERT_TRUE(c.parsed) << c.error;
  EXPECT_EQ(c.Count(BlockFate::kReverted), 1);  // Blanks do not count.
  EXPECT_TRUE(c.partial());
  EXPECT_EQ(c.left_localized.size(), 1u);

  // Its own fix in both places (c != 0 && c > 0): changed, not reverted.
  const std::string both =
      "--- compiler/passes/algsimp_arith.cc\n"
      "+++ compiler/passes/algsimp_arith.cc\n"
      "@@ -8 +8 @@\n"
      "-  if (c >= 0) return Rewrite(add, \"fold_add_const\");\n"
      "+  if (c >= 1) return Rewrite(add, \"fold_add_const\");\n"
      "--- compiler/codegen/emit_add.cc\n"
      "+++ compiler/codegen/emit_add.cc\n"
      "@@ -7 +7 @@\n"
      "-  if (c >= 0) return EmitFolded(b, add, \"fold_add_const\");\n"
      "+  if (c >= 1) return EmitFolded(b, add, \"fold_add_const\");\n";
  const PatchCoverage d = Judge(both);
  ASSERT_TRUE(d.parsed) << d.error;
  EXPECT_EQ(d.Count(BlockFate::kTouched), 2);
  EXPECT_FALSE(d.partial()) << d.Reason();

  const PatchCoverage bad = Judge("not a diff at all\n");
  EXPECT_FALSE(bad.parsed);
  EXPECT_EQ(bad.rank(), 1);
  EXPECT_NE(bad.Summary().find("does not parse"), std::string::npos);
}

TEST_F(PatchCoverageTest, UnrelatedHunksAreNoCopies) {
  // Reverting only the note touches no rule: nothing of the rule is
  // "left as a copy", but the localized pass's change is left.
  const PatchCoverage c = Judge(repo_.RevertOnHead(kNotes));
  EXPECT_TRUE(c.left_copies.empty());
  EXPECT_EQ(c.left_localized.size(), 1u);
  // Without a localization, the same diff is not flagged.
  const PatchCoverage none =
      JudgeCoverageText(repo_.Culprit(), repo_.RevertOnHead(kNotes), {}, "");
  EXPECT_FALSE(none.partial());
}

TEST(LocalizedScopeTest, ReadsTheTaskAndNarrowsCodegenToTheFusedOp) {
  const Json task =
      Obj({{"localization",
            Obj({{"findings", Obj({{"pass", "codegen"},
                                   {"fused_opcode", "reduce-window"},
                                   {"opcode", "fusion"}})}})}});
  const LocalizedScope s = ScopeOfTask(task);
  EXPECT_EQ(s.pass, "codegen");
  EXPECT_EQ(s.opcode, "reduce-window");
  const std::vector<std::string> files = {
      "compiler/passes/cse.cc", "compiler/codegen/emit_reduce_window.cc",
      "compiler/codegen/emit_pad.cc"};
  EXPECT_EQ(LocalizedFiles(s, files),
            std::vector<std::string>{"compiler/codegen/emit_reduce_window.cc"});
  LocalizedScope other = s;
  other.opcode = "sort";  // No emitter file of it: every codegen file.
  EXPECT_EQ(LocalizedFiles(other, files).size(), 2u);
  LocalizedScope pass{"cse", "", "", {}};
  EXPECT_EQ(LocalizedFiles(pass, files),
            std::vector<std::string>{"compiler/passes/cse.cc"});
  // A partial localization (a model's): the signature, then the top.
  EXPECT_EQ(ScopeOfTask(Obj({{"localization", Obj({{"pass", "dce"}})}})).pass,
            "dce");
}

}  // namespace
}  // namespace trench::agents
