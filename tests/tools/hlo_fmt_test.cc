#include "tools/hlo-fmt/hlo_fmt.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace trench {
namespace {

namespace fs = std::filesystem;

struct Result {
  int code;
  std::string out, err;
};

Result RunFmt(std::vector<std::string> args) {
  args.insert(args.begin(), "hlo-fmt");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  const int code =
      RunHloFmt(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

class HloFmtTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& text) {
    const fs::path dir = fs::temp_directory_path() /
                         ("hlo_fmt_test_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    const fs::path p = dir / name;
    std::ofstream(p) << text;
    return p.string();
  }
};

constexpr char kGood[] = R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT n = f32[2] negate(p)
}
)";

TEST_F(HloFmtTest, PrintsCanonicalText) {
  Result r = RunFmt({Write("good.hlo", kGood)});
  EXPECT_EQ(r.code, kHloFmtOk) << r.err;
  EXPECT_EQ(r.out,
            "HloModule m\n\nENTRY %e (p: f32[2]) -> f32[2] {\n"
            "  %p = f32[2] parameter(0)\n"
            "  ROOT %n = f32[2] negate(f32[2] %p)\n}\n");
  EXPECT_EQ(r.err, "");
  // Formatting is idempotent.
  Result again = RunFmt({Write("again.hlo", r.out)});
  EXPECT_EQ(again.out, r.out);
}

TEST_F(HloFmtTest, CheckPrintsNothing) {
  Result r = RunFmt({Write("good.hlo", kGood), "--check"});
  EXPECT_EQ(r.code, kHloFmtOk) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(HloFmtTest, ParseErrorsNameFileLineAndColumn) {
  const std::string path =
      Write("bad.hlo", "ENTRY e {\n  ROOT n = f32[2] negate(q)\n}\n");
  Result r = RunFmt({path, "--check"});
  EXPECT_EQ(r.code, kHloFmtBadInput);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, path +
                       ":2:26: operand 'q' is not defined before its use in "
                       "computation 'e'\n");
}

TEST_F(HloFmtTest, VerifierErrorsAreReported) {
  // Parses, but add's operands disagree in shape.
  const std::string path = Write("mismatch.hlo", R"(ENTRY e {
  p = f32[2] parameter(0)
  q = f32[3] parameter(1)
  ROOT a = f32[2] add(p, q)
}
)");
  Result r = RunFmt({path});
  EXPECT_EQ(r.code, kHloFmtBadInput);
  EXPECT_EQ(r.out, "");
  // Named by the instruction's line and column, as a parse error is.
  EXPECT_EQ(r.err, path +
                       ":4:8: in computation %e: %a: add operands have "
                       "different shapes f32[2] and f32[3]\n");
}

TEST_F(HloFmtTest, DeclaredShapeMismatchNamesTheInstruction) {
  // The report of issue 18: p is f32[4], the add claims f32[5].
  const std::string path = Write("declared.hlo", R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  ROOT a = f32[5] add(p, p)
}
)");
  Result r = RunFmt({path, "--check"});
  EXPECT_EQ(r.code, kHloFmtBadInput);
  EXPECT_EQ(r.err, path +
                       ":4:8: in computation %e: %a: add declared shape "
                       "f32[5] is not compatible with inferred shape f32[4]\n");
}

TEST_F(HloFmtTest, UnknownAttributesAreRefused) {
  for (const char* attr : {"bogus_attr=1", "custom_Kall_target=\"x\""}) {
    const std::string path =
        Write("attr.hlo", std::string("ENTRY e {\n  p = f32[2] parameter(0)\n"
                                      "  ROOT n = f32[2] negate(p), ") +
                              attr + "\n}\n");
    Result r = RunFmt({path, "--check"});
    EXPECT_EQ(r.code, kHloFmtBadInput) << attr;
    EXPECT_EQ(r.err.rfind(path + ":3:30: unknown attribute '", 0), 0u) << r.err;
  }
}

TEST_F(HloFmtTest, UsageErrors) {
  EXPECT_EQ(RunFmt({}).code, kHloFmtUsage);
  EXPECT_EQ(RunFmt({"a.hlo", "b.hlo"}).code, kHloFmtUsage);
  Result r = RunFmt({"--bogus", "a.hlo"});
  EXPECT_EQ(r.code, kHloFmtUsage);
  EXPECT_NE(r.err.find("unknown flag --bogus"), std::string::npos);
  Result help = RunFmt({"--help"});
  EXPECT_EQ(help.code, kHloFmtOk);
  EXPECT_NE(help.out.find("usage: hlo-fmt MODULE [--check] [--short]"),
            std::string::npos);
  Result missing = RunFmt({"/nonexistent/x.hlo"});
  EXPECT_EQ(missing.code, kHloFmtBadInput);
  EXPECT_EQ(missing.err, "/nonexistent/x.hlo: cannot read file\n");
}

TEST_F(HloFmtTest, ShortFormWithoutOperandShapesOrPercent) {
  const std::string path = Write("short.hlo", kGood);
  Result r = RunFmt({path, "--short"});
  EXPECT_EQ(r.code, kHloFmtOk) << r.err;
  EXPECT_NE(r.out.find("ROOT n = f32[2] negate(p)"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find('%'), std::string::npos) << r.out;
}

TEST_F(HloFmtTest, ReadsStdinForDash) {
  const std::string path = Write("stdin.hlo", kGood);
  // Redirect the process's stdin to the file for this call.
  ASSERT_NE(std::freopen(path.c_str(), "r", stdin), nullptr);
  Result r = RunFmt({"-"});
  EXPECT_EQ(r.code, kHloFmtOk) << r.err;
  EXPECT_NE(r.out.find("ROOT %n = f32[2] negate(f32[2] %p)"),
            std::string::npos);
}

}  // namespace
}  // namespace trench
