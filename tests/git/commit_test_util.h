// Helpers for the commit-level tests: a fake target repository, made with
// libgit2 in a temporary directory, whose "build" is a shell script
// (build.sh, in each commit) that writes wrapper
// scripts hloc, tpusim and hlo-run into $TRENCH_BUILD_DIR. The wrappers
// exec this build's real binaries (TRENCH_BINARY_DIR), except that in a
// commit holding a file `bug` the hlo-run wrapper first rewrites the
// module's `add(` into `subtract(`, a real miscompile (the verdict is a
// mismatch), that in a commit holding a file `unsupported` hlo-run
// refuses every module ("cannot compile", a target that cannot run the
// case: target_unsupported), and that a commit holding a file `broken`,
// or both files `old-api` and `new-api`, does not build (commit 0 holds
// `old-api`).
// Every build appends a line to $TRENCH_BUILD_DIR/builds.txt.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/ir/literal.h"
#include "git/git_repo.h"
#include "triage/case/case_bundle.h"

namespace trench::hlo_bisect::testing {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/hlo-bisect-commit-test.XXXXXX";
    path_ = ::mkdtemp(tmpl) ? tmpl : "";
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const {
    return path_ + "/" + name;
  }

 private:
  std::string path_;
};

inline std::string ReadText(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline constexpr char kBuildScript[] = R"(#!/bin/sh
set -e
if [ -e broken ]; then echo "build.sh: error: this commit is broken" >&2; exit 1; fi
if [ -e old-api ] && [ -e new-api ]; then echo "build.sh: error: both APIs" >&2; exit 1; fi
mkdir -p "$TRENCH_BUILD_DIR"
echo "$TRENCH_COMMIT" >> "$TRENCH_BUILD_DIR/builds.txt"
for t in hloc tpusim; do
  printf '#!/bin/sh\nexec "%s/%s" "$@"\n' "$REAL_BIN" "$t" > "$TRENCH_BUILD_DIR/$t"
done
if [ -e unsupported ]; then
  printf '#!/bin/sh\necho "hlo-run: hloc: cannot compile add for f32" >&2\nexit 3\n' > "$TRENCH_BUILD_DIR/hlo-run"
elif [ -e bug ]; then
  printf '#!/bin/sh\nm="$1"; shift\nsed "s/ add(/ subtract(/" "$m" > "$m.bug.hlo"\nexec "%s/hlo-run" "$m.bug.hlo" "$@"\n' "$REAL_BIN" > "$TRENCH_BUILD_DIR/hlo-run"
else
  printf '#!/bin/sh\nexec "%s/hlo-run" "$@"\n' "$REAL_BIN" > "$TRENCH_BUILD_DIR/hlo-run"
fi
chmod +x "$TRENCH_BUILD_DIR/hloc" "$TRENCH_BUILD_DIR/tpusim" "$TRENCH_BUILD_DIR/hlo-run"
)";

// The build command for the fake repository.
inline std::string FakeBuildCommand() {
  return std::string("REAL_BIN='") + TRENCH_BINARY_DIR + "' sh ./build.sh";
}

// A case whose add becomes a subtract in a `bug` commit.
inline hlo_diff::Case AddCase() {
  Literal a(Shape(PrimitiveType::F32, {4}));
  Literal b(Shape(PrimitiveType::F32, {4}));
  for (int i = 0; i < 4; ++i) {
    a.SetFromDouble(i, 1.5 * i);
    b.SetFromDouble(i, 2.0 + i);
  }
  StatusOr<hlo_diff::Case> c = hlo_diff::MakeCase(
      "HloModule add_case\n\nENTRY main {\n  p0 = f32[4] parameter(0)\n"
      "  p1 = f32[4] parameter(1)\n  ROOT sum = f32[4] add(p0, p1)\n}\n",
      {a, b});
  EXPECT_TRUE(c.ok()) << c.status().ToString();
  return c.ok() ? *c : hlo_diff::Case();
}

// What a commit of the fake history does besides adding notes/<i>.txt.
struct FakeCommit {
  bool add_broken = false, remove_broken = false;
  bool remove_old_api = false, add_new_api = false;
  std::string set_bug;  // Non-empty: writes `bug` with this content.
  bool add_unsupported = false, remove_unsupported = false;
};

// A fake repository: commit 0 (good) holds build.sh; commits 1..n each add
// notes/<i>.txt plus what `extra[i]` says. shas[i] is commit i.
struct FakeRepo {
  std::unique_ptr<GitRepo> repo;
  std::vector<std::string> shas;
};

inline FakeRepo MakeFakeRepo(
    const std::string& dir, int n,
    const std::vector<std::pair<int, FakeCommit>>& extra) {
  FakeRepo f;
  StatusOr<std::unique_ptr<GitRepo>> r = GitRepo::Init(dir);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return f;
  f.repo = std::move(*r);
  StatusOr<std::string> sha =
      f.repo->CommitFiles("",
                          {{"build.sh", kBuildScript, true},
                           {"README", "fake target\n"},
                           {"old-api", "old\n"}},
                          "commit 0: the fake target", "refs/heads/main");
  EXPECT_TRUE(sha.ok()) << sha.status().ToString();
  f.shas.push_back(*sha);
  for (int i = 1; i <= n; ++i) {
    std::vector<FileChange> changes = {
        {"notes/" + std::to_string(i) + ".txt", "note " + std::to_string(i)}};
    for (const auto& [at, what] : extra) {
      if (at != i) continue;
      if (what.add_broken) changes.push_back({"broken", "x"});
      if (what.remove_broken) changes.push_back({"broken", std::nullopt});
      if (!what.set_bug.empty()) changes.push_back({"bug", what.set_bug});
      if (what.remove_old_api) changes.push_back({"old-api", std::nullopt});
      if (what.add_new_api) changes.push_back({"new-api", "new\n"});
      if (what.add_unsupported) changes.push_back({"unsupported", "x"});
      if (what.remove_unsupported) {
        changes.push_back({"unsupported", std::nullopt});
      }
    }
    sha = f.repo->CommitFiles(f.shas.back(), changes,
                              "commit " + std::to_string(i), "refs/heads/main");
    EXPECT_TRUE(sha.ok()) << sha.status().ToString();
    f.shas.push_back(sha.ok() ? *sha : "");
  }
  return f;
}

}  // namespace trench::hlo_bisect::testing
