// The target's coverage build flavour, for real (suite CoverageBuild*,
// label "slow"): the target side of this source tree built with clang and
// -DTRENCH_TARGET_COVERAGE=ON (into $TRENCH_COVERAGE_BUILD_DIR when set,
// else <build>/coverage-target, built here on first use: many minutes), then
//  - hlo-run --serve attributes coverage to each request alone;
//  - a real git repository whose commit changes a line of a pass: the
//    commit's changed line is reached by a program that runs that pass's
//    rewrite and not by one that does not.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "base/subprocess.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/random_inputs.h"
#include "git/git_repo.h"
#include "git/patch_apply.h"
#include "triage/case/case_bundle.h"
#include "triage/case/target_runner.h"
#include "triage/fuzz/line_reach.h"

namespace trench::fuzz {
namespace {

namespace fs = std::filesystem;

std::string OnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string full = dir + "/" + name;
    if (!dir.empty() && ::access(full.c_str(), X_OK) == 0) return full;
  }
  return "";
}

// The coverage build's hlo-run; "" (with *why) when it cannot be had.
std::string CoverageHloRun(std::string* why) {
  if (const char* dir = std::getenv("TRENCH_COVERAGE_BUILD_DIR"); dir && *dir) {
    return std::string(dir) + "/hlo-run";
  }
  const std::string clang = OnPath("clang++"), cmake = OnPath("cmake");
  if (clang.empty() || cmake.empty()) {
    *why = "no clang++ or cmake on PATH";
    return "";
  }
  const std::string dir = std::string(TRENCH_BINARY_DIR) + "/coverage-target";
  if (!fs::exists(dir + "/CMakeCache.txt")) {
    hlo_diff::ProcessSpec conf;
    conf.argv = {cmake,
                 "-S",
                 TRENCH_SOURCE_DIR,
                 "-B",
                 dir,
                 "-DTRENCH_TARGET_ONLY=ON",
                 "-DTRENCH_TARGET_COVERAGE=ON",
                 "-DCMAKE_CXX_COMPILER=" + clang,
                 "-DCMAKE_BUILD_TYPE=Release",
                 "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG"};
    if (std::string cc = OnPath("ccache"); !cc.empty()) {
      conf.argv.push_back("-DCMAKE_CXX_COMPILER_LAUNCHER=" + cc);
    }
    conf.timeout_seconds = 600;
    StatusOr<hlo_diff::ProcessResult> r = hlo_diff::RunProcess(conf);
    if (!r.ok() || r->exit_code != 0) {
      *why = "configure failed: " + (r.ok() ? r->err : r.status().ToString());
      return "";
    }
  }
  hlo_diff::ProcessSpec build;
  build.argv = {cmake, "--build", dir, "--target", "hlo-run", "-j2"};
  build.timeout_seconds = 3 * 3600;
  StatusOr<hlo_diff::ProcessResult> r = hlo_diff::RunProcess(build);
  if (!r.ok() || r->exit_code != 0) {
    *why =
        "build failed: " + (r.ok() ? r->out + r->err : r.status().ToString());
    return "";
  }
  return dir + "/hlo-run";
}

class CoverageBuildTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    hlo_run_ = new std::string(CoverageHloRun(&why_));
  }
  void SetUp() override { ASSERT_FALSE(hlo_run_->empty()) << why_; }
  static std::string* hlo_run_;
  static std::string why_;
};
std::string* CoverageBuildTest::hlo_run_ = nullptr;
std::string CoverageBuildTest::why_;

// Canonicalized by dot-decomposer (the rhs contracts its dim 1).
constexpr char kDot[] = R"(HloModule dot

ENTRY e {
  x = f32[4,3] parameter(0)
  y = f32[5,3] parameter(1)
  ROOT d = f32[4,5] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={1}
}
)";

// No dot at all.
constexpr char kAdd[] = R"(HloModule add

ENTRY e {
  x = f32[8] parameter(0)
  y = f32[8] parameter(1)
  ROOT a = f32[8] add(x, y)
}
)";

// The points a hex bitmap (compiler/driver/coverage.h HitsHex) sets.
std::set<size_t> PointsOfHex(const std::string& hex) {
  std::set<size_t> out;
  for (size_t d = 0; d < hex.size(); ++d) {
    const int v = std::stoi(hex.substr(d, 1), nullptr, 16);
    for (int b = 0; b < 4; ++b) {
      if (v & (1 << b)) out.insert(d * 4 + b);
    }
  }
  return out;
}

std::set<size_t> Hits(const std::string& answer) {
  StatusOr<Json> j = ParseJson(answer);
  EXPECT_TRUE(j.ok()) << answer.substr(0, 200);
  if (!j.ok()) return {};
  const Json* c = j->Find("coverage");
  EXPECT_NE(c, nullptr) << answer.substr(0, 200);
  if (c == nullptr) return {};
  return PointsOfHex(c->Find("hit")->string_value());
}

TEST_F(CoverageBuildTest, ServeAttributesHitsToEachRequest) {
  const fs::path work = fs::path(::testing::TempDir()) / "coverage_serve";
  fs::remove_all(work);
  fs::create_directories(work);
  hlo_diff::LineProcess p;
  hlo_diff::ProcessSpec spec;
  spec.argv = {*hlo_run_, "--serve"};
  ASSERT_TRUE(p.Start(spec).ok());
  auto request = [&](const char* module, const std::string& name) {
    Json r = Json::MakeObject();
    r["module"] = module;
    r["seed"] = 1;
    r["output_dir"] = (work / name).string();
    StatusOr<std::string> a = p.Request(r.Dump(), 300);
    EXPECT_TRUE(a.ok()) << a.status().ToString();
    return a.ok() ? Hits(*a) : std::set<size_t>{};
  };
  const std::set<size_t> add1 = request(kAdd, "add1");
  const std::set<size_t> dot1 = request(kDot, "dot1");
  const std::set<size_t> add2 = request(kAdd, "add2");
  const std::set<size_t> dot2 = request(kDot, "dot2");
  ASSERT_FALSE(add1.empty());
  // What the dot hit and the add did not: without a reset between
  // requests the second add's answer would hold it all. (A point may
  // differ between runs of one program: first-use initialization.)
  std::vector<size_t> dot_only;
  std::set_difference(dot1.begin(), dot1.end(), add1.begin(), add1.end(),
                      std::back_inserter(dot_only));
  ASSERT_GT(dot_only.size(), 100u);
  size_t leaked = 0, again = 0;
  for (size_t i : dot_only) {
    leaked += add2.count(i);
    again += dot2.count(i);
  }
  EXPECT_LT(leaked * 20, dot_only.size()) << leaked;
  EXPECT_GE(again * 10, dot_only.size() * 9) << again;
  p.Kill();
}

TEST_F(CoverageBuildTest, ReachOfACommitChangingAPassLine) {
  const fs::path work = fs::path(::testing::TempDir()) / "coverage_reach";
  fs::remove_all(work);
  // A repository whose second commit changes one line of dot-decomposer's
  // rewrite into the line this build holds.
  const std::string rel = "compiler/passes/dot_decomposer.cc";
  std::ifstream in(std::string(TRENCH_SOURCE_DIR) + "/" + rel);
  std::ostringstream text;
  text << in.rdbuf();
  const std::string now = text.str();
  const std::string line = "canonical->mutable_attrs().dot_dnums = cdn;";
  const size_t at = now.find(line);
  ASSERT_NE(at, std::string::npos);
  std::string before = now;
  before.replace(at, line.size(), "// dnums set later");
  const int64_t line_no = std::count(now.begin(), now.begin() + at, '\n') + 1;
  auto repo = hlo_bisect::GitRepo::Init((work / "repo").string());
  ASSERT_TRUE(repo.ok()) << repo.status().ToString();
  StatusOr<std::string> c0 = (*repo)->CommitFiles(
      "", {{rel, before}}, "dot-decomposer", "refs/heads/main");
  ASSERT_TRUE(c0.ok()) << c0.status().ToString();
  StatusOr<std::string> c1 = (*repo)->CommitFiles(
      *c0, {{rel, now}}, "set the dnums", "refs/heads/main");
  ASSERT_TRUE(c1.ok()) << c1.status().ToString();
  StatusOr<std::string> diff = agents::DiffOfCommit(**repo, *c1);
  ASSERT_TRUE(diff.ok()) << diff.status().ToString();
  StatusOr<ChangedLines> changed = ChangedLinesOfDiff(*diff);
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  ASSERT_EQ(changed->at(rel), std::set<int64_t>{line_no});

  StatusOr<LineCoverageMap> map =
      LineCoverageMap::OfBinary(*hlo_run_, *changed);
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  ASSERT_EQ(map->lines().size(), 1u);
  EXPECT_EQ(map->lines()[0].line, line_no);

  hlo_diff::TargetSpec spec;
  spec.mode = hlo_diff::TargetMode::kServe;
  spec.hlo_run = *hlo_run_;
  spec.timeout_seconds = 300;
  hlo_diff::TargetRunner runner(spec);
  auto reached = [&](const char* module, const std::string& name) {
    StatusOr<std::unique_ptr<HloModule>> m = ParseHloModule(module);
    EXPECT_TRUE(m.ok());
    StatusOr<hlo_diff::Case> c = hlo_diff::MakeCase(
        module, RandomArguments(*(*m)->entry_computation(), 1));
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    StatusOr<hlo_diff::TargetResult> r = runner.Run(*c, (work / name).string());
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, hlo_diff::TargetStatus::kOk) << r->message;
    EXPECT_FALSE(r->coverage_hits.empty());
    return map->Reached(r->coverage_hits);
  };
  EXPECT_EQ(reached(kDot, "dot"), std::vector<int>{0});
  EXPECT_EQ(reached(kAdd, "add"), std::vector<int>{});
  EXPECT_EQ(reached(kDot, "dot-again"), std::vector<int>{0});
}

}  // namespace
}  // namespace trench::fuzz
