// The target runner and verdicts with real processes: this build's hloc,
// tpusim and hlo-run, and fake targets (shell scripts that speak the
// command-line contract but misbehave on purpose).
#include "triage/case/target_runner.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <cmath>
#include <fstream>
#include <iterator>

#include "compiler/ir/npy.h"
#include "tests/triage/case/hlo_diff_test_util.h"
#include "triage/case/verdict.h"

namespace trench::hlo_diff {
namespace {

using testing::AddCase;
using testing::ComputeVerdictJson;
using testing::F32;
using testing::RealTarget;
using testing::TempDir;
using testing::WriteScript;

std::string Str(const Json& j, const char* key) {
  const Json* v = j.Find(key);
  return v && v->is_string() ? v->string_value() : "<" + std::string(key) + ">";
}

TEST(TargetRunnerTest, RealTargetPassesInEveryMode) {
  for (TargetMode mode :
       {TargetMode::kHlocTpusim, TargetMode::kHloRun, TargetMode::kServe}) {
    TempDir tmp;
    TargetRunner runner(RealTarget(mode));
    StatusOr<TargetResult> r = runner.Run(AddCase(), tmp / "work");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, TargetStatus::kOk) << r->ToJson().Dump();
    ASSERT_EQ(r->outputs.size(), 2u) << r->output_error;
    EXPECT_EQ(r->outputs[0].GetAsDouble(0), 1.5);
    EXPECT_EQ(r->outputs[1].element_type(), PrimitiveType::BF16);
    EXPECT_EQ(r->outputs[1].GetAsDouble(5), -6.0);

    StatusOr<Json> v = ComputeVerdictJson(AddCase(), runner, tmp / "work");
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_EQ(Str(*v, "status"), "pass") << v->DumpPretty();
    EXPECT_EQ((*v)["outputs"].size(), 2u);
    EXPECT_EQ(runner.restarts(), 0);
  }
}

TEST(TargetRunnerTest, PassTraceNamesPassesAndCompileEnd) {
  TempDir tmp;
  TargetRunner runner(RealTarget(TargetMode::kHlocTpusim));
  StatusOr<TargetResult> r = runner.Run(AddCase(), tmp / "work");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->last_pass, "codegen");  // The back end was entered last.
  std::ifstream in(tmp / "work/pass_trace.txt");
  std::string all((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(all.find("enter "), std::string::npos) << all;
  EXPECT_NE(all.find("exit compile"), std::string::npos) << all;
}

// A tpusim stand-in that "runs" by copying a prepared (wrong) output.
TargetSpec WrongOutputTarget(const TempDir& tmp, const Literal& out0,
                             const Literal& out1) {
  EXPECT_TRUE(WriteNpyFile(tmp / "wrong0.npy", out0).ok());
  EXPECT_TRUE(WriteNpyFile(tmp / "wrong1.npy", out1).ok());
  TargetSpec s = RealTarget(TargetMode::kHlocTpusim);
  s.tpusim = WriteScript(
      tmp / "tpusim", "mkdir -p \"$6\"\ncp " + tmp / "wrong0.npy" +
                          " \"$6/0.npy\"\ncp " + tmp / "wrong1.npy" +
                          " \"$6/1.npy\"\n"
                          "echo '{\"status\":\"ok\"}' > \"$6/report.json\"\n");
  return s;
}

Literal Bf16(std::vector<double> v) {
  Literal l(Shape(PrimitiveType::BF16, {2, 3}));
  for (size_t i = 0; i < v.size(); ++i) l.SetFromDouble(i, v[i]);
  return l;
}

TEST(VerdictTest, WrongTargetGivesMismatchWithSignature) {
  TempDir tmp;
  // The true sum is {1.5, 1, 5.25, 12, 2, 6}; element 3 is off by 1.
  TargetRunner runner(WrongOutputTarget(tmp,
                                        F32({2, 3}, {1.5, 1, 5.25, 13, 2, 6}),
                                        Bf16({-1.5, -1, -5.25, -12, -2, -6})));
  StatusOr<Json> v = ComputeVerdictJson(AddCase(), runner, tmp / "work");
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ(Str(*v, "status"), "mismatch") << v->DumpPretty();
  const Json& out0 = (*v)["outputs"].array().at(0);
  EXPECT_EQ(out0.Find("mismatches")->int64_value(), 1);
  EXPECT_EQ(out0.Find("max_abs_error")->number_value(), 1.0);
  ASSERT_NE(out0.Find("first_mismatch"), nullptr);
  const Json& sig = (*v)["signature"];
  EXPECT_EQ(Str(sig, "status"), "mismatch");
  EXPECT_EQ(Str(sig, "dtype"), "f32");
  EXPECT_EQ(sig.Find("ops")->Dump(), "[\"add\"]");
  EXPECT_EQ(Str(sig, "sig").size(), 16u);
  EXPECT_EQ(WithSignatureHash(sig), sig);  // The hash is stable.
  // Where it differs: one map, of output 0, hot at element [1, 0] only.
  ASSERT_NE(v->Find("error_maps"), nullptr) << v->DumpPretty();
  ASSERT_EQ(v->Find("error_maps")->size(), 1u);
  StatusOr<ErrorMap> map =
      ErrorMap::FromJson(v->Find("error_maps")->array()[0]);
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  EXPECT_EQ(map->output, 0);
  EXPECT_EQ(map->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(map->rows, 2);
  EXPECT_EQ(map->cols, 3);
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(map->cells[i].has_value()) << i;
    if (i == 3) {
      EXPECT_GT(*map->cells[i], 1.0);
    } else {
      EXPECT_LE(*map->cells[i], 1.0) << i;
    }
  }
  // The verdict reads back with its map.
  StatusOr<Verdict> back = Verdict::FromJson(*v);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToJson(), *v);
}

TEST(VerdictTest, NanOnlyDifferenceIsNanMismatch) {
  TempDir tmp;
  TargetRunner runner(
      WrongOutputTarget(tmp, F32({2, 3}, {1.5, 1, 5.25, 12, 2, 6}),
                        Bf16({-1.5, -1, -5.25, -12, std::nan(""), -6})));
  StatusOr<Json> v = ComputeVerdictJson(AddCase(), runner, tmp / "work");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(Str(*v, "status"), "nan_mismatch") << v->DumpPretty();
  EXPECT_EQ(Str((*v)["signature"], "dtype"), "bf16");
  // The bf16 output's neighbourhood: convert <- negate <- add.
  EXPECT_EQ((*v)["signature"].Find("ops")->Dump(),
            "[\"add\",\"convert\",\"negate\"]");
  // The NaN against -2 is the one hot cell of output 1's map.
  ASSERT_NE(v->Find("error_maps"), nullptr) << v->DumpPretty();
  StatusOr<ErrorMap> map =
      ErrorMap::FromJson(v->Find("error_maps")->array()[0]);
  ASSERT_TRUE(map.ok()) << map.status().ToString();
  EXPECT_EQ(map->output, 1);
  EXPECT_EQ(map->cells[4], kErrorMapHuge);
  EXPECT_EQ(map->cells[0], 0.0);
}

TEST(VerdictTest, MissingOutputIsMismatch) {
  TempDir tmp;
  TargetSpec s = RealTarget(TargetMode::kHlocTpusim);
  s.tpusim = WriteScript(tmp / "tpusim", "mkdir -p \"$6\"\n");
  TargetRunner runner(s);
  StatusOr<Json> v = ComputeVerdictJson(AddCase(), runner, tmp / "work");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(Str(*v, "status"), "mismatch") << v->DumpPretty();
  EXPECT_NE(Str(*v, "structure_error").find("0.npy"), std::string::npos);
  EXPECT_EQ(v->Find("error_maps"), nullptr);  // Nothing to draw.
}

// An hloc that enters a pass and aborts with an assertion message.
TargetSpec AbortingCompiler(const TempDir& tmp, const std::string& line) {
  TargetSpec s = RealTarget(TargetMode::kHlocTpusim);
  s.hloc = WriteScript(tmp / "hloc",
                       "echo 'enter algsimp 3' >> \"$TRENCH_PASS_TRACE\"\n"
                       "echo \"" +
                           line + "\" >&2\nkill -ABRT $$\n");
  return s;
}

TEST(VerdictTest, CompilerAbortIsCompileCrashWithNormalizedSignature) {
  TempDir tmp1, tmp2;
  TargetRunner r1(AbortingCompiler(
      tmp1,
      "hloc: /src/algsimp.cc:123: Assertion 'n == 0x1f' failed at add.12"));
  TargetRunner r2(AbortingCompiler(
      tmp2,
      "hloc: /other/algsimp.cc:99: Assertion 'n == 0x2a' failed at mul.7"));
  StatusOr<Json> v1 = ComputeVerdictJson(AddCase(), r1, tmp1 / "work");
  StatusOr<Json> v2 = ComputeVerdictJson(AddCase(), r2, tmp2 / "work");
  ASSERT_TRUE(v1.ok() && v2.ok());
  EXPECT_EQ(Str(*v1, "status"), "compile_crash") << v1->DumpPretty();
  const Json& sig = (*v1)["signature"];
  EXPECT_EQ(Str(sig, "pass"), "algsimp");
  EXPECT_EQ(Str(sig, "stage"), "compile");
  EXPECT_EQ(Str(sig, "message"),
            "killed by SIGABRT: hloc: <path> Assertion 'n == <hex>' failed "
            "at <name>");
  EXPECT_EQ(Str((*v1)["target"], "signal"), "SIGABRT");
  EXPECT_EQ(Str(sig, "sig"), Str((*v2)["signature"], "sig"));
}

// An hloc that enters dot-decomposer, prints `report` (a check message and
// a backtrace, as a crash handler or a sanitizer would) and aborts.
TargetSpec CrashingCompiler(const TempDir& tmp, const std::string& report) {
  TargetSpec s = RealTarget(TargetMode::kHlocTpusim);
  s.hloc = WriteScript(tmp / "hloc",
                       "echo 'enter dot-decomposer 4' >> \"$TRENCH_PASS_TRACE\""
                       "\ncat >&2 <<'EOF'\n" +
                           report + "EOF\nkill -ABRT $$\n");
  return s;
}

// A crash report as glibc's backtrace_symbols_fd prints it after a check.
std::string CheckWithBacktrace(const std::string& check, const char* fn,
                               const char* addr) {
  return "hloc: compiler/passes/dot_decomposer.cc:97: " + check +
         "\n*** SIGABRT received, stack trace:\n"
         "/lib/x86_64-linux-gnu/libc.so.6(+0x42520) [0x7f" +
         addr +
         "]\n"
         "/lib/x86_64-linux-gnu/libc.so.6(abort+0xd3) [0x7f" +
         addr + "]\n" + "/build/hloc(" + fn + "+0x1a3) [0x55" + addr +
         "]\n"
         "/build/hloc(_ZN6trench6passes13DotDecomposer3RunEPNS_9HloModuleE+"
         "0x9c) [0x55" +
         addr +
         "]\n"
         "/build/hloc(_ZN6trench11PassManager3RunEPNS_9HloModuleE+0x3f1) "
         "[0x55" +
         addr +
         "]\n"
         "/build/hloc(main+0x42) [0x55" +
         addr + "]\n";
}

TEST(VerdictTest, CrashSiteKeepsTwoChecksOfOnePassApart) {
  // Two bugs in dot-decomposer: different checks fail in different
  // functions. The backtrace's last line is the same for both.
  constexpr char kCanonical[] =
      "_ZN6trench6passes12_GLOBAL__N_112CanonicalDotEPNS_14HloInstructionE";
  constexpr char kSplit[] =
      "_ZN6trench6passes12_GLOBAL__N_110SplitBatchEPNS_14HloInstructionE";
  TempDir t1, t2, t3;
  TargetRunner a(CrashingCompiler(
      t1, CheckWithBacktrace("Check failed: k > 0 (k=0) for %dot.3", kCanonical,
                             "1a2b3c")));
  TargetRunner same(CrashingCompiler(
      t2, CheckWithBacktrace("Check failed: k > 0 (k=12) for %dot.41",
                             kCanonical, "99ffee")));
  TargetRunner other(CrashingCompiler(
      t3, CheckWithBacktrace(
              "Check failed: batch_dims.size() == 1 (2 vs 1) for %dot.3",
              kSplit, "1a2b3c")));
  StatusOr<Json> va = ComputeVerdictJson(AddCase(), a, t1 / "work");
  StatusOr<Json> vs = ComputeVerdictJson(AddCase(), same, t2 / "work");
  StatusOr<Json> vo = ComputeVerdictJson(AddCase(), other, t3 / "work");
  ASSERT_TRUE(va.ok() && vs.ok() && vo.ok());
  const Json& sa = (*va)["signature"];
  EXPECT_EQ(Str(sa, "status"), "compile_crash") << va->DumpPretty();
  EXPECT_EQ(Str(sa, "pass"), "dot-decomposer");
  EXPECT_EQ(Str(sa, "message"),
            "killed by SIGABRT: hloc: <path> Check failed: k > N (k=N) for "
            "%<name> [frames: "
            "trench::passes::(anonymous namespace)::CanonicalDot; "
            "trench::passes::DotDecomposer::Run; trench::PassManager::Run]")
      << va->DumpPretty();
  EXPECT_EQ(Str(sa, "sig"), Str((*vs)["signature"], "sig")) << vs->DumpPretty();
  EXPECT_NE(Str(sa, "sig"), Str((*vo)["signature"], "sig")) << vo->DumpPretty();
  // The verdict's message names the check too.
  EXPECT_NE(Str(*vo, "message").find("batch_dims.size() == 1"),
            std::string::npos)
      << vo->DumpPretty();
}

TEST(VerdictTest, HangingCompilerTimesOut) {
  TempDir tmp;
  TargetSpec s = RealTarget(TargetMode::kHlocTpusim);
  s.hloc = WriteScript(tmp / "hloc", "sleep 60\n");
  s.timeout_seconds = 0.5;
  TargetRunner runner(s);
  StatusOr<Json> v = ComputeVerdictJson(AddCase(), runner, tmp / "work");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(Str(*v, "status"), "timeout") << v->DumpPretty();
  EXPECT_EQ(Str((*v)["signature"], "stage"), "compile");
}

TEST(VerdictTest, CleanRefusalIsTargetUnsupported) {
  TempDir tmp;
  TargetSpec s = RealTarget(TargetMode::kHlocTpusim);
  s.hloc = WriteScript(
      tmp / "hloc",
      "echo 'UNIMPLEMENTED: hloc: cannot compile cholesky for f32' >&2\n"
      "exit 3\n");
  TargetRunner runner(s);
  StatusOr<Json> v = ComputeVerdictJson(AddCase(), runner, tmp / "work");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(Str(*v, "status"), "target_unsupported") << v->DumpPretty();
  // An internal error with the same exit code is a crash.
  s.hloc = WriteScript(tmp / "hloc2",
                       "echo \"INTERNAL: pass 'cse' broke the module\" >&2\n"
                       "exit 3\n");
  TargetRunner runner2(s);
  v = ComputeVerdictJson(AddCase(), runner2, tmp / "work");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(Str(*v, "status"), "compile_crash") << v->DumpPretty();
}

TEST(VerdictTest, MissingTargetBinaryIsHarnessError) {
  TempDir tmp;
  TargetSpec s = RealTarget(TargetMode::kHlocTpusim);
  s.hloc = tmp / "no-such-hloc";
  TargetRunner runner(s);
  StatusOr<Json> v = ComputeVerdictJson(AddCase(), runner, tmp / "work");
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("no-such-hloc"), std::string::npos);
}

TEST(TargetRunnerTest, ServeWorkerIsRestartedAfterItDies) {
  TempDir tmp;
  TargetSpec s = RealTarget(TargetMode::kServe);
  // First start: dies (SIGSEGV) on its first request. Later: the real one.
  s.hlo_run = WriteScript(
      tmp / "hlo-run",
      "if [ ! -e " + tmp / "died" + " ]; then\n  touch " + tmp / "died" +
          "\n  read -r line\n  kill -SEGV $$\nfi\nexec " +
          RealTarget(TargetMode::kServe).hlo_run + " \"$@\"\n");
  TargetRunner runner(s);
  StatusOr<TargetResult> r = runner.Run(AddCase(), tmp / "work");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, TargetStatus::kCompileCrash) << r->ToJson().Dump();
  EXPECT_EQ(r->signal, SIGSEGV);
  for (int i = 0; i < 2; ++i) {  // Restarted once, then kept.
    r = runner.Run(AddCase(), tmp / "work");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->status, TargetStatus::kOk) << r->ToJson().Dump();
    EXPECT_EQ(r->outputs.size(), 2u);
    EXPECT_EQ(runner.restarts(), 1);
  }
}

TEST(TargetRunnerTest, HangingServeWorkerTimesOutAndRestarts) {
  TempDir tmp;
  TargetSpec s = RealTarget(TargetMode::kServe);
  s.hlo_run =
      WriteScript(tmp / "hlo-run",
                  "if [ ! -e " + tmp / "hung" + " ]; then\n  touch " +
                      tmp / "hung" + "\n  read -r line\n  sleep 60\nfi\nexec " +
                      RealTarget(TargetMode::kServe).hlo_run + " \"$@\"\n");
  s.timeout_seconds = 0.5;
  TargetRunner runner(s);
  StatusOr<TargetResult> r = runner.Run(AddCase(), tmp / "work");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, TargetStatus::kTimeout) << r->ToJson().Dump();
  runner.mutable_spec().timeout_seconds = 120;
  r = runner.Run(AddCase(), tmp / "work");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, TargetStatus::kOk) << r->ToJson().Dump();
  EXPECT_EQ(runner.restarts(), 1);
}

}  // namespace
}  // namespace trench::hlo_diff
