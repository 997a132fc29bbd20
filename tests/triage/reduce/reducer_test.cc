#include "triage/reduce/reducer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/triage/reduce/reduce_test_util.h"

namespace trench::hlo_reduce {
namespace {

using namespace testing;  // NOLINT
using hlo_diff::Case;
namespace fs = std::filesystem;

// A fake reduction pass: opportunity i = "zero the i-th nonzero element of
// input 0". Candidates with both elements 5 and 6 zero cannot be applied.
class ZeroInputsPass : public ReductionPass {
 public:
  std::string_view name() const override { return "zero-inputs"; }
  std::string_view description() const override { return "test pass"; }
  int64_t Count(const Case& c) const override { return Nonzero(c).size(); }
  StatusOr<Case> Apply(const Case& c,
                       std::span<const int64_t> chosen) const override {
    std::vector<int64_t> nz = Nonzero(c);
    Case out = c;
    for (int64_t i : chosen) out.inputs[0].SetFromDouble(nz[i], 0);
    if (out.inputs[0].GetAsDouble(5) == 0 &&
        out.inputs[0].GetAsDouble(6) == 0) {
      return FailedPrecondition("5 and 6 both zero");
    }
    return out;
  }

 private:
  static std::vector<int64_t> Nonzero(const Case& c) {
    std::vector<int64_t> nz;
    for (int64_t i = 0; i < c.inputs[0].element_count(); ++i) {
      if (c.inputs[0].GetAsDouble(i) != 0) nz.push_back(i);
    }
    return nz;
  }
};

// Interesting iff elements 3 and 17 of input 0 are nonzero.
class Needs3And17 : public Interestingness {
 public:
  StatusOr<bool> RunOnce(const Case& c, int) override {
    ++runs_;
    return c.inputs[0].GetAsDouble(3) != 0 && c.inputs[0].GetAsDouble(17) != 0;
  }
  Json Describe() const override { return Json("needs 3 and 17"); }
};

Case AllNonzero() {
  std::vector<float> v(32);
  for (int i = 0; i < 32; ++i) v[i] = i + 1;
  StatusOr<Case> c =
      hlo_diff::MakeCase(kChainModule, {F32({4, 8}, v), F32({4, 8}, v)});
  EXPECT_TRUE(c.ok());
  return *c;
}

std::vector<std::unique_ptr<ReductionPass>> FakePasses() {
  std::vector<std::unique_ptr<ReductionPass>> p;
  p.push_back(std::make_unique<ZeroInputsPass>());
  return p;
}

std::vector<int64_t> NonzeroOf(const Case& c) {
  std::vector<int64_t> nz;
  for (int64_t i = 0; i < 32; ++i) {
    if (c.inputs[0].GetAsDouble(i) != 0) nz.push_back(i);
  }
  return nz;
}

// {3, 17} and one of 5 and 6.
bool IsMinimal(const std::vector<int64_t>& nz) {
  return nz == std::vector<int64_t>{3, 5, 17} ||
         nz == std::vector<int64_t>{3, 6, 17};
}

Json ReadJsonFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  StatusOr<Json> j = ParseJson(s.str());
  return j.ok() ? *j : Json();
}

TEST(ReducerTest, ReducesAndKeepsTheBestOnDisk) {
  TempDir tmp;
  Needs3And17 test;
  std::vector<Json> progress;
  ReduceOptions o{.out_dir = tmp / "out"};
  o.on_progress = [&](const Json& p) { progress.push_back(p); };
  StatusOr<ReduceResult> r = Reduce(AllNonzero(), FakePasses(), test, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // 5 or 6 must stay: zeroing both is invalid.
  EXPECT_TRUE(IsMinimal(NonzeroOf(r->best)));
  EXPECT_GT(r->stats.invalid, 0);
  // Every engine test, and one more of OUT/best read back.
  EXPECT_EQ(r->stats.tests + 1, test.runs());
  EXPECT_TRUE(r->replayed);
  EXPECT_GE(r->rounds, 1);
  StatusOr<Case> best = hlo_diff::ReadCase(tmp / "out/best");
  ASSERT_TRUE(best.ok()) << best.status().ToString();
  EXPECT_EQ(hlo_diff::CaseSha256(*best), hlo_diff::CaseSha256(r->best));
  Json p = ReadJsonFile(tmp / "out/progress.json");
  ASSERT_TRUE(p.is_object());
  EXPECT_EQ(p.Find("step")->int64_value(), r->steps);
  EXPECT_EQ(p.Find("pass")->string_value(), "done");
  EXPECT_TRUE(p.Find("done")->bool_value());
  EXPECT_EQ(p.Find("tests")->int64_value(), r->stats.tests);
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back().Find("step")->int64_value(), r->steps);
  EXPECT_EQ(progress.back().Find("pass")->string_value(), "zero-inputs");
  // Only the current step's directory is kept.
  int dirs = 0;
  for (const auto& e : fs::directory_iterator(tmp / "out")) {
    dirs += e.path().filename().string().rfind("best.", 0) == 0;
  }
  EXPECT_EQ(dirs, 1);
  // A second run into the same OUT without --resume is refused.
  StatusOr<ReduceResult> again = Reduce(AllNonzero(), FakePasses(), test, o);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kFailedPrecondition);
}

// A pass whose candidates differ from their saved form: input 0 carries
// a layout in memory that a saved .npy (read back with the parameter's
// layout, none here) does not; and a bug that needs it. The reduction
// accepts every step, and the best read back does not fail.
class LayoutInMemoryPass : public ZeroInputsPass {
 public:
  StatusOr<Case> Apply(const Case& c,
                       std::span<const int64_t> chosen) const override {
    ASSIGN_OR_RETURN(Case out, ZeroInputsPass::Apply(c, chosen));
    out.inputs[0].set_layout(Layout({0, 1}));
    return out;
  }
};

class NeedsALayout : public Needs3And17 {
 public:
  StatusOr<bool> RunOnce(const Case& c, int w) override {
    ASSIGN_OR_RETURN(bool yes, Needs3And17::RunOnce(c, w));
    return yes && c.inputs[0].shape().has_layout();
  }
};

TEST(ReducerTest, ABestThatDoesNotFailWhenReadBackIsAnError) {
  TempDir tmp;
  NeedsALayout test;
  std::vector<std::unique_ptr<ReductionPass>> passes;
  passes.push_back(std::make_unique<LayoutInMemoryPass>());
  StatusOr<ReduceResult> r =
      Reduce(AllNonzero(), passes, test, {.out_dir = tmp / "out"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
  EXPECT_NE(r.status().message().find("does not fail when read back"),
            std::string::npos)
      << r.status().message();
  // The honest pass's best is read back, tested again and still fails.
  Needs3And17 honest;
  StatusOr<ReduceResult> ok =
      Reduce(AllNonzero(), FakePasses(), honest, {.out_dir = tmp / "ok"});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_TRUE(ok->replayed);
  EXPECT_TRUE(ok->ToJson().Find("replayed")->bool_value());
}

// Another process on the machine (same uid) overwrites OUT/best with
// garbage after each step: the read-back names the broken file instead
// of reporting a result.
TEST(ReducerTest, ABestCorruptedOnDiskIsAnErrorNamingTheFile) {
  TempDir tmp;
  Needs3And17 test;
  ReduceOptions o{.out_dir = tmp / "out"};
  o.on_progress = [&](const Json&) {
    std::ofstream(tmp / "out/best/module.hlo", std::ios::trunc)
        << "HloModule m\nENTRY e {\n  x = f32[ broken\n";
  };
  StatusOr<ReduceResult> r = Reduce(AllNonzero(), FakePasses(), test, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("module.hlo"), std::string::npos)
      << r.status().message();
}

TEST(ReducerTest, TwoJobsGiveTheSameResult) {
  TempDir tmp;
  Needs3And17 t1, t2;
  auto r1 = Reduce(AllNonzero(), FakePasses(), t1, {.out_dir = tmp / "a"});
  auto r2 =
      Reduce(AllNonzero(), FakePasses(), t2, {.out_dir = tmp / "b", .jobs = 2});
  ASSERT_TRUE(r1.ok() && r2.ok());
  EXPECT_EQ(hlo_diff::CaseSha256(r1->best), hlo_diff::CaseSha256(r2->best));
  EXPECT_EQ(r1->steps, r2->steps);
}

TEST(ReducerTest, ResumeFinishesAnInterruptedRun) {
  TempDir tmp;
  Needs3And17 test;
  auto full =
      Reduce(AllNonzero(), FakePasses(), test, {.out_dir = tmp / "full"});
  ASSERT_TRUE(full.ok());
  auto part = Reduce(AllNonzero(), FakePasses(), test,
                     {.out_dir = tmp / "out", .max_tests = 4});
  ASSERT_TRUE(part.ok());
  EXPECT_TRUE(part->budget_exhausted);
  EXPECT_GT(NonzeroOf(part->best).size(), 3u);
  ReduceOptions resume{.out_dir = tmp / "out", .resume = true};
  auto rest = Reduce(AllNonzero(), FakePasses(), test, resume);
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_TRUE(IsMinimal(NonzeroOf(rest->best)));
  EXPECT_TRUE(IsMinimal(NonzeroOf(full->best)));
  EXPECT_EQ(rest->before.elements, full->before.elements);  // Kept from OUT.
  EXPECT_GT(rest->steps, part->steps);
  // Resuming a directory that has no run is refused.
  resume.out_dir = tmp / "none";
  EXPECT_FALSE(Reduce(AllNonzero(), FakePasses(), test, resume).ok());
}

TEST(ReducerTest, RealPassesWithAnExternalTest) {
  TempDir tmp;
  WriteScript(tmp / "has-mul.sh", "grep -q ' multiply(' \"$1/module.hlo\"\n");
  auto test = ExternalCommandTest::Create(
      {.command = tmp / "has-mul.sh", .work_dir = tmp / "work", .jobs = 2});
  ASSERT_TRUE(test.ok());
  const Case c = ChainCase();
  auto r = Reduce(c, AllReductionPasses(), **test,
                  {.out_dir = tmp / "out", .jobs = 2});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NE(r->best.module_text.find(" multiply("), std::string::npos);
  EXPECT_EQ(r->before.instructions, MeasureCase(c).instructions);
  EXPECT_LT(r->after.instructions, r->before.instructions);
  EXPECT_LT(r->after.elements, r->before.elements);
  EXPECT_TRUE(ValidateCandidate(r->best).ok());
  EXPECT_EQ(r->stats.tests + r->stats.invalid + r->stats.cache_hits,
            r->stats.candidates);
  Json j = r->ToJson();
  EXPECT_EQ(j.Find("passes")->size(), AllReductionPasses().size());
}

TEST(ReducerTest, DryRunCountsWorstCaseTests) {
  Json j = DryRun(AllNonzero(), FakePasses());
  const Json& p = j.Find("passes")->array()[0];
  EXPECT_EQ(p.Find("opportunities")->int64_value(), 32);
  EXPECT_EQ(p.Find("max_tests")->int64_value(), ddmin::DryRunTests(32));
  EXPECT_EQ(j.Find("max_tests_first_round")->int64_value(),
            ddmin::DryRunTests(32));
}

}  // namespace
}  // namespace trench::hlo_reduce
