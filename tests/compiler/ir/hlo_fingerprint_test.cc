// HloModuleFingerprint against the printed text it stands for: on every
// module of the shared corpora, one random edit at a time, the
// fingerprints are equal exactly when the texts are (no edit here only
// reorders lines, which the fingerprint leaves out).
#include "compiler/ir/hlo_fingerprint.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/ir/hlo_parser.h"
#include "compiler/ir/hlo_printer.h"
#include "compiler/ir/hlo_text_file.h"
#include "tests/traces_dir.h"

namespace trench {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> CorpusModules() {
  std::vector<fs::path> files;
  for (const fs::path& dir : {fs::path(TRENCH_TRACES_DIR),
                              fs::path(TRENCH_SHARED_DIR) / "conformance"}) {
    if (!fs::exists(dir)) continue;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
      if (e.is_regular_file() && e.path().extension() == ".hlo") {
        files.push_back(e.path());
      }
    }
  }
  std::sort(files.begin(), files.end());
  std::vector<std::string> texts;
  for (const fs::path& f : files) {
    std::ifstream in(f, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    for (const HloTextPiece& piece : SplitHloTextFile(ss.str())) {
      if (ParseHloModule(piece.text).ok()) texts.push_back(piece.text);
    }
  }
  return texts;
}

// One edit of the module, chosen by `rng`. Some edits change the text
// (a name, a size, a layout, an operand, an attribute, the root, a
// control edge, a constant), some cannot (a field the text does not show,
// a name set to itself), and some may or may not (swapping operands).
using Edit = std::function<void(HloModule*, std::mt19937*)>;

template <typename T>
T* Pick(const std::vector<T*>& v, std::mt19937* rng) {
  if (v.empty()) return nullptr;
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(*rng)];
}

HloInstruction* PickInstruction(HloModule* m, std::mt19937* rng) {
  HloComputation* c = Pick(m->computations(), rng);
  return c ? Pick(c->instructions(), rng) : nullptr;
}

const std::vector<std::pair<const char*, Edit>>& Edits() {
  static const auto* edits = new std::vector<std::pair<const char*, Edit>>{
      {"rename instruction",
       [](HloModule* m, std::mt19937* rng) {
         if (auto* i = PickInstruction(m, rng)) i->set_name(i->name() + "x");
       }},
      {"name set to itself",
       [](HloModule* m, std::mt19937* rng) {
         if (auto* i = PickInstruction(m, rng)) i->set_name(i->name());
       }},
      {"grow a dimension",
       [](HloModule* m, std::mt19937* rng) {
         auto* i = PickInstruction(m, rng);
         if (i && i->shape().IsArray() && i->shape().rank() > 0) {
           i->mutable_shape()->set_dim(0, i->shape().dim(0) + 1);
         }
       }},
      {"element type",
       [](HloModule* m, std::mt19937* rng) {
         auto* i = PickInstruction(m, rng);
         if (i && i->shape().IsArray()) {
           i->mutable_shape()->set_element_type(i->shape().element_type() ==
                                                        PrimitiveType::F32
                                                    ? PrimitiveType::F16
                                                    : PrimitiveType::F32);
         }
       }},
      {"layout",
       [](HloModule* m, std::mt19937* rng) {
         auto* i = PickInstruction(m, rng);
         if (!i || !i->shape().IsArray()) return;
         Layout l;
         for (int64_t d = 0; d < i->shape().rank(); ++d) {
           l.minor_to_major.push_back(d);
         }
         i->mutable_shape()->set_layout(l);
       }},
      {"swap operands",
       [](HloModule* m, std::mt19937* rng) {
         auto* i = PickInstruction(m, rng);
         if (!i || i->operand_count() < 2) return;
         HloInstruction* a = i->operands()[0];
         HloInstruction* b = i->operands()[1];
         i->ReplaceOperandWith(0, b);
         i->ReplaceOperandWith(1, a);
       }},
      {"raw attribute",
       [](HloModule* m, std::mt19937* rng) {
         if (auto* i = PickInstruction(m, rng)) {
           i->mutable_attrs().raw.emplace_back("metadata",
                                               "{op_name=\"edited\"}");
         }
       }},
      {"dimensions",
       [](HloModule* m, std::mt19937* rng) {
         auto* i = PickInstruction(m, rng);
         if (i && i->attrs().has_dimensions) {
           i->mutable_attrs().dimensions.push_back(7);
         }
       }},
      {"unshown field",
       [](HloModule* m, std::mt19937* rng) {
         auto* i = PickInstruction(m, rng);
         if (i && i->opcode() != HloOpcode::kParameter) {
           i->mutable_attrs().parameter_number += 3;
         }
         if (i && i->opcode() != HloOpcode::kFusion) {
           i->mutable_attrs().fusion_kind = FusionKind::kOutput;
         }
       }},
      {"root",
       [](HloModule* m, std::mt19937* rng) {
         HloComputation* c = Pick(m->computations(), rng);
         if (auto* i = c ? Pick(c->instructions(), rng) : nullptr) {
           c->set_root_instruction(i);
         }
       }},
      {"control edge",
       [](HloModule* m, std::mt19937* rng) {
         HloComputation* c = Pick(m->computations(), rng);
         if (!c || c->num_parameters() == 0) return;
         HloInstruction* p = c->parameter_instruction(0);
         HloInstruction* i = Pick(c->instructions(), rng);
         if (i && i != p) i->AddControlPredecessor(p);
       }},
      {"constant value",
       [](HloModule* m, std::mt19937* rng) {
         for (HloComputation* c : m->computations()) {
           for (HloInstruction* i : c->instructions()) {
             if (i->opcode() != HloOpcode::kConstant || !i->has_literal() ||
                 i->literal().bytes().empty()) {
               continue;
             }
             Literal l = i->literal();
             l.mutable_bytes()[0] ^= 1;
             i->set_literal(std::move(l));
             return;
           }
         }
       }},
      {"rename computation",
       [](HloModule* m, std::mt19937* rng) {
         if (HloComputation* c = Pick(m->computations(), rng)) {
           c->set_name(c->name() + "x");
         }
       }},
      {"module name",
       [](HloModule* m, std::mt19937*) { m->set_name(m->name() + "x"); }},
  };
  return *edits;
}

TEST(HloFingerprintTest, EqualExactlyWhenTheTextsAreOnTheCorpora) {
  const std::vector<std::string> modules = CorpusModules();
  ASSERT_GT(modules.size(), 100u) << "the shared corpora are missing";
  std::mt19937 rng(11);
  int changed = 0, unchanged = 0;
  for (const std::string& text : modules) {
    auto original = ParseHloModule(text);
    ASSERT_TRUE(original.ok());
    const std::string printed = PrintHloModule(**original);
    const uint64_t fp = HloModuleFingerprint(**original);
    // The same text parsed again: the same fingerprint.
    auto again = ParseHloModule(printed);
    ASSERT_TRUE(again.ok()) << again.status().message();
    EXPECT_EQ(HloModuleFingerprint(**again), fp);
    for (const auto& [what, edit] : Edits()) {
      auto m = ParseHloModule(text);
      ASSERT_TRUE(m.ok());
      edit(m->get(), &rng);
      const bool same_text = PrintHloModule(**m) == printed;
      const bool same_fp = HloModuleFingerprint(**m) == fp;
      EXPECT_EQ(same_text, same_fp) << "edit '" << what << "' on:\n"
                                    << text.substr(0, 400);
      (same_text ? unchanged : changed)++;
    }
  }
  // Both outcomes were exercised many times.
  EXPECT_GT(changed, 1000);
  EXPECT_GT(unchanged, 200);
}

TEST(HloFingerprintTest, OperandShapesAndAttributesCount) {
  const char* kText = R"(
HloModule m
ENTRY e {
  p = f32[4,8]{1,0} parameter(0)
  q = f32[4,8]{1,0} parameter(1)
  t = f32[8,4]{1,0} transpose(p), dimensions={1,0}
  ROOT a = f32[4,8]{1,0} add(p, q)
})";
  auto m = ParseHloModule(kText);
  ASSERT_TRUE(m.ok());
  const uint64_t fp = HloModuleFingerprint(**m);
  HloInstruction* t = (*m)->entry_computation()->GetInstructionWithName("t");
  t->mutable_attrs().dimensions = {0, 1};
  EXPECT_NE(HloModuleFingerprint(**m), fp);
  t->mutable_attrs().dimensions = {1, 0};
  EXPECT_EQ(HloModuleFingerprint(**m), fp);
  // A dynamic size prints as "<=8"; an unknown one as "?", whatever the
  // negative number it is kept as.
  HloInstruction* q = (*m)->entry_computation()->GetInstructionWithName("q");
  q->mutable_shape()->set_dynamic_dim(1, true);
  const uint64_t bounded = HloModuleFingerprint(**m);
  EXPECT_NE(bounded, fp);
  q->mutable_shape()->set_dim(1, -1);
  const uint64_t unknown = HloModuleFingerprint(**m);
  EXPECT_NE(unknown, bounded);
  q->mutable_shape()->set_dim(1, -2);
  EXPECT_EQ(HloModuleFingerprint(**m), unknown);
  EXPECT_EQ(PrintHloModule(**m).find("f32[4,?]") != std::string::npos, true);
}

}  // namespace
}  // namespace trench
