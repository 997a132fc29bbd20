// Real XLA output is correct by definition: every module of the shared
// corpora must verify. A failure here is a bug in shape inference or the
// verifier (or the parser), never a reason to weaken a check. The only
// exceptions are listed in kKnownInvalid, each with the reason XLA's own
// verifier rejects the module too.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_text_file.h"
#include "compiler/ir/verifier.h"
#include "tests/traces_dir.h"

namespace trench {
namespace {

namespace fs = std::filesystem;

struct KnownInvalid {
  const char* where;    // Corpus-relative path[:first line of the piece].
  const char* message;  // A substring of the expected verifier error.
};

// Hand-written inputs of XLA tests that XLA's HloVerifier rejects as well.
constexpr KnownInvalid kKnownInvalid[] = {
    // An hlo_to_mhlo importer test (never verified by XLA): HLO broadcast
    // needs equal operand/result sizes (ShapeVerifier::HandleBroadcast);
    // only MHLO's broadcast_in_dim expands size-1 dims.
    {"xla/xla/hlo/translate/hlo_to_mhlo/tests/while.hlo:1",
     "%broadcast.1: broadcast operand f32[1] dimension 0 does not match "
     "result f32[3] dimension 0"},
};

const KnownInvalid* FindKnownInvalid(const std::string& where) {
  for (const KnownInvalid& k : kKnownInvalid) {
    if (where == k.where) return &k;
  }
  return nullptr;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Tally {
  int parsed = 0, verified = 0, with_trusted = 0, mixed_precision = 0;
  int known_invalid = 0;
  std::vector<std::string> parse_failures, verify_failures;
  std::map<std::string, int> trusted_ops;  // Opcode -> instructions.

  // Verifies one parsed module, recording the result under `where`. With
  // `xla_test_harness`, a module that verifies only with mixed precision
  // allowed counts as verified (XLA's test harness verifies that way).
  void Verify(const HloModule& module, const std::string& where,
              bool xla_test_harness) {
    ++parsed;
    VerifyStats stats;
    Status s = VerifyModule(module, &stats);
    if (!s.ok() && xla_test_harness) {
      VerifyOptions mixed;
      mixed.allow_mixed_precision = true;
      stats = VerifyStats();
      if (VerifyModule(module, &stats, mixed).ok()) {
        ++mixed_precision;
        s = Status::Ok();
      }
    }
    if (const KnownInvalid* known = FindKnownInvalid(where)) {
      if (!s.ok() && s.message().find(known->message) != std::string::npos) {
        ++known_invalid;
      } else {
        verify_failures.push_back(where + ": expected the known error '" +
                                  known->message + "', got '" + s.message() +
                                  "'");
      }
      return;
    }
    if (!s.ok()) {
      verify_failures.push_back(where + ": " + s.message());
      return;
    }
    ++verified;
    if (!stats.trusted.empty()) ++with_trusted;
    for (const std::string& t : stats.trusted) {
      const size_t open = t.rfind('(');
      ++trusted_ops[t.substr(open + 1, t.size() - open - 2)];
    }
  }

  void Print(const std::string& corpus) const {
    std::cout << corpus << ": " << parsed << " parsed, " << verified
              << " verified (" << with_trusted << " trusting ops without "
              << "inference rule, " << mixed_precision
              << " only with mixed precision), " << known_invalid
              << " known invalid, " << verify_failures.size()
              << " verify failures, " << parse_failures.size()
              << " parse failures\n  trusted:";
    for (const auto& [op, n] : trusted_ops) std::cout << " " << op << "=" << n;
    std::cout << "\n";
    for (const std::string& f : verify_failures) {
      std::cout << "  VERIFY FAIL " << f << "\n";
    }
    for (const std::string& f : parse_failures) {
      std::cout << "  PARSE FAIL " << f << "\n";
    }
  }
};

std::vector<fs::path> SortedFiles(const fs::path& root,
                                  const std::string& name_or_ext) {
  std::vector<fs::path> files;
  if (!fs::exists(root)) return files;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file()) continue;
    const fs::path& p = e.path();
    if (p.filename() == name_or_ext || p.extension() == name_or_ext) {
      files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(VerifyCorpus, ConformanceModulesVerify) {
  const fs::path root = fs::path(TRENCH_SHARED_DIR) / "conformance/xla_tests";
  const std::vector<fs::path> files = SortedFiles(root, "module.hlo");
  ASSERT_FALSE(files.empty()) << "no module.hlo under " << root;
  Tally tally;
  for (const fs::path& file : files) {
    const std::string where = fs::relative(file, root).string();
    auto module = ParseHloModule(ReadFile(file));
    if (!module.ok()) {
      tally.parse_failures.push_back(where + ": " + module.status().message());
      continue;
    }
    tally.Verify(**module, where, /*xla_test_harness=*/true);
  }
  tally.Print("conformance");
  EXPECT_EQ(tally.parsed, static_cast<int>(files.size()));
  EXPECT_TRUE(tally.verify_failures.empty());
}

TEST(VerifyCorpus, TraceModulesThatParseVerify) {
  const fs::path root = fs::path(TRENCH_TRACES_DIR);
  const std::vector<fs::path> files = SortedFiles(root, ".hlo");
  ASSERT_FALSE(files.empty()) << "no .hlo file under " << root;
  Tally tally;
  for (const fs::path& file : files) {
    const std::string rel = fs::relative(file, root).string();
    for (const HloTextPiece& piece : SplitHloTextFile(ReadFile(file))) {
      const std::string where = rel + ":" + std::to_string(piece.first_line);
      auto module = ParseHloModule(piece.text, piece.first_line);
      if (!module.ok()) {
        tally.parse_failures.push_back(where + ": " +
                                       module.status().message());
        continue;
      }
      tally.Verify(**module, where, /*xla_test_harness=*/false);
    }
  }
  tally.Print("traces");
  EXPECT_GT(tally.parsed, 0);
  EXPECT_EQ(tally.known_invalid, static_cast<int>(std::size(kKnownInvalid)));
  EXPECT_TRUE(tally.verify_failures.empty());
}

}  // namespace
}  // namespace trench
