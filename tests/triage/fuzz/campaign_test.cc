// The fuzzing campaign with real target processes: the real hlo-run
// --serve workers of this build, and fake targets (shell scripts) that fail
// in known ways.
#include "triage/fuzz/campaign.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>

#include "tests/traces_dir.h"
#include "triage/case/case_bundle.h"
#include "triage/fuzz/fuzz_flags.h"

namespace trench::fuzz {
namespace {

namespace fs = std::filesystem;

std::string TempDir(const std::string& name) {
  const fs::path p = fs::path(::testing::TempDir()) / ("campaign_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p.string();
}

CampaignOptions SmallCampaign(const std::string& out, int64_t programs) {
  CampaignOptions o;
  o.budget_seconds = 600;  // The program count ends these campaigns.
  o.max_programs = programs;
  o.out_dir = out;
  o.seed = 7;
  o.generator.instructions = 8;
  o.generator.max_elements = 1 << 10;
  o.target = hlo_diff::TargetSpec::FromBinaryDir(TRENCH_BINARY_DIR,
                                                 hlo_diff::TargetMode::kServe);
  o.target.timeout_seconds = 120;
  return o;
}

// A campaign of `programs` programs on a fake target: a shell script
// `dir`/fake-hlo-run (one process per program) running `body`.
CampaignOptions FakeTargetCampaign(const std::string& dir,
                                   const std::string& body, int64_t programs) {
  const std::string script = dir + "/fake-hlo-run";
  std::ofstream(script) << "#!/bin/sh\n" << body;
  EXPECT_EQ(chmod(script.c_str(), 0755), 0);
  CampaignOptions o = SmallCampaign(dir + "/out", programs);
  o.target.mode = hlo_diff::TargetMode::kHloRun;
  o.target.hlo_run = script;
  return o;
}

int64_t Count(const CampaignSummary& s, const std::string& status) {
  auto it = s.statuses.find(status);
  return it == s.statuses.end() ? 0 : it->second;
}

TEST(CampaignTest, RealTargetRunsEveryProgramAndWritesTheSummary) {
  const std::string out = TempDir("real");
  StatusOr<CampaignSummary> s = RunCampaign(SmallCampaign(out, 12));
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->programs, 12);
  EXPECT_EQ(s->synthetic, 12);
  EXPECT_EQ(s->generator_errors, 0) << s->first_generator_error;
  int64_t total = 0;
  for (const auto& [status, n] : s->statuses) total += n;
  EXPECT_EQ(total, 12);
  EXPECT_GT(Count(*s, "pass"), 0);
  EXPECT_GT(s->oracle_seconds, 0);
  EXPECT_GT(s->target_seconds, 0);
  EXPECT_TRUE(fs::exists(fs::path(out) / "summary.json"));
  EXPECT_FALSE(fs::exists(fs::path(out) / ".work"));
}

TEST(CampaignTest, SameSeedGivesTheSameVerdicts) {
  StatusOr<CampaignSummary> a =
      RunCampaign(SmallCampaign(TempDir("seed_a"), 6));
  StatusOr<CampaignSummary> b =
      RunCampaign(SmallCampaign(TempDir("seed_b"), 6));
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->statuses, b->statuses);
}

TEST(CampaignTest, TraceCorpusSharesTheProgramsWithSynthetic) {
  CampaignOptions o = SmallCampaign(TempDir("traces"), 16);
  o.corpus = {std::string(TRENCH_TRACES_DIR)};
  o.trace_share = 0.5;
  StatusOr<CampaignSummary> s = RunCampaign(o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_GT(s->corpus_subgraphs, 0);
  EXPECT_GT(s->traces, 0);
  EXPECT_GT(s->synthetic, 0);
  EXPECT_EQ(s->traces + s->synthetic, 16);
}

// A target whose every compile aborts: one finding (the signature ignores
// the program), counted once per program, its case written and readable.
TEST(CampaignTest, CrashesDeduplicateIntoOneFindingWithACase) {
  const std::string dir = TempDir("crash");
  CampaignOptions o =
      FakeTargetCampaign(dir,
                         "echo 'internal error at 0x7f12 in %add.3' >&2\n"
                         "kill -ABRT $$\n",
                         5);
  o.jobs = 2;
  StatusOr<CampaignSummary> s = RunCampaign(o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Count(*s, "compile_crash"), 5);
  ASSERT_EQ(s->findings.size(), 1u);
  const Finding& f = s->findings[0];
  EXPECT_EQ(f.status, "compile_crash");
  EXPECT_EQ(f.count, 5);
  ASSERT_FALSE(f.case_dir.empty());
  StatusOr<hlo_diff::Case> c = hlo_diff::ReadCase(f.case_dir);
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_FALSE(c->signature.is_null());
  EXPECT_EQ(c->origin.Find("kind")->string_value(), "synthetic");
  EXPECT_NE(c->origin.Find("campaign"), nullptr);
}

// A target that miscompiles every multiply as an add (a shell script
// rewriting the module before the real hlo-run compiles it): programs with
// different op mixes around the multiply have different coarse signatures,
// and localization names the same culprit for all of them (codegen, no
// rewrite, multiply, f32), so they become one finding.
TEST(CampaignTest, LocalizationMergesCoarseSignaturesOfOneBug) {
  const std::string dir = TempDir("localize");
  CampaignOptions o = FakeTargetCampaign(
      dir,
      std::string("m=\"$1\"; shift\n"
                  "sed 's/ multiply(/ add(/' \"$m\" > \"$m.bad.hlo\"\n"
                  "exec '") +
          TRENCH_BINARY_DIR + "/hlo-run' \"$m.bad.hlo\" \"$@\"\n",
      24);
  o.generator.focus = {"multiply", "add", "subtract", "negate", "abs"};
  o.generator.dtypes = {PrimitiveType::F32};
  o.generator.special_values = 0;
  o.jobs = 2;
  StatusOr<CampaignSummary> s = RunCampaign(o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_GT(Count(*s, "mismatch"), 1);
  size_t coarse = 0;
  for (const Finding& f : s->findings) {
    coarse += f.coarse_sigs.size();
    const Json* pass = f.signature.Find("pass");
    const Json* opcode = f.signature.Find("opcode");
    ASSERT_TRUE(pass != nullptr && opcode != nullptr) << f.signature.Dump();
    EXPECT_EQ(pass->Dump(), "\"codegen\"");
    EXPECT_EQ(opcode->Dump(), "\"multiply\"");
    EXPECT_TRUE(fs::exists(fs::path(f.case_dir) / "localization.json"));
  }
  EXPECT_EQ(s->findings.size(), 1u);
  EXPECT_GT(coarse, 1u);  // Otherwise the test shows no merging.
}

// Two shards of one seed (--shard 0/2 and 1/2) run the programs of the
// unsharded campaign between them: the same statuses add up, and the same
// signatures are found. The fake target crashes on programs holding some
// opcodes, with the opcode in its message (one signature per opcode).
TEST(CampaignTest, TwoShardsFindWhatOneCampaignFinds) {
  const std::string crash =
      "op=$(grep -o -m1 -E ' (multiply|maximum|negate)\\(' \"$1\" | head -1 "
      "| tr -d ' (')\n"
      "if [ -n \"$op\" ]; then echo \"internal error in $op\" >&2; "
      "kill -ABRT $$; fi\n"
      "exec '" +
      std::string(TRENCH_BINARY_DIR) + "/hlo-run' \"$@\"\n";
  auto campaign = [&](const std::string& name, int64_t k, int64_t n) {
    CampaignOptions o = FakeTargetCampaign(TempDir(name), crash, 24);
    o.generator.focus = {"multiply", "maximum", "negate", "add", "abs"};
    o.generator.dtypes = {PrimitiveType::F32};
    o.shard_index = k;
    o.shard_count = n;
    return RunCampaign(o);
  };
  StatusOr<CampaignSummary> whole = campaign("shard_whole", 0, 1);
  StatusOr<CampaignSummary> a = campaign("shard_a", 0, 2);
  StatusOr<CampaignSummary> b = campaign("shard_b", 1, 2);
  ASSERT_TRUE(whole.ok() && a.ok() && b.ok());
  EXPECT_EQ(whole->programs, 24);
  EXPECT_EQ(a->programs + b->programs, 24);
  EXPECT_EQ(a->programs, 12);
  std::map<std::string, int64_t> sum = a->statuses;
  for (const auto& [k, v] : b->statuses) sum[k] += v;
  EXPECT_EQ(sum, whole->statuses);
  std::set<std::string> one, two;
  for (const Finding& f : whole->findings) one.insert(f.sig);
  for (const CampaignSummary* s : {&*a, &*b}) {
    for (const Finding& f : s->findings) two.insert(f.sig);
  }
  EXPECT_GT(one.size(), 1u);  // Otherwise the test shows nothing.
  EXPECT_EQ(one, two);
  // Program numbers are the campaign's: shard 1 runs the odd ones.
  for (const Finding& f : b->findings) EXPECT_EQ(f.first_program % 2, 1);
}

// With linger 0 the campaign stops at the first finding instead of
// running all its programs.
TEST(CampaignTest, LingerZeroStopsAtTheFirstFinding) {
  const std::string dir = TempDir("linger");
  CampaignOptions o = FakeTargetCampaign(dir, "kill -SEGV $$\n", 1000);
  o.linger_seconds = 0;
  StatusOr<CampaignSummary> s = RunCampaign(o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->findings.size(), 1u);
  EXPECT_LT(s->programs, 10);
}

// A raised cancel flag (hlo-fuzz sets it on SIGINT/SIGTERM) ends the
// campaign with its summary instead of running the budget out.
TEST(CampaignTest, CancelEndsTheCampaignWithASummary) {
  const std::string out = TempDir("cancel");
  std::atomic<bool> cancel{true};
  CampaignOptions o = SmallCampaign(out, 100000);
  o.cancel = &cancel;
  StatusOr<CampaignSummary> s = RunCampaign(o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->cancelled);
  EXPECT_LT(s->programs, 100000);
  std::ifstream f(fs::path(out) / "summary.json");
  const std::string text((std::istreambuf_iterator<char>(f)),
                         std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("\"cancelled\": true"), std::string::npos) << text;
  EXPECT_NE(text.find("\"running\": false"), std::string::npos) << text;
}

// A target that refuses every program cleanly: no finding, but with
// keep_unsupported one kept case for the one reason.
TEST(CampaignTest, RefusalsAreKeptApartFromFindings) {
  const std::string dir = TempDir("refuse");
  CampaignOptions o = FakeTargetCampaign(
      dir,
      "echo 'UNIMPLEMENTED: hloc: cannot compile frob for f32' >&2\n"
      "exit 3\n",
      4);
  o.keep_unsupported = true;
  StatusOr<CampaignSummary> s = RunCampaign(o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Count(*s, "target_unsupported"), 4);
  EXPECT_TRUE(s->findings.empty());
  ASSERT_EQ(s->refusals.size(), 1u);
  EXPECT_EQ(s->refusals[0].count, 4);
  EXPECT_TRUE(fs::exists(fs::path(s->refusals[0].case_dir) / "module.hlo"));
  EXPECT_NE(s->refusals[0].case_dir.find("/unsupported/"), std::string::npos);
}

// A timeout may be the machine's load: the program runs again with three
// times the limit, and what it says then is the verdict. The fake target
// hangs on every other call (the first run of each program) and is the
// real hlo-run otherwise (the retry).
TEST(CampaignTest, ATimeoutThatFinishesOnRetryIsNotAFinding) {
  const std::string dir = TempDir("slow");
  CampaignOptions o = FakeTargetCampaign(
      dir,
      "n=$(cat '" + dir + "/calls' 2>/dev/null || echo 0)\n" +
          "n=$((n + 1)); echo $n > '" + dir + "/calls'\n" +
          "[ $((n % 2)) -eq 1 ] && exec sleep 60\n" + "exec '" +
          TRENCH_BINARY_DIR + "/hlo-run' \"$@\"\n",
      3);
  o.target.timeout_seconds = 2;
  StatusOr<CampaignSummary> s = RunCampaign(o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->findings.empty());
  EXPECT_EQ(Count(*s, "timeout"), 0);
  EXPECT_EQ(s->timeouts_retried, 3);
  EXPECT_EQ(s->timeouts_finished_on_retry, 3);
  EXPECT_EQ(Count(*s, "pass") + Count(*s, "target_unsupported"), 3);
  const Json j = s->ToJson();
  EXPECT_EQ(j.Find("timeouts")->Find("finished_on_retry")->int64_value(), 3);
}

// A target that hangs on every run: the retry times out too, and that is
// one finding.
TEST(CampaignTest, ATimeoutOnRetryTooIsAFinding) {
  const std::string dir = TempDir("hang");
  CampaignOptions o = FakeTargetCampaign(dir, "exec sleep 60\n", 2);
  o.target.timeout_seconds = 1;
  o.localize = false;
  StatusOr<CampaignSummary> s = RunCampaign(o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(Count(*s, "timeout"), 2);
  EXPECT_EQ(s->timeouts_retried, 2);
  EXPECT_EQ(s->timeouts_finished_on_retry, 0);
  ASSERT_EQ(s->findings.size(), 1u);
  EXPECT_EQ(s->findings[0].status, "timeout");
}

// A timeout after the budget is spent cannot be re-run in time: it is
// counted as unconfirmed and is no finding.
TEST(CampaignTest, ATimeoutPastTheBudgetIsUnconfirmed) {
  const std::string dir = TempDir("late");
  CampaignOptions o = FakeTargetCampaign(dir, "exec sleep 60\n", 1);
  o.budget_seconds = 0.5;
  o.target.timeout_seconds = 2;
  o.localize = false;
  StatusOr<CampaignSummary> s = RunCampaign(o);
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->programs, 1);
  EXPECT_EQ(Count(*s, "timeout"), 1);
  EXPECT_EQ(s->timeouts_unconfirmed, 1);
  EXPECT_EQ(s->timeouts_retried, 0);
  EXPECT_TRUE(s->findings.empty());
}

TEST(CampaignTest, RejectsUnusableOptions) {
  CampaignOptions o = SmallCampaign(TempDir("bad"), 1);
  o.jobs = 0;
  EXPECT_FALSE(RunCampaign(o).ok());
  o = SmallCampaign(TempDir("bad2"), 1);
  o.corpus = {"/nonexistent/trench/corpus"};
  EXPECT_FALSE(RunCampaign(o).ok());
}

TEST(FuzzFlagsTest, DurationsFocusAndErrors) {
  EXPECT_EQ(*ParseDuration("90"), 90);
  EXPECT_EQ(*ParseDuration("90s"), 90);
  EXPECT_EQ(*ParseDuration("5m"), 300);
  EXPECT_EQ(*ParseDuration("1.5h"), 5400);
  EXPECT_FALSE(ParseDuration("5 minutes").ok());
  EXPECT_FALSE(ParseDuration("-3s").ok());

  StatusOr<std::vector<std::string>> ops = ParseFocus("ops:dot,reduction");
  ASSERT_TRUE(ops.ok()) << ops.status().ToString();
  EXPECT_EQ(*ops, (std::vector<std::string>{"dot", "reduction"}));
  StatusOr<std::vector<std::string>> passes = ParseFocus("passes:fusion");
  ASSERT_TRUE(passes.ok());
  EXPECT_EQ(*passes, FocusGroupsForPass("fusion"));
  EXPECT_FALSE(ParseFocus("passes:no-such-pass").ok());
  // The pass of collectives draws all-reduces alone (SPMD programs).
  StatusOr<std::vector<std::string>> combiner =
      ParseFocus("passes:all-reduce-combiner");
  ASSERT_TRUE(combiner.ok()) << combiner.status().ToString();
  EXPECT_EQ(*combiner, std::vector<std::string>{"all-reduce"});
  EXPECT_FALSE(ParseFocus("ops:frobnicate").ok());
  // The device ops and their group, as the daemon names them for a commit
  // that changed the collectives' emitters.
  for (HloOpcode op : SpmdOps()) {
    const std::string name(OpcodeName(op));
    StatusOr<std::vector<std::string>> one = ParseFocus("ops:" + name);
    ASSERT_TRUE(one.ok()) << one.status().ToString();
    EXPECT_EQ(*one, std::vector<std::string>{name});
  }
  EXPECT_TRUE(ParseFocus("ops:collective,add").ok());

  const char* argv[] = {"hlo-fuzz", "--budget=2m",    "--jobs", "2",
                        "--focus",  "passes:algsimp", "--out",  "/tmp/x"};
  StatusOr<FuzzFlags> f = ParseFuzzFlags(8, const_cast<char**>(argv));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->campaign.budget_seconds, 120);
  EXPECT_EQ(f->campaign.jobs, 2);
  EXPECT_EQ(f->campaign.out_dir, "/tmp/x");
  EXPECT_FALSE(f->campaign.generator.focus.empty());
  EXPECT_TRUE(f->campaign.localize);
  const char* coarse[] = {"hlo-fuzz", "--no-localize"};
  StatusOr<FuzzFlags> nl = ParseFuzzFlags(2, const_cast<char**>(coarse));
  ASSERT_TRUE(nl.ok()) << nl.status().ToString();
  EXPECT_FALSE(nl->campaign.localize);
  const char* bad[] = {"hlo-fuzz", "--jobs"};
  StatusOr<FuzzFlags> missing = ParseFuzzFlags(2, const_cast<char**>(bad));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("--jobs needs a value"),
            std::string::npos);
  const char* unknown[] = {"hlo-fuzz", "--bogus=1"};
  EXPECT_FALSE(ParseFuzzFlags(2, const_cast<char**>(unknown)).ok());
  const char* large[] = {"hlo-fuzz",
                         "--large-share",
                         "0.5",
                         "--large-elements",
                         "65536",
                         "--large-attribute",
                         "trench_vmem_bytes=65536"};
  StatusOr<FuzzFlags> l = ParseFuzzFlags(7, const_cast<char**>(large));
  ASSERT_TRUE(l.ok()) << l.status().ToString();
  EXPECT_EQ(l->campaign.generator.large_probability, 0.5);
  EXPECT_EQ(l->campaign.generator.large_elements, 65536);
  ASSERT_EQ(l->campaign.generator.large_attributes.size(), 1u);
  EXPECT_EQ(l->campaign.generator.large_attributes[0].second, "65536");
  const char* quote[] = {"hlo-fuzz", "--large-attribute", "a=\"}"};
  EXPECT_FALSE(ParseFuzzFlags(3, const_cast<char**>(quote)).ok());
  const char* zero[] = {"hlo-fuzz", "--large-elements", "0"};
  StatusOr<FuzzFlags> z = ParseFuzzFlags(3, const_cast<char**>(zero));
  ASSERT_FALSE(z.ok());
  EXPECT_NE(z.status().message().find("--large-elements"), std::string::npos)
      << z.status().message();
  const char* share[] = {"hlo-fuzz", "--large-share", "2"};
  EXPECT_FALSE(ParseFuzzFlags(3, const_cast<char**>(share)).ok());
}

}  // namespace
}  // namespace trench::fuzz
