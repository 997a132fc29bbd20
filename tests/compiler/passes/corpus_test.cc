// Runs the default pipeline over real XLA modules (shared/traces and the
// conformance cases): every module that verifies must go through without
// error, verify after every pass, and, where it is small enough to
// evaluate, compute bit for bit what it computed before.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/ir/hlo_equal.h"
#include "compiler/ir/hlo_text_file.h"
#include "compiler/passes/pipeline.h"
#include "tests/compiler/passes/pass_test_util.h"
#include "tests/traces_dir.h"

namespace trench {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> CorpusFiles() {
  std::vector<fs::path> out;
  for (const fs::path& dir : {fs::path(TRENCH_TRACES_DIR),
                              fs::path(TRENCH_SHARED_DIR) / "conformance"}) {
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (e.is_regular_file() && e.path().extension() == ".hlo") {
        out.push_back(e.path());
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Small enough for the oracle to evaluate quickly.
bool IsSmall(const HloModule& m) {
  int64_t elements = 0;
  for (const HloComputation* c : m.computations()) {
    for (const HloInstruction* i : c->instructions()) {
      if (i->opcode() == HloOpcode::kWhile) return false;
      int64_t n = 0;
      ForEachLeafShape(i->shape(), [&](const Shape& s) {
        n += s.is_dynamic() ? int64_t{1} << 40 : s.element_count();
      });
      elements += n;
    }
  }
  return elements <= (int64_t{1} << 16);
}

TEST(CorpusTest, DefaultPipelineKeepsRealModulesValidAndEquivalent) {
  const std::vector<fs::path> files = CorpusFiles();
  if (files.empty()) GTEST_SKIP() << "no corpus under " << TRENCH_TRACES_DIR;
  VerifyOptions vopts;
  vopts.allow_mixed_precision = true;
  int modules = 0, changed = 0, compared = 0;
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    for (const HloTextPiece& piece : SplitHloTextFile(text.str())) {
      auto parsed = ParseHloModule(piece.text, piece.first_line);
      if (!parsed.ok() || !VerifyModule(**parsed, nullptr, vopts).ok()) {
        continue;
      }
      SCOPED_TRACE(file.string() + ":" + std::to_string(piece.first_line));
      std::unique_ptr<HloModule> m = std::move(*parsed);
      auto before = m->Clone();
      PipelineOptions o;
      o.verify_options = vopts;
      auto pipeline = PassPipeline::CreateDefault(o);
      PassContext ctx = pipeline->MakeContext();
      auto r = pipeline->Run(m.get(), &ctx);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ++modules;
      changed += *r;
      // What the pipeline produced prints as text that reads back equal.
      auto reparsed = ParseHloModule(PrintHloModule(*m));
      ASSERT_TRUE(reparsed.ok()) << reparsed.status().ToString();
      std::string diff;
      EXPECT_TRUE(ModulesEqual(*m, **reparsed, &diff)) << diff;
      if (!*r || !IsSmall(*before)) continue;
      const auto args = RandomArguments(*before->entry_computation(), 42);
      auto expected = Evaluate(*before, args);
      if (!expected.ok()) continue;  // Ops the oracle does not run.
      auto actual = Evaluate(*m, args);
      ASSERT_TRUE(actual.ok()) << actual.status().ToString();
      ComparisonResult cmp =
          CompareLiterals(*actual, *expected, ComparisonOptions::Exact());
      EXPECT_TRUE(cmp.ok()) << cmp.ToText() << "\n" << PrintHloModule(*m);
      ++compared;
    }
  }
  EXPECT_GT(modules, 50);
  EXPECT_GT(changed, 10);
  EXPECT_GT(compared, 10);
  std::printf("corpus: %d modules, %d changed, %d compared\n", modules, changed,
              compared);
}

}  // namespace
}  // namespace trench
