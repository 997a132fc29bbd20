// Real HLO from XLA (shared/traces, shared/conformance): every module
// parses and round-trips print -> parse -> ModulesEqual, or is refused with
// a message from a known, explained list.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "compiler/ir/hlo_equal.h"
#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer.h"
#include "compiler/ir/hlo_text_file.h"
#include "tests/traces_dir.h"

namespace trench {
namespace {

namespace fs = std::filesystem;

const fs::path kTraces = fs::path(TRENCH_TRACES_DIR);
const fs::path kConformance = fs::path(TRENCH_SHARED_DIR) / "conformance";

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> HloFiles(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::exists(dir)) return files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".hlo") {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Why a refusal is expected. Element types outside dtype.def (XLA's
// sub-byte integers and 8/4-bit floats) are not part of this IR; one file
// is an HloProto in text-proto form, not HLO text.
bool ExplainedRefusal(const std::string& message) {
  for (const char* type :
       {"'s2'", "'s4'", "'u4'", "'f4e2m1fn'", "'f8e4m3fn'", "'f8e5m2fnuz'"}) {
    if (message.find(std::string("unknown element type ") + type) !=
        std::string::npos) {
      return true;
    }
  }
  return message == "1:1: expected computation name, got '#'";
}

// Parses, prints, re-parses; returns "" or what went wrong.
std::string CheckRoundTrip(const HloModule& m) {
  const std::string printed = PrintHloModule(m);
  auto again = ParseHloModule(printed);
  if (!again.ok()) return "re-parse failed: " + again.status().message();
  std::string diff;
  if (!ModulesEqual(m, **again, &diff)) return "not equal after print: " + diff;
  return "";
}

TEST(TracesTest, EveryTraceParsesAndRoundTrips) {
  const std::vector<fs::path> files = HloFiles(kTraces);
  ASSERT_EQ(files.size(), 182u) << "traces missing under " << kTraces;
  int parsed = 0;
  // (file, message); messages carry the line:col within the file.
  std::vector<std::pair<std::string, std::string>> refused;
  for (const fs::path& file : files) {
    const std::string rel = fs::relative(file, kTraces).string();
    for (const HloTextPiece& piece : SplitHloTextFile(ReadFile(file))) {
      auto m = ParseHloModule(piece.text, piece.first_line);
      if (!m.ok()) {
        refused.emplace_back(rel, m.status().message());
        continue;
      }
      ++parsed;
      EXPECT_EQ(CheckRoundTrip(**m), "") << rel << ":" << piece.first_line;
    }
  }
  std::string unexplained;
  for (const auto& [where, message] : refused) {
    std::cout << "[ refused  ] " << where << ":" << message << "\n";
    if (!ExplainedRefusal(message)) unexplained += where + ":" + message + "\n";
  }
  std::cout << "[ traces   ] " << parsed << " modules parsed, "
            << refused.size() << " refused\n";
  EXPECT_EQ(unexplained, "");
  EXPECT_GE(parsed, 200);
}

TEST(TracesTest, EveryConformanceModuleParsesAndRoundTrips) {
  int parsed = 0;
  for (const auto& dir : fs::directory_iterator(kConformance / "xla_tests")) {
    const fs::path file = dir.path() / "module.hlo";
    if (!fs::exists(file)) continue;
    auto m = ParseHloModule(ReadFile(file));
    ASSERT_TRUE(m.ok()) << file << ": " << m.status().message();
    EXPECT_EQ(CheckRoundTrip(**m), "") << file;
    ++parsed;
  }
  EXPECT_GE(parsed, 100);
}

TEST(TracesTest, LargestTraceParsesFast) {
  const fs::path file = kTraces /
                        "xla/xla/codegen/emitters/tests/loop/"
                        "large_loop_slow_compile_time.hlo";
  const std::string text = ReadFile(file);
  ASSERT_GT(text.size(), 1000000u);
  const auto start = std::chrono::steady_clock::now();
  auto m = ParseHloModule(text);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now() - start)
                      .count();
  ASSERT_TRUE(m.ok()) << m.status().message();
  // Generous for unoptimized and sanitizer builds; a release build takes
  // a small fraction of this.
  EXPECT_LT(ms, 1000) << "parsing 1.8 MB took " << ms << " ms";
}

}  // namespace
}  // namespace trench
