// triage/case/crash_site.h: the failing check and the top frames of the
// backtrace formats crash handlers and sanitizers print.
#include "triage/case/crash_site.h"

#include <gtest/gtest.h>

#include "triage/case/verdict.h"

namespace trench::hlo_diff {
namespace {

using Frames = std::vector<std::string>;

TEST(CrashSiteTest, SanitizerReport) {
  const CrashSite s = FindCrashSite(
      "=================================================================\n"
      "==4123==ERROR: AddressSanitizer: heap-buffer-overflow on address "
      "0x602000000034 at pc 0x55d1 bp 0x7ffd sp 0x7ffc\n"
      "READ of size 4 at 0x602000000034 thread T0\n"
      "    #0 0x55d1a2 in trench::codegen::EmitPad(trench::HloInstruction "
      "const*, trench::codegen::KernelBuilder&) "
      "/src/compiler/codegen/emit_pad.cc:88:21\n"
      "    #1 0x55d1b3 in trench::codegen::(anonymous namespace)::Emit"
      "(trench::HloInstruction const*) /src/compiler/codegen/emit.cc:40:3\n"
      "    #2 0x55d1c4 in std::vector<int, std::allocator<int> >::at(unsigned "
      "long) /usr/include/c++/13/bits/stl_vector.h:1150:2\n"
      "    #3 0x55d1d5 in main /src/tools/hloc/main.cc:6:10\n"
      "    #4 0x7f12 in __libc_start_main (/lib/libc.so.6+0x29d90)\n"
      "\n"
      "0x602000000034 is located 0 bytes after 4-byte region\n"
      "allocated by thread T0 here:\n"
      "    #0 0x55e1 in operator new(unsigned long)\n"
      "SUMMARY: AddressSanitizer: heap-buffer-overflow emit_pad.cc:88 in "
      "EmitPad\n"
      "==4123==ABORTING\n");
  EXPECT_EQ(s.check,
            "==4123==ERROR: AddressSanitizer: heap-buffer-overflow on address "
            "0x602000000034 at pc 0x55d1 bp 0x7ffd sp 0x7ffc");
  EXPECT_EQ(s.frames, (Frames{"trench::codegen::EmitPad",
                              "trench::codegen::(anonymous namespace)::Emit",
                              "std::vector<int, std::allocator<int> >::at"}));
}

TEST(CrashSiteTest, StacktraceGlogAndGdbFormats) {
  CrashSite s = FindCrashSite(
      "terminate called after throwing an instance of 'std::out_of_range'\n"
      "  what():  vector::_M_range_check: __n (which is 5) >= this->size() "
      "(which is 3)\n"
      " 0# __cxa_throw at ../libstdc++-v3/libsupc++/eh_throw.cc:98\n"
      " 1# trench::Shape::dimensions(long) const at /src/shape.cc:20\n"
      " 2# trench::passes::Algsimp::Run(trench::HloModule*) at /src/a.cc:9\n");
  EXPECT_EQ(s.check,
            "what():  vector::_M_range_check: __n (which is 5) >= "
            "this->size() (which is 3)");
  EXPECT_EQ(s.frames, (Frames{"trench::Shape::dimensions",
                              "trench::passes::Algsimp::Run"}));

  s = FindCrashSite(
      "F1204 10:00:00.000000 4123 fusion.cc:77] Check failed: a == b\n"
      "*** Check failure stack trace: ***\n"
      "    @     0x55d1  google::LogMessage::Fail()\n"
      "    @     0x55d2  trench::passes::Fusion::Merge.constprop.0()\n"
      "    @     0x55d3  (unknown)\n");
  EXPECT_EQ(s.check,
            "F1204 10:00:00.000000 4123 fusion.cc:77] Check failed: a == b");
  EXPECT_EQ(s.frames, (Frames{"google::LogMessage::Fail",
                              "trench::passes::Fusion::Merge"}));

  s = FindCrashSite(
      "Program received signal SIGSEGV, Segmentation fault.\n"
      "#0  0x000055 in trench::tpu::Dma::Copy (this=0x1, n=3) at dma.cc:12\n"
      "#1  trench::tpu::Run (p=...) at run.cc:4\n");
  EXPECT_EQ(s.check, "Program received signal SIGSEGV, Segmentation fault.");
  EXPECT_EQ(s.frames, (Frames{"trench::tpu::Dma::Copy", "trench::tpu::Run"}));
}

TEST(CrashSiteTest, NoBacktrace) {
  // A check line that is not the last line is still the check.
  CrashSite s = FindCrashSite(
      "hloc: x.cc:3: int f(): Assertion `n > 0' failed.\nsome later noise\n");
  EXPECT_EQ(s.check, "hloc: x.cc:3: int f(): Assertion `n > 0' failed.");
  EXPECT_TRUE(s.frames.empty());
  EXPECT_TRUE(FindCrashSite("just a line\n").empty());
  EXPECT_TRUE(FindCrashSite("").empty());
  // Without a site the message stays stderr's last line.
  EXPECT_EQ(CrashSiteLine("a\nlast\n", "last"), "last");
  EXPECT_EQ(CrashSiteLine("Check failed: x\n", "Check failed: x"),
            "Check failed: x");
  EXPECT_EQ(CrashSiteLine("Check failed: x\nnoise\n", "noise"),
            "Check failed: x");
  // Frames without any line before them.
  EXPECT_EQ(CrashSiteLine("./hloc(_ZN6trench3FooEv+0x1) [0x55]\n", "x"),
            "[frames: trench::Foo]");
}

TEST(CrashSiteTest, NormalizedLinesTellChecksApartAndInstancesTogether) {
  auto norm = [](const std::string& check, const char* addr) {
    const std::string err = check + "\n#0 0x" + addr +
                            " in trench::Canon(int) /src/d.cc:9:1\n"
                            "#1 0x" +
                            addr + " in trench::DotDecomposer::Run() x.cc:2\n";
    return NormalizeMessage(CrashSiteLine(err, "#1 ..."));
  };
  const std::string a = norm("Check failed: k > 0 (k=0) for %dot.3", "55a");
  EXPECT_EQ(a,
            "Check failed: k > N (k=N) for %<name> [frames: trench::Canon; "
            "trench::DotDecomposer::Run]");
  EXPECT_EQ(norm("Check failed: k > 0 (k=7) for %dot.12", "7f0"), a);
  EXPECT_NE(norm("Check failed: rank == 2 for %dot.3", "55a"), a);
}

}  // namespace
}  // namespace trench::hlo_diff
