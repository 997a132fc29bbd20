// A repository (real git, libgit2) whose culprit commit changes one rule in
// two places: the pass that the localization names (algsimp_arith.cc) and
// the code generator's copy of it (emit_add.cc), plus an unrelated note.
// Used by the coverage tests of the judgement, the built-in drafter and
// the draft step.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "git/git_repo.h"
#include "git/patch_apply.h"
#include "git/unified_diff.h"

namespace trench::agents::testing {

inline constexpr char kPassFile[] = "compiler/passes/algsimp_arith.cc";
inline constexpr char kCodegenFile[] = "compiler/codegen/emit_add.cc";
inline constexpr char kNotes[] = "docs/notes.md";

inline std::string PassSource(const std::string& cmp) {
  return "// algsimp: arithmetic rules.\n"
         "#include \"compiler/passes/algsimp.h\"\n\n"
         "namespace trench {\n\n"
         "bool FoldAddOfConstant(Instr* add, int64_t c) {\n"
         "  if (c " +
         cmp +
         " 0) return Rewrite(add, \"fold_add_const\");\n"
         "  return false;\n"
         "}\n\n"
         "bool FoldMulByOne(Instr* mul, int64_t c) {\n"
         "  if (c == 1) return Rewrite(mul, \"fold_mul_one\");\n"
         "  return false;\n"
         "}\n\n"
         "}  // namespace trench\n";
}

inline std::string CodegenSource(const std::string& cmp) {
  return "// The add emitter.\n"
         "#include \"compiler/codegen/emit.h\"\n\n"
         "namespace trench {\n\n"
         "void EmitAdd(Builder* b, Instr* add, int64_t c) {\n"
         "  if (c " +
         cmp +
         " 0) return EmitFolded(b, add, \"fold_add_const\");\n"
         "  b->Add(add->operand(0), add->operand(1));\n"
         "}\n\n"
         "}  // namespace trench\n";
}

class CulpritRepo {
 public:
  CulpritRepo() {
    char tmpl[] = "/tmp/coverage-test.XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    repo = hlo_bisect::GitRepo::Init(dir_ + "/repo").value();
    base = *repo->CommitFiles("",
                              {{kPassFile, PassSource(">")},
                               {kCodegenFile, CodegenSource(">")},
                               {kNotes, "Notes.\n"}},
                              "base", "refs/heads/main");
    culprit = *repo->CommitFiles(base,
                                 {{kPassFile, PassSource(">=")},
                                  {kCodegenFile, CodegenSource(">=")},
                                  {kNotes, "Notes.\nFaster constant adds.\n"}},
                                 "fold adds of zero too", "refs/heads/main");
    // Later work shifts the pass's lines.
    head = *repo->CommitFiles(
        culprit, {{kPassFile, "// Copyright.\n" + PassSource(">=")}},
        "later work", "refs/heads/main");
  }
  ~CulpritRepo() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // The culprit's diff (of `path` only when given), as git writes it.
  UnifiedDiff Culprit(const std::string& path = "") const {
    return *ParseUnifiedDiff(*DiffOfCommit(*repo, culprit, path));
  }
  // The revert of the culprit's change to `path`, moved onto the head.
  std::string RevertOnHead(const std::string& path) const {
    const FileDiff f = InvertDiff(Culprit(path)).files.at(0);
    const std::vector<std::string> lines =
        SplitLines(*ReadFileAt(*repo, head, f.path()));
    std::vector<int> dropped;
    UnifiedDiff d;
    d.files.push_back(RelocateHunks(f, lines, &dropped));
    return RenderUnifiedDiff(d);
  }

  std::unique_ptr<hlo_bisect::GitRepo> repo;
  std::string base, culprit, head;

 private:
  std::string dir_;
};

}  // namespace trench::agents::testing
