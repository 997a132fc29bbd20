// The bug zoo (tests/bugzoo/<NN>-<name>/: bug.patch, meta.json, witness/):
// realistic seeded compiler bugs, each with a witness case. For every bug:
//   (1) meta.json is complete and names exactly the files the patch touches;
//   (2) the patch applies to today's tree;
//   (3) the witness passes on the unpatched compiler (the main build's
//       hlo-run) and fails with the patch applied (mismatch with the
//       oracle, an error exit, or a crash).
// (3) needs a patched build: the target side (compiler/ tpu/ base/ tools/
// CMakeLists.txt) is copied once into a temp dir, ONE target-only build is
// configured and hlo-run built; then per bug: apply, incremental rebuild,
// run the witness, reverse. Keep the zoo alive when refactoring: a patch
// that no longer applies is regenerated against the new code (same bug).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "base/json.h"
#include "compiler/ir/opcode.h"
#include "compiler/passes/pass_registry.h"
#include "tests/bugzoo/zoo_witness.h"
#include "triage/case/case_bundle.h"

namespace trench::bugzoo {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = TRENCH_SOURCE_DIR;
const fs::path kZoo = kSource / "tests" / "bugzoo";

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The bug directories, sorted.
std::vector<fs::path> Bugs() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(kZoo)) {
    if (e.is_directory() && fs::exists(e.path() / "bug.patch")) {
      out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The files a unified patch changes (its "+++ b/<path>" lines).
std::set<std::string> PatchedFiles(const std::string& patch) {
  std::set<std::string> files;
  std::istringstream in(patch);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("+++ b/", 0) == 0) files.insert(line.substr(6));
  }
  return files;
}

std::string Str(const Json& j, const char* key) {
  const Json* v = j.Find(key);
  return v != nullptr && v->is_string() ? v->string_value() : "";
}

std::vector<std::string> MetaFiles(const fs::path& bug) {
  std::vector<std::string> files;
  StatusOr<Json> meta = ParseJson(Slurp(bug / "meta.json"));
  if (!meta.ok()) return files;
  const Json* f = meta->Find("files");
  if (f == nullptr || !f->is_array()) return files;
  for (const Json& x : f->array()) {
    if (x.is_string()) files.push_back(x.string_value());
  }
  return files;
}

// A fresh temp dir, removed when the object goes (kept if `keep`).
struct TempDir {
  fs::path path;
  bool keep = false;
  explicit TempDir(const std::string& tag) {
    path = fs::temp_directory_path() /
           ("trench-bugzoo-" + tag + "-" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    if (!keep) fs::remove_all(path, ec);
  }
};

TEST(BugZooTest, ThereAreAtLeastTwelveBugs) { EXPECT_GE(Bugs().size(), 12u); }

TEST(BugZooTest, MetaIsCompleteAndNamesThePatchedFiles) {
  for (const fs::path& bug : Bugs()) {
    SCOPED_TRACE(bug.filename().string());
    StatusOr<Json> meta = ParseJson(Slurp(bug / "meta.json"));
    ASSERT_TRUE(meta.ok()) << meta.status().message();
    EXPECT_EQ(Str(*meta, "id"), bug.filename().string());
    EXPECT_FALSE(Str(*meta, "category").empty());
    const std::string desc = Str(*meta, "description");
    EXPECT_FALSE(desc.empty());
    EXPECT_EQ(desc.find('\n'), std::string::npos) << "one line";
    const std::string pass = Str(*meta, "pass");
    EXPECT_TRUE(pass == "codegen" || FindPass(pass) != nullptr)
        << "unknown pass '" << pass << "'";
    EXPECT_TRUE(OpcodeFromName(Str(*meta, "opcode")).has_value())
        << "unknown opcode '" << Str(*meta, "opcode") << "'";
    const std::vector<std::string> files = MetaFiles(bug);
    EXPECT_FALSE(files.empty());
    const std::set<std::string> patched =
        PatchedFiles(Slurp(bug / "bug.patch"));
    EXPECT_EQ(std::set<std::string>(files.begin(), files.end()), patched);
    for (const std::string& f : patched) {
      EXPECT_TRUE(f.rfind("compiler/", 0) == 0 || f.rfind("tpu/", 0) == 0)
          << f << ": the zoo patches the compiler or the machine only";
    }
    EXPECT_FALSE(Str(*meta, "witness").empty());
    StatusOr<hlo_diff::Case> c =
        hlo_diff::ReadCase((bug / Str(*meta, "witness")).string());
    EXPECT_TRUE(c.ok()) << c.status().message();
  }
}

TEST(BugZooTest, PatchesApplyToTodaysTree) {
  ASSERT_TRUE(HasTool("git")) << "git is needed to apply the patches";
  TempDir tmp("apply");
  for (const fs::path& bug : Bugs()) {
    SCOPED_TRACE(bug.filename().string());
    const fs::path dir = tmp.path / bug.filename();
    for (const std::string& f : MetaFiles(bug)) {
      fs::create_directories((dir / f).parent_path());
      fs::copy_file(kSource / f, dir / f);
    }
    EXPECT_EQ(
        RunCommand("cd " + ShellQuote(dir.string()) + " && git apply --check " +
                   ShellQuote((bug / "bug.patch").string())),
        0);
  }
}

TEST(BugZooTest, WitnessesPassWithoutTheBugs) {
  const std::string hlo_run = std::string(TRENCH_BINARY_DIR) + "/hlo-run";
  ASSERT_TRUE(fs::exists(hlo_run)) << hlo_run;
  TempDir tmp("clean");
  for (const fs::path& bug : Bugs()) {
    SCOPED_TRACE(bug.filename().string());
    StatusOr<WitnessResult> r =
        RunWitness(hlo_run, (bug / "witness").string(),
                   (tmp.path / bug.filename()).string());
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->status, "pass") << r->verdict.DumpPretty();
  }
}

TEST(BugZooTest, EveryWitnessCatchesItsBug) {
  ASSERT_TRUE(HasTool("git") && HasTool("cmake")) << "git and cmake are needed";
  TempDir tmp("build");
  const ZooBuild zoo(kSource, tmp.path);
  tmp.keep = true;  // For inspection if an assertion stops the test.
  ASSERT_TRUE(zoo.Configure()) << "see " << zoo.log();
  ASSERT_TRUE(zoo.Build()) << "see " << zoo.log();
  const std::string hlo_run = (zoo.build_dir() / "hlo-run").string();
  for (const fs::path& bug : Bugs()) {
    SCOPED_TRACE(bug.filename().string());
    ASSERT_TRUE(zoo.Patch(bug)) << "the patch does not apply";
    const bool built = zoo.Build();
    std::optional<StatusOr<WitnessResult>> r;
    if (built) {
      r = RunWitness(hlo_run, (bug / "witness").string(),
                     (tmp.path / "runs" / bug.filename()).string());
    }
    ASSERT_TRUE(zoo.Patch(bug, /*reverse=*/true))
        << "the patch does not reverse; the copy is corrupt";
    ASSERT_TRUE(built) << "the patched tree does not build; see " << zoo.log();
    ASSERT_TRUE(r->ok()) << r->status().message();
    EXPECT_TRUE((*r)->caught())
        << "the witness does not catch the bug: " << (*r)->verdict.DumpPretty();
    std::printf("[ zoo      ] %s: %s\n", bug.filename().c_str(),
                (*r)->status.c_str());
  }
  tmp.keep = ::testing::Test::HasFailure();
}

}  // namespace
}  // namespace trench::bugzoo
