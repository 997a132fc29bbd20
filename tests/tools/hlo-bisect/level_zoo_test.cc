// The levels on real seeded bugs (suite BugZooLocalize, label "slow"): a
// copy of the target side gets one -DTRENCH_TARGET_ONLY=ON build (as
// tests/bugzoo/bugzoo_test.cc makes it); per bug the patch is applied,
// hlo-run rebuilt incrementally, the witness localized through a serve
// worker of the patched hlo-run, and the patch taken out again. The
// localization must name meta.json's pass and opcode, and a rewrite site
// for bugs of a pass.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <thread>

#include "tools/hlo-bisect/localization_report.h"
#include "tools/hlo-bisect/localize.h"

namespace trench::hlo_bisect {
namespace {

namespace fs = std::filesystem;

const fs::path kSource = TRENCH_SOURCE_DIR;

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

int Shell(const std::string& command) {
  const int r = std::system(command.c_str());
  return WIFEXITED(r) ? WEXITSTATUS(r) : 128;
}

Json Meta(const fs::path& bug) {
  StatusOr<std::string> text = ReadTextFile((bug / "meta.json").string());
  EXPECT_TRUE(text.ok());
  StatusOr<Json> j = ParseJson(text.ok() ? *text : "{}");
  return j.ok() ? *j : Json::MakeObject();
}

TEST(BugZooLocalize, NamesThePassTheSiteAndTheOpcode) {
  ASSERT_EQ(Shell("git --version >/dev/null 2>&1 && cmake --version "
                  ">/dev/null 2>&1"),
            0)
      << "git and cmake are needed";
  char tmpl[] = "/tmp/bisect-zoo-test.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const fs::path tmp = tmpl, src = tmp / "src", build = tmp / "build";
  fs::create_directories(src);
  for (const char* d : {"base", "compiler", "tpu", "tools"}) {
    fs::copy(kSource / d, src / d, fs::copy_options::recursive);
  }
  fs::copy_file(kSource / "CMakeLists.txt", src / "CMakeLists.txt");
  const std::string env =
      "CCACHE_BASEDIR=" + Quote(tmp.string()) + " CCACHE_NOHASHDIR=1 ";
  const std::string log = Quote((tmp / "build.log").string());
  const unsigned jobs = std::max(1u, std::thread::hardware_concurrency());
  const std::string configure =
      env + "cmake -S " + Quote(src.string()) + " -B " + Quote(build.string()) +
      " -G Ninja -DTRENCH_TARGET_ONLY=ON" +
      " -DCMAKE_BUILD_TYPE=Release '-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG' >" +
      log + " 2>&1";
  const std::string make = env + "cmake --build " + Quote(build.string()) +
                           " --target hlo-run -j " + std::to_string(jobs) +
                           " >>" + log + " 2>&1";
  ASSERT_EQ(Shell(configure), 0) << "see " << tmp / "build.log";
  ASSERT_EQ(Shell(make), 0) << "see " << tmp / "build.log";
  hlo_diff::TargetSpec spec = hlo_diff::TargetSpec::FromBinaryDir(
      build.string(), hlo_diff::TargetMode::kServe);
  spec.timeout_seconds = 120;
  bool failed = false;
  for (const char* name :
       {"03-algsimp-transpose-compose", "07-cse-compare-direction",
        "10-fused-reduce-max-init"}) {
    SCOPED_TRACE(name);
    const fs::path bug = kSource / "tests" / "bugzoo" / name;
    const std::string patch = Quote((bug / "bug.patch").string());
    const std::string in_src = "cd " + Quote(src.string()) + " && ";
    ASSERT_EQ(Shell(in_src + "git apply " + patch), 0);
    const int built = Shell(make);
    std::optional<StatusOr<Localization>> l;
    StatusOr<hlo_diff::Case> c = hlo_diff::ReadCase((bug / "witness").string());
    if (built == 0 && c.ok()) {
      TargetProber prober(*c, spec, (tmp / "runs" / name).string());
      l = Localize(*c, prober);
    }
    ASSERT_EQ(Shell(in_src + "git apply -R " + patch), 0);
    ASSERT_EQ(built, 0) << "see " << tmp / "build.log";
    ASSERT_TRUE(c.ok()) << c.status().message();
    ASSERT_TRUE(l->ok()) << l->status().message();
    const Json sig = RefinedSignature(**l);
    const Json meta = Meta(bug);
    std::printf("[ localize ] %s: %s (%lld runs, linear scan %lld)\n", name,
                sig.Dump().c_str(), static_cast<long long>((*l)->runs),
                static_cast<long long>((*l)->linear_runs));
    EXPECT_EQ(sig.Find("pass")->Dump(), meta.Find("pass")->Dump())
        << LocalizationText(**l, name);
    EXPECT_EQ(sig.Find("opcode")->Dump(), meta.Find("opcode")->Dump())
        << LocalizationText(**l, name);
    EXPECT_TRUE(sig.Find("site")->is_string()) << LocalizationText(**l, name);
    EXPECT_LT((*l)->runs, (*l)->linear_runs);
    failed |= ::testing::Test::HasFailure();
  }
  if (!failed) fs::remove_all(tmp);
}

}  // namespace
}  // namespace trench::hlo_bisect
